// The runner's isolation and limits: watchdog, max_threads refusal, cgroup
// quota applied (throttling observed) and removed, cpuset applied, stale
// groups removed, the child -> parent codec.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "real/backend.hpp"
#include "real/cgroup.hpp"
#include "real/cpu_work.hpp"
#include "real/result_codec.hpp"
#include "real/runner.hpp"
#include "real_test_util.hpp"

using namespace poolsim;
using namespace poolsim::real;
using namespace std::chrono_literals;
using poolsim::real::test::count_outcome;
using poolsim::real::test::run_once;
using poolsim::real::test::scenario;

namespace {

std::size_t own_cgroups() {
  const std::string prefix = "poolsim-" + std::to_string(getpid()) + "-";
  std::size_t n = 0;
  for (const auto& p : list_poolsim_cgroups())
    n += std::filesystem::path(p).filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

bool can_make_cgroups() {
  try {
    CpuCgroup g = CpuCgroup::create(0.5, std::chrono::milliseconds(100), 999);
    return true;
  } catch (const MachineRefused&) {
    return false;
  }
}

}  // namespace

TEST_CASE("runner.watchdog: a repetition past run.timeout is refused", "[real][runner]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 2}\n  task: [{wait: 20s}]\n"
      "backend: {kind: pool, threads: 2}\nrun: {reps: 1, warmup: 0, timeout: 300ms}\n",
      /*default_run=*/false);
  const Workload w = generate_workload(s);
  REQUIRE_THROWS_AS(run_scenario(s, w), MachineRefused);
  try {
    run_scenario(s, w);
  } catch (const MachineRefused& e) {
    REQUIRE(std::string(e.what()).find("timeout") != std::string::npos);
  }
}

TEST_CASE("runner.max_threads: a pool bigger than run.max_threads is refused before it starts",
          "[real][runner]") {
  // The loader refuses this already; the runner checks again for callers
  // that build or override scenarios in code.
  Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 4}\n  task: [{cpu: 10us}]\n"
      "backend: {kind: pool, threads: 8}\n");
  s.run.max_threads = 4;
  REQUIRE(estimated_peak_threads(s, generate_workload(s)) == 9);
  REQUIRE_THROWS_AS(run_scenario(s, generate_workload(s)), MachineRefused);
}

TEST_CASE("runner.max_threads_live: thread-per-task stops at run.max_threads", "[real][runner]") {
  // A batch passes the estimate (threads may finish before the next starts),
  // but these tasks all block together: the live guard refuses at the 11th.
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 40}\n  task: [{wait: 200ms}]\n"
      "backend: {kind: thread-per-task, stack: 128KiB}\n"
      "run: {reps: 1, warmup: 0, max_threads: 10, timeout: 30s}\n",
      /*default_run=*/false);
  try {
    run_scenario(s, generate_workload(s));
    FAIL("expected MachineRefused");
  } catch (const MachineRefused& e) {
    REQUIRE(std::string(e.what()).find("run.max_threads") != std::string::npos);
  }
}

TEST_CASE("runner.quota: cpus 0.5 throttles a CPU-bound run, and the group is removed",
          "[real][runner][cgroup]") {
  if (!can_make_cgroups()) {
    WARN("no writable cgroup CPU controller here: quota test skipped");
    return;
  }
  REQUIRE(own_cgroups() == 0);
  const Scenario s = scenario(
      "limits: {cpus: 0.5, period: 20ms}\n"
      "workload:\n  arrival: {kind: batch, count: 12}\n  task: [{cpu: 20ms}]\n"
      "backend: {kind: pool, threads: 2}\n");
  const RunResult r = run_once(s, generate_workload(s));
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 12);
  REQUIRE(own_cgroups() == 0);
  Duration makespan{};
  for (const auto& rec : r.records) makespan = std::max(makespan, rec.end);
  const double share = to_seconds(r.counters.cpu_time) / to_seconds(makespan);
  INFO("CPU share " << share << ", throttled periods " << r.counters.throttled_periods
                    << ", throttled time " << to_seconds(r.counters.throttled_time) << " s");
  // The quota holds: at most 0.5 CPU (plus the per-CPU overrun and the 5 ms
  // bandwidth slices, sched-bwc.rst: wide margin).
  REQUIRE(share <= 0.5 * 1.3);
  if (share >= 0.45) {
    // The group ran up against its quota, so the kernel throttled it.
    REQUIRE(r.counters.throttled_periods > 0);
    REQUIRE(r.counters.throttled_time.count() > 0);
  } else {
    // A machine too busy to give the group even 0.5 CPU never reaches the
    // quota: the throttling counters cannot be checked on this run.
    WARN("machine too busy to reach the 0.5 CPU quota (share " << share << ")");
  }
}

TEST_CASE("runner.quota_timeout: the group is removed when the watchdog fires",
          "[real][runner][cgroup]") {
  if (!can_make_cgroups()) {
    WARN("no writable cgroup CPU controller here: test skipped");
    return;
  }
  const Scenario s = scenario(
      "limits: {cpus: 1}\n"
      "workload:\n  arrival: {kind: batch, count: 1}\n  task: [{wait: 20s}]\n"
      "backend: {kind: pool, threads: 1}\nrun: {reps: 1, warmup: 0, timeout: 200ms}\n",
      /*default_run=*/false);
  REQUIRE_THROWS_AS(run_scenario(s, generate_workload(s)), MachineRefused);
  REQUIRE(own_cgroups() == 0);
}

