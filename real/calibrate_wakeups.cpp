// calibrate_wakeups.cpp: the wake-up experiments of `poolsim calibrate`
// (methods and independent checks in docs/calibration.md):
//   wakeup_latency  condition-variable signal to the waiter running, waiter
//                   on another CPU kept awake by a SCHED_IDLE spinner (a
//                   woken normal task preempts an idle-policy task at once).
//   idle_exit       the same wake onto that CPU left idle for 1 ms, minus
//                   the above.
//   idle_exit_late, idle_exit_late_time
//                   the same wakes after 2, 5, 10, 20 and 50 ms of idle too
//                   (three rounds of every length, interleaved): per length
//                   the median less the 1 ms one, less idle_refill's share
//                   (the woken thread's refill, which the model charges
//                   once it runs), fitted by fit_idle_refill. A halted vCPU
//                   comes back slower the longer it was halted (probe of
//                   2026-12-07, bench/probes/idle_wake.cpp: 19-20 us after
//                   20-300 us, 22 after 1 ms, 48 after 5 ms, 95 after 20 ms).
//   timer_slack     overshoot of a 1 ms clock_nanosleep on a CPU kept awake
//                   by a SCHED_IDLE spinner.
//   timer_idle_exit the same sleeps on that CPU left idle, minus the above:
//                   what a timer that must wake a halted vCPU adds.
//   hrtimer_slack   in the same awake blocks, as many 1 ms timerfd expiries
//                   (timerfd_settime starts its hrtimer without slack; Asio's
//                   reactor waits on one): timer_slack's median less theirs.
//                   The thread's own slack (prctl PR_GET_TIMERSLACK) goes
//                   in the method text as a check (50 us by default).
//   timer_stall_*   3,000 more of those idle sleeps (6,000 without
//                   --quick) in three blocks spread over the calibration:
//                   the share more than kStallFactor times their median
//                   late (the host held the halted vCPU back: 0.05-4% of
//                   sleeps 0.5 ms or more late here, varying within
//                   minutes; none on a CPU kept awake), and the mean and
//                   median of their lateness beyond the median, from the
//                   block whose share is the median (timer_stall_fields).
// Wake-up placement:
//   wake_pack_util  a waker pinned to CPU 0 signals an unpinned waiter (a
//                   condition variable, every 3 ms) while a load thread on
//                   CPU 0 keeps it busy a fraction d of each millisecond, for
//                   d = 0, 20, 40, 60, 80, 90%; CPU 1 is idle, and the waiter
//                   is moved there before each wait (its previous CPU, idle
//                   for 3 ms when it is woken). The waiter runs
//                   on CPU 0 (packed) or CPU 1 (an idle CPU woken). Mainline
//                   Linux wakes CPU 1 (select_idle_sibling); a host that
//                   packs keeps it on CPU 0 while CPU 0 is lightly used. The
//                   value is where the packed fraction crosses one half
//                   between the most loaded level at which most wakes were
//                   packed and the level above it (1 if that is the top
//                   level; 0: no level packed most).
//   fork_pack_util  the same for new threads, measured by the creator's own
//                   utilization instead of a load thread's (a load thread
//                   mixes two conditions: this VM packs a new thread only
//                   while nothing else is queued on the creator's CPU, and
//                   only while that CPU's utilization is low; the duty-cycle
//                   version gave 0.26-0.62 in seven calibrations of
//                   2026-12-05). A lone creator pinned to CPU 0 sleeps 250 ms
//                   (PELT forgets what ran before), then 24 times: spins 6
//                   ms of CPU, sleeps 1 ms, is allowed both CPUs (it stays
//                   on CPU 0), reads its utilization (se.avg.util_avg of
//                   /proc/thread-self/sched; else the PELT arithmetic of its
//                   run and sleep times) and creates a thread that reads its
//                   CPU first thing; CPU 1 idle. Its utilization climbs from
//                   0 to about 0.85. The value is the utilization below which
//                   "packed" misplaces the fewest creations
//                   (fork_pack_threshold). Mainline Linux starts every one
//                   on the idle CPU 1 (sched_balance_find_dst_group: more
//                   idle CPUs).
//   wake_cost       the waker's thread CPU time across one FUTEX_WAKE of a
//                   thread blocked in FUTEX_WAIT on the waker's own CPU (both
//                   pinned to CPU 0, a wake every 2 ms), median, minus an
//                   empty pair of clock reads.
//   wake_ipi        the same with the waiter pinned to the idle CPU 1, minus
//                   wake_cost (the inter-processor interrupt).
//   idle_refill, idle_evict_time
//                   a lone sleeper pinned to the last CPU, left idle (nothing
//                   else of the calibration runs), sleeps runs of 80, 40, 34,
//                   28, 22 and 18 relative clock_nanosleeps of 1, 2, 5, 10,
//                   20 and 50 ms, the first 40, 10, 4, 3, 2 and 2 of them
//                   left out (after a busy spell the first sleeps cost what
//                   they cost awake: timer_idle_run's settling); its thread
//                   CPU per sleep, median per length; three such blocks
//                   spread over the calibration (the host's load moves it:
//                   30-55 us at 50 ms in two calibrations 20 minutes apart),
//                   per length the median of the blocks, less the 1 ms one,
//                   fitted by fit_idle_refill. The mechanism (probe of
//                   2026-12-05, docs/calibration.md): reading a 256 KiB
//                   buffer right after such a sleep took 2.4 us after 0.2-1
//                   ms and 9-12 us after 10-50 ms (1.6 us warm), while a
//                   loop on registers did not change: the host evicts a
//                   halted vCPU's caches while it idles.
//   timer_irq       a thread on CPU 0 runs bursts of fixed-work quanta (4 ms
//                   of every 5 ms) while a SCHED_IDLE thread on CPU 0 sleeps
//                   to an absolute time in the middle of each burst (timer
//                   slack 1 ns): its timer fires on CPU 0, wakes it onto CPU
//                   0's queue, and it does not preempt (it runs in the gap).
//                   Per burst, the quanta's time beyond a clean quantum in
//                   the 300 us from the expiry, less the same in 300 us
//                   a millisecond before it; the mean over the bursts.
//   futex_call      blocks of 1,000 FUTEX_WAKE calls on a word nobody waits
//                   on, timed with the thread's CPU clock: the CPU of a
//                   system call that neither sleeps nor wakes (a contended
//                   queue lock's calls, sim/queue_lock.hpp); median per call.
//   futex_wait_check a std::mutex held on CPU 1 for a random 0 to 4 futex
//                   calls' CPU (at least 1,000 ns) while a thread on CPU 0
//                   tries to take it (glibc's
//                   __lll_lock_wait: the word to 2, FUTEX_WAIT). Per try the
//                   remaining hold (the holder's release less the waiter's
//                   attempt, both by the time-stamp counter) and whether
//                   the waiter switched voluntarily (getrusage); the value
//                   is the remaining hold that best splits the tries that
//                   slept from those that did not (fewest on the wrong
//                   side), the median of 3 rounds. Below it the release
//                   comes while the waiter is still on its way into the
//                   kernel's check or before schedule() takes it off.
#include <fmt/format.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>

