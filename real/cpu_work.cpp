// cpu_work.cpp: the calibrated busy loop (design comment in cpu_work.hpp).
#include "real/cpu_work.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <vector>

namespace poolsim::real {
namespace {

// One calibration trial: 2^22 iterations take about 8 ms here (0.52
// iterations/ns), i.e. each trial spans about two scheduler ticks at HZ=250,
// so the timer interrupts and the cache lines they evict are in every trial
// in about the proportion a long `cpu` phase sees them. The rate is the
// FASTEST of seven trials (about 60 ms in all): a trial slowed by another
// process or the hypervisor is discarded. When the trials disagree by more
// than 15% (a disturbed window), seven more are run and the fastest of all
// is kept.
// History (docs/reproductions.md, "What we changed"): the first version kept
// the fastest of seven 2^20-iteration trials (~2 ms), mostly the loop between
// ticks, and long phases ran 2-4% slower than nominal; the median of seven
// 8 ms trials fixed that but took a whole disturbed window as the rate once
// (tasks ran 30% short for one scenario's repetitions).
constexpr std::uint64_t kTrialUnits = std::uint64_t{1} << 22;
constexpr int kTrials = 7;
constexpr double kDisturbed = 1.15;  // fastest / slowest trial beyond this: measure again

std::atomic<double> g_rate{0};
std::once_flag g_once;
// Sink for the chain value so the optimiser must compute it.
std::atomic<std::uint64_t> g_sink{0};

// Speed probe: a phase is timed when it is at least 2^15 iterations long
// (~60 us here: two clock reads of ~0.3 us each are then under 1% of it, and
// the thread CPU clock's resolution is far finer) and it is the 8th such
// phase of its thread: under 0.2% of the run's CPU time in all.
constexpr std::uint64_t kProbeMinUnits = std::uint64_t{1} << 15;
constexpr std::uint32_t kProbeEvery = 8;
std::atomic<bool> g_probe_on{false};
std::atomic<std::uint64_t> g_probe_units{0};
std::atomic<std::int64_t> g_probe_ns{0};
std::atomic<std::uint64_t> g_probe_phases{0};
thread_local std::uint32_t t_probe_count = 0;

}  // namespace

std::int64_t thread_cpu_clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void start_speed_probe() {
  g_probe_units.store(0, std::memory_order_relaxed);
  g_probe_ns.store(0, std::memory_order_relaxed);
  g_probe_phases.store(0, std::memory_order_relaxed);
  g_probe_on.store(true, std::memory_order_release);
}

WorkSample stop_speed_probe() {
  g_probe_on.store(false, std::memory_order_release);
  return WorkSample{g_probe_units.load(std::memory_order_acquire),
                    g_probe_ns.load(std::memory_order_acquire),
                    g_probe_phases.load(std::memory_order_acquire)};
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

CpuWorkCalibration calibrate_cpu_work() {
  CpuWorkCalibration c;
  std::vector<double> rates;
  const std::int64_t t_begin = thread_cpu_clock_ns();
  burn_units(kTrialUnits / 16);  // warm up (frequency ramp, page in the code)
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kTrials; ++i) {
      const std::int64_t t0 = thread_cpu_clock_ns();
      g_sink.fetch_xor(burn_units(kTrialUnits), std::memory_order_relaxed);
      const std::int64_t dt = std::max<std::int64_t>(1, thread_cpu_clock_ns() - t0);
      rates.push_back(static_cast<double>(kTrialUnits) / static_cast<double>(dt));
    }
    const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
    if (*hi <= *lo * kDisturbed) break;
  }
  c.units_per_ns = *std::max_element(rates.begin(), rates.end());
  c.trials = static_cast<int>(rates.size());
  c.measured = Duration{thread_cpu_clock_ns() - t_begin};
  return c;
}

double units_per_ns() {
  std::call_once(g_once, [] {
    if (g_rate.load(std::memory_order_acquire) <= 0)
      g_rate.store(calibrate_cpu_work().units_per_ns, std::memory_order_release);
  });
  return g_rate.load(std::memory_order_acquire);
}

void set_units_per_ns(double rate) {
  std::call_once(g_once, [] {});
  g_rate.store(rate, std::memory_order_release);
}

void burn(Duration work) {
  if (work.count() <= 0) return;
  const auto units =
      static_cast<std::uint64_t>(std::round(static_cast<double>(work.count()) * units_per_ns()));
  if (units >= kProbeMinUnits && g_probe_on.load(std::memory_order_relaxed) &&
      ++t_probe_count % kProbeEvery == 0) {
    const std::int64_t t0 = thread_cpu_clock_ns();
    const std::uint64_t v = burn_units(units);
    const std::int64_t dt = thread_cpu_clock_ns() - t0;
    asm volatile("" : : "r"(v));
    g_probe_units.fetch_add(units, std::memory_order_relaxed);
    g_probe_ns.fetch_add(dt, std::memory_order_relaxed);
    g_probe_phases.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t v = burn_units(units);
  asm volatile("" : : "r"(v));  // consume the chain without touching shared memory
}

}  // namespace poolsim::real
