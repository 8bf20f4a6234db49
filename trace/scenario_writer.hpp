// scenario_writer.hpp: an imported ProgramModel as a scenario file
// (docs/scenarios.md) plus its empirical sample files.
//
// Mechanism: the backend group becomes `backend: {kind: pool, threads: N}`;
// its units become task classes by number of waits (a unit with k waits is
// cpu, wait, cpu, ... k+1 bursts), the bursts and waits drawn from the
// group's empirical samples, written beside the scenario as
// `STEM.GROUP.cpu.csv` (a request's first bursts), `STEM.GROUP.cpuJ.csv`
// (the bursts after its J-th wait) and `.wait.csv` (one duration per line with its unit,
// the loader's empirical format, resolved against the scenario's folder);
// the submitters' CPU per unit is a first fixed CPU phase; the arrival is
// periodic or Poisson (open) or closed with the inferred clients and think
// time; the machine is `host` with the recorded cpuset and quota as limits.
// The opening comment says what was inferred, from how many events, and
// which threads were not mapped.
// Invariants: at most kMaxClasses classes (rarer wait counts join the kept
// class with the nearest count, so every unit is represented); expected CPU
// per task equals the trace's CPU per unit.
// Left out: per-position wait distributions (all waits of a group share one);
// lock and resource phases (the trace does not show them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "trace/program_model.hpp"

namespace poolsim::trace {

inline constexpr std::size_t kMaxClasses = 16;

// The CPUs, cpuset and quota the recording ran under (known for `record`).
struct RecordedMachine {
  bool known = false;
  int cpus = 0;
  std::string cpuset;                // "0-1"
  std::optional<double> quota_cpus;  // CFS quota in CPUs, if any
  std::int64_t period_ns = 100'000'000;
};

struct WriteOptions {
  std::string name;     // scenario name ([a-z0-9-]); empty: from the output file's stem
  std::string source;   // the trace (file) it came from
  std::string command;  // the recorded command line, if known
  RecordedMachine machine;
};

// Writes the scenario and its sample files; returns the paths written.
std::vector<std::filesystem::path> write_scenario(const ProgramModel& m,
                                                  const std::filesystem::path& out,
                                                  const WriteOptions& o);
// The scenario text alone (the sample files named as write_scenario names them).
std::string scenario_text(const ProgramModel& m, const std::string& stem, const WriteOptions& o);
// A few lines for stderr: what was inferred, and the unmapped threads.
std::string summary_text(const ProgramModel& m);

}  // namespace poolsim::trace
