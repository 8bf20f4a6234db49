// Kernel mechanisms, pinned with small exact runs: slice/tick rotation, wake
// placement costs, switch counting, creation/exit costs, memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {

// One task per entry; each task is a list of phases.
Workload phased(const std::vector<std::vector<Phase>>& tasks) {
  Workload w;
  w.arrival = ArrivalKind::batch;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    Task t;
    t.id = static_cast<std::uint32_t>(i);
    t.first_phase = static_cast<std::uint32_t>(w.phases.size());
    t.phase_count = static_cast<std::uint32_t>(tasks[i].size());
    for (const Phase& p : tasks[i]) w.phases.push_back(p);
    w.tasks.push_back(t);
  }
  return w;
}
Phase cpu(Duration d) { return {PhaseKind::cpu, 0, d, Duration{0}}; }
Phase wait(Duration d) { return {PhaseKind::wait, 0, d, Duration{0}}; }
Phase locked(std::uint32_t lock, Duration hold) { return {PhaseKind::lock, lock, hold, Duration{0}}; }

// Lengths of the running spans on CPU tracks, by thread.
std::map<std::uint32_t, std::vector<std::int64_t>> cpu_runs(const RunResult& r) {
  std::map<std::uint32_t, std::vector<std::int64_t>> runs;
  for (const TraceSpan& s : r.trace.spans)
    if (r.trace.tracks[s.track].is_cpu && s.kind == SpanKind::running)
      runs[s.thread].push_back((s.end - s.begin).count());
  return runs;
}

}  // namespace

TEST_CASE("Kernel.Slice.RoundsUpToTick", "[mechanism]") {
  // Two CPU-bound threads on one CPU, slice 3 ms, tick 4 ms: they alternate
  // in runs of 4 ms (the deadline is noticed at the next tick).
  const RunResult r = sim::simulate(tpt_scenario(zero_machine(1, 3ms, 4ms)), batch(2, 20ms),
                                    sim::SimOptions{true});
  auto runs = cpu_runs(r);
  int spans = 0;
  for (auto& [thread, lengths] : runs) {
    if (thread == 0) continue;  // the submitter
    for (std::int64_t len : lengths) {
      CHECK(len == Duration(4ms).count());
      ++spans;
    }
  }
  CHECK(spans == 10);
  // Nine hand-overs; the last one is the first thread's exit, not a preemption.
  CHECK(r.counters.switches_involuntary == 8);
}

TEST_CASE("Kernel.Slice.TicklessUsesSlice", "[mechanism]") {
  const RunResult r = sim::simulate(tpt_scenario(zero_machine(1, 3ms, 0ns)), batch(2, 21ms),
                                    sim::SimOptions{true});
  for (auto& [thread, lengths] : cpu_runs(r))
    if (thread != 0)
      for (std::int64_t len : lengths) CHECK(len == Duration(3ms).count());
  CHECK(makespan(r) == Approx(0.042));
}

TEST_CASE("Kernel.Wake.IdleCpuPaysLatencyAndIdleExit", "[mechanism]") {
  MachineProfile m = zero_machine(2);
  m.wakeup_latency = 20us;
  m.idle_exit = 30us;
  m.timer_slack = 50us;
  const RunResult r = sim::simulate(tpt_scenario(m), phased({{cpu(1ms), wait(10ms), cpu(1ms)}}));
  // Created onto the idle CPU 1 (latency + idle exit), then the sleep:
  // 10 ms + slack, woken onto its idle CPU again (latency + idle exit).
  const Duration expected = 50us + 1ms + 10ms + 50us + 50us + 1ms;
  CHECK(r.records[0].end == expected);
  CHECK(r.records[0].start == 50us);
}

TEST_CASE("Kernel.Wake.BusyCpuPreemptsPastDeadline", "[mechanism]") {
  // One CPU. Thread A sleeps 1.5 ms at once; B computes from 0 with a 1 ms
  // slice (tick 1 ms): its deadline passed at 1 ms but nobody was queued, so
  // it renewed its slice at the 1 ms tick... and a wake at 1.5 ms finds the
  // renewed deadline (2 ms) not passed: A waits for the 2 ms tick. It pays no
  // idle_exit (the CPU is busy), and B is preempted once.
  MachineProfile m = zero_machine(1, 1ms, 1ms);
  m.idle_exit = 500us;
  const RunResult r =
      sim::simulate(tpt_scenario(m), phased({{wait(1500us), cpu(1ms)}, {cpu(10ms)}}));
  CHECK(r.records[0].end == Duration(3ms));
  CHECK(r.records[1].end == Duration(11ms));
  CHECK(r.counters.switches_involuntary == 1);
  // Tickless, slice 1 ms: B's deadline renewals fall at 1 ms, 2 ms...; the
  // wake at 1.5 ms is inside a slice, so A runs at B's next deadline, 2 ms.
  const RunResult t =
      sim::simulate(tpt_scenario(zero_machine(1, 1ms, 0ns)), phased({{wait(1500us), cpu(1ms)}, {cpu(10ms)}}));
  CHECK(t.records[0].end == Duration(3ms));
  // A slice of 400 us tickless: renewals at 0.4, 0.8, 1.2, 1.6 ms; A waits to
  // 1.6 ms, then A and B alternate 400 us slices: A runs 1.6-2.0, 2.4-2.8 and
  // 3.2-3.4 ms.
  const RunResult u = sim::simulate(tpt_scenario(zero_machine(1, 400us, 0ns)),
                                    phased({{wait(1500us), cpu(1ms)}, {cpu(10ms)}}));
  CHECK(u.records[0].end == Duration(3400us));
}

