// The run queue's pick against a scan of every entry (EEVDF's definition:
// the earliest deadline, first in on ties, among the entries with
// vruntime <= V), over random pushes, picks and removals.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "sim/run_queue.hpp"

using poolsim::Duration;
using poolsim::sim::RqEntry;
using poolsim::sim::RunQueue;

namespace {

const RqEntry* scan_best(const std::vector<RqEntry>& all, Duration V) {
  const RqEntry* best = nullptr;
  for (const RqEntry& e : all) {
    if (e.v > V) continue;
    if (best == nullptr || e.d < best->d || (e.d == best->d && e.seq < best->seq)) best = &e;
  }
  if (best != nullptr) return best;
  for (const RqEntry& e : all)  // none eligible: the earliest deadline
    if (best == nullptr || e.d < best->d || (e.d == best->d && e.seq < best->seq)) best = &e;
  return best;
}

}  // namespace

TEST_CASE("run_queue: the pick is the earliest eligible deadline, as a scan finds it",
          "[sim][oracle]") {
  std::mt19937_64 rng(42);
  RunQueue q;
  std::vector<RqEntry> all;
  std::uint64_t seq = 0;
  for (int step = 0; step < 20000; ++step) {
    const auto roll = rng() % 10;
    if (all.empty() || roll < 5) {
      // Deadlines are vruntime plus up to a slice (4,000 ns here), vruntimes
      // drawn coarse so that equal keys and equal deadlines occur.
      const Duration v{static_cast<std::int64_t>(rng() % 64) * 100};
      const Duration d = v + Duration{static_cast<std::int64_t>(1 + rng() % 40) * 100};
      const RqEntry e{d, v, seq++, static_cast<std::uint32_t>(step)};
      q.push(e);
      all.push_back(e);
    } else {
      const Duration V{static_cast<std::int64_t>(rng() % 70) * 100};
      const RqEntry& got = q.best([&](Duration v) { return v <= V; });
      const RqEntry* want = scan_best(all, V);
      REQUIRE(got.seq == want->seq);
      // Take it (a pick), or the oldest (a pull), or keep it.
      if (roll < 8) {
        const RqEntry& victim = roll < 7 ? got : q.oldest();
        const auto oldest = std::min_element(all.begin(), all.end(),
                                             [](auto& a, auto& b) { return a.seq < b.seq; });
        if (roll == 7) REQUIRE(victim.seq == oldest->seq);
        const std::uint64_t gone = q.erase(victim).seq;
        all.erase(std::find_if(all.begin(), all.end(), [&](auto& e) { return e.seq == gone; }));
      }
    }
    REQUIRE(q.size() == all.size());
    if (!all.empty()) {
      const auto lowest = std::min_element(all.begin(), all.end(), [](auto& a, auto& b) {
        return a.v < b.v || (a.v == b.v && a.seq < b.seq);
      });
      REQUIRE(q.leftmost().seq == lowest->seq);
    }
    if (step % 500 == 0) q.check();
  }
}
