// calibrate_scheduler.cpp: the scheduler's experiments of `poolsim calibrate`
// (the methods and their comparison with perf bench sched pipe are in
// docs/calibration.md):
//   tick            1/HZ: jiffies per second from /proc/timer_list (root);
//                   else a CPU kept busy takes HZ local-timer interrupts a
//                   second (LOC in /proc/interrupts over a busy interval);
//                   else CONFIG_HZ from /proc/config.gz or /boot/config-*.
//   slice           sysctl_sched_base_slice, which the kernel has already
//                   scaled by 1 + ilog2(min(cpus, 8)): debugfs base_slice_ns,
//                   else debugfs sched/debug (readable on this VM), else the
//                   kernel's default for its version (0.75 ms before 6.15,
//                   0.70 ms from 6.15) times that factor; checked
//                   against the run lengths of two CPU-bound threads pinned to
//                   one CPU (EEVDF runs them about ceil(slice/tick) ticks in
//                   turn); if the observed quantum disagrees, the observed
//                   quantum is used instead.
//   switch_cost     pipe ping-pong between two threads pinned to one CPU: a
//                   round trip is two switches (as perf bench sched pipe).
//   cache_refill    time of a pass over a 256 KiB working set after a 16 MiB
//                   buffer evicted it, minus a warm pass.
//   migration_cost  the same pass right after moving to another CPU, minus a
//                   warm pass.
//   cache_hot_time  sysctl_sched_migration_cost, read from debugfs
//                   (sched/migration_cost_ns) or, before 5.13, procfs; where
//                   neither is readable (this VM: debugfs is locked down),
//                   the kernel's default, 0.5 ms (kernel/sched/fair.c).
//   newidle_random  the scheduler feature NI_RANDOM (proportional newidle
//                   balance) from debugfs (sched/features); where that is
//                   not readable (this VM), the kernel's version: on from
//                   6.19 and in 6.18 from 6.18.5 (the stable backport of
//                   "sched/fair: Proportional newidle balance").
//   sis_util        the scheduler feature SIS_UTIL (a wake-up's idle-CPU
//                   search bounded by the summed utilization) from debugfs;
//                   where that is not readable, the kernel's version: on from
//                   6.0 ("sched/fair: Introduce SIS_UTIL to search idle CPU
//                   based on sum of util_avg", default on since).
//   yield_cost      a thread alone on CPU 0: its CPU time per sched_yield,
//                   median of batches of 2,000 calls.
//   tbb_pause       oneTBB's prolonged_pause as scheduler_common.h describes
//                   it (pauses, doubling up to 16 per step, until 1,000 TSC
//                   ticks have passed; 80 pause steps where there is no
//                   TSC): wall time per call, median of batches of 2,000.
#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "real/calibrate_experiments.hpp"

namespace poolsim::real::calib {

namespace {
long long read_loc_interrupts(int cpu) {
  std::ifstream f("/proc/interrupts");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag != "LOC:") continue;
    long long v = 0;
    for (int i = 0; i <= cpu && in >> v; ++i) {
    }
    return v;
  }
  return -1;
}

// The kernel's jiffies counter (root can read /proc/timer_list); -1 if absent.
long long read_jiffies() {
  std::ifstream f("/proc/timer_list");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("jiffies: ", 0) == 0) return std::atoll(line.c_str() + 9);
  return -1;
}

// The running kernel's version from uname: major, minor, patch.
struct KernelVersion {
  int major = 0, minor = 0, patch = 0;
  bool at_least(int ma, int mi, int pa = 0) const {
    if (major != ma) return major > ma;
    if (minor != mi) return minor > mi;
    return patch >= pa;
  }
};
KernelVersion kernel_version() {
  struct utsname u {};
  uname(&u);
  KernelVersion v;
  std::sscanf(u.release, "%d.%d.%d", &v.major, &v.minor, &v.patch);
  return v;
}

int config_hz() {
  struct utsname u {};
  uname(&u);
  const std::string boot = std::string("/boot/config-") + u.release;
  for (const std::string& cmd :
       {std::string("zcat /proc/config.gz 2>/dev/null"), "cat " + boot + " 2>/dev/null"}) {
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) continue;
    char buf[512];
    int hz = 0;
    while (fgets(buf, sizeof buf, p))
      if (std::strncmp(buf, "CONFIG_HZ=", 10) == 0) hz = std::atoi(buf + 10);
    pclose(p);
    if (hz > 0) return hz;
  }
  return 0;
}
}  // namespace