TEST_CASE(
    "runner.neighbour: a spinning neighbour of 4x the weight slows a CPU-bound run on one CPU, "
    "and its group and process are gone after",
    "[real][runner][cgroup]") {
  if (!can_make_cgroups()) {
    WARN("no writable cgroup CPU controller here: neighbour test skipped");
    return;
  }
  REQUIRE(own_cgroups() == 0);
  // One worker pinned to CPU 0, the neighbour's 2 threads spread over both
  // CPUs: on CPU 0 the scenario's group (1024) meets a neighbour entity of
  // 4096 x 1/2 = 2048, so it gets about a third of the CPU.
  const Scenario s = scenario(
      "limits: {cpuset: \"0\", neighbour: {threads: 2, shares: 4096}}\n"
      "workload:\n  arrival: {kind: batch, count: 6}\n  task: [{cpu: 20ms}]\n"
      "backend: {kind: pool, threads: 1}\n");
  const RunResult r = run_once(s, generate_workload(s));
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 6);
  REQUIRE(own_cgroups() == 0);  // rmdir succeeds only once the neighbour is gone
  Duration makespan{};
  for (const auto& rec : r.records) makespan = std::max(makespan, rec.end);
  const double share = to_seconds(r.counters.cpu_time) / to_seconds(makespan);
  INFO("CPU share beside the neighbour " << share);
  REQUIRE(share < 0.8);
}

TEST_CASE("runner.stale: a group left by a dead run is removed", "[real][runner][cgroup]") {
  const auto parents = cgroup_parent_dirs();
  if (!can_make_cgroups() || parents.empty()) {
    WARN("no writable cgroup CPU controller here: test skipped");
    return;
  }
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  int st = 0;
  waitpid(dead, &st, 0);
  // Where create() would put it: the last parent that works (v1 here) or v2.
  std::string made;
  for (const auto& p : parents) {
    const std::string dir = p + "/poolsim-" + std::to_string(dead) + "-0";
    if (::mkdir(dir.c_str(), 0755) == 0) {
      made = dir;
      break;
    }
  }
  REQUIRE_FALSE(made.empty());
  REQUIRE(std::filesystem::exists(made));
  REQUIRE(remove_stale_cgroups() >= 1);
  REQUIRE_FALSE(std::filesystem::exists(made));
}

TEST_CASE("runner.cpuset: a cpuset of one CPU caps CPU time at the wall time", "[real][runner]") {
  const Scenario s = scenario(
      "limits: {cpuset: \"0\"}\n"
      "workload:\n  arrival: {kind: batch, count: 6}\n  task: [{cpu: 10ms}]\n"
      "backend: {kind: pool, threads: 3}\n");
  RealOptions opt;
  opt.task_cpu = true;
  const auto rs = run_scenario(s, generate_workload(s), opt);
  REQUIRE(rs.size() == 1);
  const RunResult& r = rs.front();
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 6);
  // The tasks' own CPU (each task's thread clock): on one CPU the three
  // workers cannot compute at once, so together they get at most the wall
  // time from the first start to the last end (without the cpuset: about 60
  // ms of CPU in 20 ms). Not the process's CPU time against the makespan:
  // that also holds the harness's work after the last task (the memory
  // reading, the joins), which a TSan build made 5 ms once (81.2 ms of CPU
  // against 76.3 ms of makespan, CI 2026-12-05).
  Duration first{Duration::max()}, last{}, tasks_cpu{};
  for (const auto& rec : r.records) {
    first = std::min(first, rec.start);
    last = std::max(last, rec.end);
    tasks_cpu += rec.cpu;
  }
  REQUIRE(to_seconds(tasks_cpu) > 0.05);  // measured: 6 x 10 ms of work
  REQUIRE(to_seconds(tasks_cpu) <= to_seconds(last - first) * 1.05 + 0.001);
}

TEST_CASE("runner.cpuset: the runner keeps to the cpuset while it runs, then gives its mask back",
          "[real][runner]") {
  // Its task group is the child's: its load on another CPU switched the
  // child's thread creator out at every second creation (docs/validation.md,
  // "Thread churn in a task group").
  cpu_set_t before;
  REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
  if (CPU_COUNT(&before) < 2 || !CPU_ISSET(0, &before)) {
    WARN("fewer than two CPUs allowed, or not CPU 0: test skipped");
    return;
  }
  const Scenario s = scenario(
      "limits: {cpuset: \"0\"}\n"
      "workload:\n  arrival: {kind: batch, count: 2}\n  task: [{cpu: 10us}]\n"
      "backend: {kind: pool, threads: 1}\nrun: {reps: 2, warmup: 1, timeout: 60s}\n",
      false);
  RealOptions opt;
  std::vector<int> seen;  // CPUs allowed to the runner before each repetition
  opt.progress = [&](int, int, bool) {
    cpu_set_t now;
    REQUIRE(sched_getaffinity(0, sizeof now, &now) == 0);
    seen.push_back(CPU_COUNT(&now) == 1 && CPU_ISSET(0, &now) ? 1 : 0);
  };
  const auto rs = run_scenario(s, generate_workload(s), opt);
  REQUIRE(rs.size() == 2);
  REQUIRE(seen == std::vector<int>{1, 1, 1});
  cpu_set_t after;
  REQUIRE(sched_getaffinity(0, sizeof after, &after) == 0);
  REQUIRE(CPU_EQUAL(&before, &after));
}

