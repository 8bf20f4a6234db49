// perf_tool.hpp: running perf for the trace import: `perf sched record` of a
// command, and `perf script` of a perf.data file streamed into a TraceReader.
//
// Mechanism: perf runs as a child (fork + execvp, no shell), its stderr
// captured in a file so a failure can be reported whole; `perf script` writes
// into a pipe read line by line (the trace is never held in memory). The
// record is `perf sched record`'s (system-wide, every event) with its
// sched_switch, wake-up, fork and exit events but not its sched_stat_* ones,
// plus irq/softirq handler and hrtimer expiry events, so a wake-up from
// interrupt context (a timer, a device) is told apart from a hand-off by the
// thread it interrupted.
// Signals: while a child runs, SIGINT/SIGTERM/SIGHUP are forwarded to it and
// remembered (SignalForwarder); the caller cleans up (temporary perf.data)
// and re-raises the signal, as `poolsim run` does.
// Source: perf-sched(1), perf-script(1) of perf 6.1; the perf.data magic
// "PERFILE2" (tools/perf/util/header.c).
// Left out: perf versions without `-F ...,trace` or `--ns`.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include "trace/perf_text.hpp"

namespace poolsim::trace {

// perf is missing or refuses (no permission, no tracefs): exit 3.
struct PerfRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A forwarded signal ended the work; the caller cleans up and re-raises.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int s) : std::runtime_error("interrupted"), signal(s) {}
  int signal;
};

// Installs the forwarding handlers for its lifetime.
class SignalForwarder {
 public:
  SignalForwarder();
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;
  static int pending();  // the signal received, or 0
  // Restores the default action and raises `s` (the process ends by it).
  [[noreturn]] static void reraise(int s);
};

// The perf binary: $POOLSIM_PERF if set, else `perf` on PATH; empty if none.
std::string perf_binary();
// True when the file starts with perf.data's magic.
bool is_perf_data(const std::string& path);
// Makes sure the sched tracepoints are reachable: mounts tracefs at
// /sys/kernel/tracing where it is not mounted. Throws PerfRefused.
void ensure_tracefs();
// `perf record` of the sched events `perf sched record` records (without its
// sched_stat_* flood) plus interrupt markers, -o DATA -- CMD...; returns the command's
// wait status as perf reports it (perf's exit code). Throws PerfRefused when
// perf cannot record, Interrupted on a forwarded signal.
int perf_sched_record(const std::vector<std::string>& command, const std::string& data,
                      const std::string& stderr_file);
// Streams `perf script` of DATA into the reader and finishes it. Throws
// TraceError (truncated file, lost events, perf's complaint), PerfRefused,
// Interrupted.
void read_perf_data(const std::string& data, TraceReader& reader, const std::string& stderr_file);

}  // namespace poolsim::trace
