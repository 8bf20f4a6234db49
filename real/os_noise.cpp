// os_noise.cpp: the fixed-work-quantum benchmark (design comment in os_noise.hpp).
#include "real/os_noise.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "real/affinity.hpp"
#include "real/cpu_work.hpp"

namespace poolsim::real {
namespace {

// A quantum of ~20 us: long against a clock read (~30 ns through the vDSO),
// short against the interruptions it must resolve (a few us to a tick).
constexpr Duration kQuantum = std::chrono::microseconds(20);
// An interrupted quantum is longer than the undisturbed one by more than
// this much and this fraction of it (the loop's own jitter stays under both).
constexpr Duration kMinExcess = std::chrono::microseconds(2);
constexpr double kMinExcessFraction = 0.10;

std::int64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::int64_t own_involuntary_switches() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nivcsw;
}

// The CPUs to spin on: the allowed ones (CPU 0 if the mask is unreadable).
std::vector<int> usable_cpu_list() {
  std::vector<int> cpus = allowed_cpus();
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

// One CPU's spinner: waits for the common start, then times quanta until the
// window has passed.
void fwq_spin(int cpu, std::uint64_t units, std::int64_t window_ns, const std::atomic<bool>& go,
              FwqSeries& out) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
  out.quanta_ns.reserve(static_cast<std::size_t>(window_ns / kQuantum.count()) + 16);
  const std::int64_t sw0 = own_involuntary_switches();
  const std::int64_t cpu0 = thread_cpu_clock_ns();
  const std::int64_t start = mono_ns();
  std::int64_t t = start;
  std::uint64_t sink = 0;
  while (t - start < window_ns) {
    sink ^= burn_units(units);
    const std::int64_t t1 = mono_ns();
    out.quanta_ns.push_back(t1 - t);
    t = t1;
  }
  out.switches = own_involuntary_switches() - sw0;
  out.cpu_ns = thread_cpu_clock_ns() - cpu0;
  out.wall_ns = t - start;
  asm volatile("" : : "r"(sink));
}

Duration quantile(std::vector<Duration> v, double q) {
  if (v.empty()) return Duration{0};
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  const auto i = std::min(k, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

}  // namespace

OsNoise measure_os_noise(Duration window, int spinners) {
  std::vector<int> cpus = usable_cpu_list();
  if (spinners > 0 && static_cast<std::size_t>(spinners) < cpus.size())
    cpus.resize(static_cast<std::size_t>(spinners));
  const auto units = static_cast<std::uint64_t>(
      std::llround(static_cast<double>(kQuantum.count()) * units_per_ns()));
  std::vector<FwqSeries> results(cpus.size());
  std::atomic<bool> go{false};
  {
    std::vector<std::thread> threads;
    threads.reserve(cpus.size());
    for (std::size_t i = 0; i < cpus.size(); ++i)
      threads.emplace_back(fwq_spin, cpus[i], units, window.count(), std::cref(go),
                           std::ref(results[i]));
    go.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
  }
  return summarize_fwq(results, window);
}

namespace {

// Quanta per baseline block: about 20 ms of 20 us quanta, short against the
// minutes over which this VM's vCPU changes speed, long against one
// interruption (a tick's preemption is ~200 quanta).
constexpr std::size_t kBaselineBlock = 1024;

// The undisturbed quantum of each block of kBaselineBlock quanta: its 10th
// percentile (a last block shorter than half of one joins the one before).
// A global baseline read a vCPU running 12% slow for part of the window as
// thousands of 2 us interruptions (calibration of 2026-12-05 03:50 UTC:
// 16,245 interrupted quanta against 4,596 ten minutes before, median
// loss 2.35 against 5.39 us).
std::vector<std::int64_t> block_baselines(const std::vector<std::int64_t>& q) {
  std::vector<std::int64_t> base(q.size());
  std::size_t begin = 0;
  while (begin < q.size()) {
    std::size_t end = std::min(q.size(), begin + kBaselineBlock);
    if (q.size() - end < kBaselineBlock / 2) end = q.size();
    std::vector<std::int64_t> block(q.begin() + static_cast<std::ptrdiff_t>(begin),
                                    q.begin() + static_cast<std::ptrdiff_t>(end));
    const auto p10 = block.begin() + static_cast<std::ptrdiff_t>(block.size() / 10);
    std::nth_element(block.begin(), p10, block.end());
    std::fill(base.begin() + static_cast<std::ptrdiff_t>(begin),
              base.begin() + static_cast<std::ptrdiff_t>(end), *p10);
    begin = end;
  }
  return base;
}

}  // namespace

OsNoise summarize_fwq(const std::vector<FwqSeries>& results, Duration window) {
  OsNoise n;
  n.window = window;
  n.cpus = static_cast<int>(results.size());
  std::vector<Duration> undisturbed;  // each CPU's undisturbed quantum (its blocks' median)
  Duration busy{0};
  std::int64_t uncharged = 0;  // wall time the spinners' CPU clocks did not count
  Duration all_excess{0};      // every quantum's excess, interrupted or not
  for (const FwqSeries& r : results) {
    if (r.quanta_ns.empty()) continue;
    // The undisturbed quantum: the 10th percentile of its block of this
    // CPU's quanta (the fastest one is an extreme of thousands, ~0.5%
    // below it); this CPU's is the median of its blocks'.
    const std::vector<std::int64_t> base = block_baselines(r.quanta_ns);
    std::vector<std::int64_t> sorted_base = base;
    const auto mid = sorted_base.begin() + static_cast<std::ptrdiff_t>(sorted_base.size() / 2);
    std::nth_element(sorted_base.begin(), mid, sorted_base.end());
    undisturbed.push_back(Duration{*mid});
    for (std::size_t i = 0; i < r.quanta_ns.size(); ++i) {
      const std::int64_t d = r.quanta_ns[i], q0 = base[i];
      const auto threshold = std::max<std::int64_t>(
          kMinExcess.count(), std::llround(kMinExcessFraction * static_cast<double>(q0)));
      busy += Duration{d};
      if (d > q0) all_excess += Duration{d - q0};
      if (d - q0 > threshold) n.stolen.push_back(Duration{d - q0});
    }
    n.quanta += static_cast<std::int64_t>(r.quanta_ns.size());
    n.switches += r.switches;
    uncharged += std::max<std::int64_t>(0, r.wall_ns - r.cpu_ns);
  }
  n.quantum = quantile(undisturbed, 0.5);
  n.events = static_cast<std::int64_t>(n.stolen.size());
  if (n.events > 0) {
    n.interval = Duration{busy.count() / n.events};
    n.median = quantile(n.stolen, 0.5);
    n.p99 = quantile(n.stolen, 0.99);
    n.preempt = std::min(1.0, static_cast<double>(n.switches) / static_cast<double>(n.events));
    // The mean charges each counted interruption with every excess, the
    // quanta slowed by less than the threshold included: on this VM's CPU 0
    // half the quanta ran 0.7 us (3%) over the undisturbed one, a share of
    // the CPU that a `cpu` phase loses too but no interruption counted.
    n.mean = Duration{all_excess.count() / n.events};
    n.charged =
        std::clamp(1.0 - static_cast<double>(uncharged) /
                             static_cast<double>(std::max<std::int64_t>(all_excess.count(), 1)),
                   0.0, 1.0);
  }
  return n;
}

}  // namespace poolsim::real
