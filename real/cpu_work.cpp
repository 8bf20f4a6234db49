// cpu_work.cpp: the calibrated busy loop (design comment in cpu_work.hpp).
#include "real/cpu_work.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

namespace poolsim::real {
namespace {

// One calibration trial: 2^15 iterations, about 55 us here (0.58
// iterations/ns), timed on the monotonic clock (the vDSO: ~30 ns a read, under
// 0.1% of a trial; the thread CPU clock is a system call of ~0.5 us in this
// VM, 1% of a trial). The rate is the 90th PERCENTILE speed of 1001 trials
// (~55 ms): this VM interrupts a busy CPU about once every 0.4-1 ms, and
// one of its vCPUs also slows most quanta by a few percent in small steps,
// so the fastest tenth is the loop's own speed, without the OS noise. That is what a `cpu` phase
// means, in both halves: d of undisturbed work, which the machine's interruptions then lengthen;
// the simulator adds the profile's OS noise (noise_*) on top of the work, as the real machine adds
// its own on top of the loop. History (docs/reproductions.md, "What we changed";
// docs/containers.md): the first version kept the fastest of seven 2^20-iteration trials (~2 ms),
// mostly the loop between ticks, and long phases ran 2-4% slower than
// nominal; the median, then the fastest, of seven 8 ms trials fixed that by
// putting the ticks' share of the noise into the rate. Once the simulator
// injected the calibrated OS noise that share was counted twice: the
// container scenario predicted 87.5% CPU against 85.5% measured.
constexpr std::uint64_t kTrialUnits = std::uint64_t{1} << 15;
constexpr int kCalibrationTrials = 1001;
constexpr int kCanaryTrials = 301;

std::atomic<double> g_rate{0};       // the rate `cpu` phases are sized with
std::atomic<double> g_reference{0};  // the rate the machine profile states (1x speed)
std::once_flag g_once;
// Sink for the chain value so the optimiser must compute it.
std::atomic<std::uint64_t> g_sink{0};

// Speed probe: a phase is timed when it is at least 2^15 iterations long
// (~55 us here: two clock reads of ~0.3 us each are then under 1% of it, and
// the thread CPU clock's resolution is far finer) and it is the 8th such
// phase of its thread: under 0.2% of the run's CPU time in all. Two figures:
// - the phase's iterations per ns of thread CPU time, summed over the
//   sampled phases (what the OS's interruptions cost the phases: on this VM
//   the kernel charges an interrupt's time to the thread it interrupted);
// - the loop's own speed: the phase runs in blocks of 2^12 iterations (~7
//   us) timed on the monotonic clock (vDSO, ~30 ns), and its fastest block
//   is kept, up to 4,096 phases; the median of those is the speed. A phase
//   an interrupt hit still has clean blocks: the workload's own timer
//   interrupts (2,000 tasks sleeping 10 ms on 200 threads took a third of
//   every 100 us phase's CPU time here, 2026-12-03) do not read as a slower
//   machine, where a vCPU that runs several times slower slows every block.
constexpr std::uint64_t kProbeMinUnits = std::uint64_t{1} << 15;
constexpr std::uint64_t kProbeBlock = std::uint64_t{1} << 12;
constexpr std::uint32_t kProbeEvery = 8;
constexpr std::size_t kProbeKept = 4096;
std::atomic<bool> g_probe_on{false};
std::atomic<std::uint64_t> g_probe_units{0};
std::atomic<std::int64_t> g_probe_ns{0};
std::atomic<std::uint64_t> g_probe_phases{0};
std::array<std::atomic<double>, kProbeKept> g_probe_best;  // per phase: fastest block, units/ns
thread_local std::uint32_t t_probe_count = 0;

std::int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Runs `units` (at least two blocks) in blocks; returns the fastest whole
// block's speed in units per ns.
double burn_in_blocks(std::uint64_t units) {
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  std::uint64_t chain = 0;
  std::int64_t t = monotonic_ns();
  for (std::uint64_t left = units; left > 0;) {
    const std::uint64_t n = std::min(left, kProbeBlock);
    chain ^= burn_units(n);
    const std::int64_t t1 = monotonic_ns();
    if (n == kProbeBlock) best = std::min(best, t1 - t);
    t = t1;
    left -= n;
  }
  asm volatile("" : : "r"(chain));
  return static_cast<double>(kProbeBlock) / static_cast<double>(std::max<std::int64_t>(1, best));
}

}  // namespace

std::int64_t thread_cpu_clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void reserve_speed_probe() {
  for (auto& best : g_probe_best) best.store(0, std::memory_order_relaxed);
  g_probe_units.store(0, std::memory_order_relaxed);
  g_probe_ns.store(0, std::memory_order_relaxed);
  g_probe_phases.store(0, std::memory_order_relaxed);
  g_probe_on.store(false, std::memory_order_release);
}

void start_speed_probe() {
  g_probe_units.store(0, std::memory_order_relaxed);
  g_probe_ns.store(0, std::memory_order_relaxed);
  g_probe_phases.store(0, std::memory_order_relaxed);
  g_probe_on.store(true, std::memory_order_release);
}

WorkSample stop_speed_probe() {
  g_probe_on.store(false, std::memory_order_release);
  WorkSample w{g_probe_units.load(std::memory_order_acquire),
               g_probe_ns.load(std::memory_order_acquire),
               g_probe_phases.load(std::memory_order_acquire), 0};
  std::vector<double> best(std::min<std::size_t>(w.phases, kProbeKept));
  for (std::size_t i = 0; i < best.size(); ++i)
    best[i] = g_probe_best[i].load(std::memory_order_relaxed);
  if (!best.empty()) {
    const auto mid = best.begin() + static_cast<std::ptrdiff_t>(best.size() / 2);
    std::nth_element(best.begin(), mid, best.end());
    w.block_rate = *mid;
  }
  return w;
}

std::uint64_t burn_units(std::uint64_t units) {
  // xorshift64: each step depends on the previous one (no vectorisation, no
  // closed form), a handful of cycles per unit.
  std::uint64_t x = 0x9e3779b97f4a7c15ULL ^ units;
  for (std::uint64_t i = 0; i < units; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    asm volatile("" : "+r"(x));
  }
  return x;
}

double undisturbed_rate(int trials) {
  std::vector<double> rates;
  rates.reserve(static_cast<std::size_t>(trials));
  burn_units(kTrialUnits);  // warm up (page in the code, fill the predictors)
  for (int i = 0; i < trials; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    g_sink.fetch_xor(burn_units(kTrialUnits), std::memory_order_relaxed);
    const auto dt = std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::steady_clock::now() - t0)
                                                  .count());
    rates.push_back(static_cast<double>(kTrialUnits) / static_cast<double>(dt));
  }
  // The 90th percentile of the speeds: the loop with no interruption at all,
  // the same baseline as os_noise's undisturbed quantum (its 10th
  // percentile). The median held the small, frequent slowdowns of a noisy
  // vCPU (on this VM's CPU 0 half the 20 us quanta ran 3% over the fastest
  // tenth, on CPU 1 0.4%), which os_noise now counts as noise.
  const auto fast = rates.begin() + static_cast<std::ptrdiff_t>(rates.size() * 9 / 10);
  std::nth_element(rates.begin(), fast, rates.end());
  return *fast;
}

