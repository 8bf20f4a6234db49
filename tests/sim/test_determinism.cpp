// Determinism (same inputs -> same bytes) and trace consistency.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {

MachineProfile costly(int cores) {
  MachineProfile m = zero_machine(cores, 2800us, 4ms);
  m.switch_cost = 3us;
  m.cache_refill = 2us;
  m.migration_cost = 10us;
  m.wakeup_latency = 25us;
  m.idle_exit = 40us;
  m.timer_slack = 50us;
  m.thread_create = 15us;
  m.thread_exit = 5us;
  m.stack_touch = 16384;
  return m;
}

std::string serialize(const RunResult& r) {
  std::ostringstream o;
  for (const TaskRecord& t : r.records)
    o << t.submit.count() << ' ' << t.start.count() << ' ' << t.end.count() << ' ' << t.cpu.count()
      << ' ' << t.worker << ' ' << static_cast<int>(t.outcome) << '\n';
  const RunCounters& c = r.counters;
  o << c.switches_voluntary << ' ' << c.switches_involuntary << ' ' << c.threads_peak << ' '
    << c.memory_peak << ' ' << c.cpu_time.count() << ' ' << c.throttled_periods << ' '
    << c.throttled_time.count() << '\n';
  for (const auto& [k, v] : r.extra) o << k << '=' << v << '\n';
  for (const Sample& s : r.threads_series) o << s.t.count() << ':' << s.value << ' ';
  for (const Sample& s : r.runnable_series) o << s.t.count() << ':' << s.value << ' ';
  write_chrome_trace(o, r.trace, "determinism");
  return o.str();
}

Scenario quota_tpt() {
  Scenario s = tpt_scenario(costly(4));
  s.limits.cpus = 1.5;
  return s;
}

}  // namespace

TEST_CASE(
    "determinism: the same scenario and workload give byte-identical records, counters, series and "
    "trace",
    "[determinism]") {
  const Workload w = poisson(11, 3000, 2500, 1ms, true);
  const Scenario s = quota_tpt();
  const std::string a = serialize(sim::simulate(s, w, sim::SimOptions{true}));
  const std::string b = serialize(sim::simulate(s, w, sim::SimOptions{true}));
  CHECK(a == b);
  const std::string other =
      serialize(sim::simulate(s, poisson(12, 3000, 2500, 1ms, true), sim::SimOptions{true}));
  CHECK(a != other);
  Scenario p = pool_scenario(costly(4), 6);
  CHECK(serialize(sim::simulate(p, w)) == serialize(sim::simulate(p, w)));
}

TEST_CASE("trace: the Chrome trace parses as JSON and no track has overlapping spans", "[trace]") {
  const Workload w = poisson(21, 2000, 3000, 1ms, true);
  const RunResult r = sim::simulate(quota_tpt(), w, sim::SimOptions{true});
  REQUIRE_FALSE(r.trace.empty());
  std::ostringstream o;
  write_chrome_trace(o, r.trace, "trace-test");
  const auto j = nlohmann::json::parse(o.str());  // throws on invalid JSON
  CHECK(!j.empty());

  std::map<std::uint32_t, std::vector<TraceSpan>> by_track;
  bool throttled_seen = false;
  for (const TraceSpan& s : r.trace.spans) {
    REQUIRE(s.track < r.trace.tracks.size());
    REQUIRE(s.begin < s.end);
    by_track[s.track].push_back(s);
    throttled_seen |= s.kind == SpanKind::throttled;
  }
  CHECK(throttled_seen);
  for (auto& [track, spans] : by_track) {
    std::sort(spans.begin(), spans.end(),
              [](const TraceSpan& a, const TraceSpan& b) { return a.begin < b.begin; });
    for (std::size_t i = 1; i < spans.size(); ++i) {
      INFO("track " << r.trace.tracks[track].name << " at " << spans[i].begin.count());
      // No CPU runs two threads at once; no thread is in two states at once.
      REQUIRE(spans[i - 1].end <= spans[i].begin);
    }
  }
  // Running time on CPU tracks equals the CPU time counted.
  std::int64_t running = 0;
  for (const TraceSpan& s : r.trace.spans)
    if (r.trace.tracks[s.track].is_cpu && s.kind == SpanKind::running)
      running += (s.end - s.begin).count();
  CHECK(running == r.counters.cpu_time.count());
}

TEST_CASE("series: the thread and runnable series stay bounded on large runs", "[trace]") {
  const RunResult r =
      sim::simulate(pool_scenario(zero_machine(8), 8), poisson(5, 50000, 6000, 1ms, true));
  CHECK(r.runnable_series.size() <= 4096);
  CHECK(r.threads_series.size() <= 4096);
  CHECK(r.runnable_series.size() > 100);
}