#include "models/assert.hpp"
#include "models/machine.hpp"
#include "real/affinity.hpp"
#include "real/backend.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/cpu_work.hpp"

namespace poolsim::real::calib {

// A timer sleep more than this many times the median late was held back by
// the host (timer_stall_*): the stalls here are 0.5-5 ms against a median
// of ~0.1 ms, and a sleeper kept awake has none beyond 2x.
constexpr int kStallFactor = 4;

namespace {
// The condition-variable wake both wake experiments time: `samples` times,
// the waker, pinned to `waker_cpu`, signals a waiter every `gap_ns` (a skipped
// beat, when the waiter is not yet waiting, is retried at the next one).
// The waiter runs `before_wait` before each wait (under the lock) and
// `on_woken(signal time)` when it runs again.
void cv_wakes(int waker_cpu, int samples, std::int64_t gap_ns,
              const std::function<void()>& before_wait,
              const std::function<void(std::int64_t)>& on_woken) {
  std::mutex m;
  std::condition_variable cv;
  bool go = false, done = false, waiting = false;
  std::int64_t t_signal = 0;
  std::thread waiter([&] {
    std::unique_lock lk(m);
    while (!done) {
      before_wait();
      waiting = true;
      cv.wait(lk, [&] { return go || done; });
      if (done) break;
      on_woken(t_signal);
      go = false;
      waiting = false;
    }
  });
  pin_self(waker_cpu);
  std::int64_t next = now_ns();
  for (int i = 0; i < samples; ++i) {
    next += gap_ns;  // a fixed schedule: the signal's phase does not follow the waiter
    sleep_until_ns(next);
    std::unique_lock lk(m);
    if (!waiting) {
      --i;
      continue;
    }
    go = true;
    t_signal = now_ns();
    cv.notify_one();
  }
  {
    std::unique_lock lk(m);
    done = true;
  }
  cv.notify_one();
  waiter.join();
}

// Signal-to-running latency of a condition-variable wake onto CPU `to`.
std::vector<double> wake_latencies(int to, int samples, std::int64_t gap_ns) {
  std::vector<double> out;
  bool pinned = false;
  cv_wakes(
      to == 0 ? 1 : 0, samples, gap_ns,
      [&] {
        if (!pinned) pin_self(to);
        pinned = true;
      },
      [&](std::int64_t t_signal) { out.push_back((now_ns() - t_signal) * 1e-9); });
  return out;
}
}  // namespace

WakeLatencies measure_wake_latency(int cpus, int scale, double switch_cost,
                                   const std::function<void(const char*)>& step) {
  std::vector<double> awake;
  std::vector<std::vector<double>> idle(std::size(kIdleWakeGapsMs));
  if (cpus > 1) {
    step("wake-up latency to an awake CPU");
    {
      Spinner keep_awake(1, Spinner::Policy::idle);
      awake = wake_latencies(1, 200 * scale, 2'000'000);
    }
    step("wake-up latency to an idle CPU, by idle length");
    // Rounds of every length interleaved, so that a change of the host's
    // state falls on all of them; each run's first wake came after the
    // previous length's idle and is left out.
    for (int round = 0; round < 3; ++round)
      for (std::size_t g = 0; g < std::size(kIdleWakeGapsMs); ++g) {
        std::vector<double> run = wake_latencies(1, kIdleWakeSamples[g] * scale + 1,
                                                 std::int64_t{kIdleWakeGapsMs[g]} * 1'000'000);
        idle[g].insert(idle[g].end(), run.begin() + 1, run.end());
      }
  }
  WakeLatencies out;
  out.wakeup_latency =
      summarize("wakeup_latency", awake.empty() ? std::vector<double>{switch_cost} : awake,
                awake.empty() ? "one CPU: a wake is a switch"
                              : "condition-variable signal to running, on another CPU kept awake");
  const double awake_med = out.wakeup_latency.median;
  for (std::size_t g = 0; g < idle.size(); ++g) {
    const double med = idle[g].empty() ? awake_med : quantile(idle[g], 0.5);
    out.idle_median.push_back(med);
    out.table += fmt::format("{}{} ms {} ({})", g ? ", " : "", kIdleWakeGapsMs[g],
                             format_seconds(med), idle[g].size());
  }
  const std::vector<double>& ref = idle.front();
  const double idle_med = out.idle_median.front();
  out.idle_exit = summarize(
      "idle_exit", {std::max(0.0, idle_med - awake_med)},
      fmt::format("the same wake onto an idle CPU after {} ms of idle ({:.3g} us median) minus "
                  "the awake wake",
                  kIdleWakeGapsMs[0], idle_med * 1e6));
  if (!ref.empty()) {
    out.idle_exit.p10 = std::max(0.0, quantile(ref, 0.1) - awake_med);
    out.idle_exit.p90 = std::max(0.0, quantile(ref, 0.9) - awake_med);
    out.idle_exit.samples = static_cast<int>(ref.size());
  }
  return out;
}

std::pair<Measurement, Measurement> idle_exit_late_fields(const WakeLatencies& w,
                                                          const MachineProfile& refill, int cpus) {
  std::vector<std::pair<double, double>> points;
  for (std::size_t g = 0; g < w.idle_median.size(); ++g) {
    const std::chrono::milliseconds idle{kIdleWakeGapsMs[g]};
    points.emplace_back(to_seconds(idle), w.idle_median[g] - w.idle_median.front() -
                                              to_seconds(idle_refill_cost(refill, idle)));
  }
  const IdleRefillFit fit = cpus > 1 ? fit_idle_refill(points) : IdleRefillFit{};
  const std::string how =
      cpus > 1 ? fmt::format(
                     "condition-variable wakes onto CPU 1 left idle, 3 rounds, the "
                     "signal-to-running median by idle (wakes): {}; less the 1 ms one "
                     "(idle_exit's) and idle_refill's share (charged once the woken "
                     "thread runs), fitted to idle_exit_late x (min(1, idle / "
                     "idle_exit_late_time) - min(1, 1 ms / idle_exit_late_time))",
                     w.table)
               : std::string("one CPU: no other CPU to wake");
  return {summarize("idle_exit_late", {fit.refill}, how),
          summarize("idle_exit_late_time", {fit.evict_time}, "the same fit")};
}

void net_woken_charges(std::vector<Measurement>& ms, const WokenCharges& c) {
  const auto less = [](Measurement& m, double x, const std::string& what) {
    if (x <= 0) return;
    for (double* v : {&m.median, &m.mean, &m.p10, &m.p90}) *v = std::max(0.0, *v - x);
    m.method += fmt::format(
        ", less {} ({}): the woken thread's CPU once switched in, which the "
        "model charges after this delay",
        what, format_seconds(x));
  };
  for (Measurement& m : ms) {
    if (m.field == "timer_slack" || m.field == "idle_exit")
      less(m, c.dispatch, "switch_cost and cache_refill");
    else if (m.field == "timer_idle_exit")
      less(m, c.timer_idle_run, "timer_idle_run");
  }
}

namespace {
// Overshoots (seconds) of `n` 1 ms relative clock_nanosleeps on CPU `cpu`.
void timer_overshoots(int cpu, int n, std::vector<double>& out, double tick = 0,
                      SleepCpu* cpu_out = nullptr, int skip = 0) {
  constexpr std::int64_t kSleep = 1'000'000, kSlack = 50'000, kMargin = 20'000;
  const auto tick_ns = static_cast<std::int64_t>(std::llround(tick * 1e9));
  std::thread t([&] {
    pin_self(cpu);
    for (int i = 0; i < n; ++i) {
      const auto t0 = now_ns();
      const auto c0 = thread_cpu_ns();
      timespec d{0, kSleep};
      clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
      const auto c1 = thread_cpu_ns();
      out.push_back((now_ns() - t0 - kSleep) * 1e-9);
      if (!cpu_out || i < skip) continue;
      const double used = (c1 - c0) * 1e-9;
      if (tick_ns <= 0) {
        cpu_out->ahead.push_back(used);
        continue;
      }
      // The timer's hard expiry (the default 50 us slack on) against the
      // next multiple of the tick period.
      const std::int64_t to_tick = (t0 / tick_ns + 1) * tick_ns - t0;
      if (to_tick > kSleep + kSlack + kMargin)
        cpu_out->ahead.push_back(used);
      else if (to_tick < kSleep - kMargin)
        cpu_out->behind.push_back(used);
    }
  });
  t.join();
}
}  // namespace

namespace {
// Overshoots (seconds) of `n` 1 ms relative timerfd expiries read on CPU
// `cpu` (none when no timerfd can be made).
void timerfd_overshoots(int cpu, int n, std::vector<double>& out) {
  constexpr std::int64_t kSleep = 1'000'000;
  std::thread t([&] {
    pin_self(cpu);
    const int fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (fd < 0) return;
    for (int i = 0; i < n; ++i) {
      const itimerspec once{{0, 0}, {0, kSleep}};
      const auto t0 = now_ns();
      if (::timerfd_settime(fd, 0, &once, nullptr) != 0) break;
      std::uint64_t expiries = 0;
      if (::read(fd, &expiries, sizeof expiries) != static_cast<ssize_t>(sizeof expiries)) break;
      out.push_back((now_ns() - t0 - kSleep) * 1e-9);
    }
    ::close(fd);
  });
  t.join();
}
}  // namespace

std::vector<Measurement> measure_timer_slack(int cpus, int samples, double tick,
                                             SleepCpu* awake_cpu, SleepCpu* idle_cpu) {
  // Alternating blocks, so that a change of the VM's speed during the
  // experiment lands in both halves: the sleeper's CPU kept awake by a
  // SCHED_IDLE spinner (which a woken normal thread preempts at once), then
  // left idle, where the timer must first bring the halted vCPU back.
  const int cpu = cpus > 1 ? 1 : 0;
  constexpr int kBlocks = 5;
  std::vector<double> awake, idle, fd_awake;
  for (int b = 0; b < kBlocks; ++b) {
    {
      Spinner keep_awake(cpu, Spinner::Policy::idle);
      timer_overshoots(cpu, samples / kBlocks, awake, tick, awake_cpu);
      timerfd_overshoots(cpu, samples / kBlocks, fd_awake);
    }
    timer_overshoots(cpu, samples / kBlocks, idle);
  }
  if (idle_cpu) {
    // A lone sleeper's CPU on an idle CPU settles only after some 30 sleeps
    // (about 30 ms) of idling: the first ones after a busy spell cost what
    // they cost awake (16.6-17.1 us a sleep, then 27.0-28.7 us from the
    // 30th on; probe of 2026-12-05). So one long idle run, its first
    // kSettle sleeps left out of the CPU figures.
    constexpr int kSettle = 40, kKept = 60;
    std::vector<double> overshoot;
    timer_overshoots(cpu, kSettle + kKept, overshoot, tick, idle_cpu, kSettle);
  }
  const double a = quantile(awake, 0.5), i = quantile(idle, 0.5);
  Measurement slack = summarize(
      "timer_slack", awake,
      fmt::format(
          "overshoot of a 1 ms clock_nanosleep on CPU {} kept awake (a SCHED_IDLE spinner), "
          "{} sleeps",
          cpu, awake.size()));
  Measurement idle_exit = summarize(
      "timer_idle_exit", {std::max(0.0, i - a)},
      fmt::format("the same sleeps with CPU {} idle (median {:.3g} us, {} sleeps, alternating "
                  "blocks) less the awake median ({:.3g} us)",
                  cpu, i * 1e6, idle.size(), a * 1e6));
  const double fd = fd_awake.empty() ? a : quantile(fd_awake, 0.5);
  Measurement hrtimer = summarize(
      "hrtimer_slack", {std::max(0.0, a - fd)},
      fmt::format("timer_slack's median ({:.3g} us) less that of {} 1 ms timerfd expiries read "
                  "in turn with its sleeps ({:.3g} us); the thread's slack: {:.3g} us",
                  a * 1e6, fd_awake.size(), fd * 1e6,
                  static_cast<double>(::prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) * 1e-3));
  return {slack, idle_exit, hrtimer};
}

std::vector<Measurement> measure_timer_stalls(int cpus, int n) {
  std::vector<double> late;
  timer_overshoots(cpus > 1 ? 1 : 0, n, late);
  const double median = quantile(late, 0.5);
  std::vector<double> extra;
  for (double v : late)
    if (v > kStallFactor * median) extra.push_back(v - median);
  const double share = late.empty() ? 0.0 : static_cast<double>(extra.size()) / late.size();
  const std::string how =
      fmt::format("{} of {} idle 1 ms sleeps more than {}x their median ({:.3g} us) late",
                  extra.size(), late.size(), kStallFactor, median * 1e6);
  Measurement s = summarize("timer_stall_share", {share}, how);
  Measurement mean = summarize("timer_stall_mean", {extra.empty() ? 0.0 : mean_of(extra)},
                               "their lateness beyond the median, mean (" + how + ")");
  Measurement median_extra =
      summarize("timer_stall_median", {extra.empty() ? 0.0 : quantile(extra, 0.5)},
                "their lateness beyond the median, median");
  return {s, mean, median_extra};
}

// The three fields from the block whose share is the median: the stalls come
// and go with the host's minute (14 of 3,000 sleeps, 5 ms each on average,
// in one calibration at 05:00 UTC on 2026-12-07, whose runs minutes later
// were late as the model without stalls predicts; 8 of 3,000 at 03:08, 39 at
// 03:13), so one block taken in a bad minute does not decide the profile.
// The fields stay together: a block's mean and median describe its stalls.
std::vector<Measurement> timer_stall_fields(const std::vector<std::vector<Measurement>>& blocks) {
  POOLSIM_ASSERT(!blocks.empty(), "timer_stall_fields: no block");
  if (blocks.empty()) return {};
  std::vector<double> share;  // each block's timer_stall_share
  for (const auto& b : blocks) share.push_back(b.front().median);
  const std::size_t pick = median_index(share);
  std::string shares;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    shares += fmt::format("{}{:.3g}%", i ? ", " : "", 100 * share[i]);
  std::vector<Measurement> out = blocks[pick];
  if (blocks.size() > 1)
    for (Measurement& m : out)
      m.method += fmt::format("; block {} of {} spread over the calibration, the median share ({})",
                              pick + 1, blocks.size(), shares);
  return out;
}

namespace {
// One level of the wake-packing experiment (see the header): the fraction
// of `wakes` wake-ups whose waiter ran on the waker's CPU 0 while a load
// thread kept CPU 0 busy `duty` of each millisecond.
// A load thread on CPU 0, busy `duty` of each millisecond, while it lives.
class Cpu0Load {
 public:
  explicit Cpu0Load(double duty) {
    if (duty <= 0) return;
    load_ = std::thread([this, duty] {
      pin_self(0);
      const auto busy = static_cast<std::int64_t>(duty * 1e6);
      while (!stop_.load(std::memory_order_relaxed)) {
        const std::int64_t t0 = now_ns();
        while (now_ns() - t0 < busy) {
        }
        timespec rest{0, static_cast<long>(1'000'000 - busy)};
        if (rest.tv_nsec > 0) nanosleep(&rest, nullptr);
      }
    });
  }
  Cpu0Load(const Cpu0Load&) = delete;
  Cpu0Load& operator=(const Cpu0Load&) = delete;
  ~Cpu0Load() {
    stop_ = true;
    if (load_.joinable()) load_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread load_;
};

double packed_fraction(double duty, int wakes) {
  const Cpu0Load load(duty);
  int packed = 0, woken = 0;
  cv_wakes(
      0, wakes, 3'000'000,
      // Every wake starts from CPU 1 (the waiter's previous CPU, idle since
      // it blocked): moved there, then allowed both CPUs again.
      [] {
        pin_self(1);
        unpin_self(2);
      },
      [&](std::int64_t) {
        ++woken;
        packed += sched_getcpu() == 0 ? 1 : 0;
      });
  return woken > 0 ? static_cast<double>(packed) / woken : 0.0;
}

// fork_activate's creations: `forks` new threads while a load thread keeps
// CPU 0 busy `duty` of each millisecond. The creator sleeps 3 ms pinned to
// CPU 0, is allowed both CPUs again (it stays on CPU 0), and creates a thread
// that reads its CPU first thing; CPU 1 is idle, woken by every thread that
// starts there (the ramps below leave it idle for hundreds of ms, and their
// creations onto it cost 49-59 us against 39-44 us here: a longer-idle vCPU,
// not the enqueue this field is). The creator's CPU seconds per creation, by
// where the new thread first ran (CPU 0 or not).
// Each creation first finds a kernel stack in CPU 0's per-CPU cache: before
// its rest the creator, pinned to CPU 0, makes and joins a thread that
// inherits the pin and so ends there (finish_task_switch -> put_task_stack
// gives its stack to CPU 0's cache). Without this, a thread that started on
// CPU 1 ended there and gave its stack to CPU 1's cache, so after two such
// creations every remote one allocated a fresh stack and fork_activate held
// kstack_alloc, which the simulator charges on its own (2026-12-07: remote
// 43.3 us against local 10.9, fork_activate 17.6 us with kstack_alloc 14.4).
void fork_costs(double duty, int forks, std::vector<double>& local, std::vector<double>& remote) {
  const Cpu0Load load(duty);
  std::thread creator([&] {
    int made = 0;
    for (int tries = 0; made < forks && tries < 4 * forks; ++tries) {
      pin_self(0);
      std::thread([] {}).join();  // CPU 0's kernel-stack cache gets a stack
      timespec rest{0, 3'000'000};
      nanosleep(&rest, nullptr);
      unpin_self(2);
      if (sched_getcpu() != 0) continue;
      std::atomic<int> where{-1};
      const auto c0 = thread_cpu_ns();
      std::thread child([&] { where = sched_getcpu(); });
      const double cost = static_cast<double>(thread_cpu_ns() - c0) * 1e-9;
      child.join();
      ++made;
      (where.load() == 0 ? local : remote).push_back(cost);
    }
  });
  creator.join();
}

// The fork-packing ramp (see the header): 250 ms of rest, then 24 steps of
// 6 ms of CPU and 1 ms of sleep on CPU 0, each followed by one creation
// from CPU 0 with both CPUs allowed. Appends one sample per creation that
// started from CPU 0. `kernel_view` is cleared when the kernel did not show
// the utilization (the samples then carry the PELT arithmetic's).
void fork_ramp(int cpus, std::vector<PackSample>& samples, bool& kernel_view) {
  constexpr std::int64_t kRestNs = 250'000'000;  // 7.8 half-lives: under 0.5% is left
  constexpr std::int64_t kSpinNs = 6'000'000, kSleepNs = 1'000'000;
  constexpr int kSteps = 24;  // 0 -> about 0.85 (the fixed point of 6 ms on, 1 ms off)
  std::thread creator([&] {
    pin_self(0);
    sleep_until_ns(now_ns() + kRestNs);
    double util = 0;  // the arithmetic's view
    for (int step = 0; step < kSteps; ++step) {
      pin_self(0);
      const std::int64_t t0 = now_ns(), c0 = thread_cpu_ns();
      while (thread_cpu_ns() - c0 < kSpinNs) {
      }
      const std::int64_t t1 = now_ns();
      sleep_until_ns(now_ns() + kSleepNs);
      const std::int64_t t2 = now_ns();
      util = pelt_after(util, t1 - t0, t2 - t1);
      unpin_self(cpus);
      if (sched_getcpu() != 0) continue;
      const double seen = thread_util();
      if (seen < 0) kernel_view = false;
      std::atomic<int> where{-1};
      std::thread child([&] { where = sched_getcpu(); });
      child.join();
      util = pelt_after(util, now_ns() - t2, 0);
      samples.push_back({seen >= 0 ? seen : util, where.load() == 0});
    }
  });
  creator.join();
}

}  // namespace

// The crossing seen from the loaded end: between the highest level at which
// most wakes were still packed and the next one up, where the line between
// their fractions crosses one half. Every
// level counts, because the idle level is a knife edge on this VM (42-51%
// packed in four calibrations of 2026-12-02, about 90% in a copy of the
// experiment that sleeps 3 ms from each wake) while the loaded levels repeat
// (61-63% at 60%, 10-12% at 80%); the first level under half used to decide
// alone, and the profile flipped between 0 and 0.7.
double wake_pack_threshold(std::span<const double> levels, std::span<const double> packed) {
  POOLSIM_ASSERT(levels.size() == packed.size(), "one packed fraction per load level");
  for (std::size_t i = levels.size(); i-- > 0;) {
    if (packed[i] < 0.5) continue;
    if (i + 1 == levels.size()) return 1.0;
    // Where the straight line between the two levels crosses one half.
    return levels[i] +
           (levels[i + 1] - levels[i]) * (packed[i] - 0.5) / (packed[i] - packed[i + 1]);
  }
  return 0.0;
}

double pelt_after(double util, std::int64_t run_ns, std::int64_t sleep_ns) {
  constexpr double kHalfLifeNs = 32e6;  // LOAD_AVG_PERIOD: 32 periods of 1024 us
  const double run = std::exp2(-static_cast<double>(run_ns) / kHalfLifeNs);
  const double rest = std::exp2(-static_cast<double>(sleep_ns) / kHalfLifeNs);
  return (util * run + (1.0 - run)) * rest;
}

double fork_pack_threshold(std::vector<PackSample> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end(),
            [](const PackSample& a, const PackSample& b) { return a.util < b.util; });
  const std::size_t n = samples.size();
  // Split i puts the threshold between samples i-1 and i: the misplaced are
  // the unpacked below it and the packed from it on.
  std::size_t packed_from = 0, unpacked_below = 0;
  for (const PackSample& s : samples) packed_from += s.packed ? 1 : 0;
  std::size_t best = packed_from, first = 0, last = 0;
  for (std::size_t i = 1; i <= n; ++i) {
    if (samples[i - 1].packed)
      --packed_from;
    else
      ++unpacked_below;
    const std::size_t misplaced = packed_from + unpacked_below;
    if (misplaced < best) {
      best = misplaced;
      first = last = i;
    } else if (misplaced == best) {
      last = i;
    }
  }
  const auto at = [&](std::size_t i) {
    if (i == 0) return 0.0;
    if (i == n) return 1.0;
    return (samples[i - 1].util + samples[i].util) / 2;
  };
  return (at(first) + at(last)) / 2;
}

namespace {
using PackThreshold = double (*)(std::span<const double>, std::span<const double>);
// CPU 0's load levels of both packing experiments, ascending.
constexpr std::array<double, 6> kPackLevels{0.0, 0.2, 0.4, 0.6, 0.8, 0.9};

// Both packing experiments: the fraction packed at each load level of CPU 0
// (`fraction(level, count)`), then `threshold` over them; the note says what
// was counted (`what`, `count` `unit` per level), the fractions, and `rule`.
Measurement packing(MachineFieldName field, int cpus,
                    const std::function<double(double, int)>& fraction, PackThreshold threshold,
                    int count, const char* what, const char* unit, const char* rule) {
  if (cpus < 2) return summarize(field, {0.0}, "one CPU: nothing to pack");
  std::array<double, kPackLevels.size()> packed{};
  std::string seen;
  for (std::size_t i = 0; i < kPackLevels.size(); ++i) {
    packed[i] = fraction(kPackLevels[i], count);
    seen += fmt::format("{}{:.0f}%: {:.0f}%", seen.empty() ? "" : ", ", 100 * kPackLevels[i],
                        100 * packed[i]);
  }
  return summarize(
      field, {threshold(kPackLevels, packed)},
      fmt::format("{} by CPU 0's load: {} ({} {} each); {}", what, seen, count, unit, rule));
}
}  // namespace

Measurement measure_fork_packing(int cpus, int ramps, ForkCosts* costs) {
  if (cpus < 2) return summarize("fork_pack_util", {0.0}, "one CPU: nothing to pack");
  std::vector<PackSample> samples;
  bool kernel_view = true;
  for (int r = 0; r < ramps; ++r) fork_ramp(cpus, samples, kernel_view);
  if (costs != nullptr) {
    // Unloaded, most stay on CPU 0; 90% loaded, most start on CPU 1.
    std::vector<double> unused;
    fork_costs(0.0, 30 * ramps, costs->local, unused);
    fork_costs(0.9, 30 * ramps, unused, costs->remote);
  }
  const double threshold = fork_pack_threshold(samples);
  // What was seen, by utilization band.
  constexpr std::array<double, 7> kBands{0.0, 0.2, 0.4, 0.6, 0.7, 0.8, 1.01};
  std::string seen;
  for (std::size_t b = 0; b + 1 < kBands.size(); ++b) {
    int made = 0, packed = 0;
    for (const PackSample& s : samples)
      if (s.util >= kBands[b] && s.util < kBands[b + 1]) {
        ++made;
        packed += s.packed ? 1 : 0;
      }
    if (made > 0)
      seen += fmt::format("{}{:.1f}-{:.1f}: {} of {}", seen.empty() ? "" : ", ", kBands[b],
                          std::min(1.0, kBands[b + 1]), packed, made);
  }
  return summarize(
      "fork_pack_util", {threshold},
      fmt::format("new threads that first ran on their lone creator's CPU 0 (CPU 1 idle), by the "
                  "creator's utilization ({}; {} ramps): {}; the utilization below which "
                  "packing misplaces the fewest",
                  kernel_view ? "the kernel's se.avg.util_avg"
                              : "PELT arithmetic of its run "
                                "and sleep times",
                  ramps, seen));
}

Measurement fork_activate_field(const ForkCosts& costs, double wake_ipi) {
  constexpr std::size_t kLeast = 5;
  const std::vector<double>& local = costs.local;
  const std::vector<double>& remote = costs.remote;
  if (local.size() < kLeast || remote.size() < kLeast)
    return summarize("fork_activate", {0.0},
                     fmt::format("too few creations of each kind ({} stayed on CPU 0, {} started "
                                 "on CPU 1; one CPU: none): not measured",
                                 local.size(), remote.size()));
  const double l = quantile(local, 0.5), r = quantile(remote, 0.5);
  return summarize("fork_activate", {std::max(0.0, r - l - wake_ipi)},
                   fmt::format("creations of the fork_pack_util step: {} that started on CPU 1 "
                               "(CPU 0 90% loaded; median {}) less {} that stayed on CPU 0 "
                               "(unloaded; median {}), less wake_ipi ({})",
                               remote.size(), format_seconds(r), local.size(), format_seconds(l),
                               format_seconds(wake_ipi)));
}

Measurement measure_wake_packing(int cpus, int wakes) {
  return packing("wake_pack_util", cpus, packed_fraction, wake_pack_threshold, wakes,
                 "wakes kept on the waker's CPU 0 (CPU 1 idle 3 ms, the waiter's previous CPU)",
                 "wakes",
                 "where the most loaded level that still packed most and the next cross 50%");
}

namespace {
// The waker's CPU time (seconds, median) for one futex wake of a thread
// waiting on CPU `to`; the waker runs on CPU 0.
double waker_cpu_per_wake(int to, int samples) {
  std::atomic<int> word{0};
  std::atomic<bool> stop{false}, waiting{false};
  std::thread waiter([&] {
    pin_self(to);
    while (!stop.load()) {
      waiting.store(true);
      while (word.load() == 0 && !stop.load())
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
      word.store(0);
    }
  });
  pin_self(0);
  std::vector<double> cpu;
  for (int i = 0; i < samples; ++i) {
    timespec gap{0, 2'000'000};
    nanosleep(&gap, nullptr);
    while (!waiting.exchange(false)) {
    }
    const auto c0 = thread_cpu_ns();
    word.store(1);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    cpu.push_back((thread_cpu_ns() - c0) * 1e-9);
  }
  stop.store(true);
  word.store(1);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  waiter.join();
  return quantile(cpu, 0.5);
}
}  // namespace

Measurement measure_timer_irq(int bursts) {
  constexpr std::int64_t kPeriod = 5'000'000, kBurst = 4'000'000, kFire = 2'000'000;
  constexpr std::int64_t kWindow = 300'000, kControl = 1'000'000;
  constexpr std::uint64_t kQuantumUnits = std::uint64_t{1} << 12;  // ~7 us
  std::vector<double> lost;                                        // per burst, seconds
  std::thread spinner([&] {
    pin_self(0);
    prctl(PR_SET_TIMERSLACK, 1UL);
    const std::int64_t t0 = now_ns() + 20'000'000;
    std::thread sleeper([&] {
      pin_self(0);
      prctl(PR_SET_TIMERSLACK, 1UL);
      sched_param idle{};
      pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
      for (int k = 0; k < bursts; ++k) sleep_until_ns(t0 + k * kPeriod + kFire);
    });
    std::vector<std::pair<std::int64_t, std::int64_t>> quanta;
    std::vector<double> lengths;
    std::uint64_t chain = 0;
    for (int k = 0; k < bursts; ++k) {
      const std::int64_t start = t0 + k * kPeriod;
      sleep_until_ns(start);
      quanta.clear();
      for (std::int64_t t = now_ns(); t < start + kBurst;) {
        chain ^= burn_units(kQuantumUnits);
        const std::int64_t t1 = now_ns();
        quanta.emplace_back(t, t1);
        t = t1;
      }
      lengths.clear();
      for (const auto& [a, b] : quanta) lengths.push_back(static_cast<double>(b - a));
      const double clean = quantile(lengths, 0.1);
      auto excess = [&](std::int64_t from) {
        double sum = 0;
        for (const auto& [a, b] : quanta)
          if (b > from && a < from + kWindow) sum += static_cast<double>(b - a) - clean;
        return sum;
      };
      const std::int64_t fire = start + kFire;
      lost.push_back((excess(fire) - excess(fire - kControl)) * 1e-9);
    }
    asm volatile("" : : "r"(chain));
    sleeper.join();
  });
  spinner.join();
  double mean = 0;
  for (double x : lost) mean += x;
  mean /= static_cast<double>(lost.size());
  return summarize("timer_irq", {std::max(0.0, mean)},
                   fmt::format("a spinner on CPU 0 in 4 ms bursts; a SCHED_IDLE sleeper's timer "
                               "fires mid-burst on CPU 0: work lost in the 300 us after it less "
                               "300 us a millisecond before, mean of {} bursts (median {:.3g} us)",
                               lost.size(), quantile(lost, 0.5) * 1e6));
}

Measurement measure_futex_call(int blocks) {
  constexpr int kCalls = 1000;
  std::atomic<int> word{0};
  std::vector<double> per_call;
  for (int b = 0; b < blocks; ++b) {
    const auto c0 = thread_cpu_ns();
    for (int i = 0; i < kCalls; ++i)
      syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    per_call.push_back((thread_cpu_ns() - c0) * 1e-9 / kCalls);
  }
  return summarize("futex_call", per_call,
                   fmt::format("thread CPU time of {} FUTEX_WAKE calls on a word nobody waits on, "
                               "per call ({} blocks)",
                               kCalls, blocks));
}

namespace {
// A time-stamp counter read (a clock read costs about 90 ns on this guest,
// the spans measured here 100-300 ns), and its ticks per nanosecond against
// the monotonic clock (x86; elsewhere the monotonic clock itself, 1 per ns).
std::uint64_t stamp() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return static_cast<std::uint64_t>(now_ns());
#endif
}
double stamps_per_ns() {
  const std::int64_t t0 = now_ns();
  const std::uint64_t s0 = stamp();
  while (now_ns() - t0 < 20'000'000) {
  }
  return static_cast<double>(stamp() - s0) / static_cast<double>(now_ns() - t0);
}
long voluntary_switches() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return r.ru_nvcsw;
}
struct LockTry {
  double remaining_ns;  // the holder's release less the waiter's attempt
  bool slept;
};
// One round: `tries` contended takes of a std::mutex held on CPU 1.
std::vector<LockTry> contended_takes(int tries, double per_ns, double max_hold_ns,
                                     std::uint32_t seed) {
  std::mutex mu;
  alignas(64) std::atomic<long> asked{0};
  alignas(64) std::atomic<long> held{0};
  alignas(64) std::atomic<std::uint64_t> hold_ticks{0}, released{0};
  std::atomic<bool> stop{false};
  std::thread holder([&] {
    pin_self(1);
    long seen = 0;
    for (;;) {
      long a = 0;
      while ((a = asked.load(std::memory_order_acquire)) == seen)
        if (stop.load(std::memory_order_relaxed)) return;
      seen = a;
      mu.lock();
      held.store(a, std::memory_order_release);
      const std::uint64_t s0 = stamp(), d = hold_ticks.load(std::memory_order_relaxed);
      while (stamp() - s0 < d) {
      }
      released.store(stamp(), std::memory_order_relaxed);
      mu.unlock();
    }
  });
  pin_self(0);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> hold(0.0, max_hold_ns);
  std::vector<LockTry> out;
  out.reserve(static_cast<std::size_t>(tries));
  for (long i = 1; i <= tries; ++i) {
    hold_ticks.store(static_cast<std::uint64_t>(hold(rng) * per_ns), std::memory_order_relaxed);
    // The switch count before the holder takes the lock: getrusage is a
    // system call (0.4-1 us on this project's guests, 990 ns on
    // 2026-12-05 16:55 UTC), which between seeing the lock held and trying
    // it let every hold end first (every try's remaining hold was under
    // -400 ns, nothing slept). The spin below never sleeps.
    const long v0 = voluntary_switches();
    asked.store(i, std::memory_order_release);
    while (held.load(std::memory_order_acquire) != i) {
    }
    const std::uint64_t attempt = stamp();
    mu.lock();
    mu.unlock();
    const bool slept = voluntary_switches() != v0;
    const auto ticks = static_cast<double>(static_cast<std::int64_t>(released.load() - attempt));
    out.push_back({ticks / per_ns, slept});
    const std::uint64_t s0 = stamp();  // let the holder's FUTEX_WAKE finish
    while (stamp() - s0 < static_cast<std::uint64_t>(2000 * per_ns)) {
    }
  }
  stop.store(true);
  holder.join();
  return out;
}
// The remaining hold that splits the tries with the fewest on the wrong
// side of it (a try that slept below it, or one that stayed on its CPU at
// or above it).
bool by_remaining(const LockTry& a, const LockTry& b) { return a.remaining_ns < b.remaining_ns; }
double sleep_split(std::vector<LockTry> t, double* below, double* above) {
  std::sort(t.begin(), t.end(), by_remaining);
  std::size_t wrong = 0;  // every try counted as "at or above": the stays are wrong
  for (const LockTry& x : t) wrong += x.slept ? 0 : 1;
  std::size_t best = wrong, at = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    wrong += t[i].slept ? 1 : 0;  // try i moves below the split
    wrong -= t[i].slept ? 0 : 1;
    if (wrong < best) {
      best = wrong;
      at = i + 1;
    }
  }
  const auto frac = [&](std::size_t from, std::size_t to) {
    std::size_t n = 0;
    for (std::size_t i = from; i < to; ++i) n += t[i].slept ? 1 : 0;
    return to > from ? static_cast<double>(n) / static_cast<double>(to - from) : 0.0;
  };
  *below = frac(0, at);
  *above = frac(at, t.size());
  if (at == 0) return 0.0;
  if (at == t.size()) return t.back().remaining_ns;
  return std::max(0.0, (t[at - 1].remaining_ns + t[at].remaining_ns) / 2);
}
}  // namespace

