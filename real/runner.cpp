// runner.cpp: forks, watches and measures the repetitions of `poolsim run`.
//
// Parent, per repetition: (limits.cpus) create the quota cgroup, with
// limits.shares / limits.weight its CPU weight (a group for the weight alone
// without a quota); (limits.neighbour) create the neighbour's sibling group
// and start its spinning process (real/neighbour.hpp); fork; read
// the child's frame from a pipe with poll() until EOF or run.timeout; on
// timeout SIGKILL the child and refuse; reap it; read cpu.stat into the
// counters; kill the neighbour; remove the cgroups. SIGINT/SIGTERM/SIGHUP
// during a repetition run an async-signal-safe handler that kills the child
// and the neighbour, reaps them, removes the cgroups and re-raises the
// signal. The parent forks while single-threaded
// (the real runner creates no thread in the parent).
// Child: dies with the parent (PR_SET_PDEATHSIG); joins the cgroup; applies
// limits.cpuset with sched_setaffinity; runs run_repetition(); ships the
// RunResult; _exit()s without running atexit handlers of the parent.
//
// Measurement, in run_repetition():
//  - switches and CPU time: getrusage(RUSAGE_SELF) (every thread of the
//    child, dead ones included) from just before the origin to the moment
//    every task is final, before stop() (the simulated run ends there too),
//    minus the sampler thread's own counts over the same window;
//  - threads_peak: RunContext's live-thread peak (submitter included,
//    sampler excluded), counted around pthread_create and thread bodies;
//  - memory_peak: anonymous memory only (stacks, heap), the largest of three
//    readings, all taken while the workload runs (the backend's stop, which
//    joins its threads, is teardown: an event loop's threads touched one
//    more page there): the anonymous pages counted from the page tables
//    (smaps_rollup) when every task is final but before the backend stops
//    (its threads' stacks still mapped), less the same count at the
//    baseline; the exact anonymous count at each new high of started threads
//    (RunContext::memory_probe_peak: a thread-per-task run's peak lies
//    mid-run, while its threads live) less RssAnon at the baseline; and
//    VmHWM read at the same point as the first (approximate: it follows
//    per-CPU RSS counters) less the file-backed and shmem pages then mapped
//    (RssFile, RssShmem: code of the libraries faulted in for the first
//    time in the child, ~0.7 MiB here), minus RssAnon at the baseline. Both
//    baselines are taken after the
//    sampler thread exists (it is the harness's first thread: the one-time
//    cost of a process's first extra thread, ~130 KiB here, and the
//    sampler's reserved series are not the workload's) and after a reset
//    of the high-water mark (writing 5 to
//    /proc/self/clear_refs; the fork itself also resets it); the records
//    array, a backend's own bookkeeping (Backend::reserve) and the speed
//    probe's storage (reserve_speed_probe: 4,096 phases' speeds, 32 KiB
//    that faulted in a page per 512 sampled phases) are allocated or
//    written before the baseline and are not counted; with
//    RealOptions::trace, no measured repetition records trace spans: one
//    extra repetition after them does, unmeasured (run_scenario);
//  - threads_series / runnable_series: a sampler thread (outside the counts;
//    on cgroup v1 it also leaves the quota group, so that the harness does
//    not spend the scenario's quota)
//    reads the live-thread count and the number of threads in CPU work every
//    RealOptions::sample_period and records the changes, when
//    RealOptions::sample_series (run_scenario: the traced repetition only;
//    a measured one's sampler parks until the end);
//  - throttled_periods / throttled_time / burst_periods / burst_time: the
//    group's cpu.stat (nr_throttled, throttled_time|usec, nr_bursts,
//    burst_time|usec), read by the parent after the child exited (summed
//    over CPUs in v1 and v2).
#include "real/runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "real/affinity.hpp"
#include "real/cgroup.hpp"
#include "real/cpu_work.hpp"
#include "real/neighbour.hpp"
#include "real/result_codec.hpp"
#include "real/speed_check.hpp"