TEST_CASE("runner.origin: each repetition reads its submitter's utilization at the origin",
          "[real][runner]") {
  // calibrate's origin_util is the median of these readings
  // (se.avg.util_avg of /proc/thread-self/sched, out of 1024, read just
  // before the origin): the child's setup has run, so the submitter has a
  // past; a kernel that does not show it reports nothing.
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 2}\n  task: [{cpu: 10us}]\n"
      "backend: {kind: pool, threads: 1}\nrun: {reps: 2, warmup: 0}\n",
      /*default_run=*/false);
  const auto rs = run_scenario(s, generate_workload(s), RealOptions{});
  REQUIRE(rs.size() == 2);
  std::ifstream sched("/proc/thread-self/sched");
  std::string text((std::istreambuf_iterator<char>(sched)), std::istreambuf_iterator<char>());
  const bool shown = text.find("se.avg.util_avg") != std::string::npos;
  for (const RunResult& r : rs) {
    REQUIRE(r.extra.contains("origin_util") == shown);
    if (!shown) continue;
    INFO("origin_util " << r.extra.at("origin_util"));
    CHECK(r.extra.at("origin_util") > 0);
    CHECK(r.extra.at("origin_util") <= 1.0);
  }
}

TEST_CASE("runner.reps: warmups are dropped, measured repetitions returned", "[real][runner]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 5}\n  task: [{cpu: 10us}]\n"
      "backend: {kind: pool, threads: 1}\nrun: {reps: 2, warmup: 1}\n",
      /*default_run=*/false);
  int calls = 0, warmups = 0;
  std::vector<std::string> labels;
  RealOptions opt;
  opt.progress = [&](int rep, int total, bool warm) {
    ++calls;
    warmups += warm ? 1 : 0;
    // Counted within their kind: warmup 1/1, then repetition 1/2, 2/2.
    labels.push_back((warm ? "warmup " : "repetition ") + std::to_string(rep) + "/" +
                     std::to_string(total));
  };
  const auto rs = run_scenario(s, generate_workload(s), opt);
  REQUIRE(rs.size() == 2);
  REQUIRE(calls == 3);
  REQUIRE(warmups == 1);
  REQUIRE(labels == std::vector<std::string>{"warmup 1/1", "repetition 1/2", "repetition 2/2"});
}

TEST_CASE(
    "runner.sampler: measured repetitions sample no series (their sampler parks), the traced one "
    "does",
    "[real][runner]") {
  // A 30 ms run: a sampling sampler (10 ms) records the pool's threads as
  // they start; a parked one records nothing, not even the origin's sample.
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 3}\n  task: [{wait: 30ms}]\n"
      "backend: {kind: pool, threads: 3}\n");
  const RunResult plain = run_once(s, generate_workload(s));
  CHECK(plain.threads_series.empty());
  CHECK(plain.runnable_series.empty());
  CHECK(plain.counters.threads_peak == 4);
  const RunResult traced = run_once(s, generate_workload(s), /*trace=*/true);
  REQUIRE_FALSE(traced.threads_series.empty());
  int peak = 0;
  for (const Sample& x : traced.threads_series) peak = std::max(peak, x.value);
  CHECK(peak == 4);
}

TEST_CASE("runner.trace: tracing does not change the measured memory_peak", "[real][runner]") {
  // 20000 tasks record at least 40000 spans when traced (over 1 MiB): a
  // measured repetition that recorded them would count them in memory_peak.
  // The measured repetitions record none; one more, unmeasured, gives the trace.
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 20000}\n  task: [{cpu: 1us}]\n"
      "backend: {kind: pool, threads: 1}\nrun: {reps: 1, warmup: 0, timeout: 60s}\n",
      /*default_run=*/false);
  const Workload w = generate_workload(s);
  RealOptions traced;
  traced.trace = true;
  std::vector<std::string> notes;
  traced.note = [&](const std::string& n) { notes.push_back(n); };
  const auto with = run_scenario(s, w, traced);
  const auto without = run_scenario(s, w, RealOptions{});
  REQUIRE(with.size() == 1);
  REQUIRE(with.front().trace.spans.size() >= 40000);
  REQUIRE(without.front().trace.empty());
  REQUIRE(std::find(notes.begin(), notes.end(), "one more repetition, traced (not measured)") !=
          notes.end());
  const auto peak_with = with.front().counters.memory_peak;
  const auto peak_without = without.front().counters.memory_peak;
  // Recorded in a measured repetition, the spans would add their own size
  // (over 1 MiB) to its peak. The peak itself moves by a few hundred KiB
  // between runs of this batch (how far the submitter gets ahead of the
  // worker: 480 KiB once under ThreadSanitizer, the untraced run the larger),
  // so the check is one-sided and at half the spans' size.
  const auto spans_bytes = static_cast<long long>(with.front().trace.spans.size() *
                                                  sizeof(with.front().trace.spans.front()));
  INFO("memory_peak traced " << peak_with << " B, untraced " << peak_without << " B, spans "
                             << spans_bytes << " B");
  REQUIRE(spans_bytes > 1024 * 1024);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // Under a sanitizer's allocator the peak of two identical runs differed by
  // 1.04 MiB (ThreadSanitizer, CI 2026-12-02): as much as the spans, so the
  // bound cannot tell them apart there; it is checked in the Release suite.
  return;
