// Engine: time order, insertion-order tie-break, cancellation.
#include <catch2/catch.hpp>
#include <vector>

#include "sim/engine.hpp"

using namespace poolsim;
using poolsim::sim::Engine;
using poolsim::sim::EventId;

namespace {
struct Log {
  Engine* e;
  std::vector<std::pair<std::int64_t, std::uint64_t>> fired;
};
void record(void* ctx, std::uint64_t arg) {
  auto* l = static_cast<Log*>(ctx);
  l->fired.push_back({l->e->now_ns(), arg});
}
}  // namespace

TEST_CASE("engine: events fire in time order, ties in insertion order", "[engine]") {
  Engine e;
  Log log{&e, {}};
  e.at_ns(30, record, &log, 1);
  e.at_ns(10, record, &log, 2);
  e.at_ns(30, record, &log, 3);
  e.at_ns(10, record, &log, 4);
  e.at_ns(20, record, &log, 5);
  e.run();
  const std::vector<std::pair<std::int64_t, std::uint64_t>> expected = {
      {10, 2}, {10, 4}, {20, 5}, {30, 1}, {30, 3}};
  CHECK(log.fired == expected);
  CHECK(e.fired() == 5);
  CHECK(e.now_ns() == 30);
}

TEST_CASE("engine: a cancelled event never fires and its slot is reused", "[engine]") {
  Engine e;
  Log log{&e, {}};
  EventId a = e.at_ns(10, record, &log, 1);
  EventId b = e.at_ns(20, record, &log, 2);
  CHECK(e.pending(a));
  CHECK(e.cancel(a));
  CHECK_FALSE(e.cancel(a));                  // already cancelled (and reset)
  EventId c = e.at_ns(15, record, &log, 3);  // reuses a's slot with a new generation
  CHECK(e.pending(c));
  CHECK(e.pending(b));
  e.run();
  const std::vector<std::pair<std::int64_t, std::uint64_t>> expected = {{15, 3}, {20, 2}};
  CHECK(log.fired == expected);
  CHECK_FALSE(e.pending(b));
  CHECK_FALSE(e.cancel(b));
}

TEST_CASE("engine: an event scheduled in the past is refused", "[engine]") {
  Engine e;
  Log log{&e, {}};
  e.at_ns(10, record, &log, 1);
  e.run();
  CHECK_THROWS_AS(e.at_ns(5, record, &log, 2), std::logic_error);
}

TEST_CASE(
    "engine: 10,000 events scheduled out of order fire in time order, ties in insertion order",
    "[engine]") {
  Engine e;
  Log log{&e, {}};
  std::uint64_t x = 12345;
  for (int i = 0; i < 10000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    e.at_ns(static_cast<std::int64_t>(x >> 50), record, &log, static_cast<std::uint64_t>(i));
  }
  e.run();
  REQUIRE(log.fired.size() == 10000);
  for (std::size_t i = 1; i < log.fired.size(); ++i) {
    REQUIRE(log.fired[i - 1].first <= log.fired[i].first);
    if (log.fired[i - 1].first == log.fired[i].first)
      REQUIRE(log.fired[i - 1].second < log.fired[i].second);
  }
}

namespace {
// A handler that, like the kernel's CPU events, re-arms or cancels other
// events while it runs: the engine under test against a plain reference
// (a sorted list of (time, sequence, label) with cancelled entries erased).
struct Churn {
  Engine* e;
  std::vector<EventId> ids;
  std::vector<std::pair<std::int64_t, std::uint64_t>> fired;
  std::uint64_t x = 99;
  bool use_reschedule = true;
  std::size_t lanes = 0;  // ids below this are lane events, on lane `id`
  int budget = 20000;
  std::uint64_t next() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  }
};
void churn(void* ctx, std::uint64_t arg) {
  auto* c = static_cast<Churn*>(ctx);
  c->fired.push_back({c->e->now_ns(), arg});
  c->ids[arg] = {};
  for (int k = 0; k < 3 && c->budget > 0; ++k, --c->budget) {
    const std::size_t i = c->next() % c->ids.size();
    const std::int64_t t = c->e->now_ns() + static_cast<std::int64_t>(c->next() % 64);
    switch (c->next() % 3) {
      case 0:
        c->e->cancel(c->ids[i]);
        break;
      default:
        if (i < c->lanes) {
          c->ids[i] = c->e->at_lane(static_cast<std::uint32_t>(i), t, churn, c, i);
        } else if (c->use_reschedule) {
          c->ids[i] = c->e->reschedule(c->ids[i], t, churn, c, i);
        } else {
          c->e->cancel(c->ids[i]);
          c->ids[i] = c->e->at_ns(t, churn, c, i);
        }
    }
  }
}
}  // namespace