namespace poolsim::real {

namespace {

// ---- signal cleanup (async-signal-safe state) --------------------------------
volatile sig_atomic_t g_child = 0;
char g_cgroup_path[512];
volatile sig_atomic_t g_cgroup_set = 0;
volatile sig_atomic_t g_neighbour = 0;
char g_neighbour_path[512];
volatile sig_atomic_t g_neighbour_set = 0;

extern "C" void on_fatal_signal(int sig) {
  for (const pid_t p : {static_cast<pid_t>(g_child), static_cast<pid_t>(g_neighbour)}) {
    if (p <= 0) continue;
    ::kill(p, SIGKILL);
    int status = 0;
    ::waitpid(p, &status, 0);
  }
  if (g_cgroup_set) ::rmdir(g_cgroup_path);
  if (g_neighbour_set) ::rmdir(g_neighbour_path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

class SignalGuard {
 public:
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~SignalGuard() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  static void restore_defaults() {
    for (int s : kSignals) ::signal(s, SIG_DFL);
  }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3]{};
};

void set_cleanup_cgroup(const std::string& path) {
  g_cgroup_set = 0;
  std::snprintf(g_cgroup_path, sizeof g_cgroup_path, "%s", path.c_str());
  g_cgroup_set = path.empty() ? 0 : 1;
}

void set_cleanup_neighbour(const std::string& path, pid_t pid) {
  g_neighbour_set = 0;
  g_neighbour = pid > 0 ? pid : 0;
  std::snprintf(g_neighbour_path, sizeof g_neighbour_path, "%s", path.c_str());
  g_neighbour_set = path.empty() ? 0 : 1;
}

// ---- measurement helpers -----------------------------------------------------------
Duration tv_ns(const timeval& tv) {
  return Duration{static_cast<std::int64_t>(tv.tv_sec) * 1000000000 +
                  static_cast<std::int64_t>(tv.tv_usec) * 1000};
}

struct Usage {
  std::int64_t voluntary = 0, involuntary = 0;
  Duration cpu{};
};

Usage usage(int who) {
  rusage ru{};
  getrusage(who, &ru);
  return Usage{ru.ru_nvcsw, ru.ru_nivcsw, tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime)};
}

// N of the "KEY: N" line of a /proc file (0 if absent).
std::int64_t proc_number(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size(), key) == 0) return std::atoll(line.c_str() + key.size());
  return 0;
}

// The "KEY: N kB" line of a /proc file, in bytes (0 if absent).
Bytes proc_kib(const char* path, std::string_view key) { return proc_number(path, key) * 1024; }

Bytes status_kib(std::string_view key) { return proc_kib("/proc/self/status", key); }

// Anonymous memory counted from the page tables (smaps_rollup walks every
// mapping): exact, unlike RssAnon and VmHWM, which read per-CPU counters
// that are folded into the total in batches.
Bytes exact_anon() { return proc_kib("/proc/self/smaps_rollup", "Anonymous:"); }

// The submitter is the child's main thread, whose stack starts at a random
// offset within its top page (the kernel's stack randomization,
// arch_align_stack), inherited from poolsim's process: how deep the run's
// calls go (a first pthread_create, a futex wake, clock_nanosleep) then
// reaches a page the setup never touched in some invocations and not in
// others, and memory_peak read 16 or 20 KiB for the same pool of 1 worker
// by the luck of the offset (2026-12-06). The submitter existed before the
// run, in a user's program too, and the model counts no stack of it: its
// stack is touched here, below the depth the run's calls can reach, before
// the baselines.
[[gnu::noinline]] void touch_submitter_stack() {
  constexpr std::size_t kDepth = 64 * 1024;
  volatile char below[kDepth];
  for (std::size_t i = 0; i < kDepth; i += 1024) below[i] = 0;
  asm volatile("" : : "r"(below) : "memory");
}

void reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  if (out) out << "5";
}

// Set by the child after it joined a v1 quota group: where the sampler thread
// writes its tid to leave the group (CpuCgroup::harness_exit_file), so that
// the harness does not spend the scenario's quota (docs/containers.md).
std::string g_harness_exit_file;

// The sampler: not registered in the context, so not counted as a thread.
class Sampler {
 public:
  // Started before the memory baseline (its stack, its first-thread costs
  // and its reserved series are the harness's, not the workload's); it
  // samples only from begin(), once the origin is set.
  // With `samples` false it is started all the same (the child's first
  // extra thread, in the baseline) but parks until finish(): no wake during
  // the run, so no sample either.
  Sampler(RunContext& ctx, Duration period, bool samples)
      : ctx_(ctx), period_(period), samples_(samples) {
    if (period_.count() <= 0) return;
    // Sized (and so written, every page resident) before the baseline: a
    // reserved vector's pages fault in as samples arrive, and were counted
    // as the workload's memory (~16 bytes per change of the running count:
    // +44 KiB over 10 s of a 4-worker pool at 500 tasks/s).
    threads.resize(kReserved);
    runnable.resize(kReserved);
    thread_ = std::thread([this] {
      // SCHED_IDLE: a woken idle-policy thread does not preempt the run's
      // threads at its wake (as a normal thread it caused ~350 involuntary
      // switches a second at 1 ms on a 2-CPU pool run), but a tick's pick
      // can still take it over a worker (its lag after a sleep is large):
      // 15-20 a second at 1 ms, hence the 10 ms period (runner.hpp); under
      // saturation its samples come later, each stamped with its own time.
      sched_param idle{};
      pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
      if (!g_harness_exit_file.empty())
        std::ofstream(g_harness_exit_file) << static_cast<long>(::gettid());
      tid_.store(::gettid(), std::memory_order_release);
      if (!samples_) {
        stop_.wait(false, std::memory_order_acquire);
        return;
      }
      // Until begin(), it polls every millisecond: at 100 us its wakes came
      // on the submitter's CPU as the run began. begin() takes the first
      // sample itself, at the origin.
      while (!go_.load(std::memory_order_acquire) && !stop_.load(std::memory_order_acquire))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      loop();
    });
    handle_ = thread_.native_handle();
    while (tid_.load(std::memory_order_acquire) == 0) std::this_thread::yield();
    if (!samples_) wait_parked();
  }
  void begin() {
    if (!thread_.joinable() || !samples_) return;
    sample();
    go_.store(true, std::memory_order_release);
  }
  ~Sampler() { finish(); }
  void finish() {
    if (!thread_.joinable()) return;
    stop_.store(true, std::memory_order_release);
    stop_.notify_all();
    thread_.join();
    threads.resize(n_threads_);
    runnable.resize(n_runnable_);
  }
  // The sampler thread's own usage so far, read from another thread (its
  // /proc status counts and its CPU clock: the same task counters its
  // RUSAGE_THREAD reads), so that the runner subtracts exactly what the
  // sampler did between its own two readings of the child's usage. Zero
  // without a sampler thread.
  Usage usage_now() const {
    Usage u;
    const pid_t tid = tid_.load(std::memory_order_acquire);
    if (tid == 0 || !thread_.joinable()) return u;
    const std::string status = "/proc/self/task/" + std::to_string(tid) + "/status";
    u.voluntary = proc_number(status, "voluntary_ctxt_switches:");
    u.involuntary = proc_number(status, "nonvoluntary_ctxt_switches:");
    clockid_t clock{};
    timespec ts{};
    if (pthread_getcpuclockid(handle_, &clock) == 0 && clock_gettime(clock, &ts) == 0)
      u.cpu = Duration{static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec};
    return u;
  }
  std::vector<Sample> threads, runnable;

