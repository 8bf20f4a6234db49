// Oracle tests: the simulator with every overhead zero against closed forms.
//
// Queueing oracles compare against the formula evaluated at the realised
// parameters of the generated workload (arrival rate from the arrival times,
// mean service from the samples): the simulator is then judged on what it did
// with those tasks, and the 2% bound is not eaten by sampling noise of the
// inputs. Runs are long enough that the remaining noise stays well inside.
#include <catch2/catch.hpp>

#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;

namespace {

double realised_rate(const Workload& w) {
  return static_cast<double>(w.tasks.size() - 1) /
         to_seconds(w.tasks.back().arrival - w.tasks.front().arrival);
}
double realised_service(const Workload& w) {
  double s = 0;
  for (const Phase& p : w.phases) s += to_seconds(p.duration);
  return s / static_cast<double>(w.tasks.size());
}

// Mean wait of M/M/c: C(c, a) / (c mu - lambda).
void check_erlang_c(int c, double rho, int jobs, std::uint64_t seed) {
  const double mu = 1000.0;  // 1 ms mean service
  // One CPU more than servers: the submitter never competes with a worker.
  const Scenario s = pool_scenario(zero_machine(c + 1), c);
  const Workload w = poisson(seed, jobs, rho * c * mu, std::chrono::milliseconds(1), true);
  const RunResult r = sim::simulate(s, w);
  const double lambda = realised_rate(w);
  const double m = 1.0 / realised_service(w);
  const double expected = erlang_c(c, lambda / m) / (c * m - lambda);
  INFO("c=" << c << " simulated " << mean_wait(r) << " Erlang C " << expected);
  CHECK(mean_wait(r) == Approx(expected).epsilon(0.02));
}

}  // namespace

TEST_CASE("oracle.erlang_c: M/M/1 mean wait matches Erlang C", "[oracle]") {
  check_erlang_c(1, 0.5, 400000, 1);
}
TEST_CASE("oracle.erlang_c: M/M/2 mean wait matches Erlang C", "[oracle]") {
  check_erlang_c(2, 0.6, 400000, 1);
}
TEST_CASE("oracle.erlang_c: M/M/8 mean wait matches Erlang C", "[oracle]") {
  check_erlang_c(8, 0.8, 400000, 1);
}

TEST_CASE("oracle.processor_sharing: M/D/1 with a thread per task gives S / (1 - rho)",
          "[oracle]") {
  // One CPU, a thread per task, slice 100x shorter than the deterministic
  // service: mean response S / (1 - rho). FCFS would give
  // S + rho S / (2 (1 - rho)) = 0.75 of it at rho = 0.5.
  const Scenario s = tpt_scenario(zero_machine(1, std::chrono::microseconds(100)));
  const Duration S = std::chrono::milliseconds(10);
  const Workload w = poisson(7, 30000, 50.0, S, false);
  const RunResult r = sim::simulate(s, w);
  const double rho = realised_rate(w) * to_seconds(S);
  const double ps = to_seconds(S) / (1 - rho);
  INFO("simulated " << mean_response(r) << " PS " << ps);
  CHECK(mean_response(r) == Approx(ps).epsilon(0.02));
  const double fcfs = to_seconds(S) + rho * to_seconds(S) / (2 * (1 - rho));
  CHECK(std::abs(mean_response(r) - fcfs) > 0.1 * fcfs);
}