TEST_CASE("Kernel.Switches.VoluntaryCountsBlocks", "[mechanism]") {
  const RunResult r = sim::simulate(
      tpt_scenario(zero_machine(2)),
      phased({{cpu(1ms), wait(1ms), cpu(1ms), wait(1ms), cpu(1ms), wait(1ms), cpu(1ms)}}));
  // The submitter blocks once (it joins), the task thread three times; the
  // exit switch is not counted.
  CHECK(r.counters.switches_voluntary == 4);
  CHECK(r.counters.switches_involuntary == 0);
}

TEST_CASE("Kernel.Costs.CacheRefillAfterSwitchOut", "[mechanism]") {
  MachineProfile m = zero_machine(2);
  m.cache_refill = 100us;
  const RunResult r = sim::simulate(tpt_scenario(m), phased({{cpu(1ms), wait(1ms), cpu(1ms)}}));
  CHECK(r.records[0].end == Duration(3ms) + Duration(100us));
  CHECK(r.records[0].cpu == Duration(2ms) + Duration(100us));
}

TEST_CASE("Kernel.Costs.MigrationWhenPulled", "[mechanism]") {
  // Two CPUs; three CPU-bound threads; when one finishes, its CPU pulls a
  // queued thread from the other, which pays migration_cost.
  MachineProfile m = zero_machine(2, 1ms, 0ns);
  m.migration_cost = 200us;
  const RunResult base = sim::simulate(tpt_scenario(zero_machine(2, 1ms, 0ns)), batch(3, 5500us));
  const RunResult r = sim::simulate(tpt_scenario(m), batch(3, 5500us));
  CHECK(to_seconds(r.counters.cpu_time) > to_seconds(base.counters.cpu_time) + 150e-6);
}

TEST_CASE("Kernel.Costs.ThreadCreateChargedToCreator", "[mechanism]") {
  MachineProfile m = zero_machine(1);
  m.thread_create = 10us;
  m.thread_exit = 5us;
  const RunResult r = sim::simulate(tpt_scenario(m), batch(1000, 0ns));
  // 1000 creations and exits on one CPU: 15 ms of CPU time, less the last
  // thread's exit, which comes after the run's end (the last completion).
  CHECK(r.counters.cpu_time == Duration(15ms) - Duration(5us));
  // The last task starts after the submitter paid for 1000 creations.
  Duration last_start{0};
  for (const TaskRecord& t : r.records) last_start = std::max(last_start, t.start);
  CHECK(last_start >= Duration(10ms));
}

TEST_CASE("Kernel.Memory.StackTouchPerLiveThread", "[mechanism]") {
  MachineProfile m = zero_machine(4);
  m.stack_touch = 16 * 1024;
  const RunResult r = sim::simulate(pool_scenario(m, 4), batch(10, 1ms));
  CHECK(r.counters.threads_peak == 5);  // 4 workers + the submitter
  CHECK(r.counters.memory_peak == 5 * 16 * 1024);
  const RunResult t = sim::simulate(tpt_scenario(m), batch(10, 1ms));
  CHECK(t.counters.threads_peak == 11);
  REQUIRE_FALSE(t.threads_series.empty());
  int peak = 0;
  for (const Sample& s : t.threads_series) peak = std::max(peak, s.value);
  CHECK(peak == 11);
}

TEST_CASE("Kernel.Cpuset.RestrictsCpus", "[mechanism]") {
  Scenario s = pool_scenario(zero_machine(8), 4);
  s.limits.cpuset = {2, 5};
  const RunResult r = sim::simulate(s, batch(8, 10ms), sim::SimOptions{true});
  CHECK(makespan(r) == Approx(0.04));  // 4 threads share 2 CPUs
  int cpu_tracks = 0;
  for (const TraceTrack& t : r.trace.tracks) cpu_tracks += t.is_cpu;
  CHECK(cpu_tracks == 2);
  CHECK(r.trace.tracks[0].name == "cpu 2");
}

TEST_CASE("Kernel.Quota.TwoCpusThrottleTogether", "[mechanism]") {
  // Two CPU-bound threads, quota 1 CPU on 2 CPUs: both run 50 ms, then both
  // are throttled 50 ms; throttled_time adds up per CPU (2 x 50 ms per period).
  Scenario s = pool_scenario(zero_machine(2), 2);
  s.limits.cpus = 1.0;
  const RunResult r = sim::simulate(s, batch(2, 200ms));
  CHECK(makespan(r) == Approx(0.35).epsilon(0.001));
  CHECK(r.counters.throttled_periods == 3);
  CHECK(to_seconds(r.counters.throttled_time) == Approx(0.3).epsilon(0.001));
}

TEST_CASE("Kernel.Mutex.ContentionSerialises", "[mechanism]") {
  Workload w = phased({{locked(0, 10ms)}, {locked(0, 10ms)}, {locked(0, 10ms)}, {locked(0, 10ms)}});
  w.lock_names = {"stock"};
  const RunResult r = sim::simulate(pool_scenario(zero_machine(4), 4), w);
  CHECK(makespan(r) == Approx(0.04));
  CHECK(r.counters.switches_voluntary >= 1 + 3);  // submitter + three waiters
  std::vector<Duration> ends;
  for (const TaskRecord& t : r.records) ends.push_back(t.end);
  std::sort(ends.begin(), ends.end());
  CHECK(ends == std::vector<Duration>{10ms, 20ms, 30ms, 40ms});
}
