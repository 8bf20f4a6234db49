// step_series.hpp: a bounded step function (value from t until the next
// sample), recorded only where the value changes.
//
// Samples at the same instant overwrite each other (the last value of an
// instant is the one that holds). When the series exceeds 2 * limit samples,
// neighbouring pairs are merged keeping the sample with the larger value (the
// earlier one on a tie), so memory stays bounded on million-task runs and
// peaks survive; the exact peak is always kept separately by the caller's
// counters. Deterministic: depends only on the sequence of set() calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/result.hpp"

namespace poolsim::sim {

class StepSeries {
 public:
  explicit StepSeries(std::size_t limit = 2048) : limit_(limit) {}

  void set(Duration t, std::int32_t value) {
    if (!s_.empty()) {
      if (s_.back().value == value) return;
      if (s_.back().t == t) {
        s_.back().value = value;
        if (s_.size() >= 2 && s_[s_.size() - 2].value == value) s_.pop_back();
        return;
      }
    }
    s_.push_back({t, value});
    if (s_.size() > 2 * limit_) compact();
  }
  const std::vector<Sample>& samples() const { return s_; }
  std::vector<Sample> take() { return std::move(s_); }

 private:
  void compact() {
    std::vector<Sample> out;
    out.reserve(s_.size() / 2 + 1);
    out.push_back(s_[0]);
    for (std::size_t i = 1; i + 1 < s_.size(); i += 2)
      out.push_back(s_[i + 1].value > s_[i].value ? s_[i + 1] : s_[i]);
    if (s_.size() % 2 == 0) out.push_back(s_.back());
    s_ = std::move(out);
  }
  std::size_t limit_;
  std::vector<Sample> s_;
};

}  // namespace poolsim::sim