#endif
  REQUIRE(static_cast<long long>(peak_with) - static_cast<long long>(peak_without) <
          spans_bytes / 2);
}

namespace {
// One measured repetition of `count` Poisson tasks at 2,000/s, each the
// phases `task`, on `backend` (YAML flow maps).
RunResult poisson_run(int count, const std::string& task, const std::string& backend,
                      const RealOptions& opt = {}) {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: poisson, rate: 2000/s, count: " + std::to_string(count) +
          "}\n  task: [" + task + "]\nbackend: " + backend +
          "\nrun: {reps: 1, warmup: 0, timeout: 60s}\n",
      /*default_run=*/false);
  return run_scenario(s, generate_workload(s), opt).front();
}
long long memory_peak_of(const RunResult& r) {
  return static_cast<long long>(r.counters.memory_peak);
}
}  // namespace

TEST_CASE(
    "runner.memory: the sampler's series are not the workload's: memory_peak does not grow "
    "with the run's length",
    "[real][runner]") {
  // The sampler records a point each time the running count changes (up to
  // one a millisecond, 16 bytes each). Its storage was reserved, not
  // written, before the baseline, so its pages faulted in during the run and
  // were counted: +44 KiB over 10 s of a 4-worker pool at 500 tasks/s.
  RealOptions opt;
  opt.sample_period =
      std::chrono::microseconds(250);  // up to 4 points a millisecond: a clear signal in 2 s
  const auto peak = [&](int count) {
    return memory_peak_of(poisson_run(count, "{cpu: {dist: exponential, mean: 200us}}",
                                      "{kind: pool, threads: 2}", opt));
  };
  const long long brief = peak(300), long_run = peak(4000);  // 0.15 s and 2 s
  INFO("memory_peak 300 tasks " << brief << " B, 4000 tasks " << long_run << " B");
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // A sanitizer's allocator keeps freed memory in quarantine, so the heap
  // grows with the tasks run (+88 KiB here under AddressSanitizer): the
  // runs are made, the bound is not checked.
  return;
#endif
  // Two seconds of changes at up to four a millisecond would add up to
  // ~128 KiB; a page or two moves between runs (which worker binds a
  // library function first).
  REQUIRE(long_run - brief < 16 * 1024);
}

TEST_CASE(
    "runner.memory: the speed probe's storage is not the workload's: memory_peak does not grow "
    "with the number of phases",
    "[real][runner]") {
  // Every 8th `cpu` phase of 2^15 loop units or more (~55 us here) stores
  // its speed in a 32 KiB array (real/cpu_work.cpp); left unwritten before
  // the baseline, each 512 sampled phases faulted in a page the run counted:
  // 4,000 tasks of the event-loop battery read 56-60 KiB against 48 once
  // reserve_speed_probe wrote it first (2026-12-06). 24,000 phases here
  // sample 3,000 (six pages); 1,200 sample 150.
  const std::string task =
      "{cpu: 80us}, {cpu: 80us}, {cpu: 80us}, {cpu: 80us}, {cpu: 80us}, "
      "{cpu: 80us}";
  const long long brief = memory_peak_of(poisson_run(200, task, "{kind: pool, threads: 2}"));
  const long long long_run = memory_peak_of(poisson_run(4000, task, "{kind: pool, threads: 2}"));
  INFO("memory_peak 200 tasks " << brief << " B, 4000 tasks " << long_run << " B");
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return;  // quarantined frees grow the heap with the tasks (see above)
#endif
  // A page or two moves between runs (which worker binds a library
  // function first); six pages would not fit.
  REQUIRE(long_run - brief < 12 * 1024);
}

TEST_CASE(
    "runner.memory: the harness's per-thread bookkeeping is not the workload's: a thread per "
    "task does not grow memory_peak with the number of tasks",
    "[real][runner]") {
  // Each thread's ThreadSlot (~100 bytes) was allocated as the thread
  // started, in its malloc arena, and kept: 3,000 of these tasks read
  // 376 KiB against 72 KiB for 200 (2026-12-02).
  const RunResult b = poisson_run(200, "{cpu: 20us}", "{kind: thread-per-task}");
  const RunResult l = poisson_run(3000, "{cpu: 20us}", "{kind: thread-per-task}");
  const long long brief = memory_peak_of(b), long_run = memory_peak_of(l);
  // memory_peak is read at the peak of live threads (runner.memory above):
  // on a loaded machine more of the long run's threads may be alive at once,
  // each with its touched stack; at most 24 KiB each is allowed for them.
  const long long more_alive =
      std::max<long long>(0, l.counters.threads_peak - b.counters.threads_peak);
  INFO("memory_peak 200 tasks " << brief << " B (" << b.counters.threads_peak
                                << " threads alive at most), 3000 tasks " << long_run << " B ("
                                << l.counters.threads_peak << ")");
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return;  // quarantined frees grow the heap with the tasks (see above)
#endif
  // 2,800 more threads at ~100 bytes each would add ~270 KiB.
  REQUIRE(long_run - brief < 96 * 1024 + more_alive * 24 * 1024);
}