 private:
  void loop() {
    Duration next = RunContext::monotonic_now();
    while (!stop_.load(std::memory_order_acquire)) {
      sample();
      next += period_;
      timespec ts{static_cast<time_t>(next.count() / 1000000000),
                  static_cast<long>(next.count() % 1000000000)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    }
  }
  // Until the parked thread sleeps: its start and its block are then
  // before the usage baseline, and the run sees none of it (its wake and
  // exit at finish() come after the last task and switch nothing out).
  void wait_parked() {
    const std::string stat = "/proc/self/task/" + std::to_string(tid_.load()) + "/stat";
    for (int i = 0; i < 100000; ++i) {
      std::ifstream f(stat);
      std::string line;
      std::getline(f, line);
      const auto close = line.rfind(')');
      if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] == 'S') return;
      std::this_thread::yield();
    }
  }
  void sample() {
    const Duration t = ctx_.now();
    record(threads, n_threads_, {t, ctx_.live_threads()});
    record(runnable, n_runnable_, {t, ctx_.running_threads()});
  }
  // Appends a sample when the value changed: into the pre-sized slots while
  // they last, then by growing the vector (a run of over 16,384 changes).
  static void record(std::vector<Sample>& series, std::size_t& n, Sample s) {
    if (n > 0 && series[n - 1].value == s.value) return;
    if (n < series.size())
      series[n] = s;
    else
      series.push_back(s);
    ++n;
  }
  // Series points allocated up front so that sampling allocates nothing
  // during the run (and the sampler thread never creates a malloc arena).
  static constexpr std::size_t kReserved = 1 << 14;
  std::size_t n_threads_ = 0, n_runnable_ = 0;
  RunContext& ctx_;
  Duration period_;
  bool samples_;
  std::atomic<pid_t> tid_{0};
  pthread_t handle_{};  // the thread's, for its CPU clock
  std::atomic<bool> stop_{false};
  std::atomic<bool> go_{false};
  std::thread thread_;
};

// The child's usage and the sampler's at one moment.
struct UsageMark {
  Usage self, sampler;
};

UsageMark usage_mark(const Sampler& sampler) { return {usage(RUSAGE_SELF), sampler.usage_now()}; }

// Switches and CPU time between two marks, the sampler's own left out: from
// just before the origin to the moment every task is final, where the
// simulated run ends. The backend's stop (waking its parked workers, joining
// them, oneTBB's finalize) and the sampler's join are teardown: until
// 2026-12-06 the second mark came after both, and a oneTBB fork-join of
// 1,365 tasks measured 6-7 voluntary switches, 5 of them the submitter's
// waits there and one a worker's park after the last task
// (docs/real-backends.md).
void usage_counters(RunCounters& c, const UsageMark& a, const UsageMark& b) {
  c.switches_voluntary =
      b.self.voluntary - a.self.voluntary - (b.sampler.voluntary - a.sampler.voluntary);
  c.switches_involuntary =
      b.self.involuntary - a.self.involuntary - (b.sampler.involuntary - a.sampler.involuntary);
  c.cpu_time = b.self.cpu - a.self.cpu - (b.sampler.cpu - a.sampler.cpu);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

// The CPU capacity this child really has, for cpu_utilization: the CPUs its
// affinity allows (the scenario's cpuset applied), capped by the quota. Not
// the scenario's machine profile, which may describe another machine: on
// this 2-CPU host a `machine: default` scenario (4 cores) read 49% for CPUs
// 98% busy (compare-io, 2026-12-03).
double measured_capacity(const Scenario& s) {
  const std::size_t allowed = allowed_cpus().size();
  double n = allowed > 0 ? static_cast<double>(allowed) : s.capacity();
  if (s.limits.cpus) n = std::min(n, *s.limits.cpus);
  return n;
}

// limits.cpuset as an affinity mask in `set`; the first CPU a mask cannot
// name, if there is one.
std::optional<int> cpuset_mask(const std::vector<int>& cpus, cpu_set_t& set) {
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) return c;
    CPU_SET(c, &set);
  }
  return std::nullopt;
}