TEST_CASE("engine: reschedule and cancel inside handlers give cancel-then-at's order exactly",
          "[engine]") {
  std::vector<std::pair<std::int64_t, std::uint64_t>> runs[2];
  std::size_t peak_queued[2] = {0, 0};
  for (int variant = 0; variant < 2; ++variant) {
    Engine e;
    Churn c{&e, std::vector<EventId>(257), {}};
    c.use_reschedule = variant == 0;
    for (std::size_t i = 0; i < c.ids.size(); ++i)
      c.ids[i] = e.at_ns(static_cast<std::int64_t>(c.next() % 100), churn, &c, i);
    while (e.step()) peak_queued[variant] = std::max(peak_queued[variant], e.queued());
    runs[variant] = c.fired;
  }
  REQUIRE(runs[0].size() > 5000);
  CHECK(runs[0] == runs[1]);
  // Cancelled entries leave the heap at once: never more queued than ids.
  CHECK(peak_queued[0] <= 257);
  CHECK(peak_queued[1] <= 257);
}

TEST_CASE("engine: renumbering the sequence numbers before they wrap keeps every order",
          "[engine]") {
  // The churn above with sequence numbers renumbered every 300 events (at
  // most 257 pending: each renumbering gives them 0..256), against the
  // engine that never renumbers in so short a run. Ties are frequent (times
  // within 64 ns), so a renumbering that lost the insertion order among them
  // would show.
  std::vector<std::pair<std::int64_t, std::uint64_t>> runs[2];
  for (int variant = 0; variant < 2; ++variant) {
    Engine e = variant == 0 ? Engine{} : Engine{300};
    Churn c{&e, std::vector<EventId>(257), {}};
    for (std::size_t i = 0; i < c.ids.size(); ++i)
      c.ids[i] = e.at_ns(static_cast<std::int64_t>(c.next() % 100), churn, &c, i);
    e.run();
    runs[variant] = c.fired;
  }
  REQUIRE(runs[0].size() > 5000);
  CHECK(runs[0] == runs[1]);
}

TEST_CASE("engine: events on lanes fire in the order the heap alone gives them", "[engine]") {
  // The churn with half of its ids on lanes (set, replaced and cancelled by
  // the handlers), lanes added in two steps, once while events are pending;
  // with and without renumbering. Ties are frequent, so a lane that fired
  // before an earlier-scheduled heap event at its time (or after a later
  // one) would show.
  std::vector<std::pair<std::int64_t, std::uint64_t>> runs[3];
  for (int variant = 0; variant < 3; ++variant) {
    Engine e = variant == 2 ? Engine{300} : Engine{};
    Churn c{&e, std::vector<EventId>(257), {}};
    if (variant > 0) c.lanes = 128;
    if (variant > 0) REQUIRE(e.add_lanes(64) == 0);
    for (std::size_t i = 0; i < c.ids.size(); ++i) {
      const auto t = static_cast<std::int64_t>(c.next() % 100);
      if (i == 64 && variant > 0) REQUIRE(e.add_lanes(64) == 64);
      c.ids[i] = i < c.lanes ? e.at_lane(static_cast<std::uint32_t>(i), t, churn, &c, i)
                             : e.at_ns(t, churn, &c, i);
    }
    std::size_t peak = 0;
    while (e.step()) {
      peak = std::max(peak, e.queued());
      for (std::size_t i = 0; i < c.lanes; i += 17)
        REQUIRE(e.pending(c.ids[i]) == c.ids[i].valid());
    }
    CHECK(peak <= 257);
    CHECK(e.queued() == 0);
    runs[variant] = c.fired;
  }
  REQUIRE(runs[0].size() > 5000);
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);
}

TEST_CASE("engine: a lane holds one event, setting it again replaces it", "[engine]") {
  Engine e;
  Log log{&e, {}};
  const std::uint32_t lane = e.add_lanes(3) + 1;
  EventId a = e.at_lane(lane, 10, record, &log, 1);
  const EventId b = e.at_lane(lane, 20, record, &log, 2);
  CHECK_FALSE(e.pending(a));
  CHECK(e.pending(b));
  CHECK(e.queued() == 1);
  CHECK_FALSE(e.cancel(a));
  e.at_ns(20, record, &log, 3);  // after b at the same time: b was scheduled first
  e.run();
  REQUIRE(log.fired.size() == 2);
  CHECK(log.fired[0] == std::pair<std::int64_t, std::uint64_t>{20, 2});
  CHECK(log.fired[1] == std::pair<std::int64_t, std::uint64_t>{20, 3});
  CHECK_FALSE(e.pending(b));
  CHECK_THROWS_AS(e.at_lane(lane, 5, record, &log, 4), std::logic_error);
}