TEST_CASE(
    "runner.memory: oneTBB workers that re-enter the arena keep their slot: memory_peak does not "
    "grow with the number of tasks",
    "[real][runner][tbb]") {
  // Every arrival into an empty arena brings the workers back in, and each
  // entry registered a new slot and name: the quickstart's workload on tbb
  // read 416 / 502 / 828 KiB at 100 / 400 / 1,600 tasks (2026-12-02).
  const RunResult brief = poisson_run(200, "{cpu: 100us}", "{kind: tbb, threads: 2}");
  const RunResult long_run = poisson_run(2000, "{cpu: 100us}", "{kind: tbb, threads: 2}");
  const double brief_entries = brief.extra.at("worker_entries");
  const double long_entries = long_run.extra.at("worker_entries");
  INFO("memory_peak 200 tasks " << memory_peak_of(brief) << " B (" << brief_entries
                                << " entries), 2000 tasks " << memory_peak_of(long_run) << " B ("
                                << long_entries << " entries)");
  CHECK(long_entries > brief_entries + 500);  // the workers did come and go
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return;  // quarantined frees grow the heap with the tasks
#endif
  REQUIRE(memory_peak_of(long_run) - memory_peak_of(brief) < 96 * 1024);
}

TEST_CASE(
    "real_runner.capacity: cpu_utilization is over the CPUs the run had, not the profile's cores",
    "[real]") {
  // The test scenarios name `machine: default` (4 cores); the run has the
  // CPUs of this process's affinity (2 on the project's VM and CI), and a
  // quota of half a CPU caps that.
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  const double cpus = CPU_COUNT(&set);
  const std::string body =
      "workload:\n  arrival: {kind: batch, count: 4}\n  task: [{cpu: 1ms}]\n"
      "backend: {kind: pool, threads: 2}\n";
  const Scenario s = scenario(body);
  REQUIRE(run_once(s, generate_workload(s)).cpus_available == cpus);
  const Scenario q = scenario(body + "limits: {cpus: 0.5}\n");
  REQUIRE(run_once(q, generate_workload(q)).cpus_available == std::min(cpus, 0.5));
}

TEST_CASE("codec.round_trip: a RunResult survives the pipe encoding", "[real][codec]") {
  RunResult r;
  r.mode = "measured";
  r.cpus_available = 1.5;
  r.records.resize(3);
  r.records[1].submit = Duration{5};
  r.records[1].end = Duration{99};
  r.records[1].outcome = TaskOutcome::rejected;
  r.counters.switches_voluntary = 42;
  r.extra["steals"] = 7;
  r.threads_series.push_back({Duration{3}, 4});
  r.trace.tracks.push_back({"submitter", false});
  r.trace.spans.push_back(
      TraceSpan{0, SpanKind::task, 1, TraceSpan::kNoTask, Duration{1}, Duration{2}});
  const RunResult d = decode_result(encode_result(r));
  REQUIRE(d.mode == "measured");
  REQUIRE(d.cpus_available == 1.5);
  REQUIRE(d.records.size() == 3);
  REQUIRE(d.records[1].end == Duration{99});
  REQUIRE(d.records[1].outcome == TaskOutcome::rejected);
  REQUIRE(d.counters.switches_voluntary == 42);
  REQUIRE(d.extra.at("steals") == 7);
  REQUIRE(d.threads_series.size() == 1);
  REQUIRE(d.trace.tracks.at(0).name == "submitter");
  REQUIRE(d.trace.spans.at(0).end == Duration{2});
  const std::string bytes = encode_result(r);
  REQUIRE_THROWS(decode_result(std::string_view(bytes).substr(0, bytes.size() - 1)));
}

TEST_CASE("cpu_work.scaling: twice the work takes about twice the CPU time", "[real][cpu-work]") {
  const double rate = units_per_ns();
  REQUIRE(rate > 0);
  auto cpu_of = [](Duration work) {
    timespec a{}, b{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    burn(work);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    return (b.tv_sec - a.tv_sec) * 1e9 + static_cast<double>(b.tv_nsec - a.tv_nsec);
  };
  // The median of nine back-to-back pairs: a pair runs at one speed of this
  // VM's vCPU, which drifts between seconds (the best of five of each size,
  // taken apart, once gave 2.42 under AddressSanitizer in CI).
  std::vector<double> ratios;
  for (int i = 0; i < 9; ++i) {
    const double one = cpu_of(std::chrono::milliseconds(2));
    ratios.push_back(cpu_of(std::chrono::milliseconds(4)) / one);
  }
  std::nth_element(ratios.begin(), ratios.begin() + 4, ratios.end());
  INFO("median ratio " << ratios[4]);
  REQUIRE(ratios[4] > 1.6);
  REQUIRE(ratios[4] < 2.4);
}

TEST_CASE("runner.task_cpu: per-task CPU time follows the work when asked for", "[real][runner]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 6}\n  task: [{cpu: 4ms}, {wait: 2ms}]\n"
      "backend: {kind: pool, threads: 2}\n");
  const Workload w = generate_workload(s);
  RealOptions opt;
  opt.task_cpu = true;
  const auto rs = run_scenario(s, w, opt);
  REQUIRE(rs.size() == 1);
  for (const auto& rec : rs[0].records) {
    REQUIRE(rec.outcome == TaskOutcome::completed);
    // 4 ms of calibrated work; the wait costs no CPU. A missing measurement
    // (0) fails the lower bound. The upper one is the task's own wall span:
    // a thread's clock cannot pass it, a process-wide clock (both workers
    // computing at once) does. Not a fixed figure: this VM's CPU can run
    // several times slower for a while (a TSan run after its build once
    // read 24 ms for one task), and then the wall span grows with it.
    REQUIRE(to_seconds(rec.cpu) > 0.001);
    REQUIRE(rec.cpu <= rec.end - rec.start + Duration(500us));
  }
  const RunResult plain = run_once(s, w);
  for (const auto& rec : plain.records) REQUIRE(rec.cpu.count() == 0);
}

