// calibrate_noise.cpp: OS noise as machine-profile fields: real/os_noise.hpp's
// fixed-work-quantum benchmark on every CPU this process may use, at once.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "models/assert.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/os_noise.hpp"

namespace poolsim::real::calib {

std::vector<Measurement> measure_noise(Duration window) {
  const OsNoise n = measure_os_noise(window);
  std::vector<double> stolen;
  stolen.reserve(n.stolen.size());
  for (Duration d : n.stolen) stolen.push_back(to_seconds(d));
  const std::string how = fmt::format(
      "{} spinners x {:.1f} s of {:.1f} us quanta: {} of {} quanta interrupted, {} involuntary "
      "switches",
      n.cpus, to_seconds(n.window), to_seconds(n.quantum) * 1e6, n.events, n.quanta, n.switches);
  std::vector<Measurement> out;
  out.push_back(summarize("noise_interval", {to_seconds(n.interval)}, how));
  Measurement med =
      summarize("noise_median", {to_seconds(n.median)}, "median time an interrupted quantum lost");
  if (!stolen.empty()) {
    med.p10 = quantile(stolen, 0.1);
    med.p90 = quantile(stolen, 0.9);
    med.samples = static_cast<int>(stolen.size());
  }
  out.push_back(med);
  out.push_back(summarize("noise_p99", {to_seconds(n.p99)}, "99th percentile of the same"));
  out.push_back(summarize("noise_mean", {to_seconds(n.mean)},
                          "every quantum's excess over its run's 10th percentile, per interruption "
                          "(lost share: mean / interval)"));
  out.push_back(summarize("noise_preempt", {n.preempt},
                          "involuntary switches of the spinners / interrupted quanta"));
  // On one CPU noise_preempt_idle is noise_preempt; on more it is measured
  // in blocks (measure_noise_preempt_idle).
  if (n.cpus == 1)
    out.push_back(summarize("noise_preempt_idle", {n.preempt}, "one CPU: noise_preempt"));
  out.push_back(summarize(
      "noise_charged", {n.charged},
      "the spinners' thread CPU clocks against the wall: 1 - (wall - CPU) / the stolen time"));
  return out;
}

namespace {
// A block's lost share of a busy CPU (0 if it saw no interruption).
double lost_share(const std::vector<Measurement>& block) {
  const double interval = field_value(block, "noise_interval");
  return interval > 0 ? field_value(block, "noise_mean") / interval : 0.0;
}
}  // namespace

std::vector<Measurement> noise_block_fields(const std::vector<std::vector<Measurement>>& blocks) {
  POOLSIM_ASSERT(!blocks.empty(), "noise_block_fields: no block");
  if (blocks.empty()) return {};
  std::vector<double> lost;
  for (const auto& b : blocks) lost.push_back(lost_share(b));
  const std::size_t pick = median_index(lost);
  std::string shares;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    shares += fmt::format("{}{:.2f}%", i ? ", " : "", 100 * lost[i]);
  std::vector<Measurement> out = blocks[pick];
  for (Measurement& m : out)
    m.method += fmt::format("; block {} of {}, the median lost share ({})", pick + 1, blocks.size(),
                            shares);
  return out;
}

// One spinner, the other CPUs idle: what wakes there does not need its CPU.
Measurement measure_noise_preempt_idle(Duration window) {
  const OsNoise one = measure_os_noise(window, 1);
  return summarize("noise_preempt_idle", {one.preempt},
                   fmt::format("one spinner x {:.1f} s, the other CPUs idle: {} involuntary "
                               "switches / {} interrupted quanta",
                               to_seconds(one.window), one.switches, one.events));
}

}  // namespace poolsim::real::calib