TEST_CASE("oracle.littles_law: L integrated online equals lambda W on open runs", "[oracle]") {
  // L (integrated online by the driver) = lambda W (from the records).
  struct Case {
    Scenario s;
    Workload w;
  };
  MachineProfile costly =
      zero_machine(2, std::chrono::microseconds(750), std::chrono::milliseconds(4));
  costly.switch_cost = std::chrono::microseconds(3);
  costly.wakeup_latency = std::chrono::microseconds(20);
  costly.thread_create = std::chrono::microseconds(15);
  std::vector<Case> cases;
  cases.push_back({pool_scenario(zero_machine(3), 2),
                   poisson(3, 20000, 1500, std::chrono::milliseconds(1), true)});
  cases.push_back(
      {tpt_scenario(costly), poisson(4, 20000, 1500, std::chrono::milliseconds(1), true)});
  cases.push_back(
      {pool_scenario(costly, 8), poisson(5, 20000, 1800, std::chrono::milliseconds(1), false)});
  for (const Case& c : cases) {
    const RunResult r = sim::simulate(c.s, c.w);
    double sum = 0, end = 0;
    for (const TaskRecord& t : r.records) {
      REQUIRE(t.outcome == TaskOutcome::completed);
      sum += to_seconds(t.end - t.submit);
      end = std::max(end, to_seconds(t.end));
    }
    const double lambda_w = sum / end;
    CHECK(r.extra.at("tasks_in_system_mean") == Approx(lambda_w).epsilon(1e-6));
  }
}

TEST_CASE("oracle.pool_makespan: N tasks on k threads and k CPUs take ceil(N/k) S", "[oracle]") {
  const Duration S = std::chrono::milliseconds(7);
  for (int k : {1, 3, 4}) {
    for (int n : {1, 10, 12, 13}) {
      const RunResult r = sim::simulate(pool_scenario(zero_machine(k), k), batch(n, S));
      const double expected = to_seconds(S) * ((n + k - 1) / k);
      INFO("k=" << k << " n=" << n);
      CHECK(makespan(r) == Approx(expected).epsilon(1e-9));
    }
  }
}

TEST_CASE(
    "oracle.one_cpu: 16 tasks on 1 or 16 threads: same makespan, later first completion, "
    "preemptions only with 16",
    "[oracle][mechanism]") {
  // The one-CPU article: 16 CPU-bound tasks; same makespan on 1 or 16
  // threads, but the first completes after ~S instead of ~16 S, and only the
  // 16 threads are preempted.
  MachineProfile m = zero_machine(1, std::chrono::microseconds(2800), std::chrono::milliseconds(4));
  const Duration S = std::chrono::milliseconds(56);
  const RunResult one = sim::simulate(pool_scenario(m, 1), batch(16, S));
  const RunResult many = sim::simulate(pool_scenario(m, 16), batch(16, S));
  CHECK(makespan(one) == Approx(16 * to_seconds(S)).epsilon(1e-9));
  CHECK(makespan(many) == Approx(16 * to_seconds(S)).epsilon(1e-9));
  CHECK(first_completion(one) == Approx(to_seconds(S)).epsilon(1e-9));
  CHECK(first_completion(many) > 14 * to_seconds(S));
  CHECK(one.counters.switches_involuntary == 0);
  // 16 * 56 ms in runs of one slice rounded up to the 4 ms tick: ~224 runs.
  CHECK(many.counters.switches_involuntary > 150);
  CHECK(mean_response(many) > 1.8 * mean_response(one));
}

TEST_CASE(
    "oracle.quota: half a CPU of quota stretches 1 s of CPU to 1.95 s with 19 throttled periods",
    "[oracle][mechanism]") {
  // limits.cpus 0.5, period 100 ms: 50 ms of runtime per period, so 1 s of
  // CPU takes 19 throttled periods and ends at 1.95 s.
  Scenario s = pool_scenario(zero_machine(2), 1);
  s.limits.cpus = 0.5;
  s.limits.period = std::chrono::milliseconds(100);
  const RunResult r = sim::simulate(s, batch(1, std::chrono::seconds(1)));
  CHECK(makespan(r) == Approx(1.95).epsilon(0.001));
  CHECK(r.counters.throttled_periods == 19);
  CHECK(to_seconds(r.counters.throttled_time) == Approx(19 * 0.05).epsilon(0.001));
  CHECK(to_seconds(r.counters.cpu_time) == Approx(1.0).epsilon(1e-6));
}