// ---- the child --------------------------------------------------------------------
[[noreturn]] void child_main(const Scenario& s, const Workload& w, const RealOptions& opt, int fd,
                             pid_t parent, const CpuCgroup* cg) {
  SignalGuard::restore_defaults();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(5);
  break_copy_on_write();
  map_file_pages();
  try {
    if (cg != nullptr) {
      const std::string err = cg->join_self();
      if (!err.empty()) {
        write_frame(fd, ChildStatus::refused, "cannot move the run into its cgroup: " + err);
        _exit(3);
      }
      g_harness_exit_file = cg->harness_exit_file();
    }
    if (!s.limits.cpuset.empty()) {
      cpu_set_t set;
      if (const auto bad = cpuset_mask(s.limits.cpuset, set)) {
        write_frame(fd, ChildStatus::refused,
                    "limits.cpuset names CPU " + std::to_string(*bad) + ", outside this machine");
        _exit(3);
      }
      if (sched_setaffinity(0, sizeof set, &set) != 0) {
        write_frame(fd, ChildStatus::refused,
                    "sched_setaffinity(limits.cpuset = " + s.limits.cpuset_text +
                        ") failed: " + std::strerror(errno));
        _exit(3);
      }
    }
    RunResult r = run_repetition(s, w, opt, fd);
    write_frame(fd, ChildStatus::ok, encode_result(r));
    _exit(0);
  } catch (const MachineRefused& e) {
    write_frame(fd, ChildStatus::refused, e.what());
    _exit(3);
  } catch (const std::exception& e) {
    write_frame(fd, ChildStatus::failed, e.what());
    _exit(4);
  }
}