Measurement measure_futex_wait_check(int cpus, int tries, double futex_call) {
  if (cpus < 2)
    return summarize("futex_wait_check", {0.0},
                     "one CPU: a holder cannot release while its waiter runs (futex_call is used)");
  const double per_ns = stamps_per_ns();
  // The holds reach well past the waiter's way into FUTEX_WAIT, a system
  // call: 4 times a FUTEX_WAKE's CPU (the futex_call measurement), at
  // least 1 us (a call took 78-93 ns in the calibrations of 2026-12-05's
  // morning and 940 ns at 16:55 UTC, another boot of this machine kind,
  // with `pti=on`).
  const double max_hold_ns = std::max(1000.0, 4e9 * futex_call);
  std::vector<double> splits;
  double below = 0, above = 0;
  for (std::uint32_t round = 0; round < 3; ++round) {
    const std::vector<LockTry> t = contended_takes(tries, per_ns, max_hold_ns, round + 1);
    const auto slept = std::count_if(t.begin(), t.end(), [](const LockTry& x) { return x.slept; });
    if (slept == 0 || slept == static_cast<std::ptrdiff_t>(t.size())) {
      unpin_self(cpus);
      // No split to find: the holds did not reach past the waiter's check
      // (or none ended before it). Refused rather than written as a guess.
      throw MachineRefused(fmt::format(
          "calibrate: futex_wait_check: {} of {} contended tries of a std::mutex slept (holds of "
          "0-{:.0f} ns on CPU 1, remaining holds {:.0f} to {:.0f} ns at the waiter's try); the "
          "experiment needs tries on both sides of the waiter's check",
          slept, t.size(), max_hold_ns,
          std::min_element(t.begin(), t.end(), by_remaining)->remaining_ns,
          std::max_element(t.begin(), t.end(), by_remaining)->remaining_ns));
    }
    splits.push_back(sleep_split(t, &below, &above) * 1e-9);
  }
  unpin_self(cpus);
  return summarize(
      "futex_wait_check", splits,
      fmt::format("a std::mutex held on CPU 1 for 0-{:.0f} ns (4 futex calls, at least 1 us), a "
                  "waiter on CPU 0, {} tries a round: "
                  "the remaining hold that best splits the tries that slept (voluntary switches) "
                  "from those that did not, median of 3 rounds ({:.0f}, {:.0f}, {:.0f} ns; last "
                  "round {:.0f}% slept below, {:.0f}% above)",
                  max_hold_ns, tries, splits[0] * 1e9, splits[1] * 1e9, splits[2] * 1e9,
                  below * 100, above * 100));
}

