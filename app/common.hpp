// common.hpp: what every poolsim subcommand shares: the common flags, loading
// and checking a scenario, progress on stderr, and the mapping of failures to
// the exit codes of docs/cli.md (2 bad input, 3 machine refused).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "real/runner.hpp"

namespace poolsim::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDiverges = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRefused = 3;

struct CommonFlags {
  std::vector<std::string> sets;
  std::optional<std::uint64_t> seed;
  std::string machine;
  std::string json;
  bool quiet = false;
};

void add_common_flags(CLI::App* cmd, CommonFlags& f);
LoadOptions load_options(const CommonFlags& f);
// Loads and checks the scenario; a missing `host` profile is calibrated first
// (quick mode), as docs/scenarios.md ("Machine profiles") says.
Scenario load_checked(const std::string& file, const CommonFlags& f);

// Failures a command reports with exit 3 (the machine refused, or an engine
// that this build does not have).
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Bad usage detected after parsing (exit 2).
struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Writes `t` as Chrome trace-event JSON to `path` (Usage if it cannot).
// Writes `path` through `body`, for the output flag `flag` (--trace, --csv,
// --plot): a directory or a path that cannot be opened is exit 2, a write
// that fails (a full disk) exit 3, each naming the flag and the path;
// `what` names the content in the latter ("the trace").
void write_output(const std::string& flag, const std::string& path, const std::string& what,
                  const std::function<void(std::ostream&)>& body);
void write_trace(const std::filesystem::path& path, const Trace& t, const std::string& title);
// Creates the output directory of flag `flag` (--trace-dir, --records-dir)
// before any work, so that a path that cannot be one is the user's mistake
// (exit 2, the flag named) and not an error after the run.
void make_output_dir(const std::string& flag, const std::string& path);
// --records PATH: one CSV row per task of each run (rep numbers the runs
// from 1): its class, outcome, the thread that started it, and its
// intended arrival, hand-over, start and end and CPU time in microseconds
// (docs/cli.md). The runs must have kept their records.
void write_records(const std::string& path, const Workload& w, std::span<const RunResult> runs);

// Runs a command body, mapping exceptions to exit codes and messages; a
// failed write to stdout (a full disk, a closed pipe) is exit 3.
int guarded(const std::function<int()>& body);

// `text` safe for a terminal: valid UTF-8 and newlines pass, invalid bytes
// and control characters become \xNN.
std::string printable(const std::string& text);

// CLI11 checks shared by the subcommands: a path or name that must not be
// empty, and an unsigned 64-bit integer (--seed) written in plain decimal.
CLI::Validator non_empty(const std::string& what);
extern const CLI::Validator kUint64;

// Progress and log lines on stderr (suppressed by --quiet).
void log_line(const CommonFlags& f, const std::string& line);
// Options for the real runner: progress lines on stderr, tracing on request.
real::RealOptions real_options(const CommonFlags& f, bool trace);
// The text of a file (for reports); empty if it cannot be read.
std::string read_text(const std::string& path);

// Subcommand registration (one file each).
void register_simulate(CLI::App& app, std::function<int()>& action);
void register_run(CLI::App& app, std::function<int()>& action);
void register_validate(CLI::App& app, std::function<int()>& action);
void register_compare(CLI::App& app, std::function<int()>& action);
void register_calibrate(CLI::App& app, std::function<int()>& action);
void register_size(CLI::App& app, std::function<int()>& action);
void register_sweep(CLI::App& app, std::function<int()>& action);
void register_record(CLI::App& app, std::function<int()>& action);
void register_import(CLI::App& app, std::function<int()>& action);
void register_capacity(CLI::App& app, std::function<int()>& action);
void register_metrics(CLI::App& app, std::function<int()>& action);
// The metric names for the top command's --help (metrics_cmd.cpp).
std::string metric_names_footer();
void register_merge(CLI::App& app, std::function<int()>& action);

}  // namespace poolsim::app