// ---- one repetition in a child -------------------------------------------------------
// Long because it is one repetition's sequence in the parent: the groups (quota,
// neighbour), the fork, the frame read under the watchdog, then the groups' counters;
// each block one step.
// `machine_cpus`: the CPUs the runner had before a cpuset confined it (the
// neighbour's threads spread over them: it is another container).
RunResult run_in_child(const Scenario& s, const Workload& w, const RealOptions& opt, int rep,
                       const std::vector<int>& machine_cpus) {
  std::optional<CpuCgroup> cg;
  const bool weighted = s.limits.neighbour || s.limits.shares != 1024;
  if (s.limits.cpus) {
    cg.emplace(CpuCgroup::create(*s.limits.cpus, s.limits.period, rep, s.limits.burst));
    set_cleanup_cgroup(cg->path());
    if (weighted) cg->set_shares(s.limits.shares);
  } else if (weighted) {
    cg.emplace(CpuCgroup::create_weighted(s.limits.shares, rep));
    set_cleanup_cgroup(cg->path());
  }
  // The neighbour: its group, then its spinning process (the group must
  // outlive the process, so it is declared first).
  struct ClearNeighbour {  // after nb and ncg are gone, on every path
    ~ClearNeighbour() { set_cleanup_neighbour("", 0); }
  } clear_neighbour;
  std::optional<CpuCgroup> ncg;
  std::optional<NeighbourProcess> nb;
  if (s.limits.neighbour) {
    ncg.emplace(CpuCgroup::create_weighted(s.limits.neighbour->shares, rep, "-neighbour"));
    set_cleanup_neighbour(ncg->path(), 0);
    nb.emplace(*ncg, s.limits.neighbour->threads, machine_cpus);
    set_cleanup_neighbour(ncg->path(), nb->pid());
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close(fds[0]);
    close(fds[1]);
    set_cleanup_cgroup("");
    throw MachineRefused(std::string("fork failed: ") + std::strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(s, w, opt, fds[1], parent, cg ? &*cg : nullptr);
  }
  g_child = pid;
  close(fds[1]);

  // Read the frame until EOF or the watchdog.
  const Duration deadline = RunContext::monotonic_now() + s.run.timeout;
  std::string buf;
  bool timed_out = false;
  char chunk[1 << 16];
  for (;;) {
    const Duration left = deadline - RunContext::monotonic_now();
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ms = static_cast<int>(std::min<std::int64_t>(left.count() / 1000000 + 1, 1000));
    const int rc = poll(&p, 1, ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  if (timed_out) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  } else {
    // EOF: the child is exiting; give it the rest of the timeout to be reaped.
    for (;;) {
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (RunContext::monotonic_now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  g_child = 0;
  if (nb) {
    nb->stop();
    ncg->remove();
  }
  CpuStat st;
  if (cg) {
    st = cg->read_stat();
    cg->remove();
    set_cleanup_cgroup("");
  }
  if (timed_out)
    throw MachineRefused("timeout: repetition " + std::to_string(rep + 1) +
                         " did not finish within run.timeout = " + format_duration(s.run.timeout) +
                         " (the child was killed)");
  Frame f;
  if (!parse_frame(buf, f))
    throw std::runtime_error("real run: the child " + describe_status(status) +
                             " without reporting a result");
  if (f.status == ChildStatus::refused) throw MachineRefused(f.payload);
  if (f.status == ChildStatus::failed) throw std::runtime_error("real run failed: " + f.payload);
  RunResult r = decode_result(f.payload);
  r.counters.throttled_periods = st.nr_throttled;
  r.counters.throttled_time = st.throttled_time;
  r.counters.burst_periods = st.nr_bursts;
  r.counters.burst_time = st.burst_time;
  return r;
}

}  // namespace

std::size_t map_file_pages() {
  constexpr std::uintptr_t kLargest = std::uintptr_t{1} << 30;
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;  // Linux 5.14
#endif
  std::size_t done = 0;
  try {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      unsigned long lo = 0, hi = 0, off = 0, inode = 0;
      char perms[5] = {};
      char dev[16] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %4s %lx %15s %lu", &lo, &hi, perms, &off, dev,
                      &inode) != 6)
        continue;
      // File-backed (an inode), readable, not writable, private: code and
      // constants. Written pages are break_copy_on_write's.
      if (inode == 0 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p') continue;
      if (hi - lo > kLargest) continue;
      if (madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_READ) == 0) done += hi - lo;
    }
  } catch (...) {  // best effort: the run goes on with its pages as they are
  }
  return done;
}

// The forked child shares every page the parent had touched, copy-on-write:
// its first write to each one faults (on this PVM guest a trap to the
// host, ~10-20 us), and the submit path, the pool's structures, glibc's
// thread bookkeeping and the records are first written during the first
// tasks. No program a user runs pays that: it is the harness's fork. So
// the child writes once to every page it shares (present, private,
// writable: /proc/self/maps and /proc/self/pagemap) before it joins the
// quota group and before the origin; pages the parent never touched stay
// untouched. Mappings above 1 GiB are left alone (a sanitizer's shadow
// memory is terabytes: its pagemap alone would take minutes to read), and
// the writes are not instrumented (a sanitizer would see the heap's
// redzones and freed chunks being touched). Best effort: what cannot be
// read is left as it is.
__attribute__((no_sanitize("address", "thread", "undefined"))) void break_copy_on_write() {
  constexpr std::uintptr_t kLargest = std::uintptr_t{1} << 30;
  constexpr std::size_t kChunk = 4096;  // pagemap entries read at once (32 KiB)
  const int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pm < 0) return;
  try {
    std::ifstream maps("/proc/self/maps");
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;
    std::string line;
    while (std::getline(maps, line)) {
      unsigned long lo = 0, hi = 0;
      char perms[5] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
      if (perms[0] == 'r' && perms[1] == 'w' && perms[3] == 'p' && hi - lo <= kLargest)
        ranges.emplace_back(lo, hi);
    }
    std::vector<std::uint64_t> entries(kChunk);
    for (const auto& [lo, hi] : ranges) {
      for (std::uintptr_t at = lo; at < hi; at += kChunk * page) {
        const std::size_t n = std::min<std::uintptr_t>(kChunk, (hi - at) / page);
        const auto bytes = static_cast<ssize_t>(n * sizeof(std::uint64_t));
        if (pread(pm, entries.data(), static_cast<std::size_t>(bytes),
                  static_cast<off_t>(at / page * sizeof(std::uint64_t))) != bytes)
          break;
        for (std::size_t i = 0; i < n; ++i) {
          if (!(entries[i] >> 63)) continue;  // not present: never touched
          auto* p = reinterpret_cast<volatile char*>(at + i * page);
          *p = *p;
        }
      }
    }
  } catch (...) {  // best effort (bad_alloc reading the maps): the run goes on
  }
  close(pm);
}

namespace {
// The submitter starts the run at the start of a slice, as the simulator's
// main thread does (sim/kernel.cpp, Kernel::create_thread: running on CPU 0
// at t = 0 with a deadline one slice on). Without this it came to the origin
// having run the harness's setup (exact_anon's walk of the page map, the
// backend's prepare) without a sleep, 2 ms here, past its 1.4 ms slice: the
// first creation or wake that found another thread queued on its CPU
// switched it out (update_curr at the enqueue found its deadline passed),
// and a burst of hand-overs waited out a slice or more (perf sched,
// 2026-12-05; win-20-compute, 15 repetitions each way: a stall of a
// millisecond or more between two creations in 15 before, 9 after; the
// repetitions' mean submit lag 7.6 ms on average before, 5.1 after,
// medians 6.3 and 2.0 ms; the stalls left are docs/validation.md's
// "A reader granted the mmap lock behind a busy CPU"). A sleep ends the
// run of the setup: the thread wakes placed with its lag and a deadline a
// slice on (place_entity). 1 ms: longer than the wake path, and, should a
// thread of the harness share the CPU, enough for a delayed dequeue to
// complete (DELAY_DEQUEUE keeps a sleeper with negative lag queued, and a
// wake then would keep the spent deadline).
void start_slice_afresh() {
  timespec d{0, 1'000'000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) == EINTR) {
  }
}