namespace {

// A fake cgroup hierarchy in a temporary directory: the files the kernel
// would show, so each version's protocol (which file, which format) is
// checked even where that version has no CPU controller (this machine's v2
// hierarchy has none). Removed with everything in it.
struct FakeHierarchy {
  std::filesystem::path root;
  explicit FakeHierarchy(const std::string& name) {
    root = std::filesystem::temp_directory_path() /
           ("poolsim-test-" + std::to_string(getpid()) + "-" + name);
    std::filesystem::create_directories(root);
  }
  ~FakeHierarchy() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  void write(const std::string& file, const std::string& text) const {
    std::ofstream(root / file) << text;
  }
  std::string read(const std::filesystem::path& file) const {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // rmdir of a real group works with its files in place; a fake one needs
  // them deleted first.
  static void empty(const std::string& dir) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) std::filesystem::remove(e);
  }
};

}  // namespace

TEST_CASE("runner.cgroup_files: v2 writes cpu.max and reads throttled_usec, v1 its own files",
          "[real][runner][cgroup]") {
  using std::chrono::milliseconds;
  SECTION("v2 with the cpu controller: cpu.max = quota period (us), enabled in the parent") {
    FakeHierarchy v2("v2");
    v2.write("cgroup.controllers", "cpuset cpu io memory pids\n");
    v2.write("cgroup.subtree_control", "memory\n");
    CpuCgroup g =
        CpuCgroup::create_under(v2.root.string(), std::nullopt, 1.5, milliseconds(100), 7);
    REQUIRE(g.version() == 2);
    REQUIRE(std::filesystem::path(g.path()).parent_path() == v2.root);
    REQUIRE(v2.read(std::filesystem::path(g.path()) / "cpu.max") == "150000 100000");
    REQUIRE(v2.read(v2.root / "cgroup.subtree_control") == "+cpu");
    REQUIRE(g.join_self().empty());
    REQUIRE(v2.read(std::filesystem::path(g.path()) / "cgroup.procs") == std::to_string(getpid()));
    std::ofstream(std::filesystem::path(g.path()) / "cpu.stat")
        << "usage_usec 812345\nuser_usec 800000\nsystem_usec 12345\nnr_periods 20\n"
           "nr_throttled 9\nthrottled_usec 431000\nnr_bursts 0\nburst_usec 0\n";
    const CpuStat st = g.read_stat();
    REQUIRE(st.nr_periods == 20);
    REQUIRE(st.nr_throttled == 9);
    REQUIRE(st.throttled_time == milliseconds(431));
    FakeHierarchy::empty(g.path());
    REQUIRE(g.remove());
    REQUIRE_FALSE(std::filesystem::exists(g.path()));
  }
  SECTION("v2 without the cpu controller falls back to v1: cfs_period_us and cfs_quota_us") {
    FakeHierarchy v2("v2-nocpu");
    v2.write("cgroup.controllers", "hugetlb\n");
    FakeHierarchy v1("v1");
    CpuCgroup g =
        CpuCgroup::create_under(v2.root.string(), v1.root.string(), 0.5, milliseconds(50), 3);
    REQUIRE(g.version() == 1);
    REQUIRE(v1.read(std::filesystem::path(g.path()) / "cpu.cfs_period_us") == "50000");
    REQUIRE(v1.read(std::filesystem::path(g.path()) / "cpu.cfs_quota_us") == "25000");
    std::ofstream(std::filesystem::path(g.path()) / "cpu.stat")
        << "nr_periods 40\nnr_throttled 12\nthrottled_time 345000000\n";
    const CpuStat st = g.read_stat();
    REQUIRE(st.nr_throttled == 12);
    REQUIRE(st.throttled_time == milliseconds(345));
    FakeHierarchy::empty(g.path());
    REQUIRE(g.remove());
  }
  SECTION("a quota below 1 ms is raised to the kernel's minimum") {
    FakeHierarchy v2("v2-min");
    v2.write("cgroup.controllers", "cpu\n");
    v2.write("cgroup.subtree_control", "cpu\n");
    CpuCgroup g =
        CpuCgroup::create_under(v2.root.string(), std::nullopt, 0.001, milliseconds(100), 1);
    REQUIRE(v2.read(std::filesystem::path(g.path()) / "cpu.max") == "1000 100000");
    REQUIRE(v2.read(v2.root / "cgroup.subtree_control") == "cpu\n");  // already enabled
    FakeHierarchy::empty(g.path());
    REQUIRE(g.remove());
  }
  SECTION("neither version usable: MachineRefused naming what was tried") {
    FakeHierarchy v2("v2-none");
    v2.write("cgroup.controllers", "memory\n");
    try {
      CpuCgroup::create_under(v2.root.string(), std::nullopt, 1.0, milliseconds(100), 1);
      FAIL("expected MachineRefused");
    } catch (const MachineRefused& e) {
      const std::string what = e.what();
      REQUIRE(what.find("no cpu controller") != std::string::npos);
      REQUIRE(what.find("cgroup v1 (no cpu controller mounted)") != std::string::npos);
    }
  }
}

