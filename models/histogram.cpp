// histogram.cpp: the log-bucketed histogram (design in histogram.hpp).
#include "models/histogram.hpp"

#include <algorithm>
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
  const int i = index_of(value);
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