ContextOptions context_options(const Scenario& s, const RealOptions& opt, const Backend& backend,
                               int fail_fd) {
  ContextOptions co;
  co.trace = opt.trace;
  co.per_task_cpu = opt.task_cpu && backend.per_task_cpu();
  co.max_threads = s.run.max_threads;
  co.fail_fd = fail_fd;
  return co;
}
}  // namespace

// Long because it is one repetition's sequence in the child: setup, the
// baselines, the origin, the run, the readings, in the order they must run.
RunResult run_repetition(const Scenario& s, const Workload& w, const RealOptions& opt,
                         int fail_fd) {
  std::unique_ptr<Backend> backend = make_backend(s.backend);
  RunContext ctx(s, w, context_options(s, opt, *backend, fail_fd));
  ctx.register_current_thread("submitter");
  ctx.attach(backend.get());

  Sampler sampler(ctx, opt.sample_period, opt.sample_series);
  // What the setup left of the submitter's PELT utilization (calibrate's
  // origin_util); read before the baselines: the read allocates.
  const double origin_util = thread_util();
  touch_submitter_stack();
  backend->reserve(ctx);
  reserve_speed_probe();
  reset_peak_rss();
  const Bytes anon0 = status_kib("RssAnon:");
  const Bytes exact0 = exact_anon();
  backend->prepare(ctx);
  ctx.warm_thread_start();
  // The work loop's first run in the forked child was slow: the run's
  // first task of `open-pool2` (439 us of `cpu`, a 2-thread pool) took
  // 1.12-1.68x its predicted CPU time (median 1.22, nine repetitions),
  // where the second worker's first task took 1.00-1.04x, a new thread of a
  // warm process and a vCPU idle 0.05-100 ms none (probes, 2026-12-06).
  // One trial's worth of the loop here, on the submitter: 0.97-1.12x
  // (median 1.07); 30 us of it 0.97-1.17x (median 1.11), 500 us 0.97-1.19x
  // (median 1.07). Not lazy binding (LD_BIND_NOW changed nothing); a probe
  // of code pages run for the first time in a forked child found 1-3 us a
  // page, too little to be all of it, so the cause is not pinned down. A
  // program a user runs has run its code before.
  warm_work_loop();
  // The fresh slice first: its sleep is the harness's, so it comes before
  // the usage baseline (its voluntary switch is not the run's), and before
  // the warming reads (an idle vCPU's caches need not survive it).
  start_slice_afresh();
  // The usage baseline is read before the origin: getrusage(RUSAGE_SELF)
  // walks the child's threads and took 33-167 us here, which at the origin
  // delayed the first hand-over by as much.
  const UsageMark usage0 = usage_mark(sampler);
  ctx.warm_first_wave();
  ctx.set_origin_now();
  ctx.memory_probe_start();
  sampler.begin();
  start_speed_probe();
  ctx.drive_arrivals();
  // Every task is final and the runtime's threads are still alive: their
  // stacks and arenas are mapped with every page they touched. Counted
  // exactly here (exact_anon): stop() joins the threads and glibc unmaps the
  // stacks its cache (40 MiB) cannot keep, and VmHWM, read after it, comes
  // from RSS counters whose per-CPU parts lag by up to a batch of pages per
  // CPU (a pool of 16 workers: 88 KiB by VmHWM and RssAnon, 204 KiB by the
  // page tables). The switches and CPU time end here too (usage_counters).
  const UsageMark usage1 = usage_mark(sampler);
  const Bytes exact_before_stop = exact_anon();
  const Bytes hwm = status_kib("VmHWM:");
  // File-backed pages (library code and data faulted in for the first time
  // in this child, 16 pages per fault with fault-around) only grow during a
  // run and are no part of what the workload costs: the anonymous peak is
  // the high-water mark less the file and shmem pages mapped then.
  const Bytes file_mapped = status_kib("RssFile:") + status_kib("RssShmem:");
  ctx.ensure_started();
  backend->stop();
  const WorkSample probe = stop_speed_probe();
  // Detached threads (thread-per-task) leave the count at the very end of
  // their body; wait for the stragglers so that none outlives the run.
  while (ctx.live_threads() > 1) std::this_thread::sleep_for(std::chrono::microseconds(50));
  sampler.finish();

  RunResult r;
  r.mode = "measured";
  r.cpus_available = measured_capacity(s);
  r.records = std::move(ctx.records());
  usage_counters(r.counters, usage0, usage1);
  r.counters.threads_peak = ctx.peak_threads();
  // The largest of the exact count before the join (pools, loops, carriers:
  // their memory only grows during a run), the exact count at the new highs
  // of started threads and the high-water mark (a thread-per-task run's peak
  // lies mid-run; see above).
  const Bytes probed = ctx.memory_probe_peak() > 0 ? ctx.memory_probe_peak() - anon0 : 0;
  r.counters.memory_peak =
      std::max<Bytes>({0, hwm - file_mapped - anon0, exact_before_stop - exact0, probed});
  backend->report(r.extra);
  r.extra["remote_starts"] = static_cast<double>(ctx.remote_starts());
  if (origin_util >= 0) r.extra["origin_util"] = origin_util;
  if (!ctx.resources().idle())
    ctx.fail("a permit of a bounded resource was still held (or awaited) at the end of the run");
  ctx.resources().report(s.resources, r.extra);
  if (probe.phases > 0 && probe.cpu_ns > 0) {
    r.speed.during_sampled = true;
    r.speed.during = probe.block_rate / reference_units_per_ns();
    r.speed.phase_cpu = static_cast<double>(probe.units) / static_cast<double>(probe.cpu_ns) /
                        reference_units_per_ns();
  }
  r.threads_series = std::move(sampler.threads);
  r.runnable_series = std::move(sampler.runnable);
  if (opt.trace) r.trace = ctx.collect_trace();
  ctx.unregister_current_thread();
  return r;
}

