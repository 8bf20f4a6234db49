// prediction.cpp: see prediction.hpp.
#include "validate/prediction.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "validate/replications.hpp"
#include "validate/worker_pool.hpp"

namespace poolsim::validate {

int draws_for(const Scenario& s, const Workload& w, int requested) {
  if (requested < 1)
    throw std::invalid_argument("--draws must be at least 1, got " + std::to_string(requested));
  if (!sim::draws_differ(s) || w.streamed()) return 1;
  return requested;
}

Prediction predict(const Scenario& s, const Workload& w, const sim::SimOptions& first_options,
                   int draws, int jobs) {
  const int n = draws_for(s, w, draws);
  std::vector<Metrics> runs(static_cast<std::size_t>(n));
  Prediction out;
  out.draws = n;
  for_each_index(n, static_cast<std::size_t>(std::min(n, jobs > 0 ? jobs : usable_workers())),
                 [&](int i) {
                   sim::SimOptions o;
                   if (i == 0) o = first_options;
                   o.draw = static_cast<std::uint64_t>(i);
                   RunResult r = sim::simulate(s, w, o);
                   runs[static_cast<std::size_t>(i)] = compute_metrics(r);
                   if (i == 0) out.first = std::move(r);
                 });
  out.spread = summarize(runs);
  out.metrics = runs.front();
  for (std::size_t i = 0; i < kMetricCount; ++i) out.metrics.values[i] = out.spread[i].mean;
  return out;
}

}  // namespace poolsim::validate
