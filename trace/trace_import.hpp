// trace_import.hpp: one call from a trace file (perf.data, or the text of
// `perf script` / `perf sched timehist -w`) to a ProgramModel.
//
// Mechanism: a perf.data file (by its magic) is read through `perf script`,
// any other file as text; lines stream through TraceReader into
// ProgramImporter, so memory stays O(threads + units). After the read, the
// CPU-switch consistency count decides whether events were lost: more than
// kMaxInconsistentShare of switches naming a prev that was not running there
// is refused (exit 2).
// Left out: traces of several programs at once (one program per import).
#pragma once

#include <string>

#include "trace/program_model.hpp"

namespace poolsim::trace {

// A share of inconsistent switches above which the trace is refused as
// having lost events. perf reports its own losses (PERF_RECORD_LOST, refused
// whatever their number); this catches a text trace cut in pieces. A few are
// normal: on this VM a host-side task (tokio-rt-worker) is switched in but its
// switch-outs never appear (0.3-0.6% of switches in recordings here).
inline constexpr double kMaxInconsistentShare = 0.05;

// `scratch` is a folder for perf's stderr (perf.data input only).
ProgramModel import_trace(const std::string& path, const ProgramSelector& sel,
                          const std::string& scratch);

}  // namespace poolsim::trace