namespace {
// Runs `body` in a forked child, which writes N counts to a pipe and exits
// 0 when `body` returns true; returns the counts and the child's status
// (WIFEXITED and WEXITSTATUS checked here).
template <std::size_t N>
std::array<std::size_t, N> counts_from_child(
    const std::function<bool(std::array<std::size_t, N>&)>& body) {
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::array<std::size_t, N> counts{};
    const bool passed = body(counts);
    const bool ok = write(pipefd[1], counts.data(), sizeof counts) == sizeof counts;
    _exit(ok && passed ? 0 : 1);
  }
  close(pipefd[1]);
  std::array<std::size_t, N> counts{};
  const bool got = read(pipefd[0], counts.data(), sizeof counts) == sizeof counts;
  close(pipefd[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(got);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return counts;
}
}  // namespace

TEST_CASE("runner.cow: a forked child owns the pages it shared with its parent before the run",
          "[real][runner]") {
  // 256 pages the parent wrote, then fork: the child shares them until it
  // writes. /proc/self/pagemap bit 56 says a page is mapped exclusively.
  constexpr std::size_t kPages = 256;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<char> buf(kPages * page + page, 1);
  char* first = buf.data() + (page - reinterpret_cast<std::uintptr_t>(buf.data()) % page);
  const auto exclusive_pages = [&] {
    const int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    std::size_t n = 0;
    for (std::size_t i = 0; i < kPages && pm >= 0; ++i) {
      std::uint64_t e = 0;
      const auto at = (reinterpret_cast<std::uintptr_t>(first) / page + i) * sizeof e;
      if (pread(pm, &e, sizeof e, static_cast<off_t>(at)) == sizeof e && e >> 63 && (e >> 56 & 1))
        ++n;
    }
    if (pm >= 0) close(pm);
    return n;
  };
  REQUIRE(exclusive_pages() == kPages);
  // The child exits 0 when the contents are unchanged.
  const auto counts = counts_from_child<2>([&](std::array<std::size_t, 2>& c) {
    c[0] = exclusive_pages();
    break_copy_on_write();
    c[1] = exclusive_pages();
    return std::all_of(buf.begin(), buf.end(), [](char ch) { return ch == 1; });
  });
  CHECK(counts[0] == 0);       // shared with the parent after fork
  CHECK(counts[1] == kPages);  // its own after break_copy_on_write
}

TEST_CASE(
    "runner.map_file_pages: a forked child has its program's code in its page tables before the "
    "run",
    "[real]") {
  // The executable's code mapping (r-xp, the file /proc/self/exe names):
  // fork() does not copy its page-table entries, so the child starts with
  // only the pages it ran itself present (/proc/self/pagemap bit 63) and,
  // after map_file_pages, with all of them.
  const auto code_pages = [] {
    char exe[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::ifstream maps("/proc/self/maps");
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    std::size_t present = 0, total = 0;
    std::string line;
    while (n > 0 && pm >= 0 && std::getline(maps, line)) {
      unsigned long lo = 0, hi = 0;
      char perms[5] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
      if (std::string(perms) != "r-xp" || line.find(exe) == std::string::npos) continue;
      for (std::uintptr_t a = lo; a < hi; a += page) {
        std::uint64_t e = 0;
        if (pread(pm, &e, sizeof e, static_cast<off_t>(a / page * sizeof e)) == sizeof e && e >> 63)
          ++present;
        ++total;
      }
    }
    if (pm >= 0) close(pm);
    return std::pair<std::size_t, std::size_t>{present, total};
  };
  // The child exits 0 when map_file_pages populated something.
  const auto counts = counts_from_child<4>([&](std::array<std::size_t, 4>& c) {
    std::tie(c[0], c[1]) = code_pages();
    const std::size_t bytes = map_file_pages();
    std::tie(c[2], c[3]) = code_pages();
    return bytes > 0;
  });
  INFO("code pages present: " << counts[0] << " of " << counts[1] << " after fork, " << counts[2]
                              << " of " << counts[3] << " after map_file_pages");
  REQUIRE(counts[1] > 0);
  // fork left them out: present are only those the child ran itself (with
  // fault-around, 16 pages a fault; 165 of 411 in a Release build here)
  CHECK(counts[0] < counts[1]);
  CHECK(counts[2] == counts[3]);  // every one present after
}

namespace {
// Records when the runtime was started, against the hand-overs it saw.
class StartProbe final : public Backend {
 public:
  void start(RunContext& ctx) override {
    ++starts;
    submits_before_start = submits;
    started_at = ctx.now();
  }
  void submit(std::uint32_t) override { ++submits; }
  void stop() override {}
  int starts = 0, submits = 0, submits_before_start = -1;
  Duration started_at{-1};
};

// A context with the probe attached and the clock started, as the runner
// has it when the submitter begins its arrivals.
struct LazyStart {
  Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 3}\n  task: [{cpu: 10us}]\n"
      "backend: {kind: pool, threads: 1}\n");
  Workload w = generate_workload(s);
  RunContext ctx{s, w, ContextOptions{}};
  StartProbe probe;
  LazyStart() {
    ctx.attach(&probe);
    ctx.set_origin_now();
  }
};
}  // namespace

