// histogram.cpp: the log-bucketed histogram (design in histogram.hpp).
#include "models/histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace poolsim {

LogHistogram::LogHistogram(double relative_error)
    : alpha_(relative_error),
      gamma_((1 + relative_error) / (1 - relative_error)),
      inv_log_gamma_(1 / std::log(gamma_)) {
  if (!(relative_error > 0 && relative_error < 1))
    throw std::invalid_argument("LogHistogram: relative error must be in (0, 1)");
}

int LogHistogram::index_of(std::int64_t value) const {
  return static_cast<int>(std::ceil(std::log(static_cast<double>(value)) * inv_log_gamma_));
}

int LogHistogram::bucket_of(std::int64_t value) {
  const auto v = static_cast<std::uint64_t>(value);
  constexpr std::uint64_t kSmall = std::uint64_t{1} << kSubBits;
  std::size_t slot;
  std::uint64_t lo, hi;  // the sub-range of v
  if (v < kSmall) {
    slot = static_cast<std::size_t>(v);
    lo = hi = v;
  } else {
    const int e = 63 - std::countl_zero(v);  // 2^e <= v < 2^(e+1), e >= kSubBits
    const int shift = e - kSubBits;
    const std::uint64_t top = v >> shift;  // in [2^kSubBits, 2^(kSubBits+1))
    slot =
        kSmall + static_cast<std::size_t>(shift) * kSmall + static_cast<std::size_t>(top - kSmall);
    lo = top << shift;
    hi = lo + ((std::uint64_t{1} << shift) - 1);
  }
  if (memo_.empty()) memo_.assign(kSmall * (64 - kSubBits + 1), kUnknown);
  std::int32_t& m = memo_[slot];
  if (m == kUnknown) {
    const int a = index_of(static_cast<std::int64_t>(lo)),
              b = index_of(static_cast<std::int64_t>(hi));
    m = a == b ? a : kStraddles;
  }
  return m == kStraddles ? index_of(value) : m;
}

void LogHistogram::add(std::int64_t value) {
  if (value < 0) throw std::invalid_argument("LogHistogram: negative value");
  if (count_ == 0) min_ = max_ = value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  ++count_;
  if (value == 0) {
    ++zeros_;
    return;
  }
  const int i = bucket_of(value);
  if (counts_.empty()) {
    offset_ = i;
    counts_.push_back(0);
  } else if (i < offset_) {
    counts_.insert(counts_.begin(), static_cast<std::size_t>(offset_ - i), 0);
    offset_ = i;
  } else if (i >= offset_ + static_cast<int>(counts_.size())) {
    counts_.resize(static_cast<std::size_t>(i - offset_ + 1), 0);
  }
  ++counts_[static_cast<std::size_t>(i - offset_)];
}

double LogHistogram::quantile(double q) const {
  if (count_ == 0) return 0;
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  if (rank <= zeros_) return 0;
  std::uint64_t seen = zeros_;
  for (std::size_t k = 0; k < counts_.size(); ++k) {
    seen += counts_[k];
    if (seen >= rank) {
      const double v = 2 * std::pow(gamma_, offset_ + static_cast<int>(k)) / (gamma_ + 1);
      return std::clamp(v, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace poolsim
