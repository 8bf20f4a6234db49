// group_share.hpp: the scenario's cgroup against a noisy neighbour's cgroup
// at the root of each CPU's run queue (CFS group scheduling, Linux 6.18
// EEVDF, kernel/sched/fair.c).
//
// Mechanism, with the kernel function each step follows:
// - Each cgroup is one scheduling entity per CPU on the root cfs_rq (a group
//   se), with a weight computed from the group's cpu.shares and where its
//   load is (calc_group_shares): shares * load_here / the group's load on
//   every CPU, clamped to [MIN_SHARES = 2, shares]. The neighbour's N
//   CPU-bound threads sit round-robin on the machine's CPUs (the load
//   balancer keeps them spread; the scenario's cpuset does not confine
//   another container) and are always runnable: its weight on a CPU is
//   shares_n * (its threads there) / N. The scenario's weight on a CPU is shares_s *
//   load_here / (load_here + its PELT load on every other CPU), load_here
//   being the larger of its runnable count there and its PELT load there
//   (max(load.weight, load_avg) against tg->load_avg; the kernel updates
//   tg->load_avg lazily, the model reads the averages as of now; until
//   2026-12-05 the instantaneous counts). Weights
//   are brought up to date where the kernel calls update_cfs_group: at the
//   tick and at the group's enqueue.
// - Between the two group entities the root runs EEVDF: vruntime advances by
//   the time run * 1024 / weight (calc_delta_fair); V is their
//   weight-averaged vruntime (avg_vruntime); an entity is eligible when its
//   vruntime is at most V; a deadline is vruntime + slice * 1024 / weight
//   (update_deadline; a group se's slice is its queue's smallest, the base
//   slice, since 6.12's min_slice propagation). The current entity's deadline
//   is only noticed at the tick; then it gets a new one and the eligible
//   entity with the earlier deadline runs (pick_eevdf). A reweight keeps an
//   entity's lag and virtual slice in proportion (reweight_eevdf).
// - When the scenario's last runnable thread on a CPU leaves (blocks, is
//   throttled or pulled away), its group se is dequeued with lag V - v,
//   clamped to a slice plus a tick in its virtual time (update_entity_lag);
//   the neighbour runs. When a scenario thread next becomes runnable there,
//   the group se is placed at V - lag * (W + w) / W (place_entity, PLACE_LAG)
//   or, if it left ahead of V, where it was while V has not passed it
//   (DELAY_DEQUEUE), and it preempts the neighbour at once if pick_eevdf
//   prefers it and the neighbour is past the deadline it was picked with
//   (RUN_TO_PARITY, check_preempt_wakeup_fair).
// - A CPU without neighbour threads has no root contest: the scenario runs
//   whenever it has a thread there.
//
// Invariants: on a CPU with neighbour threads exactly one entity runs; the
// scenario's entity runs only while it is queued; a CPU's vruntimes only
// grow.
//
// Left out: the neighbour's own quota and cpuset, its threads' migrations,
// periodic load balancing between the CPUs, and nested groups. The neighbour's threads are not
// simulated threads: the kernel sees their CPU as busy (it is never idle for wake-up placement),
// adds their group entity to that CPU's PELT sums (Kernel::Cpu nb_util, nb_load: fork balancing and
// packing read them) and loses the CPU to them when this model says so.
//
// Interface: the kernel tells a GroupShare when the scenario group becomes
// runnable on a CPU (enqueue) and when it stops being runnable there
// (dequeue); GroupShare asks the kernel how many scenario threads are
// runnable on a CPU (for the weights), and calls the kernel's hook when the
// root switches the CPU between the two groups at a tick.
#pragma once

#include <cstdint>
#include <vector>

#include "models/units.hpp"
#include "sim/engine.hpp"

