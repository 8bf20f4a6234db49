// trace_import.hpp: one call from a trace file (perf.data, or the text of
// `perf script` / `perf sched timehist -w`) to a ProgramModel.
//
// Mechanism: a perf.data file (by its magic) is read through `perf script`,
// any other file as text; lines stream through TraceReader into
// ProgramImporter, so memory stays O(threads + units). After the read, the
// CPU-switch consistency count decides whether events were lost: more than
// kMaxInconsistentShare of switches missing for threads whose events are
// recorded is refused (exit 2).
// Left out: traces of several programs at once (one program per import).
#pragma once

#include <string>

#include "trace/program_model.hpp"

namespace poolsim::trace {

// A share of inconsistent switches (a switch missing although the missing
// thread's events are recorded elsewhere: perf_text.hpp) above which the
// trace is refused as having lost events. perf reports its own losses
// (PERF_RECORD_LOST, "lost N chunks": refused whatever their number); this
// catches a text trace cut in pieces. Switches hidden with a task whose
// events are never recorded (this VM's host agent) are not counted: they were
// up to half of a quiet machine's switches and refused good recordings.
inline constexpr double kMaxInconsistentShare = 0.05;

// `scratch` is a folder for perf's stderr (perf.data input only).
ProgramModel import_trace(const std::string& path, const ProgramSelector& sel,
                          const std::string& scratch);

}  // namespace poolsim::trace
