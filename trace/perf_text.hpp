// perf_text.hpp: reads the text of `perf script` or `perf sched timehist -w`
// line by line and emits normalised transitions (sched_events.hpp).
//
// Mechanism. perf script: every line is `COMM [PID/]TID [CPU] TIME: EVENT:
// FIELDS`; the reader keeps, per CPU, the thread running there (from
// sched_switch) and the interrupt nesting (irq/softirq handler and hrtimer
// expiry entry/exit), so a wake-up names its waker: the running thread, or
// kWakerInterrupt when the CPU is inside a handler (a timer or I/O woke the
// thread, whatever it interrupted). Both the `prev_comm=` field form and the
// libtraceevent plugin form (`comm:tid [prio] S ==> comm:tid [prio]`) of
// sched_switch are read. timehist: a switch-out line `TIME [CPU] COMM[TID]
// WAIT SCHDELAY RUN [STATE]` is the thread's run interval (on at TIME - RUN,
// off at TIME); an `awakened: COMM[TID]` line is a wake-up by the line's task.
// Invariants: the lines come in time order per CPU (perf's own order); the
// reader keeps O(CPUs) state and never the events themselves.
// Checks (TraceError, exit 2): an unknown format, a malformed line (file:line:
// what was expected), a truncated last line, perf's LOST records.
// Consistency: each CPU's events are in order in perf's per-CPU buffer, so
// the context of every event (a switch's prev, any other event's task) must
// be the thread the last switch on that CPU put there. Where it is not, a
// switch was not recorded. That is normal for a task whose own events are
// never recorded (on this VM the host agent's threads, `tokio-rt-worker`,
// are switched in by recorded switches, but nothing they do appears, their
// switch-outs included; a per-task `perf record` sees only its own tasks'
// side too): such a mismatch counts as hidden (stats().hidden_switches). A
// mismatch whose missing thread does appear as an event's context elsewhere
// in the trace is a real gap (stats().inconsistent: lost or cut-out events),
// except for the idle task: switches out of idle go unrecorded on a whole
// vCPU of this VM, so those count as hidden too;
// the importer refuses a trace with many. Both are decided in finish(), when
// the whole trace has shown which threads' events are recorded. After a
// mismatch the context thread is running: it gets an on-CPU transition at
// the last recorded event of that CPU (the earliest moment it can have
// started), or later where the trace bounds its wake-up: its recorded
// sched_waking, a sched_stat_runtime, or the expiry of a sleep timer it
// armed after its last recorded wake-up (hrtimer_start of hrtimer_wakeup:
// nanosleep, timed futex and poll waits; the monotonic expiry is converted to
// trace time with the latest hrtimer_expire_entry's now=). Without that bound
// a thread woken by its timer on the vCPU that records nothing while idle
// was credited with the CPU's idle time (a 300 us burst read as 650 us).
// Left out: perf script's other output forms (--fields without tid or time).
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "trace/sched_events.hpp"

namespace poolsim::trace {

// Bad trace input: exit 2. what() is "SOURCE:LINE: message" or "SOURCE: message".
struct TraceError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

enum class TextFormat { undecided, perf_script, timehist };

struct ReadStats {
  std::int64_t lines = 0;
  std::int64_t switches = 0;
  std::int64_t wakes = 0;
  std::int64_t interrupt_wakes = 0;
  std::int64_t forks = 0;
  std::int64_t exits = 0;
  std::int64_t other_events = 0;  // events the import does not use
  // Mismatches between an event's context and the CPU's current thread (see
  // the file comment): where the missing thread's events are recorded
  // elsewhere (lost or cut-out events), and where they never are (hidden).
  std::int64_t inconsistent = 0;
  std::int64_t hidden_switches = 0;
  std::int64_t first_time = -1, last_time = -1;
  int max_cpu = -1;
  bool irq_context_events = false;  // irq/softirq/hrtimer events present
};

class TraceReader {
 public:
  using Sink = std::function<void(const Transition&)>;
  TraceReader(std::string source, Sink sink);
  // One line without its newline; `lineno` counts from 1.
  void feed(std::string_view line, std::int64_t lineno);
  // The end of input; `last_line_complete` is false when the text did not end
  // with a newline (a truncated file), `last_line` then holds that line, unfed.
  void finish(bool last_line_complete, std::string_view last_line = {});
  TextFormat format() const { return format_; }
  const ReadStats& stats() const { return stats_; }

 private:
  void perf_line(std::string_view line, std::int64_t lineno);
  void timehist_line(std::string_view line, std::int64_t lineno);
  [[noreturn]] void fail(std::int64_t lineno, const std::string& what) const;
  void note_time(std::int64_t t, int cpu);
  int& current(int cpu);
  int& irq_depth(int cpu);
  std::int64_t& cpu_last_time(int cpu);
  // The context thread of an event on `cpu` at `time`: checks it against the
  // CPU's current thread (see the file comment).
  // `started`: when the event itself shows the thread started running (a
  // sched_stat_runtime's time - runtime), else -1.
  void context(int cpu, int tid, const std::string& comm, int pid, std::int64_t time,
               std::int64_t started = -1);
  // `tid` runs on `cpu` from now: if it was another CPU's current thread, it
  // left that CPU unseen, by that CPU's last recorded event; emits that
  // off-CPU transition and forgets it there. Then records it as cpu's.
  void becomes_current(int cpu, int tid);
  bool departed(int cpu) const;

  std::string source_;
  Sink sink_;
  TextFormat format_ = TextFormat::undecided;
  ReadStats stats_;
  std::vector<int> current_;                 // per CPU: tid running (-1 unknown)
  std::unordered_map<int, int> running_on_;  // per thread: the CPU it is current on
  // Per CPU: its current thread was since seen on another CPU, and its
  // off-CPU here already emitted (becomes_current); the next event on this
  // CPU still counts the unseen switch, without a second off-CPU.
  std::vector<char> departed_;
  std::vector<int> irq_depth_;                       // per CPU: interrupt handler nesting
  std::vector<std::int64_t> cpu_last_time_;          // per CPU: time of its last event (-1 none)
  std::unordered_set<int> context_seen_;             // threads some recorded event ran in
  std::unordered_map<int, std::int64_t> last_wake_;  // per thread: time of its last wake-up
  // A sleep timer a thread armed (hrtimer_start of hrtimer_wakeup: nanosleep,
  // a futex or poll timeout): its expiry in the timer base's clock, and when
  // it was armed (trace time).
  struct SleepTimer {
    std::int64_t expires = 0, armed_at = 0;
  };
  std::unordered_map<int, SleepTimer> sleep_timer_;
  // Trace time minus the monotonic hrtimer base (from hrtimer_expire_entry's
  // now=); kNoOffset until one is seen.
  static constexpr std::int64_t kNoOffset = INT64_MIN;
  std::int64_t timer_offset_ = kNoOffset;
  std::unordered_map<int, std::int64_t> missing_;  // mismatches by the thread expected
  std::int64_t last_lineno_ = 0;
  bool timehist_wakers_ = false;  // `awakened:` lines seen (timehist -w)
};

// Reads a whole text file through a TraceReader (streamed, line by line).
void read_trace_text(const std::string& path, TraceReader& reader);

}  // namespace poolsim::trace