Measurement measure_tick(int rounds) {
  std::vector<double> samples;
  // Preferred: jiffies advance exactly HZ times a second, whatever the load.
  for (int r = 0; r < rounds; ++r) {
    const long long j0 = read_jiffies();
    const auto t0 = now_ns();
    timespec d{0, 250'000'000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
    const long long j1 = read_jiffies();
    const auto t1 = now_ns();
    if (j0 < 0 || j1 <= j0) break;
    samples.push_back(static_cast<double>(j1 - j0) / ((t1 - t0) * 1e-9));
  }
  if (!samples.empty()) {
    for (auto& hz : samples)
      for (double c : {100.0, 250.0, 300.0, 1000.0})
        if (std::fabs(hz - c) / c < 0.05) hz = c;
    for (auto& hz : samples) hz = 1.0 / hz;
    return summarize("tick", samples, "jiffies per second (/proc/timer_list)");
  }
  // Else: local timer interrupts on a busy CPU (other hrtimers can only add
  // to the count, so the rate is an upper bound on HZ).
  for (int r = 0; r < rounds; ++r) {
    double hz = 0;
    std::thread t([&] {
      pin_self(0);
      const long long before = read_loc_interrupts(0);
      const auto t0 = now_ns();
      while (now_ns() - t0 < 300'000'000) {
      }
      const long long after = read_loc_interrupts(0);
      if (before >= 0 && after > before)
        hz = static_cast<double>(after - before) / ((now_ns() - t0) * 1e-9);
    });
    t.join();
    if (hz > 0) samples.push_back(hz);
  }
  std::string method = "local timer interrupts (LOC) on a busy CPU";
  if (samples.empty()) {
    const int hz = config_hz();
    if (hz <= 0)
      throw std::runtime_error(
          "calibrate: cannot determine the scheduler tick (no LOC counter, no kernel config)");
    samples.push_back(hz);
    method = "CONFIG_HZ from the kernel config";
  }
  // Snap to the nearest configurable HZ when within 15%: the interrupt count
  // also includes the odd hrtimer interrupt.
  for (auto& hz : samples)
    for (double c : {100.0, 250.0, 300.0, 1000.0})
      if (std::fabs(hz - c) / c < 0.15) hz = c;
  for (auto& hz : samples) hz = 1.0 / hz;
  return summarize("tick", samples, method);
}

namespace {
// Run lengths of two CPU-bound threads sharing CPU 0. A run ends when the
// other thread has taken the CPU (a shared owner word changed hands), not at
// any gap in the clock: on a virtual machine the hypervisor steals short
// gaps from a running thread, and interrupts do too, without a switch.
std::vector<double> observed_quanta(double seconds) {
  std::vector<double> runs[2];
  std::atomic<int> ready{0};
  std::atomic<int> owner{-1};
  auto spin = [&](int id) {
    pin_self(0);
    ready.fetch_add(1);
    while (ready.load() < 2) sched_yield();
    const auto end = now_ns() + static_cast<std::int64_t>(seconds * 1e9);
    std::int64_t last = now_ns(), run_start = 0;
    bool have_run = false;
    for (;;) {
      const auto t = now_ns();
      if (owner.load(std::memory_order_relaxed) != id) {  // the other thread ran since
        if (have_run) runs[id].push_back((last - run_start) * 1e-9);
        owner.store(id, std::memory_order_relaxed);
        run_start = t;
        have_run = true;
      }
      last = t;
      if (t > end) break;
    }
  };
  std::thread a(spin, 0), b(spin, 1);
  a.join();
  b.join();
  std::vector<double> all;
  for (auto& r : runs)
    if (r.size() > 2) all.insert(all.end(), r.begin() + 1, r.end());  // drop the first run
  return all;
}
}  // namespace

std::optional<double> sched_debug_sysctl(std::string_view text, std::string_view name) {
  const std::string key = "." + std::string(name);
  std::size_t at = 0;
  while ((at = text.find(key, at)) != std::string_view::npos) {
    const std::size_t end = at + key.size();
    at = end;
    // The whole name: `.NAME` then blanks and a colon (not a longer name).
    std::size_t i = end;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || text[i] != ':') continue;
    const std::size_t eol = text.find('\n', i);
    const std::string value(text.substr(i + 1, eol == std::string_view::npos ? eol : eol - i - 1));
    char* stop = nullptr;
    const double v = std::strtod(value.c_str(), &stop);
    if (stop == value.c_str()) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

Measurement measure_slice(double tick, double seconds, int cpus) {
  const auto quanta = observed_quanta(seconds);
  const double quantum = quantile(quanta, 0.5);
  // sysctl_sched_base_slice is the slice itself: the kernel scales its
  // normalized value by 1 + ilog2(min(CPUs, 8)) at boot (update_sysctl,
  // SCHED_TUNABLESCALING_LOG), and debugfs base_slice_ns (a u32 on that
  // variable) and sched/debug show the scaled value (this 2-CPU VM: 1.4 ms).
  double slice = 0;
  std::string method;
  {
    std::ifstream f("/sys/kernel/debug/sched/base_slice_ns");
    long long ns = 0;
    if (f >> ns && ns > 0) {
      slice = ns * 1e-9;
      method = "debugfs base_slice_ns (sysctl_sched_base_slice, scaled by the kernel)";
    }
  }
  if (slice == 0) {
    std::ifstream f("/sys/kernel/debug/sched/debug");
    std::stringstream text;
    text << f.rdbuf();
    if (const auto ms = sched_debug_sysctl(text.str(), "sysctl_sched_base_slice"); ms && *ms > 0) {
      slice = *ms * 1e-3;
      method = "debugfs sched/debug sysctl_sched_base_slice (scaled by the kernel)";
    }
  }
  const int factor = 1 + static_cast<int>(std::floor(std::log2(std::min(cpus, 8))));
  if (slice == 0) {
    const KernelVersion k = kernel_version();
    const double base = k.at_least(6, 15) ? 0.70e-3 : 0.75e-3;
    slice = base * factor;
    method = fmt::format("kernel {}.{} default base slice {} ms x{} (1+ilog2 CPUs)", k.major,
                         k.minor, base * 1e3, factor);
  }
  const double expected = tick > 0 ? std::ceil(slice / tick - 1e-9) * tick : slice;
  if (!quanta.empty() && std::fabs(quantum - expected) > 0.25 * expected) {
    method = fmt::format(
        "observed run length of 2 CPU-bound threads on one CPU ({:.3g} ms; {} would give {:.3g} "
        "ms)",
        quantum * 1e3, method, expected * 1e3);
    slice = quantum;
  } else {
    method += fmt::format(
        "; 2 CPU-bound threads on one CPU ran {:.3g} ms in turn (p10 {:.3g}, p90 {:.3g})",
        quantum * 1e3, quantile(quanta, 0.1) * 1e3, quantile(quanta, 0.9) * 1e3);
  }
  Measurement m = summarize("slice", {slice}, method);
  if (!quanta.empty()) {
    m.p10 = quantile(quanta, 0.1);
    m.p90 = quantile(quanta, 0.9);
    m.samples = static_cast<int>(quanta.size());
  }
  return m;
}

Measurement measure_switch(int batches, int round_trips) {
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    int ping[2], pong[2];
    if (pipe(ping) || pipe(pong)) throw std::runtime_error("calibrate: pipe() failed");
    std::thread peer([&] {
      pin_self(0);
      char c;
      for (int i = 0; i < round_trips; ++i) {
        if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) break;
      }
    });
    double per = 0;
    std::thread self([&] {
      pin_self(0);
      char c = 'x';
      const auto t0 = now_ns();
      for (int i = 0; i < round_trips; ++i) {
        if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) break;
      }
      per = static_cast<double>(now_ns() - t0) / round_trips * 1e-9;
    });
    self.join();
    peer.join();
    for (int fd : {ping[0], ping[1], pong[0], pong[1]}) close(fd);
    samples.push_back(per / 2);
  }
  return summarize(
      "switch_cost", samples,
      fmt::format(
          "pipe ping-pong pinned to one CPU, {} round trips x {} batches, half a round trip",
          round_trips, batches));
}

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Our own loop with the behaviour oneTBB documents for prolonged_pause.
void prolonged_pause_like() {
#if defined(__x86_64__) || defined(__i386__)
  std::uint64_t prev = __builtin_ia32_rdtsc();
  const std::uint64_t finish = prev + 1000;
  int step = 1;
  while (prev < finish) {
    for (int i = 0; i < step; ++i) cpu_relax();
    if (step < 16) step *= 2;
    const std::uint64_t now = __builtin_ia32_rdtsc();
    if (now <= prev) break;  // moved to another CPU, or wrapped
    prev = now;
  }
#else
  for (int i = 0; i < 80; ++i) cpu_relax();
#endif
}
}  // namespace

