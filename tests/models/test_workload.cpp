// The workload generator: determinism, arrival statistics, classes, locks,
// closed clients and graphs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "models/workload.hpp"

using namespace poolsim;
using namespace std::chrono_literals;

namespace {
Scenario base(Arrival a, TaskSpec task) {
  Scenario s;
  s.name = "t";
  a.think = Distribution::fixed(0ns);
  s.workload.arrival = a;
  s.workload.classes.push_back({1.0, std::move(task)});
  s.backend.kind = BackendKind::pool;
  s.backend.threads = s.backend.max_threads = 4;
  return s;
}
Arrival batch(std::int64_t n) {
  Arrival a;
  a.kind = ArrivalKind::batch;
  a.count = n;
  return a;
}
bool same_bytes(const Workload& a, const Workload& b) {
  if (a.tasks.size() != b.tasks.size() || a.phases.size() != b.phases.size()) return false;
  auto task_fields = [](const Task& t) {
    return std::tuple(t.id, t.cls, t.arrival.count(), t.think.count(), t.client, t.first_phase,
                      t.phase_count, t.first_succ, t.succ_count, t.pred_count);
  };
  auto phase_fields = [](const Phase& p) {
    return std::tuple(static_cast<int>(p.kind), p.lock, p.duration.count(), p.wait_inside.count());
  };
  for (std::size_t i = 0; i < a.tasks.size(); ++i)
    if (task_fields(a.tasks[i]) != task_fields(b.tasks[i])) return false;
  for (std::size_t i = 0; i < a.phases.size(); ++i)
    if (phase_fields(a.phases[i]) != phase_fields(b.phases[i])) return false;
  return a.successors == b.successors && a.lock_names == b.lock_names;
}
}  // namespace

TEST_CASE("workload: the same scenario and seed give the same task list, bit for bit",
          "[workload]") {
  Arrival a;
  a.kind = ArrivalKind::poisson;
  a.rate = 5000;
  a.count = 20000;
  auto s = base(
      a, {CpuPhase{Distribution::exponential(2ms)}, WaitPhase{Distribution::lognormal(1ms, 10ms)},
          LockPhase{"rows", 1000, Distribution::fixed(20us), std::nullopt}});
  const auto w1 = generate_workload(s, 42);
  const auto w2 = generate_workload(s, 42);
  const auto w3 = generate_workload(s, 43);
  CHECK(same_bytes(w1, w2));
  CHECK_FALSE(same_bytes(w1, w3));
  CHECK(w1.tasks.size() == 20000);
  // Golden values pin the generator itself: a change here changes every
  // reproduction, so it must be deliberate.
  CHECK(w1.tasks[0].arrival.count() == 122029);
  CHECK(w1.phases[0].duration.count() == 4852248);
  CHECK(w1.phases[1].duration.count() == 1426841);
  CHECK(w1.phases[2].lock == 941u);
  CHECK(w1.tasks.back().arrival.count() == 4037274750);
}

TEST_CASE("workload.poisson: inter-arrivals are exponential with the given rate", "[workload]") {
  Arrival a;
  a.kind = ArrivalKind::poisson;
  a.rate = 1000;
  a.count = 200000;
  const auto w = generate_workload(base(a, {CpuPhase{Distribution::fixed(1us)}}), 1);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < w.tasks.size(); ++i) {
    REQUIRE(w.tasks[i].arrival >= w.tasks[i - 1].arrival);
    gaps.push_back(to_seconds(w.tasks[i].arrival - w.tasks[i - 1].arrival));
  }
  double m = 0;
  for (double g : gaps) m += g;
  m /= gaps.size();
  double var = 0;
  for (double g : gaps) var += (g - m) * (g - m);
  var /= gaps.size();
  CHECK(m == Approx(1e-3).epsilon(0.01));
  CHECK(std::sqrt(var) / m == Approx(1.0).epsilon(0.02));  // CV of the exponential is 1
  std::sort(gaps.begin(), gaps.end());
  CHECK(gaps[gaps.size() / 2] == Approx(1e-3 * std::log(2.0)).epsilon(0.02));
  // Counts in 100 ms windows: Poisson, mean = variance = 100.
  std::vector<int> counts(static_cast<std::size_t>(to_seconds(w.tasks.back().arrival) / 0.1), 0);
  for (const auto& t : w.tasks) {
    const auto k = static_cast<std::size_t>(to_seconds(t.arrival) / 0.1);
    if (k < counts.size()) ++counts[k];
  }
  double cm = 0, cv = 0;
  for (int c : counts) cm += c;
  cm /= counts.size();
  for (int c : counts) cv += (c - cm) * (c - cm);
  cv /= counts.size();
  CHECK(cm == Approx(100).epsilon(0.02));
  CHECK(cv / cm == Approx(1.0).epsilon(0.15));
}

