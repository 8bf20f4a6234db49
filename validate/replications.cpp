// replications.cpp: see replications.hpp.
#include "validate/replications.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <thread>

#include "models/resource_pool.hpp"
#include "validate/output.hpp"
#include "validate/table.hpp"
#include "validate/worker_pool.hpp"

namespace poolsim::validate {

int usable_workers() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// In double throughout (promote_double<false>): Boost.Math's default
// promotes to long double, whose erfc_inv tables are built by a static
// initialiser at start-up, and valgrind's 64-bit emulation of the x87's
// 80-bit long double overflows there (the profile-guided build runs it, so
// callgrind aborted). A double quantile is exact to far more digits than
// the interval is printed with.
double student_t_975(int dof) {
  if (dof < 1) return 0;
  using Policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  return boost::math::quantile(
      boost::math::students_t_distribution<double, Policy>(static_cast<double>(dof)), 0.975);
}

Interval ci95(const MetricStats& s) {
  if (s.n <= 1) return {s.mean, s.mean};
  const double half = student_t_975(s.n - 1) * s.sd / std::sqrt(static_cast<double>(s.n));
  // Every metric is non-negative: the interval is cut at 0.
  return {std::max(0.0, s.mean - half), s.mean + half};
}

std::vector<std::uint64_t> replication_seeds(std::uint64_t seed, int n) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(seed + static_cast<std::uint64_t>(i));
  return out;
}

Metrics Replicated::mean() const {
  Metrics m;
  for (std::size_t i = 0; i < kMetricCount; ++i) m.values[i] = stats[i].mean;
  m.resources = first.extra.count(kExtraResourceAcquisitions) > 0;  // resource_wait_mean applies
  return m;
}

namespace {
struct Slot {
  Metrics metrics;
  std::vector<Warning> warnings;
  std::map<std::string, double> extra;
};

// Merges per-replication warnings by kind, keeping the first message of each.
std::vector<Warning> merge_warnings(const std::vector<Slot>& slots) {
  std::vector<Warning> out;
  std::vector<int> counts;
  for (const auto& slot : slots)
    for (const auto& w : slot.warnings) {
      auto it =
          std::find_if(out.begin(), out.end(), [&](const Warning& x) { return x.kind == w.kind; });
      if (it == out.end()) {
        out.push_back(w);
        counts.push_back(1);
      } else {
        ++counts[static_cast<std::size_t>(it - out.begin())];
      }
    }
  if (slots.size() > 1)
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i].message += fmt::format(" ({} of {} replications)", counts[i], slots.size());
  return out;
}
}  // namespace

Replicated replicate(const Scenario& s, int n, int jobs, const sim::SimOptions& first_options) {
  if (n < 1)
    throw std::invalid_argument("--replications must be at least 1, got " + std::to_string(n));
  Replicated out;
  out.n = n;
  out.seeds = replication_seeds(s.seed, n);
  std::vector<Slot> slots(static_cast<std::size_t>(n));
  // A replication that throws (an event budget) ends the others and is
  // rethrown (for_each_index).
  for_each_index(n, static_cast<std::size_t>(std::min(n, jobs > 0 ? jobs : usable_workers())),
                 [&](int i) {
                   Scenario sc = s;
                   sc.seed = out.seeds[static_cast<std::size_t>(i)];
                   Workload w = generate_workload(sc);
                   sim::SimOptions o;
                   if (i == 0) o = first_options;
                   o.draw = first_options.draw;
                   RunResult r = sim::simulate(sc, w, o);
                   Slot& slot = slots[static_cast<std::size_t>(i)];
                   slot.metrics = compute_metrics(r);
                   slot.warnings = overload_warnings(sc, w, r, slot.metrics);
                   slot.extra = r.extra;
                   if (i == 0) {
                     out.workload = std::move(w);
                     out.first = std::move(r);
                   }
                 });
  for (const auto& slot : slots) {
    out.runs.push_back(slot.metrics);
    for (const auto& [k, v] : slot.extra) out.extra[k] += v / n;
  }
  out.stats = summarize(out.runs);
  for (std::size_t i = 0; i < kMetricCount; ++i) out.ci[i] = ci95(out.stats[i]);
  out.warnings = merge_warnings(slots);
  return out;
}

nlohmann::ordered_json replications_json(const Replicated& r) {
  nlohmann::ordered_json j;
  j["n"] = r.n;
  j["seeds"] = r.seeds;
  nlohmann::ordered_json m;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    auto e = stats_json(r.stats[i]);
    e["ci95"] = {r.ci[i].low, r.ci[i].high};
    m[std::string(kMetricNames[i])] = e;
  }
  j["metrics"] = m;
  return j;
}

nlohmann::ordered_json replicated_json(const Scenario& s, const Replicated& r) {
  auto j = simulated_json(s, r.workload, r.mean(), r.first);
  if (!r.extra.empty()) j["extra"] = r.extra;
  j["warnings"] = warnings_json(r.warnings);
  if (r.n > 1) j["replications"] = replications_json(r);
  return j;
}

std::string format_with_ci(Metric m, double mean, const Interval& ci) {
  if (ci.low == ci.high) return format_metric(m, mean);
  return fmt::format("{} [{}, {}]", format_metric(m, mean), format_metric(m, ci.low),
                     format_metric(m, ci.high));
}

std::string replicated_table(const Replicated& r) {
  Table t({"metric", "mean", "95% CI low", "high", "min", "max"},
          {false, true, true, true, true, true});
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto metric = static_cast<Metric>(i);
    const auto& st = r.stats[i];
    t.add_row({std::string(kMetricNames[i]), format_metric(metric, st.mean),
               format_metric(metric, r.ci[i].low), format_metric(metric, r.ci[i].high),
               format_metric(metric, st.min), format_metric(metric, st.max)});
  }
  for (const auto& [k, v] : r.extra) t.add_row({k, fmt::format("{:.6g}", v)});
  return t.str() + fmt::format("\n{} replications, seeds {}..{} (95% CI of the mean: Student t)\n",
                               r.n, r.seeds.front(), r.seeds.back());
}

}  // namespace poolsim::validate
