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