std::pair<Measurement, Measurement> measure_spin_costs(int batches) {
  std::vector<double> yields, pauses;
  constexpr int kCalls = 2000;
  std::thread t([&] {
    pin_self(0);
    for (int b = 0; b < batches; ++b) {
      const auto c0 = thread_cpu_ns();
      for (int i = 0; i < kCalls; ++i) sched_yield();
      yields.push_back(static_cast<double>(thread_cpu_ns() - c0) / kCalls * 1e-9);
      const auto t0 = now_ns();
      for (int i = 0; i < kCalls; ++i) prolonged_pause_like();
      pauses.push_back(static_cast<double>(now_ns() - t0) / kCalls * 1e-9);
    }
  });
  t.join();
  return {summarize("yield_cost", yields,
                    fmt::format("a thread alone on CPU 0: CPU time per sched_yield, {} batches "
                                "of {} calls",
                                batches, kCalls)),
          summarize("tbb_pause", pauses,
                    fmt::format("oneTBB's prolonged_pause (pauses until 1,000 TSC ticks passed), "
                                "wall time per call, {} batches of {} calls",
                                batches, kCalls))};
}

namespace {
// One pass over a working set, touching each cache line (read-modify-write).
std::int64_t pass_ns(std::vector<std::uint64_t>& ws) {
  const auto t0 = now_ns();
  for (std::size_t i = 0; i < ws.size(); i += 8) ws[i] += 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return now_ns() - t0;
}
}  // namespace