int estimated_peak_threads(const Scenario& s, const Workload& w) {
  const BackendSpec& b = s.backend;
  if (b.kind != BackendKind::thread_per_task) {
    int extra = 1;                                          // the submitter
    if (b.kind == BackendKind::injecting_pool) extra += 1;  // the gate thread
    return b.thread_bound() + extra;
  }
  if (w.graph || w.tasks.empty()) return 2;
  if (w.arrival == ArrivalKind::closed) return static_cast<int>(w.clients) + 1;
  if (w.arrival == ArrivalKind::batch) return 2;
  // Open arrivals: Little's law, threads alive ~ rate x mean task length.
  const Duration span = w.tasks.back().arrival - w.tasks.front().arrival;
  if (span.count() <= 0) return 2;
  double mean_len = 0;
  for (const Task& t : w.tasks) mean_len += to_seconds(w.length_of(t));
  mean_len /= static_cast<double>(w.tasks.size());
  const double rate = static_cast<double>(w.tasks.size() - 1) / to_seconds(span);
  return static_cast<int>(std::ceil(rate * mean_len)) + 1;
}

namespace {

// One repetition with its speed check: wait for the machine to be within the
// band, run, and run again (up to run.speed_retries times) while the canary
// before or after it, or its own sampled phases, were outside the band.
RunResult run_checked(const Scenario& s, const Workload& w, const RealOptions& opt, int rep,
                      const std::string& label, const std::vector<int>& machine_cpus) {
  const RunOptions& ro = s.run;
  for (int attempt = 1;; ++attempt) {
    const Canaries canaries =
        wait_for_speed(ro.speed_band, ro.speed_wait, s.machine.kernel_canary, opt.note);
    const double before = canaries.loop;
    // The phases of this repetition are sized at the speed just measured: a
    // `cpu` phase of d is d of undisturbed work on the machine as it runs now
    // (this VM's speed drifts by a few percent between minutes, and under a
    // quota near the load that moves throttling by tens of percent).
    size_phases_at(before);
    RunResult r = run_in_child(s, w, opt, rep, machine_cpus);
    size_phases_at(1.0);
    r.speed.measured = true;
    r.speed.before = before;
    r.speed.after = canary_speed();
    if (s.machine.kernel_canary > Duration{0}) {
      r.speed.kernel_checked = true;
      r.speed.kernel_before = canaries.kernel;
      r.speed.kernel_after = kernel_speed(s.machine.kernel_canary);
    }
    r.speed.attempts = attempt;
    const bool in_band = within_band(r.speed, ro.speed_band);
    if (in_band && steady(r.speed, ro.speed_drift)) return r;
    const bool last = attempt > ro.speed_retries;
    if (opt.note)
      opt.note(fmt::format(
          "{} {} ({}): {}", label,
          in_band
              ? fmt::format("changed speed by more than {:.0f}% while it ran", ro.speed_drift * 100)
              : fmt::format("ran outside {:.0f}% of the calibrated speed", ro.speed_band * 100),
          describe_speed(r.speed), last ? "marked disturbed" : "running it again"));
    if (last) {
      r.speed.disturbed = true;
      return r;
    }
  }
}

// Refuses, before any repetition, a workload that cannot finish within
// run.timeout: no repetition ends before its last arrival, before its
// longest task (critical path), nor before its CPU work spread over every
// CPU it may use. Without this a scenario of days of CPU would run until
// the watchdog killed it, a minute later.
void check_least_duration(const Scenario& s, const Workload& w) {
  Duration last_arrival{0};
  for (const Task& t : w.tasks) last_arrival = std::max(last_arrival, t.arrival);
  const double work = to_seconds(w.total_work) / s.capacity();
  const double least = std::max({to_seconds(last_arrival), to_seconds(w.critical_path), work});
  if (least <= to_seconds(s.run.timeout)) return;
  const std::string why = least == work ? fmt::format("its {:.3g} s of CPU work over {:.3g} CPUs",
                                                      to_seconds(w.total_work), s.capacity())
                          : least == to_seconds(w.critical_path) ? std::string("its longest task")
                                                                 : std::string("its last arrival");
  throw MachineRefused(fmt::format(
      "a repetition of '{}' needs at least {:.3g} s ({}), more than run.timeout = {}: raise "
      "run.timeout (--set run.timeout=...) or shorten the workload",
      s.name, least, why, format_duration(s.run.timeout)));
}

}  // namespace

