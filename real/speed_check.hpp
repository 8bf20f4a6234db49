// speed_check.hpp: is this machine running at the speed it was calibrated
// at? The canary of every measured repetition.
//
// Why: on this project's virtual machines a vCPU's speed changes under us
// with no steal time reported: the same 20M-iteration loop took 7.5 ms of
// thread CPU time, then 35-50 ms a minute later, then 7.5 ms again, with
// nothing else running in the guest. A `cpu` phase is an amount of work sized
// with the rate real/cpu_work calibrated, so in such a minute every phase runs
// several times too long and the validator would report `diverge` for a
// machine that changed, not a model that is wrong.
//
// Mechanism:
// - canary_speed(): the work loop's speed now, as a fraction of the rate the
//   machine profile states (reference_units_per_ns()), measured as that rate
//   is: the fastest tenth of 301 trials of ~55 us (cpu_work's undisturbed_rate), so
//   time the thread spends preempted, throttled or interrupted does not
//   count, only a slower CPU does (1.00x on a machine as calibrated).
// - The runner measures it in the parent right before a repetition (waiting,
//   up to run.speed_wait, for the machine to come back within the band),
//   sizes that repetition's `cpu` phases at the speed it found (a drift of a
//   few percent within the band would otherwise shorten or lengthen every
//   task), and measures it again right after it; during it, cpu_work's speed probe times a sample
//   of the repetition's own `cpu` phases (about one in eight of those over ~55 us) in blocks of
//   ~7 us, and `during` is the median of each phase's fastest block: the loop's speed, not what
//   interrupts cost the phase (the workload's own timer interrupts made compare-io's phases take
//   1.5x their CPU time here, 2026-12-03). That cost, work per thread CPU time, is `phase_cpu`.
// - A repetition is within the band when all three figures are within
//   1 +- run.speed_band (default 25%: the canary's own spread here is a few
//   percent, the slowdowns seen are 4-6x) and it was steady: the canary
//   after it within 1 +- run.speed_drift (10%) of the one before, at whose
//   speed its phases were sized (a VM that slowed by 22% at the end of one
//   repetition had the next one's phases sized 23% short when it recovered).
//   One outside either is run again, up to run.speed_retries more times; if
//   the last attempt still is, it is kept and marked `disturbed`, and no
//   verdict is drawn from the run.
// - The kernel's page-table paths have a canary of their own: on this
//   project's VMs (Firecracker, a PVM guest) they change speed by up to 2x
//   while the work loop does not (a map, touch and unmap of a thread stack:
//   82.5 us, then 42.6-48.2 us minutes later, the loop steady within a few
//   percent; 30-45% slower for ~15 s after a calibration), and thread
//   creation, stack mapping and page faults are what the profile's thread
//   costs measured. kernel_round_time() times such a round (the profile's
//   kernel_canary is the same figure, taken by calibrate); the runner reads
//   it before and after each repetition, as the profile's round over the
//   round now, and holds it to the same band. A profile without
//   kernel_canary is not checked this way.
// Left out: a slowdown shorter than a repetition that hits no sampled phase
// and neither canary goes unseen; a workload without `cpu` phases of 60 us or
// more is checked by the two canaries only.
#pragma once

#include <functional>
#include <string>

#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/units.hpp"

namespace poolsim::real {

// The work loop's speed now relative to the calibrated rate (1 = as
// calibrated); about 17 ms of this thread's CPU.
double canary_speed();

// Whether a speed figure lies within 1 +- band.
bool within_band(double speed, double band);
// Whether every figure of a checked repetition lies within the band.
bool within_band(const SpeedCheck& s, double band);
// Whether the machine kept its speed through a checked repetition: the
// canary after it within 1 +- drift of the one before it (its phases were
// sized at the one before).
bool steady(const SpeedCheck& s, double drift);

// The kernel's page-table paths now: the wall time of one round of mapping
// an 8 MiB stack (PROT_NONE, then read-write above its guard page), writing
// its top two pages and unmapping it; the median of 101 rounds after 10
// untimed ones (about 5 ms here).
Duration kernel_round_time();
// The profile's round time over the round time now (1 = as calibrated, 0.5 =
// the kernel's paths twice as slow); 0 when `profile_round` is 0.
double kernel_speed(Duration profile_round);

// Both canaries at one moment; `kernel` is 0 when not checked.
struct Canaries {
  double loop = 0;
  double kernel = 0;
};
// Whether both lie within the band (the kernel's when checked).
bool within_band(const Canaries& c, double band);

// Waits (sleeping 1 s between canaries) until the canaries are within the
// band or `limit` has passed; returns the last ones. The kernel's is read
// only when `kernel_ref` (the profile's kernel_canary) is not 0. `note` hears
// one line when it starts waiting.
Canaries wait_for_speed(double band, Duration limit, Duration kernel_ref,
                        const std::function<void(const std::string&)>& note);

// "0.31x" style text of a speed figure, and a one-line account of a check
// ("before 0.98x, during 0.31x, after 0.95x, kernel paths 0.97x and 0.62x,
// 3 attempts").
std::string format_speed(double speed);
std::string describe_speed(const SpeedCheck& s);

}  // namespace poolsim::real
