// The runtime decisions written once in models/ for both halves: graph
// release and closed clients (completion.hpp), the reject dispatch
// (pool_policy.hpp), the idle period (idle_policy.hpp), the work-finding
// chain and spin-then-park (steal_policy.hpp), the pinning rule
// (wait_policy.hpp). The twins' use of them is tested in tests/conformance.
#include <catch2/catch.hpp>
#include <deque>
#include <optional>
#include <vector>

#include "models/completion.hpp"
#include "models/idle_policy.hpp"
#include "models/pool_policy.hpp"
#include "models/steal_policy.hpp"
#include "models/wait_policy.hpp"

using namespace poolsim;
using namespace std::chrono_literals;

namespace {

// A graph from edge lists: succ[i] are task i's successors (topological ids).
Workload graph(const std::vector<std::vector<std::uint32_t>>& succ) {
  Workload w;
  w.graph = true;
  w.tasks.resize(succ.size());
  for (std::uint32_t i = 0; i < succ.size(); ++i) {
    w.tasks[i].id = i;
    w.tasks[i].first_succ = static_cast<std::uint32_t>(w.successors.size());
    w.tasks[i].succ_count = static_cast<std::uint32_t>(succ[i].size());
    for (std::uint32_t s : succ[i]) {
      w.successors.push_back(s);
      ++w.tasks[s].pred_count;
    }
  }
  return w;
}

}  // namespace

TEST_CASE("graph_release: a successor is submitted when its last predecessor completes",
          "[completion]") {
  const Workload w = graph({{2}, {2}, {}});  // 0, 1 -> 2
  GraphRelease g(w);
  std::vector<std::uint32_t> ready, not_run;
  g.task_final(0, true, ready, not_run);
  CHECK(ready.empty());
  g.task_final(1, true, ready, not_run);
  CHECK(ready == std::vector<std::uint32_t>{2});
  CHECK(not_run.empty());
}

TEST_CASE(
    "graph release: a rejected task dooms its descendants once all their predecessors are final",
    "[completion]") {
  // 0 -> 1 -> 3, 2 -> 3, 3 -> 4: 0 is rejected.
  const Workload w = graph({{1}, {3}, {3}, {4}, {}});
  GraphRelease g(w);
  std::vector<std::uint32_t> ready, not_run;
  g.task_final(0, false, ready, not_run);
  CHECK(ready.empty());
  CHECK(not_run == std::vector<std::uint32_t>{1});  // 3 still waits for 2
  not_run.clear();
  g.task_final(2, true, ready, not_run);
  CHECK(ready.empty());  // 3 is doomed: never submitted
  CHECK(not_run == std::vector<std::uint32_t>{3, 4});
}

TEST_CASE("graph_release: one edge at a time, as the simulator drives it", "[completion]") {
  const Workload w = graph({{1}, {}});
  GraphRelease g(w);
  CHECK(g.predecessor_final(1, true) == Release::submit);
  GraphRelease h(w);
  CHECK(h.predecessor_final(1, false) == Release::not_run);
}

namespace {
// `clients` closed clients owning `per_client` tasks each of `tasks`,
// issuing until 100 ms.
Workload closed(std::uint32_t clients, std::uint32_t per_client, std::size_t tasks) {
  Workload w;
  w.arrival = ArrivalKind::closed;
  w.clients = clients;
  w.per_client = per_client;
  w.closed_duration = Duration(100ms);
  w.tasks.resize(tasks);
  return w;
}
}  // namespace

TEST_CASE("closed_clients: the next task is due think after, until closed_duration",
          "[completion]") {
  Workload w = closed(2, 3, 7);  // task 6 belongs to no client
  for (Task& t : w.tasks) t.think = Duration(10ms);
  // Interleaved: client 0 owns 0, 2, 4; client 1 owns 1, 3, 5.
  const ClientStep first = closed_client_first(w, 1);
  REQUIRE(first.next);
  CHECK(*first.next == 1);
  CHECK(first.due == Duration(10ms));
  const ClientStep next = closed_client_next(w, 1, Duration(50ms));
  REQUIRE(next.next);
  CHECK(*next.next == 3);
  CHECK(next.due == Duration(60ms));
  const ClientStep late = closed_client_next(w, 1, Duration(90ms));  // due 100 ms: too late
  CHECK_FALSE(late.next);
  CHECK(late.never_issued == 2);  // tasks 3 and 5
  const ClientStep last = closed_client_next(w, 5, Duration(10ms));
  CHECK_FALSE(last.next);
  CHECK(last.never_issued == 0);
  CHECK(closed_unowned_tasks(w) == 1);
}

TEST_CASE("first_wave_tasks: what a submitter hands over at t = 0, in its order, up to a limit",
          "[completion]") {
  Workload w = closed(3, 4, 12);
  w.tasks[1].think = Duration(1ms);  // client 1 thinks first: not at t = 0
  CHECK(first_wave_tasks(w, 10) == std::vector<std::uint32_t>{0, 2});
  CHECK(first_wave_tasks(w, 1) == std::vector<std::uint32_t>{0});
  Workload open;
  open.arrival = ArrivalKind::poisson;
  open.tasks.resize(4);
  open.tasks[2].arrival = Duration(5us);
  open.tasks[3].arrival = Duration(9us);
  CHECK(first_wave_tasks(open, 10) == std::vector<std::uint32_t>{0, 1});
  const Workload g = graph({{2}, {2}, {}});  // 0 and 1 precede 2
  CHECK(first_wave_tasks(g, 10) == std::vector<std::uint32_t>{0, 1});
}

