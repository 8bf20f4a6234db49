// bandwidth.hpp: CFS bandwidth control of the scenario's group, as Linux 6.18
// does it (kernel/sched/fair.c; Documentation/scheduler/sched-bwc.rst).
//
// Mechanism, with the kernel function each step follows:
// - A global pool (cfs_bandwidth.runtime) is refilled by the period timer
//   (do_sched_cfs_period_timer -> __refill_cfs_bandwidth_runtime): pool =
//   min(pool + quota, quota + burst). Unused quota therefore accumulates up
//   to the burst; with burst 0 the pool is reset to the quota. A refill that
//   finds more handed out since the last one than a quota counts a burst:
//   nr_bursts += 1, burst_time += the excess (runtime_snap).
// - Each CPU (the group's cfs_rq on it) has its own runtime_remaining. A
//   running group thread drains it; the kernel only looks at it when it
//   accounts (update_curr: at the scheduler tick and at every switch), so a
//   CPU runs on after its runtime is gone until its next tick and owes the
//   difference (runtime_remaining < 0). When it looks and finds runtime <= 0
//   it asks the pool for enough to reach one slice
//   (sched_cfs_bandwidth_slice_us, machine profile cfs_bandwidth_slice:
//   __assign_cfs_rq_runtime with target = slice); it gets what the pool has.
// - A CPU that still has runtime <= 0 after asking is throttled
//   (throttle_cfs_rq): only this CPU; the others run on their own runtime.
//   Since 6.18 the throttle is task based (commit e1fad12dcb66 "sched/fair:
//   Switch to task based throttle model"): the group's threads on that CPU
//   are dequeued when they next return to user mode (a CPU-bound thread: at
//   once, from the tick) and wait on a limbo list; the CPU looks idle to
//   wake-up placement, and a thread woken onto it joins the limbo.
// - Throttled time (cfs_rq->throttled_clock) starts when the first thread
//   is actually parked on the throttled CPU (record_throttle_clock, commit
//   eb962f251fbb "sched/fair: Task based throttle time accounting"), not
//   when the CPU is throttled, and ends at the unthrottle. A CPU throttled
//   while it has no thread (its last thread blocked owing runtime) counts in
//   nr_throttled but adds no throttled time until a thread lands on it.
// - At each period the timer counts nr_periods, refills the pool and, if any
//   CPU is throttled, counts nr_throttled and hands each throttled CPU, in
//   the order they were throttled, just enough to clear its debt (-runtime
//   + 1 ns, distribute_cfs_runtime); a CPU whose runtime becomes positive is
//   unthrottled (unthrottle_cfs_rq). Its next slice it takes itself when it
//   next accounts. The timer stops after a period in which no CPU asked for
//   runtime and none was throttled (cfs_b->idle), and restarts on its grid
//   when a CPU next asks (start_cfs_bandwidth, hrtimer_forward_now). The
//   grid's phase against the ticks is arbitrary on a machine; we take the
//   mean: periods end half a tick before the multiples of the period. Its
//   phase against the workload is arbitrary too (fresh groups made a second
//   apart here had their boundaries 7, 65 and 85 ms into CLOCK_MONOTONIC's
//   100 ms multiples); BandwidthParams::phase moves the grid that much
//   earlier, and validate averages draws with different phases
//   (validate/prediction.hpp).
// - Runtime handed to a CPU never expires (commit de53fd7aedb1, Linux 5.4:
//   "Fix low cpu usage with high throttling by removing expiration of
//   cpu-local slices"). When a CPU's last group thread leaves it
//   (return_cfs_rq_runtime on the last dequeue), it keeps
//   min_cfs_rq_runtime (1 ms) and returns the rest to the pool (slack). If
//   the pool then holds more than a slice and a CPU is throttled, the slack
//   timer fires cfs_bandwidth_slack_period (5 ms) later and distributes the
//   pool as the period timer does (do_sched_cfs_slack_timer); it is not
//   started within 7 ms of the period refill and does nothing within 2 ms of
//   it (runtime_refresh_within).
// - cgroup v1 and v2 cpu.stat count the same thing: nr_periods, nr_throttled
//   (periods whose timer found a throttled CPU), throttled_time (v1, ns) or
//   throttled_usec (v2), summed over the CPUs (so it can exceed the wall
//   time), nr_bursts, burst_time (v1, ns) or burst_usec (v2)
//   (cpu_cfs_stat_show, cpu_extra_stat_show in kernel/sched/core.c).
//
// Invariants: runtime moves between the pool and the CPUs and is consumed
// only by running CPUs; a throttled CPU runs no group thread; a CPU's
// throttled clock runs only while it is throttled.
//
// Left out: hierarchies of groups (one group holds the scenario's threads),
// the quota's 1 ms minimum and the timer's overrun doubling, the few
// microseconds a thread runs in the kernel before it parks, the IPI that
// unthrottles a remote CPU, and accounting at wake-ups onto a running CPU
// (update_curr there only moves the noticing earlier than the next tick).
//
// Interface: the kernel tells a Bandwidth when a CPU starts and stops running
// a group thread and when it parks a thread on a throttled CPU; time passes
// in engine events the Bandwidth owns (per-CPU accounting at ticks, the
// period and slack timers), from which it calls the kernel's hook to
// throttle a running CPU or to unthrottle one.
#pragma once

