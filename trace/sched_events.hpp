// sched_events.hpp: the scheduler events a trace import needs, in one
// normalised form, whatever text they were read from.
//
// Mechanism: the kernel's sched tracepoints (include/trace/events/sched.h)
// describe every switch (prev -> next on one CPU, with prev's state), every
// wake-up (sched_waking / sched_wakeup / sched_wakeup_new: the woken task;
// the task running on that CPU is the waker unless the CPU is in interrupt
// context), every fork and exit. The text readers (perf_text.hpp) turn lines
// of `perf script` or `perf sched timehist -w` into per-thread transitions:
// a thread goes on CPU, goes off CPU (preempted, blocked or exited), is woken
// (by a thread, by an interrupt, or by nobody the trace names), is forked,
// exits, or execs a new image (sched_process_exec: its process starts over).
// Invariants: times are integer nanoseconds of the trace clock; a waker is a
// tid >= 0, kWakerInterrupt (hardirq, softirq, timer expiry: a timer or I/O)
// or kWakerUnknown (the text does not say).
// Left out: migrations, priorities and NUMA events; the import does not
// need them.
#pragma once

#include <cstdint>
#include <string>

namespace poolsim::trace {

inline constexpr int kWakerInterrupt = -1;
inline constexpr int kWakerUnknown = -2;

// How a thread left its CPU (the prev_state of sched_switch).
enum class OffState {
  preempted,  // R, R+: still runnable, the machine took the CPU
  blocked,    // S, D, I, T, ...: waits to be woken
  exited,     // X, Z
  unknown     // timehist text without --state: decided by whether a wake-up follows
};

struct Transition {
  enum class Kind { on_cpu, off_cpu, wake, fork, exit, exec };
  Kind kind = Kind::on_cpu;
  std::int64_t time = 0;  // ns
  int cpu = 0;
  int tid = 0;       // the thread the transition is about (woken, forked child, ...)
  std::string comm;  // its name as the event gives it
  int other = 0;     // wake: the waker (or kWaker*); fork: the parent
  int pid = -1;      // the thread's process id where the text gives it, else -1
  OffState state = OffState::unknown;  // off_cpu only
  int target_cpu = -1;                 // wake: the CPU the woken task goes to, if known
};

}  // namespace poolsim::trace