TEST_CASE("runner.lazy_start: the first hand-over starts the runtime, once, after the origin",
          "[real][runner]") {
  LazyStart f;
  REQUIRE(f.probe.starts == 0);  // nothing started before the clock
  f.ctx.submit_now(0, Duration{0});
  REQUIRE(f.probe.starts == 1);
  REQUIRE(f.probe.submits_before_start == 0);
  REQUIRE(f.probe.started_at >= Duration{0});
  REQUIRE(f.ctx.records()[0].submit <= f.probe.started_at);
  f.ctx.submit_now(1, Duration{0});
  f.ctx.ensure_started();
  REQUIRE(f.probe.starts == 1);
  REQUIRE(f.probe.submits == 2);
}

TEST_CASE("runner.lazy_start_none: a run that hands nothing over still starts before it stops",
          "[real][runner]") {
  LazyStart f;
  f.ctx.ensure_started();
  REQUIRE(f.probe.starts == 1);
  REQUIRE(f.probe.submits_before_start == 0);
}

TEST_CASE("runner.statm: the probe's kept-open statm follows the process's anonymous memory",
          "[real][runner]") {
  // warm_thread_start opens /proc/self/statm once; every probe after it is
  // a pread of that file, which must read the memory as it is now, not as
  // it was at the open (and parse it as a fresh open's read would).
  LazyStart f;
  f.ctx.warm_thread_start();
  const Bytes before = f.ctx.statm_anon_bytes();
  REQUIRE(before > 0);
  constexpr std::size_t kBytes = 32u << 20;
  void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(block != MAP_FAILED);
  std::memset(block, 1, kBytes);
  const Bytes during = f.ctx.statm_anon_bytes();
  munmap(block, kBytes);
  const Bytes after = f.ctx.statm_anon_bytes();
  INFO("anonymous bytes before " << before << ", with 32 MiB touched " << during << ", after "
                                 << after);
  REQUIRE(during >= before + static_cast<Bytes>(kBytes) - (1 << 20));
  REQUIRE(after < during - static_cast<Bytes>(kBytes) / 2);
}

TEST_CASE(
    "runner.memory: a thread-per-task run's peak is read while its threads live, not after they "
    "exit",
    "[real][runner]") {
  // 24 threads alive at once for 500 ms, then gone: glibc's cache keeps four
  // of their stacks, so the count before the join sees four and VmHWM
  // (approximate per-CPU counters: up to a batch of pages per CPU) can miss
  // the rest. The exact count read at each new high of started threads sees
  // every stack: each new thread has touched at least its top page (struct
  // pthread, static TLS) and its first frames. The wait outlasts the
  // creations: with 60 ms a ThreadSanitizer build on a boot whose system
  // calls cost 1 us (2026-12-05) had only 18 alive at once.
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 24}\n  task: [{wait: 500ms}]\n"
      "backend: {kind: thread-per-task}\nrun: {reps: 1, warmup: 0, timeout: 60s}\n",
      /*default_run=*/false);
  const RunResult r = run_scenario(s, generate_workload(s), RealOptions{}).front();
  INFO("memory_peak " << r.counters.memory_peak << " B, threads_peak " << r.counters.threads_peak);
  REQUIRE(r.counters.threads_peak >= 20);
  // Every stack holds two pages (8 KiB) by then; 7 KiB each leaves a
  // margin. Without the probe this run read 137-164 KiB (three runs), with
  // it 252 KiB.
  REQUIRE(r.counters.memory_peak >= static_cast<Bytes>(r.counters.threads_peak - 1) * 7 * 1024);
}

TEST_CASE(
    "runner.switch_window: switches are counted until every task is final, not in the backend's "
    "teardown",
    "[real][runner]") {
  // oneTBB's stop (terminate the arena, wait for its workers to leave it,
  // tbb::finalize) makes the submitter wait for each worker, and a worker
  // that finds no more work parks after the last task: 6-8 voluntary
  // switches in every repetition when they were counted (2026-12-06), where
  // the run itself has the submitter's one wait for the end and now and then
  // a worker's park or a page-fault wait more (1-2 measured here, once 5 in
  // CI). The bound is on the quietest repetition: a teardown that was
  // counted is in every one of them.
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 20}\n  task: [{cpu: 100us}]\n"
      "backend: {kind: tbb, threads: 2}\nrun: {reps: 5, warmup: 0, timeout: 60s}\n",
      /*default_run=*/false);
  std::int64_t fewest = std::numeric_limits<std::int64_t>::max();
  for (const RunResult& r : run_scenario(s, generate_workload(s), RealOptions{})) {
    INFO("switches_voluntary " << r.counters.switches_voluntary);
    CHECK(r.counters.switches_voluntary >= 1);  // the submitter waited for the end
    fewest = std::min(fewest, r.counters.switches_voluntary);
  }
  INFO("fewest switches_voluntary " << fewest);
#if !defined(__SANITIZE_THREAD__)
  // ThreadSanitizer's runtime blocks the run's own threads more (7 in each
  // repetition, CI 2026-12-06): the bound holds in the Release and
  // AddressSanitizer suites.
  CHECK(fewest <= 3);
#endif
}