namespace poolsim::sim {

struct GroupShareParams {
  int shares = 1024;            // the scenario group's cpu.shares
  int neighbour_shares = 1024;  // the neighbour group's cpu.shares
  int neighbour_threads = 1;    // its CPU-bound threads
  Duration slice{};             // machine slice (the base slice)
  Duration tick{};              // machine tick; 0 = decisions at the deadline itself
  Duration tick_offset{};       // the ticks fall at tick_offset + k x tick (sim/tick_grid.hpp)
};

class GroupShare {
 public:
  // run = true: the scenario's group takes CPU `cpu` from the neighbour;
  // false: the neighbour takes it (the kernel preempts the running thread).
  using Hook = void (*)(void* ctx, int cpu, bool run);
  // The scenario's runnable threads on CPU `cpu` (queued or running).
  using Count = int (*)(const void* ctx, int cpu);
  // The PELT load average of the scenario's threads on CPU `cpu`, brought
  // up to now (in threads: 1 = one always-runnable nice-0 thread).
  using Load = double (*)(void* ctx, int cpu);

  // `hw[i]`: the machine CPU simulated CPU i is (the scenario's cpuset, or
  // every CPU); `machine_cpus`: the machine's CPUs, which the neighbour, as
  // another container, spreads its threads over (thread k on CPU k mod
  // machine_cpus), so a cpuset CPU may hold none, one or several of them.
  // Throws std::invalid_argument for a non-positive slice or share.
  GroupShare(Engine& engine, const GroupShareParams& p, const std::vector<int>& hw,
             int machine_cpus, Hook hook, Count count, Load load, void* ctx);
  GroupShare(const GroupShare&) = delete;
  GroupShare& operator=(const GroupShare&) = delete;
  ~GroupShare();

  // Neighbour threads on CPU `cpu` (0: the scenario has it alone).
  int neighbours_on(int cpu) const { return cpus_[static_cast<std::size_t>(cpu)].threads; }
  // The neighbour's group weight on CPU `cpu` (calc_group_shares; 0 without
  // neighbour threads there).
  std::int64_t neighbour_weight(int cpu) const { return cpus_[static_cast<std::size_t>(cpu)].wn; }
  // The scenario's group became runnable on `cpu` (its first runnable thread
  // there). True: it runs now (no neighbour there, or it preempts it).
  bool enqueue(int cpu);
  // The scenario's group holds `cpu` at the run's origin: its first thread
  // is running there (the real submitter reads the origin while it runs),
  // just picked with no lag and a fresh slice.
  void run_at_origin(int cpu);
  // The scenario's group has no runnable thread on `cpu` any more.
  void dequeue(int cpu);
  // Whether the scenario's group holds `cpu` now.
  bool scenario_runs(int cpu) const;
  // Time the neighbour ran on every CPU together, up to now.
  Duration neighbour_time() const;

 private:
  struct Cpu {
    int threads = 0;           // neighbour threads here
    std::int64_t wn = 0;       // the neighbour's group weight here
    std::int64_t ws = 1024;    // the scenario's group weight here (while queued)
    Duration vs{}, vn{};       // vruntimes
    Duration ds{}, dn{};       // deadlines
    Duration prot{};           // the running entity's vruntime protection (RUN_TO_PARITY)
    Duration lag{};            // the scenario's lag when it was dequeued
    Duration since{};          // when the running entity was last charged
    Duration neighbour_ran{};  // the neighbour's time here so far
    bool queued = false;       // the scenario's group se is on the root queue
    bool scenario_cur = false;
    EventId ev;  // the tick that will notice the running entity's deadline
  };

  static void on_tick(void* self, std::uint64_t cpu);
  std::int64_t scenario_weight(int cpu) const;
  void charge(Cpu& c);
  void renew_alone(Cpu& c, Duration ran_from);
  Duration avg_v(const Cpu& c) const;
  Duration vslice(std::int64_t w) const;
  void reweight(Cpu& c, std::int64_t w);
  bool pick_scenario(const Cpu& c) const;
  void arm(int cpu);
  void run_scenario(Cpu& c, int cpu);

  Engine& engine_;
  std::uint32_t lane0_ = 0;  // the engine lane of CPU 0's tick (CPU i: lane0_ + i)
  GroupShareParams p_;
  Hook hook_;
  Count count_;
  Load load_;
  void* ctx_;
  std::vector<Cpu> cpus_;
};

}  // namespace poolsim::sim