#include <cstdint>
#include <vector>

#include "models/units.hpp"
#include "sim/engine.hpp"

namespace poolsim::sim {

// Kernel constants of fair.c used here (not tunables).
inline constexpr Duration kMinCfsRqRuntime = std::chrono::milliseconds(1);  // min_cfs_rq_runtime
inline constexpr Duration kCfsSlackPeriod =
    std::chrono::milliseconds(5);  // cfs_bandwidth_slack_period
inline constexpr Duration kMinBandwidthExpiration =
    std::chrono::milliseconds(2);  // min_bandwidth_expiration

struct BandwidthParams {
  Duration quota{};        // runtime per period (limits.cpus * period)
  Duration period{};       // limits.period
  Duration burst{};        // limits.burst: how much unused quota may accumulate
  Duration slice{};        // machine cfs_bandwidth_slice (sched_cfs_bandwidth_slice_us)
  Duration tick{};         // machine tick: when a running CPU accounts; 0 = continuously
  Duration tick_offset{};  // the ticks fall at tick_offset + k x tick (sim/tick_grid.hpp)
  // How far into a period the group's timer already was when the run
  // started, in [0, period): the grid's phase against the workload, which
  // on a machine is whatever the moment of the group's set-up made it.
  Duration phase{};
};

// The group's cpu.stat.
struct BandwidthStats {
  std::int64_t nr_periods = 0;
  std::int64_t nr_throttled = 0;
  Duration throttled_time{};
  std::int64_t nr_bursts = 0;
  Duration burst_time{};
};

class Bandwidth {
 public:
  // Called from the Bandwidth's own events: throttle = true when the running
  // CPU `cpu` must stop running the group now (the kernel preempts its thread
  // and parks it), false when a throttled CPU may run the group again.
  using Hook = void (*)(void* ctx, int cpu, bool throttle);

  // Throws std::invalid_argument for a non-positive quota, period or slice.
  // Writing the quota refills the pool and starts the period timer
  // (tg_set_cfs_bandwidth): the first period ends at `period`.
  Bandwidth(Engine& engine, const BandwidthParams& p, int cpus, Hook hook, void* ctx);
  Bandwidth(const Bandwidth&) = delete;
  Bandwidth& operator=(const Bandwidth&) = delete;
  ~Bandwidth();

  // CPU `cpu` is about to run a group thread. False: it has no runtime and
  // the pool cannot give it any, so it is (or already was) throttled and
  // must not run it; the kernel parks the thread and calls parked().
  bool start(int cpu);
  // CPU `cpu` stops running a group thread; `empty`: no group thread is left
  // on it (then it returns its slack to the pool).
  void stop(int cpu, bool empty);
  // A group thread now waits on throttled CPU `cpu` (starts its throttled
  // clock if it is not running).
  void parked(int cpu);
  bool throttled(int cpu) const { return cpus_[static_cast<std::size_t>(cpu)].throttled; }
  // Adds the throttled intervals still open at now() (the run is over).
  void finish();

  const BandwidthStats& stats() const { return st_; }
  Duration pool() const { return pool_; }
  // CPU `cpu`'s runtime_remaining now (negative: it owes).
  Duration runtime_of(int cpu) const;

 private:
  struct Cpu {
    Duration remaining{1};  // tg_set_cfs_bandwidth starts each cfs_rq at 1 ns
    Duration since{};       // running: when it was last charged
    Duration clock{};       // throttled_clock (valid while clock_on)
    bool running = false;
    bool throttled = false;
    bool clock_on = false;
    EventId check;  // the accounting that will find its runtime gone
  };

  static void on_check(void* self, std::uint64_t cpu);
  static void on_period(void* self, std::uint64_t);
  static void on_slack(void* self, std::uint64_t);

  void charge(Cpu& c);
  bool assign(Cpu& c, Duration target);
  void arm_check(int cpu);
  void throttle(int cpu);
  void distribute();
  bool refresh_within(Duration d) const;

  Engine& engine_;
  std::uint32_t lane0_ = 0;  // the engine lane of CPU 0's check (CPU i: lane0_ + i)
  BandwidthParams p_;
  Hook hook_;
  void* ctx_;
  std::vector<Cpu> cpus_;
  std::vector<int> throttled_list_;  // throttle order (cfs_b->throttled_cfs_rq)
  Duration pool_{};
  Duration snap_{};  // runtime_snap
  bool period_active_ = false;
  bool idle_ = false;
  bool slack_started_ = false;
  Duration period_at_{};  // when the period timer fires next (valid while active)
  Duration grid_{};       // the timer's grid: it fires at grid_ + k * period
  EventId period_ev_, slack_ev_;
  BandwidthStats st_;
};

}  // namespace poolsim::sim