TEST_CASE("workload.poisson: arrivals by duration stop at the duration", "[workload]") {
  Arrival a;
  a.kind = ArrivalKind::poisson;
  a.rate = 2000;
  a.duration = 5s;
  const auto w = generate_workload(base(a, {CpuPhase{Distribution::fixed(1us)}}), 1);
  CHECK(w.tasks.back().arrival < 5s);
  CHECK(static_cast<double>(w.tasks.size()) == Approx(10000).epsilon(0.05));
}

TEST_CASE("workload: periodic arrivals are evenly spaced, a batch arrives at once", "[workload]") {
  Arrival p;
  p.kind = ArrivalKind::periodic;
  p.interval = 1ms;
  p.count = 100;
  const auto w = generate_workload(base(p, {CpuPhase{Distribution::fixed(10us)}}), 1);
  REQUIRE(w.tasks.size() == 100);
  CHECK(w.tasks[0].arrival == 0ns);
  CHECK(w.tasks[99].arrival == 99ms);
  const auto b = generate_workload(base(batch(1000), {CpuPhase{Distribution::fixed(10us)}}), 1);
  CHECK(b.tasks.size() == 1000);
  CHECK(
      std::all_of(b.tasks.begin(), b.tasks.end(), [](const Task& t) { return t.arrival == 0ns; }));
  CHECK(b.total_work == 10ms);
  CHECK(b.critical_path == 10us);
}

TEST_CASE("workload.classes: classes follow their weights and phases are sampled in order",
          "[workload]") {
  auto s = base(batch(100000), {});
  s.workload.classes = {
      {0.7, {CpuPhase{Distribution::fixed(1ms)}}},
      {0.3, {CpuPhase{Distribution::fixed(200us)}, WaitPhase{Distribution::fixed(20ms)}}}};
  const auto w = generate_workload(s, 5);
  int c1 = 0;
  for (const auto& t : w.tasks) {
    if (t.cls == 1) {
      ++c1;
      const auto ph = w.phases_of(t);
      REQUIRE(ph.size() == 2);
      CHECK(ph[0].kind == PhaseKind::cpu);
      CHECK(ph[0].duration == 200us);
      CHECK(ph[1].kind == PhaseKind::wait);
      CHECK(ph[1].duration == 20ms);
    } else {
      CHECK(w.phases_of(t).size() == 1);
    }
  }
  CHECK(c1 / 100000.0 == Approx(0.3).epsilon(0.02));
}

TEST_CASE("workload.locks: sharded locks spread over their shards, plain locks share one index",
          "[workload]") {
  auto s = base(batch(50000),
                {LockPhase{"stock", 1, Distribution::fixed(50us), std::nullopt},
                 LockPhase{"rows", 100, Distribution::fixed(20us), Distribution::fixed(5ms)}});
  const auto w = generate_workload(s, 9);
  REQUIRE(w.lock_names.size() == 101);
  CHECK(w.lock_names[0] == "stock");
  CHECK(w.lock_names[1] == "rows#0");
  std::vector<int> hits(101, 0);
  for (const auto& t : w.tasks) {
    const auto ph = w.phases_of(t);
    CHECK(ph[0].lock == 0u);
    CHECK(ph[1].lock >= 1u);
    CHECK(ph[1].wait_inside == 5ms);
    ++hits[ph[1].lock];
  }
  const auto [lo, hi] = std::minmax_element(hits.begin() + 1, hits.end());
  CHECK(*lo > 350);  // 500 expected per shard
  CHECK(*hi < 650);
}

TEST_CASE("workload.closed: clients own fixed task sequences", "[workload]") {
  Arrival a;
  a.kind = ArrivalKind::closed;
  a.clients = 10;
  a.duration = 1s;
  auto s = base(a, {CpuPhase{Distribution::fixed(1ms)}, WaitPhase{Distribution::fixed(9ms)}});
  s.workload.arrival->think = Distribution::fixed(10ms);
  const auto w = generate_workload(s, 1);
  CHECK(w.clients == 10u);
  // cycle 20 ms, 1 s -> 50 tasks per client at most without contention; x2 + 16
  CHECK(w.per_client == 116u);
  CHECK(w.tasks.size() == 1160u);
  for (std::uint32_t c = 0; c < 10; ++c)
    for (std::uint32_t k = 0; k < w.per_client; ++k) {
      const auto& t = w.tasks[k * 10 + c];  // interleaved: closed_task_id
      CHECK(t.client == c);
      CHECK(t.think == 10ms);
    }
}

