// CpuMask and LevelIndex (sim/cpu_mask.hpp) against a plain scan, on random
// operations: the kernel's placement and pull searches rest on them.
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "sim/cpu_mask.hpp"

using poolsim::sim::CpuMask;
using poolsim::sim::LevelIndex;

namespace {
// The first i in [start, n) then [0, start) with bits[i]; -1 if none.
int scan_from(const std::vector<bool>& bits, int start) {
  const int n = static_cast<int>(bits.size());
  for (int k = 0; k < n; ++k)
    if (bits[static_cast<std::size_t>((start + k) % n)]) return (start + k) % n;
  return -1;
}
}  // namespace

TEST_CASE("cpu_mask: first_from wraps and agrees with a scan", "[cpu_mask]") {
  for (int n : {1, 5, 63, 64, 65, 130, 1024}) {
    std::mt19937 rng(static_cast<unsigned>(n));
    CpuMask m(n);
    std::vector<bool> ref(static_cast<std::size_t>(n), false);
    for (int step = 0; step < 4000; ++step) {
      const int i = static_cast<int>(rng() % static_cast<unsigned>(n));
      if (rng() % 3 == 0) {
        m.reset(i);
        ref[static_cast<std::size_t>(i)] = false;
      } else if (rng() % 4 == 0) {
        m.set(i);
        ref[static_cast<std::size_t>(i)] = true;
      }
      const int start = static_cast<int>(rng() % static_cast<unsigned>(n));
      REQUIRE(m.first_from(start) == scan_from(ref, start));
      REQUIRE(m.test(i) == ref[static_cast<std::size_t>(i)]);
    }
  }
}

TEST_CASE("cpu_mask: a level index finds the lowest and highest levels", "[cpu_mask]") {
  const int n = 200;
  std::mt19937 rng(7);
  LevelIndex idx(n);
  std::vector<int> ref(n, LevelIndex::kAbsent);
  for (int step = 0; step < 20000; ++step) {
    const int cpu = static_cast<int>(rng() % n);
    const int cur = ref[static_cast<std::size_t>(cpu)];
    // Levels move by one mostly (queue pushes and pops), sometimes jump.
    int next =
        cur == LevelIndex::kAbsent ? static_cast<int>(rng() % 5) : cur + (rng() % 2 ? 1 : -1);
    if (rng() % 50 == 0) next = static_cast<int>(rng() % 40);
    if (next < 0 || rng() % 20 == 0) next = LevelIndex::kAbsent;
    idx.move(cpu, next);
    ref[static_cast<std::size_t>(cpu)] = next;
    int lo = -1, hi = -1;
    for (int l : ref) {
      if (l == LevelIndex::kAbsent) continue;
      if (lo < 0 || l < lo) lo = l;
      if (l > hi) hi = l;
    }
    REQUIRE(idx.empty() == (lo < 0));
    if (lo < 0) continue;
    REQUIRE(idx.min_level() == lo);
    REQUIRE(idx.max_level() == hi);
    std::vector<bool> at_hi(n);
    for (int i = 0; i < n; ++i)
      at_hi[static_cast<std::size_t>(i)] = ref[static_cast<std::size_t>(i)] == hi;
    const int start = static_cast<int>(rng() % n);
    REQUIRE(idx.first_from(hi, start) == scan_from(at_hi, start));
    REQUIRE(idx.level_of(cpu) == next);
  }
}