std::pair<Measurement, Measurement> measure_wake_costs(int cpus, int samples) {
  std::vector<double> reads;
  for (int i = 0; i < 200; ++i) {
    const auto c0 = thread_cpu_ns();
    reads.push_back((thread_cpu_ns() - c0) * 1e-9);
  }
  const double read = quantile(reads, 0.5);
  const double local = waker_cpu_per_wake(0, samples);
  Measurement wc =
      summarize("wake_cost", {std::max(0.0, local - read)},
                fmt::format("waker CPU per futex wake of a thread on its own CPU, median of {} "
                            "({:.3g} us) less a clock-read pair ({:.3g} us)",
                            samples, local * 1e6, read * 1e6));
  if (cpus < 2) return {wc, summarize("wake_ipi", {0.0}, "one CPU: no other CPU to interrupt")};
  const double remote = waker_cpu_per_wake(1, samples);
  return {wc, summarize(
                  "wake_ipi", {std::max(0.0, remote - local)},
                  fmt::format("the same for a thread on the idle CPU 1 ({:.3g} us), less the above",
                              remote * 1e6))};
}

std::pair<Measurement, Measurement> sleep_cost_fields(const SleepCpu& awake_cpu, double switch_cost,
                                                      double cache_refill) {
  constexpr std::size_t kFew = 5;
  if (awake_cpu.ahead.size() < kFew || awake_cpu.behind.size() < kFew) {
    const std::vector<double> all = awake_cpu.all();
    const double per_sleep = all.empty() ? 0.0 : quantile(all, 0.5);
    return {summarize("sleep_cost", {std::max(0.0, per_sleep - switch_cost - cache_refill)},
                      fmt::format("the timer_slack sleeps on the awake CPU: the sleeper's CPU per "
                                  "sleep, median {} of {} (too few on one side of the tick to "
                                  "tell them apart), less switch_cost and cache_refill",
                                  format_seconds(per_sleep), all.size())),
            summarize("timer_program", {0.0},
                      fmt::format("{} sleeps ahead of the tick, {} behind it: too few",
                                  awake_cpu.ahead.size(), awake_cpu.behind.size()))};
  }
  const double ahead = quantile(awake_cpu.ahead, 0.5), behind = quantile(awake_cpu.behind, 0.5);
  return {summarize("sleep_cost", {std::max(0.0, behind - switch_cost - cache_refill)},
                    fmt::format("the timer_slack sleeps on the awake CPU whose timer came after "
                                "the CPU's next tick: the sleeper's CPU per sleep, median {} of "
                                "{}, less switch_cost and cache_refill",
                                format_seconds(behind), awake_cpu.behind.size())),
          summarize("timer_program", {std::max(0.0, ahead - behind)},
                    fmt::format("the same sleeps whose timer came before the next tick (median "
                                "{} of {}) less those after it",
                                format_seconds(ahead), awake_cpu.ahead.size()))};
}