TEST_CASE("workload.graph: explicit graphs are numbered topologically with their edges",
          "[workload]") {
  auto s = base(batch(1), {});
  s.workload.arrival.reset();
  s.workload.classes.clear();
  GraphSpec g;
  // Declared out of order on purpose.
  g.nodes = {{"merge", {CpuPhase{Distribution::fixed(1ms)}}, {"a", "b"}},
             {"a", {CpuPhase{Distribution::fixed(20ms)}}, {"split"}},
             {"split", {CpuPhase{Distribution::fixed(1ms)}}, {}},
             {"b", {CpuPhase{Distribution::fixed(30ms)}}, {"split"}}};
  s.workload.graph = g;
  const auto w = generate_workload(s, 1);
  REQUIRE(w.tasks.size() == 4);
  CHECK(w.graph);
  CHECK(w.node_ids[0] == "split");
  CHECK(w.node_ids[3] == "merge");
  CHECK(w.tasks[0].pred_count == 0u);
  CHECK(w.tasks[3].pred_count == 2u);
  for (const auto& t : w.tasks)
    for (auto succ : w.successors_of(t)) CHECK(succ > t.id);
  CHECK(w.total_work == 52ms);
  CHECK(w.critical_path == 32ms);
}

TEST_CASE("workload.graph: fork_join generates forks, leaves and joins", "[workload]") {
  auto s = base(batch(1), {});
  s.workload.arrival.reset();
  s.workload.classes.clear();
  GraphSpec g;
  ForkJoin fj;
  fj.depth = 3;
  fj.fanout = 2;
  fj.leaf = {CpuPhase{Distribution::fixed(50us)}};
  g.fork_join = fj;
  s.workload.graph = g;
  const auto w = generate_workload(s, 1);
  CHECK(w.tasks.size() == 7u + 8u + 7u);
  int leaves = 0;
  for (const auto& t : w.tasks) leaves += t.phase_count == 1;
  CHECK(leaves == 8);
  CHECK(w.total_work == 400us);
  CHECK(w.critical_path == 50us);
  CHECK(w.tasks.front().pred_count == 0u);
  CHECK(w.tasks.back().succ_count == 0u);
  std::set<std::uint32_t> all_succ(w.successors.begin(), w.successors.end());
  CHECK(all_succ.size() == w.tasks.size() - 1);  // every node but the root has a predecessor
}

// The generator's own checks (issue 20): a Scenario built in code skips the
// loader, so the generator must still refuse what would overflow int64
// nanoseconds, instead of wrapping or rounding through llround's undefined
// range.
TEST_CASE("workload: sampled lengths past the 100-year horizon are refused",
          "[workload][hostile]") {
  // 40 tasks of 30 years each: every value is legal, their sum is not.
  const Duration thirty_years = kMaxDuration / 10 * 3;
  const Scenario s = base(batch(40), {CpuPhase{Distribution::fixed(thirty_years)}});
  CHECK_THROWS_WITH(generate_workload(s),
                    Catch::Contains("passes the simulated horizon of 3155760000s (100 years)"));
  // Three of them fit, and their total work is exact.
  const Workload w =
      generate_workload(base(batch(3), {CpuPhase{Distribution::fixed(thirty_years)}}));
  CHECK(w.total_work == thirty_years * 3);
}

TEST_CASE("workload: arrivals past the horizon are refused, never wrapped", "[workload][hostile]") {
  Arrival slow;
  slow.kind = ArrivalKind::poisson;
  slow.rate = 1e-300;  // below what the loader accepts: the generator's own check
  slow.count = 10;
  CHECK_THROWS_WITH(generate_workload(base(slow, {CpuPhase{Distribution::fixed(1ms)}})),
                    Catch::Contains("the poisson arrivals (task 0) passes the simulated horizon"));
  Arrival periodic;
  periodic.kind = ArrivalKind::periodic;
  periodic.interval = kMaxDuration / 2;
  periodic.count = 100;
  CHECK_THROWS_WITH(generate_workload(base(periodic, {CpuPhase{Distribution::fixed(1ms)}})),
                    Catch::Contains("the periodic arrivals (task 3) passes the simulated horizon"));
  // With a duration the arrivals simply stop at it.
  periodic.count.reset();
  periodic.duration = kMaxDuration;
  const Workload w = generate_workload(base(periodic, {CpuPhase{Distribution::fixed(1ms)}}));
  CHECK(w.tasks.size() == 2);
}

TEST_CASE("workload: fork_join_nodes counts forks, joins and leaves", "[workload][hostile]") {
  CHECK(fork_join_nodes(2, 1) == 2 + 2);
  CHECK(fork_join_nodes(10, 7) == 12'222'222);
  CHECK(fork_join_nodes(1000, 10) == std::numeric_limits<std::uint64_t>::max());
}
