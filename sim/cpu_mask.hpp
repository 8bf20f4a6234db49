// cpu_mask.hpp: CPU sets as word arrays, and CPUs bucketed by a load level,
// so that the kernel's placement and idle-pull searches cost O(CPUs / 64)
// word tests instead of a visit of every CPU.
//
// Mechanism: CpuMask is a bitset with find-first-set (std::countr_zero) from
// a start index, wrapping around (the kernel's for_each_cpu_wrap over a
// cpumask, as select_idle_cpu scans the LLC domain from the target).
// LevelIndex keeps each CPU in at most one bucket (its level: a queue length
// or a load) with one CpuMask per level, and bounds on the lowest and highest
// non-empty levels that are tightened lazily when queried.
//
// Invariants (asserted): a CPU is in the mask of its level and in no other;
// count_[l] is the number of CPUs at level l; every non-empty level lies in
// [lo_, hi_].
// Cost: set/move O(1); first_from O(words); min_level/max_level amortized
// O(1) when levels change by small steps (they move by one per queue push or
// pop in the kernel).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "models/assert.hpp"

namespace poolsim::sim {

class CpuMask {
 public:
  explicit CpuMask(int n = 0) : n_(n), w_(static_cast<std::size_t>((n + 63) / 64), 0) {}

  void set(int i) { w_[word(i)] |= bit(i); }
  void reset(int i) { w_[word(i)] &= ~bit(i); }
  bool test(int i) const { return (w_[word(i)] & bit(i)) != 0; }

  // The first CPU in the set at or after `start`, wrapping past the last
  // CPU to 0; -1 if the set is empty.
  int first_from(int start) const {
    if (n_ == 0) return -1;
    return first_in(w_.data(), w_.size(), start);
  }
  // The first set bit of words[0, nw) at or after `start`, wrapping; -1.
  static int first_in(const std::uint64_t* words, std::size_t nw, int start) {
    const std::size_t s = word(start);
    const int off = start % 64;
    const std::uint64_t at_or_above = ~std::uint64_t{0} << off;
    if (const std::uint64_t w = words[s] & at_or_above) return at(s, w);
    for (std::size_t k = s + 1; k < nw; ++k)
      if (words[k] != 0) return at(k, words[k]);
    for (std::size_t k = 0; k < s; ++k)
      if (words[k] != 0) return at(k, words[k]);
    if (const std::uint64_t w = words[s] & ~at_or_above) return at(s, w);
    return -1;
  }
  int first() const { return first_from(0); }

 private:
  static std::size_t word(int i) { return static_cast<std::size_t>(i) / 64; }
  static std::uint64_t bit(int i) { return std::uint64_t{1} << (i % 64); }
  static int at(std::size_t w, std::uint64_t bits) {
    return static_cast<int>(w * 64) + std::countr_zero(bits);
  }
  int n_;
  std::vector<std::uint64_t> w_;
};

// Storage is flat: level l's mask is words_[l * words_per_level_ ...], so a
// move touches two words and two counts.
class LevelIndex {
 public:
  static constexpr int kAbsent = -1;

  explicit LevelIndex(int cpus = 0)
      : wpl_(static_cast<std::size_t>((cpus + 63) / 64)),
        level_(static_cast<std::size_t>(cpus), kAbsent) {}

  int level_of(int cpu) const { return level_[static_cast<std::size_t>(cpu)]; }

  // Puts `cpu` at `level` (kAbsent removes it).
  void move(int cpu, int level) {
    int& cur = level_[static_cast<std::size_t>(cpu)];
    if (cur == level) return;
    const std::size_t w = static_cast<std::size_t>(cpu) / 64;
    const std::uint64_t b = std::uint64_t{1} << (cpu % 64);
    if (cur != kAbsent) {
      words_[static_cast<std::size_t>(cur) * wpl_ + w] &= ~b;
      --count_[static_cast<std::size_t>(cur)];
      --size_;
    }
    cur = level;
    if (level == kAbsent) return;
    POOLSIM_ASSERT(level >= 0, "LevelIndex: negative level");
    if (static_cast<std::size_t>(level) >= count_.size()) grow(level);
    words_[static_cast<std::size_t>(level) * wpl_ + w] |= b;
    ++count_[static_cast<std::size_t>(level)];
    ++size_;
    if (size_ == 1 || level < lo_) lo_ = level;
    if (size_ == 1 || level > hi_) hi_ = level;
  }

  bool empty() const { return size_ == 0; }
  // Lowest / highest level holding a CPU (the index must not be empty).
  int min_level() {
    POOLSIM_ASSERT(size_ > 0, "LevelIndex: min_level of an empty index");
    while (count_[static_cast<std::size_t>(lo_)] == 0) ++lo_;
    return lo_;
  }
  int max_level() {
    POOLSIM_ASSERT(size_ > 0, "LevelIndex: max_level of an empty index");
    while (count_[static_cast<std::size_t>(hi_)] == 0) --hi_;
    return hi_;
  }
  // The first CPU at `level` at or after `start`, wrapping; -1 if none.
  int first_from(int level, int start) const {
    if (level < 0 || static_cast<std::size_t>(level) >= count_.size() ||
        count_[static_cast<std::size_t>(level)] == 0)
      return -1;
    return CpuMask::first_in(&words_[static_cast<std::size_t>(level) * wpl_], wpl_, start);
  }

 private:
  void grow(int level) {
    count_.resize(static_cast<std::size_t>(level) + 1, 0);
    words_.resize(count_.size() * wpl_, 0);
  }
  std::size_t wpl_;  // words per level
  std::vector<int> level_;
  std::vector<std::uint64_t> words_;
  std::vector<int> count_;
  int size_ = 0, lo_ = 0, hi_ = 0;
};

}  // namespace poolsim::sim
