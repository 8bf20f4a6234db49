// noise.hpp: OS noise, the machine's own interruptions of a busy CPU, as a
// seeded and deterministic source the kernel model injects.
//
// Mechanism: each CPU that runs a thread is interrupted at the instants of a
// Poisson process of mean interval `noise_interval` (machine profile) over
// its busy time; each interruption takes a stolen time drawn from a
// lognormal of median `noise_median` and 99th percentile `noise_p99`, during
// which the interrupted thread makes no progress (its work, vruntime and CPU
// time stand still: the time belongs to whatever interrupted it), and with
// probability `noise_preempt` it was a switch to another task (a kernel
// thread, another process), which the interrupted thread counts as an
// involuntary switch, as getrusage counts it; with probability
// `noise_preempt_idle` instead while another CPU of the machine is idle (a
// CPU outside the scenario's cpuset counts as idle): most of those tasks
// are woken elsewhere and go to an idle CPU when there is one, unless the
// host packs wakes onto the interrupted CPU (the kernel decides: on_noise).
// The figures come from
// `poolsim calibrate`'s fixed-work-quantum benchmark (real/os_noise.hpp);
// `noise_interval` 0 turns noise off (the shipped `default` profile, the
// oracle tests: idealised machines).
// Determinism: every CPU draws from its own stream derived from the scenario
// seed (Rng::derive with a stream number no workload stream uses), so the
// same seed gives the same interruptions, and one CPU's draws do not depend
// on what the others did.
// Source: Petrini, Kerbyson and Pakin, "The Case of the Missing
// Supercomputer Performance" (SC 2003); LogGOPSim's noise injection (Hoefler,
// Schneider and Lumsdaine, 2010).
// Left out: noise on an idle CPU (it delays nothing the model charges), the
// interrupted thread's cache refill (part of the stolen time the benchmark
// measures), noise charged to a cgroup's quota.
#pragma once

#include <cstdint>
#include <vector>

#include "models/distribution.hpp"
#include "models/machine.hpp"
#include "models/rng.hpp"
#include "models/units.hpp"

namespace poolsim::sim {

struct Interruption {
  Duration stolen{};
  bool preempts = false;  // a switch to another task: an involuntary switch
};

// The time noise steals per unit of busy time on average (the mean stolen
// time over noise_interval); 0 when the profile has no noise. What a
// recorded run interval holds beyond its work (trace import, app/common.cpp).
double noise_share(const MachineProfile& m);

class NoiseSource {
 public:
  NoiseSource(const MachineProfile& m, std::uint64_t seed, int cpus);
  bool on() const { return on_; }
  // Busy time from now to the CPU's next interruption.
  Duration next_gap(int cpu);
  // What the interruption due now takes.
  // `other_idle`: another CPU of the machine is idle (noise_preempt_idle).
  Interruption draw(int cpu, bool other_idle = false);

 private:
  bool on_ = false;
  Duration interval_{};
  double preempt_ = 0, preempt_idle_ = 0;
  Distribution stolen_;
  std::vector<Rng> rng_;
};

}  // namespace poolsim::sim