namespace {

// With limits.cpuset the runner itself keeps to those CPUs while it runs the
// repetitions (its speed canary, its waits), as every thread of a process
// confined by a cpuset would. It shares the child's task group (the
// session's autogroup; a run without its own cgroup), and load of the group
// on another CPU moves the group's share on the child's CPU at every enqueue
// there: measured 2026-12-07, tpt-churn on CPU 0 (3 repetitions each) was
// switched out 1,803-2,015 times with this process pinned to CPU 1, 38-42
// times pinned to CPU 0, and 39 or 2,146 left free, by where it happened to
// have run (docs/validation.md, "Thread churn in a task group"). The mask
// is given back when the repetitions end; the neighbour, another container,
// keeps the runner's CPUs from before (run_in_child's machine_cpus).
class ParentCpuset {
 public:
  explicit ParentCpuset(const std::vector<int>& cpus) {
    if (cpus.empty() || sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    // A cpuset this machine does not have is the child's to refuse.
    cpu_set_t want;
    pinned_ = !cpuset_mask(cpus, want) && sched_setaffinity(0, sizeof want, &want) == 0;
  }
  ~ParentCpuset() {
    if (pinned_) (void)sched_setaffinity(0, sizeof saved_, &saved_);
  }
  ParentCpuset(const ParentCpuset&) = delete;
  ParentCpuset& operator=(const ParentCpuset&) = delete;

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
};

}  // namespace

std::vector<RunResult> run_scenario(const Scenario& s, const Workload& w, const RealOptions& opt) {
  const int est = estimated_peak_threads(s, w);
  if (s.run.max_threads > 0 && est > s.run.max_threads)
    throw MachineRefused("the scenario needs about " + std::to_string(est) +
                         " OS threads (backend " + std::string(to_string(s.backend.kind)) +
                         "), more than run.max_threads = " + std::to_string(s.run.max_threads));
  check_least_duration(s, w);
  remove_stale_cgroups();
  // The work loop's rate, once before forking, for every repetition: the
  // machine profile's (work_loop, measured by calibrate) when it has one, so
  // that every run sizes its phases alike and the speed check compares the
  // machine with its profile; else calibrated now.
  if (s.machine.work_loop > Duration{0})
    set_units_per_ns(static_cast<double>(kWorkLoopUnits) /
                     static_cast<double>(s.machine.work_loop.count()));
  units_per_ns();
  SignalGuard guard;
  const std::vector<int> machine_cpus = allowed_cpus();
  const ParentCpuset confined(s.limits.cpuset);
  std::vector<RunResult> out;
  // The measured repetitions' sampler records nothing (its wakes took the
  // CPU from the workload's threads: linux-1cpu-16tasks-w1, one CPU-bound
  // worker, 100 involuntary switches a second with it, 5.4 without); the
  // series come with the traced repetition below.
  RealOptions untraced = opt;
  untraced.trace = false;
  untraced.sample_series = false;
  const int total = s.run.warmup + s.run.reps;
  for (int i = 0; i < total; ++i) {
    const bool warmup = i < s.run.warmup;
    const int number = warmup ? i + 1 : i - s.run.warmup + 1;
    const int of = warmup ? s.run.warmup : s.run.reps;
    if (opt.progress) opt.progress(number, of, warmup);
    if (warmup) {
      run_in_child(s, w, untraced, i, machine_cpus);
      continue;
    }
    out.push_back(
        run_checked(s, w, untraced, i, fmt::format("repetition {}/{}", number, of), machine_cpus));
  }
  // The trace comes from one more repetition after the measured ones: its
  // spans are memory the workload does not use (memory_peak) and time it does
  // not spend, so no measured repetition records them.
  if (opt.trace && !out.empty()) {
    if (opt.note) opt.note("one more repetition, traced (not measured)");
    RunResult traced = run_in_child(s, w, opt, total, machine_cpus);
    out.front().trace = std::move(traced.trace);
    out.front().threads_series = std::move(traced.threads_series);
    out.front().runnable_series = std::move(traced.runnable_series);
  }
  return out;
}

}  // namespace poolsim::real
