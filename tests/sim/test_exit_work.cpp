// Kernel work after thread exits (sim/exit_work.hpp): RCU grace periods that
// exits start, whose kthread takes a busy CPU every rcu_gp_interval, exits
// during one starting one more at its end; the kthread going to an idle CPU
// instead of preempting; none on an idealised profile.
#include <catch2/catch.hpp>

#include "models/metrics.hpp"
#include "runtime_fixtures.hpp"
#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {

// Thread per task: one task of 60 ms and `shorts` of 100 us, all at t = 0.
Workload long_and_short(int shorts) {
  std::vector<Duration> work{60ms};
  for (int i = 0; i < shorts; ++i) work.push_back(100us);
  return make_workload(ArrivalKind::batch, {}, work);
}

MachineProfile with_exit_work(MachineProfile m) {
  m.rcu_gp_length = 20ms;
  m.rcu_gp_interval = 5ms;
  m.kthread_run = 10us;
  return m;
}

double preemptions(const RunResult& r) { return extra(r, "exit_kthread_preemptions"); }

}  // namespace

TEST_CASE(
    "exit_work: an exit's grace period takes the busy CPU from its thread every rcu_gp_interval",
    "[sim][exit_work]") {
  // One CPU: the 60 ms thread runs on while the short one's exit starts a
  // grace period of 20 ms whose kthread runs at 0, 5, 10 and 15 ms into it.
  // The fifth run is the long thread's own exit's first, before the
  // submitter its completion woke gets the CPU (the run ends when the
  // submitter runs: Driver::check_done).
  const MachineProfile plain = zero_machine(1);
  const Workload w = long_and_short(1);
  const RunResult off = sim::simulate(tpt_scenario(plain), w);
  const RunResult on = sim::simulate(tpt_scenario(with_exit_work(plain)), w);
  CHECK(off.extra.count("exit_kthread_preemptions") == 0);
  CHECK(preemptions(on) == 5);
  CHECK(on.counters.switches_involuntary - off.counters.switches_involuntary == 5);
  // Each run stalls the long thread for kthread_run (no switch cost here).
  CHECK(on.records[0].end - off.records[0].end == 4 * Duration(10us));
  // Its CPU time does not count the kthread's.
  CHECK(on.counters.cpu_time == off.counters.cpu_time);
}

TEST_CASE("exit_work: exits during a grace period start one more at its end, not one each",
          "[sim][exit_work]") {
  // Ten short threads exit within the first grace period: two grace periods
  // (8 runs), not ten; and the first run of the long thread's exit's (as
  // above).
  const RunResult r =
      sim::simulate(tpt_scenario(with_exit_work(zero_machine(1))), long_and_short(10));
  CHECK(preemptions(r) == 9);
  // Each run costs the long thread kthread_run and two switches.
  MachineProfile m = zero_machine(1);
  m.switch_cost = 2us;
  const RunResult off = sim::simulate(tpt_scenario(m), long_and_short(10));
  const RunResult on = sim::simulate(tpt_scenario(with_exit_work(m)), long_and_short(10));
  CHECK(on.records[0].end - off.records[0].end == 8 * Duration(14us));
  // Grace periods whose kthread never runs (no interval) take nothing.
  m = with_exit_work(m);
  m.rcu_gp_interval = 0ns;
  CHECK(preemptions(sim::simulate(tpt_scenario(m), long_and_short(10))) == 0);
}

TEST_CASE("exit_work: the grace-period kthread runs on an idle CPU rather than preempt a busy one",
          "[sim][exit_work]") {
  // Two CPUs and one long thread: one CPU is always idle for the kthread.
  const RunResult r =
      sim::simulate(tpt_scenario(with_exit_work(zero_machine(2))), long_and_short(1));
  CHECK(preemptions(r) == 0);
  // Both busy (two long threads): it preempts.
  const Workload two = make_workload(ArrivalKind::batch, {}, {60ms, 60ms, 100us});
  CHECK(preemptions(sim::simulate(tpt_scenario(with_exit_work(zero_machine(2))), two)) == 4);
}
