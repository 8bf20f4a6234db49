// histogram.hpp: a log-bucketed histogram of non-negative integer values
// (nanoseconds) whose quantiles carry a stated relative error, after
// DDSketch (Masson, Rim and Lee, "DDSketch: a fast and fully-mergeable
// quantile sketch with relative-error guarantees", VLDB 2019).
//
// Mechanism: with relative accuracy a and gamma = (1 + a) / (1 - a), a value
// x >= 1 goes to bucket i = ceil(log(x) / log(gamma)), which holds
// (gamma^(i-1), gamma^i]; 0 has its own count. A quantile is the bucket
// holding the nearest-rank value (rank ceil(q n), clamped to [1, n], the
// rank metrics.hpp uses), reported as 2 gamma^i / (gamma + 1), which lies
// within a relative distance a of every value of the bucket; it is then
// clamped to the exact minimum and maximum, which only brings it closer.
// Invariant: |quantile(q) - exact nearest-rank quantile| <= a * exact
// (tested against exact quantiles in tests/models/test_histogram.cpp).
// Memory: one count per bucket between the smallest and largest value seen:
// log(max / min) / log(gamma) buckets, about 4,600 for 1 ns .. 1,000 s at
// a = 0.005, whatever the number of values.
// Speed: the logarithm is taken once per sub-range of 1/1024 of an octave
// (memo_): a sub-range whose two ends fall in one bucket maps every value
// between them there (ceil(log(x) * k) does not decrease with x), so most
// values cost a table lookup; a sub-range that straddles a bucket boundary
// takes the logarithm for each value. The buckets are the same either way.
// Left out: merging sketches and bounding the bucket count (DDSketch's
// collapsing); values are integers, negative ones are refused.
#pragma once

#include <climits>
#include <cstdint>
#include <vector>

namespace poolsim {

class LogHistogram {
 public:
  // Relative accuracy of the quantiles (0.005 = 0.5%).
  static constexpr double kDefaultRelativeError = 0.005;

  explicit LogHistogram(double relative_error = kDefaultRelativeError);

  void add(std::int64_t value);
  std::uint64_t count() const { return count_; }
  std::int64_t min() const { return min_; }
  std::int64_t max() const { return max_; }
  double relative_error() const { return alpha_; }
  // Nearest-rank quantile, q in [0, 1], within relative_error() of the
  // exact one; 0 when empty.
  double quantile(double q) const;
  // Buckets in use (memory is this times 8 bytes).
  std::size_t buckets() const { return counts_.size(); }
  // The bucket of a value >= 1: index_of takes the logarithm, bucket_of
  // goes through memo_ (see Speed above) and gives the same index.
  int index_of(std::int64_t value) const;
  int bucket_of(std::int64_t value);

 private:
  static constexpr int kSubBits = 10;
  static constexpr std::int32_t kUnknown = INT32_MIN, kStraddles = INT32_MIN + 1;
  std::vector<std::int32_t> memo_;  // per sub-range: its bucket, kUnknown or kStraddles
  double alpha_, gamma_, inv_log_gamma_;
  std::vector<std::uint64_t> counts_;  // counts_[k] is bucket offset_ + k
  int offset_ = 0;
  std::uint64_t zeros_ = 0, count_ = 0;
  std::int64_t min_ = 0, max_ = 0;
};

}  // namespace poolsim