std::pair<Measurement, Measurement> measure_cache(int samples, int cpus) {
  std::vector<double> refill, migrate;
  std::thread t([&] {
    std::vector<std::uint64_t> ws(256 * 1024 / 8, 1), evict(16 * 1024 * 1024 / 8, 1);
    pin_self(0);
    for (int i = 0; i < samples; ++i) {
      pass_ns(ws);
      const auto warm = pass_ns(ws);
      pass_ns(evict);
      const auto cold = pass_ns(ws);
      refill.push_back(std::max<std::int64_t>(0, cold - warm) * 1e-9);
      if (cpus > 1) {
        pin_self(i % 2 == 0 ? 0 : 1);
        pass_ns(ws);
        const auto warm2 = pass_ns(ws);
        pin_self(i % 2 == 0 ? 1 : 0);
        const auto moved = pass_ns(ws);
        migrate.push_back(std::max<std::int64_t>(0, moved - warm2) * 1e-9);
      }
    }
  });
  t.join();
  if (migrate.empty()) migrate.push_back(0);
  return {
      summarize("cache_refill", refill,
                "256 KiB working set re-read after a 16 MiB buffer evicted it, minus a warm pass"),
      summarize(
          "migration_cost", migrate,
          "256 KiB working set re-read right after moving to another CPU, minus a warm pass")};
}

Measurement measure_cache_hot_time() {
  for (const char* path :
       {"/sys/kernel/debug/sched/migration_cost_ns", "/proc/sys/kernel/sched_migration_cost_ns"}) {
    std::ifstream f(path);
    long long ns = -1;
    if (f >> ns && ns >= 0)
      return summarize("cache_hot_time", {static_cast<double>(ns) * 1e-9},
                       fmt::format("sysctl_sched_migration_cost from {}", path));
  }
  return summarize("cache_hot_time", {500e-6},
                   "sysctl_sched_migration_cost not readable (debugfs, procfs): the kernel's "
                   "default, 0.5 ms");
}

namespace {
// A scheduler feature of this kernel as a 0/1 profile field: from debugfs
// sched/features where readable ("NAME" on; "NO_NAME" or absent off), else
// whether the kernel's version has it (`since`: the versions that do, in
// words).
Measurement sched_feature_field(MachineFieldName field, const std::string& name,
                                bool (*in_version)(const KernelVersion&), const char* since) {
  std::ifstream f("/sys/kernel/debug/sched/features");
  std::string features;
  if (std::getline(f, features)) {
    const std::string padded = " " + features + " ";
    const bool off = padded.find(" NO_" + name + " ") != std::string::npos;
    const bool on = !off && padded.find(" " + name + " ") != std::string::npos;
    return summarize(field, {on ? 1.0 : 0.0},
                     fmt::format("the scheduler feature {} in debugfs sched/features",
                                 on    ? name
                                 : off ? "NO_" + name
                                       : name + " absent"));
  }
  const KernelVersion k = kernel_version();
  const bool on = in_version(k);
  return summarize(field, {on ? 1.0 : 0.0},
                   fmt::format("debugfs sched/features not readable: kernel {}.{}.{} {} {} ({})",
                               k.major, k.minor, k.patch, on ? "has" : "predates", name, since));
}
}  // namespace

// Is NI_RANDOM on in this kernel (see the header comment)?
Measurement measure_newidle_random() {
  return sched_feature_field(
      "newidle_random", "NI_RANDOM",
      [](const KernelVersion& k) {
        return k.at_least(6, 19) || (k.major == 6 && k.minor == 18 && k.patch >= 5);
      },
      "the proportional newidle balance: 6.18.5 and 6.19 on");
}

// Is SIS_UTIL on in this kernel (see the header comment)?
Measurement measure_sis_util() {
  return sched_feature_field(
      "sis_util", "SIS_UTIL", [](const KernelVersion& k) { return k.at_least(6, 0); }, "6.0 on");
}

}  // namespace poolsim::real::calib