Measurement timer_idle_run_field(const SleepCpu& awake_cpu, const SleepCpu& idle_cpu) {
  const std::vector<double> awake = awake_cpu.all(), idle = idle_cpu.all();
  if (awake.empty() || idle.empty()) return summarize("timer_idle_run", {0.0}, "no sleeps");
  const double a = quantile(awake, 0.5), i = quantile(idle, 0.5);
  return summarize("timer_idle_run", {std::max(0.0, i - a)},
                   fmt::format("1 ms sleeps: the sleeper's CPU per sleep in a run with its CPU "
                               "left idle, once settled (median {} of {}), less the timer_slack "
                               "sleeps kept awake (median {} of {})",
                               format_seconds(i), idle.size(), format_seconds(a), awake.size()));
}

IdleRefillFit fit_idle_refill(const std::vector<std::pair<double, double>>& extra_by_idle) {
  const double reference = to_seconds(kIdleRefillReference);
  IdleRefillFit best;
  bool any = false;
  for (const auto& [idle, extra] : extra_by_idle) any = any || (idle > reference && extra > 0);
  if (!any) return best;
  // Evict times from 1.05 reference to 1 s, 2,000 of them, evenly spaced
  // in their logarithm; for each, the curve the simulator charges
  // (idle_refill_cost) per second of idle_refill, and the refill that fits
  // it best.
  constexpr int kSteps = 2000;
  const double lo = std::log(1.05 * reference), hi = std::log(1.0);
  double best_residual = std::numeric_limits<double>::infinity();
  for (int k = 0; k <= kSteps; ++k) {
    MachineProfile unit;
    unit.idle_refill = std::chrono::seconds(1);
    unit.idle_evict_time = from_seconds(std::exp(lo + (hi - lo) * k / kSteps));
    const auto shape = [&unit](double idle) {
      return to_seconds(idle_refill_cost(unit, from_seconds(idle)));
    };
    double gy = 0, gg = 0;
    for (const auto& [idle, extra] : extra_by_idle) {
      gy += shape(idle) * extra;
      gg += shape(idle) * shape(idle);
    }
    if (gg <= 0) continue;
    const double refill = std::max(0.0, gy / gg);
    double residual = 0;
    for (const auto& [idle, extra] : extra_by_idle)
      residual += (extra - refill * shape(idle)) * (extra - refill * shape(idle));
    if (residual < best_residual) {
      best = {refill, to_seconds(unit.idle_evict_time)};
      best_residual = residual;
    }
  }
  if (best.refill <= 0) best = {};
  return best;
}