TEST_CASE("outcome_counts: they agree with the records only when every task is final",
          "[completion]") {
  std::vector<TaskRecord> records(3);
  records[0].outcome = TaskOutcome::completed;
  records[1].outcome = TaskOutcome::rejected;
  OutcomeCounts c;
  c.completed = 1;
  c.rejected = 1;
  CHECK_FALSE(c.consistent(records));  // task 2 not final
  c.not_run = 1;
  CHECK(c.consistent(records));
  c.completed = 2;
  CHECK_FALSE(c.consistent(records));
}

TEST_CASE("reject_dispatch: each policy's action, counted under one set of names",
          "[pool-policy]") {
  CHECK(decide_reject(RejectPolicy::abort, 3) == RejectAction::reject_new);
  CHECK(decide_reject(RejectPolicy::discard, 3) == RejectAction::reject_new);
  CHECK(decide_reject(RejectPolicy::caller_runs, 3) == RejectAction::run_on_caller);
  CHECK(decide_reject(RejectPolicy::discard_oldest, 3) == RejectAction::drop_oldest);
  CHECK(decide_reject(RejectPolicy::discard_oldest, 0) == RejectAction::reject_new);
  PoolCounts c;
  c.rejected(RejectPolicy::caller_runs, 1);
  c.rejected(RejectPolicy::abort, 1);
  std::map<std::string, double> extra;
  c.report(extra);
  CHECK(extra.at("rejections") == 2);
  CHECK(extra.at("caller_runs") == 1);
  CHECK(extra.count("threads_started") == 1);
  CHECK(extra.count("threads_retired") == 1);
}

TEST_CASE("idle_period: the deadline is fixed when it starts, and a timeout retires or restarts it",
          "[idle-policy]") {
  IdlePeriod idle;
  CHECK(idle.deadline(Duration(20ms), Duration(100ms)) == Duration(120ms));
  // A wake-up without work keeps the deadline.
  CHECK(idle.after_wait(false, true) == IdleStep::wait_again);
  CHECK(idle.deadline(Duration(20ms), Duration(110ms)) == Duration(120ms));
  // A timeout where the pool may not shrink starts a new period.
  CHECK(idle.after_wait(true, false) == IdleStep::wait_again);
  CHECK(idle.deadline(Duration(20ms), Duration(125ms)) == Duration(145ms));
  CHECK(idle.after_wait(true, true) == IdleStep::retire);
  // No limit (a core worker): wait until notified.
  CHECK_FALSE(idle.deadline(std::nullopt, Duration(0)).has_value());
}

namespace {
struct FakeQueues {
  std::vector<std::deque<std::uint32_t>> deques;
  std::deque<std::uint32_t> injection;
  static std::optional<std::uint32_t> front(std::deque<std::uint32_t>& d) {
    if (d.empty()) return std::nullopt;
    const std::uint32_t t = d.front();
    d.pop_front();
    return t;
  }
  std::optional<std::uint32_t> pop_local(int self) {
    auto& d = deques[static_cast<std::size_t>(self)];
    if (d.empty()) return std::nullopt;
    const std::uint32_t t = d.back();
    d.pop_back();
    return t;
  }
  std::optional<std::uint32_t> pop_injection() { return front(injection); }
  std::optional<std::uint32_t> steal(int v) { return front(deques[static_cast<std::size_t>(v)]); }
};
}  // namespace

TEST_CASE("find_work: local (newest), then injection (oldest), then steal (oldest)",
          "[steal-policy]") {
  FakeQueues q;
  q.deques = {{1, 2}, {}, {7, 8}};
  q.injection = {5, 6};
  StealCounts c;
  auto rnd = [] { return std::uint64_t{1}; };  // victim order from worker 0: 2, 1
  CHECK(find_work(q, 0, 3, true, rnd, c) == 2u);
  CHECK(find_work(q, 0, 3, true, rnd, c) == 1u);
  CHECK(find_work(q, 0, 3, true, rnd, c) == 5u);
  CHECK(find_work(q, 0, 3, true, rnd, c) == 6u);
  CHECK(find_work(q, 0, 3, true, rnd, c) == 7u);
  CHECK(c.local_pops == 2);
  CHECK(c.injection_pops == 2);
  CHECK(c.steals == 1);
  CHECK(c.failed_steals == 0);
  q.deques[2].clear();
  CHECK_FALSE(find_work(q, 0, 3, true, rnd, c).has_value());
  CHECK(c.failed_steals == 2);  // both victims tried
  CHECK_FALSE(find_work(q, 0, 3, false, rnd, c).has_value());
  CHECK(c.failed_steals == 3);  // one victim per round
}

TEST_CASE("spin_then_park: spin_rounds - 1 spins, then a park, and work resets the count",
          "[steal-policy]") {
  SpinThenPark s(3);
  CHECK(s.missed() == SpinThenPark::Next::spin);
  CHECK(s.missed() == SpinThenPark::Next::spin);
  CHECK(s.missed() == SpinThenPark::Next::park);
  CHECK(s.missed() == SpinThenPark::Next::spin);
  s.found();
  CHECK(s.missed() == SpinThenPark::Next::spin);
  CHECK(s.missed() == SpinThenPark::Next::spin);
  CHECK(s.missed() == SpinThenPark::Next::park);
}

TEST_CASE("pinning: a wait inside a lock blocks the thread in every runtime", "[wait-policy]") {
  CHECK(wait_effect(BackendKind::virtual_threads, false) == WaitEffect::release_thread);
  CHECK(wait_effect(BackendKind::virtual_threads, true) == WaitEffect::block_thread);
  CHECK(wait_effect(BackendKind::event_loop, false) == WaitEffect::release_thread);
  CHECK(wait_effect(BackendKind::event_loop, true) == WaitEffect::block_thread);
  CHECK(wait_effect(BackendKind::pool, false) == WaitEffect::block_thread);
  CHECK(wait_effect(BackendKind::work_stealing, false) == WaitEffect::block_thread);
}