CpuWorkCalibration calibrate_cpu_work() {
  CpuWorkCalibration c;
  const std::int64_t t_begin = thread_cpu_clock_ns();
  c.units_per_ns = undisturbed_rate(kCalibrationTrials);
  c.trials = kCalibrationTrials;
  c.measured = Duration{thread_cpu_clock_ns() - t_begin};
  return c;
}

double canary_rate() { return undisturbed_rate(kCanaryTrials); }

double units_per_ns() {
  std::call_once(g_once, [] {
    if (g_rate.load(std::memory_order_acquire) <= 0) {
      const double rate = calibrate_cpu_work().units_per_ns;
      g_reference.store(rate, std::memory_order_release);
      g_rate.store(rate, std::memory_order_release);
    }
  });
  return g_rate.load(std::memory_order_acquire);
}

double reference_units_per_ns() {
  units_per_ns();
  return g_reference.load(std::memory_order_acquire);
}

void set_units_per_ns(double rate) {
  std::call_once(g_once, [] {});
  g_reference.store(rate, std::memory_order_release);
  g_rate.store(rate, std::memory_order_release);
}

void size_phases_at(double speed) {
  g_rate.store(reference_units_per_ns() * speed, std::memory_order_release);
}

void burn(Duration work) {
  if (work.count() <= 0) return;
  const auto units =
      static_cast<std::uint64_t>(std::round(static_cast<double>(work.count()) * units_per_ns()));
  if (units >= kProbeMinUnits && g_probe_on.load(std::memory_order_relaxed) &&
      ++t_probe_count % kProbeEvery == 0) {
    const std::int64_t t0 = thread_cpu_clock_ns();
    const double block_rate = burn_in_blocks(units);
    const std::int64_t dt = thread_cpu_clock_ns() - t0;
    g_probe_units.fetch_add(units, std::memory_order_relaxed);
    g_probe_ns.fetch_add(dt, std::memory_order_relaxed);
    const std::uint64_t i = g_probe_phases.fetch_add(1, std::memory_order_relaxed);
    if (i < kProbeKept) g_probe_best[i].store(block_rate, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t v = burn_units(units);
  asm volatile("" : : "r"(v));  // consume the chain without touching shared memory
}

void warm_work_loop() {
  const double rate = units_per_ns();
  if (rate <= 0) return;
  burn(Duration{static_cast<std::int64_t>(static_cast<double>(kTrialUnits) / rate)});
}

}  // namespace poolsim::real