IdleSleeps measure_idle_sleeps(int cpus, bool quick) {
  // Left out and kept per length: after a busy spell the first sleeps cost
  // what they cost awake (timer_idle_run's settling).
  constexpr std::array<int, 6> kSkip{40, 10, 4, 3, 2, 2}, kKept{40, 30, 30, 25, 20, 16};
  static_assert(std::size(kIdleSleepsMs) == kSkip.size());
  const int cpu = cpus - 1;
  IdleSleeps medians;  // seconds per sleep, by length
  std::thread t([&] {
    pin_self(cpu);
    for (std::size_t r = 0; r < kSkip.size(); ++r) {
      const int kept = quick ? std::max(5, kKept[r] / 3) : kKept[r];
      const std::int64_t sleep_ns = std::int64_t{kIdleSleepsMs[r]} * 1'000'000;
      std::vector<double> used, late;
      for (int i = 0; i < kSkip[r] + kept; ++i) {
        const auto t0 = now_ns();
        const auto c0 = thread_cpu_ns();
        timespec d{static_cast<time_t>(sleep_ns / 1'000'000'000),
                   static_cast<long>(sleep_ns % 1'000'000'000)};
        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) == EINTR) {
        }
        const auto c1 = thread_cpu_ns();
        const auto t1 = now_ns();
        if (i < kSkip[r]) continue;
        used.push_back(static_cast<double>(c1 - c0) * 1e-9);
        late.push_back(static_cast<double>(t1 - t0 - sleep_ns - (c1 - c0)) * 1e-9);
      }
      medians.cpu.push_back(quantile(used, 0.5));
      medians.late.push_back(quantile(late, 0.5));
    }
  });
  t.join();
  return medians;
}

namespace {
// Per sleep length, the median over the blocks of one of their series, as
// (idle seconds, value less the 1 ms one), and the table of the values.
std::pair<std::vector<std::pair<double, double>>, std::string> idle_sleep_points(
    const std::vector<IdleSleeps>& blocks, std::vector<double> IdleSleeps::*series) {
  std::vector<std::pair<double, double>> points;
  std::string table;
  std::vector<double> per_length;
  for (std::size_t r = 0; r < std::size(kIdleSleepsMs); ++r) {
    std::vector<double> of_blocks;
    for (const auto& block : blocks) {
      const std::vector<double>& b = block.*series;
      if (r < b.size()) of_blocks.push_back(b[r]);
    }
    per_length.push_back(of_blocks.empty() ? 0.0 : quantile(of_blocks, 0.5));
    std::string each;
    for (const double v : of_blocks)
      each += fmt::format("{}{}", each.empty() ? "" : " ", format_seconds(v));
    table += fmt::format("{}{} ms {} ({})", r ? ", " : "", kIdleSleepsMs[r],
                         format_seconds(per_length.back()), each);
  }
  for (std::size_t r = 0; r < per_length.size(); ++r)
    points.emplace_back(kIdleSleepsMs[r] * 1e-3, per_length[r] - per_length.front());
  return {points, table};
}
}  // namespace

std::pair<Measurement, Measurement> idle_refill_fields(const std::vector<IdleSleeps>& blocks,
                                                       int cpus) {
  const auto [points, table] = idle_sleep_points(blocks, &IdleSleeps::cpu);
  const IdleRefillFit fit = fit_idle_refill(points);
  const std::string how = fmt::format(
      "a lone sleeper on CPU {} left idle, {} blocks spread over the calibration, its CPU per "
      "sleep by sleep, the median of the blocks' medians (each block's): {}; less the 1 ms one, "
      "fitted to idle_refill x (min(1, sleep / idle_evict_time) - min(1, 1 ms / idle_evict_time))",
      cpus - 1, blocks.size(), table);
  return {summarize("idle_refill", {fit.refill}, how),
          summarize("idle_evict_time", {fit.evict_time}, "the same fit")};
}

std::pair<Measurement, Measurement> timer_idle_late_fields(const std::vector<IdleSleeps>& blocks,
                                                           int cpus) {
  const auto [points, table] = idle_sleep_points(blocks, &IdleSleeps::late);
  const IdleRefillFit fit = fit_idle_refill(points);
  const std::string how = fmt::format(
      "the idle_refill sleeps (CPU {} left idle, {} blocks): how late the sleeper ran past each "
      "sleep's end beyond its own CPU, the median of the blocks' medians: {}; less the 1 ms one "
      "(timer_idle_exit's length), fitted to timer_idle_late x (min(1, sleep / "
      "timer_idle_late_time) - min(1, 1 ms / timer_idle_late_time))",
      cpus - 1, blocks.size(), table);
  return {summarize("timer_idle_late", {fit.refill}, how),
          summarize("timer_idle_late_time", {fit.evict_time}, "the same fit")};
}

}  // namespace poolsim::real::calib
