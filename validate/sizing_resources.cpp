// sizing_resources.cpp: `size --resources FILE` (design in
// sizing_resources.hpp).
#include "validate/sizing_resources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "models/backend_registry.hpp"
#include "models/queueing/erlang.hpp"
#include "models/warnings.hpp"
#include "models/workload.hpp"
#include "validate/output.hpp"
#include "validate/sweep.hpp"
#include "validate/table.hpp"

namespace poolsim::validate {
namespace {

// Step 3: Erlang C at the declared permits and the suggested permit count.
void erlang(ResourceNeed& n, double rate) {
  const double mu = 1.0 / n.hold;
  n.offered = rate * n.hold;
  n.utilization = n.offered / n.permits;
  n.min_permits = static_cast<int>(std::floor(n.offered)) + 1;
  n.stable = queueing::mmc_stable(n.permits, rate, mu);
  if (n.stable) {
    const auto m = queueing::mmc(n.permits, rate, mu);
    n.prob_wait = m.prob_wait;
    n.mean_wait = m.mean_wait;
    n.wait_p99 = queueing::mmc_wait_quantile(n.permits, rate, mu, 0.99);
  }
  for (int c = n.min_permits; c <= static_cast<int>(kMaxPermits); ++c) {
    if (queueing::mmc_wait_quantile(c, rate, mu, 0.99) <= kPermitWaitShare * n.hold) {
      n.suggested = c;
      break;
    }
  }
}

SweepOptions sweep_of(const std::string& file, const LoadOptions& load, int jobs,
                      const SizingProgress& progress) {
  SweepOptions so;
  so.file = file;
  so.load = load;
  so.jobs = jobs;
  so.on_phase = progress.on_phase;
  so.on_point = progress.on_point;
  return so;
}

// Step 1: each request's mean length and each resource's mean hold, over
// the generated requests; the needs by Erlang C (erlang). Returns the mean
// time a request waits for permits.
double resource_needs(const Scenario& s, const Workload& w, ResourceSizing& r) {
  std::vector<double> hold(s.resources.size(), 0.0);
  double length = 0;
  for (const Task& t : w.tasks) {
    length += to_seconds(w.length_of(t));
    for (const Phase& p : w.phases_of(t))
      if (p.resource < hold.size()) hold[p.resource] += to_seconds(p.duration + p.wait_inside);
  }
  const double n = std::max<double>(1, static_cast<double>(w.tasks.size()));
  r.length = length / n;
  double waits = 0;
  for (std::size_t i = 0; i < s.resources.size(); ++i) {
    ResourceNeed need;
    need.name = s.resources[i].name;
    need.permits = s.resources[i].permits;
    need.hold = hold[i] / n;
    if (need.hold <= 0) continue;  // declared, held by no phase
    erlang(need, r.rate);
    waits += need.stable ? need.mean_wait : 0;
    r.resources.push_back(need);
  }
  return waits;
}

// Step 5: the thread sweep around Little's law's count, then fewer threads
// while the smallest count still meets the goal; sets r.recommended.
void sweep_threads(const std::string& file, const LoadOptions& load,
                   std::optional<double> target_p99, int jobs, const SizingProgress& progress,
                   ResourceSizing& r) {
  const int base = std::max(1, static_cast<int>(std::ceil(r.threads_needed)));
  std::set<int> sizes{r.declared_threads};
  for (double f : {0.75, 1.0, 1.25, 1.5, 2.0})
    sizes.insert(std::max(1, static_cast<int>(std::ceil(base * f))));
  SweepOptions so = sweep_of(file, load, jobs, progress);
  auto run = [&](const std::set<int>& counts) {
    VaryAxis ax{r.thread_key, {}};
    for (int t : counts) ax.values.push_back(std::to_string(t));
    so.axes = {ax};
    const SweepResult sw = run_sweep(so);
    auto size = counts.begin();
    for (const auto& p : sw.points) {
      SimulatedSize sz;
      sz.threads = *size++;
      sz.metrics = p.predicted;
      r.simulated.push_back(sz);
    }
    std::sort(r.simulated.begin(), r.simulated.end(),
              [](const SimulatedSize& a, const SimulatedSize& b) { return a.threads < b.threads; });
  };
  run(sizes);
  const double best = r.simulated.back().metrics[Metric::latency_p99];
  const double goal = target_p99 ? *target_p99 : best * (1 + kThreadP99Slack);
  // While the smallest count still meets the goal, try fewer threads
  // (x 0.75, at most kMaxSearchRounds rounds).
  for (int round = 0; round < kMaxSearchRounds; ++round) {
    const SimulatedSize& low = r.simulated.front();
    const int fewer = static_cast<int>(std::floor(low.threads * 0.75));
    if (low.metrics[Metric::latency_p99] > goal || fewer < 1 || fewer >= low.threads) break;
    run({fewer});
  }
  r.basis =
      target_p99
          ? fmt::format("the smallest simulated count with p99 <= {}", format_seconds(*target_p99))
          : fmt::format(
                "the smallest simulated count within {:.0f}% of the p99 of {} "
                "threads ({}): more threads no longer shorten the tail",
                100 * kThreadP99Slack, r.simulated.back().threads, format_seconds(best));
  for (auto& sz : r.simulated) {
    sz.meets = sz.metrics[Metric::latency_p99] <= goal;
    if (sz.meets && !r.recommended) r.recommended = sz.threads;
  }
}

// The suggested permits, simulated at the recommended thread count.
void simulate_suggested_permits(const std::string& file, const LoadOptions& load, int jobs,
                                const SizingProgress& progress, ResourceSizing& r) {
  for (ResourceNeed& need : r.resources) {
    if (need.suggested <= 0) continue;
    SweepOptions so = sweep_of(file, load, jobs, progress);
    if (r.recommended) so.load.sets.push_back(r.thread_key + "=" + std::to_string(*r.recommended));
    so.axes = {VaryAxis{"resources." + need.name + ".permits", {std::to_string(need.suggested)}}};
    need.simulated_suggested = run_sweep(so).points.front().predicted;
  }
}

}  // namespace

ResourceSizing size_resources(const std::string& file, const LoadOptions& load,
                              std::optional<double> target_p99, bool simulate, int jobs,
                              const SizingProgress& progress) {
  const Scenario s = load_scenario(file, load);
  if (s.resources.empty())
    throw SizingRefused("--resources " + file +
                        ": the scenario declares no resources (add `resources: {db: {permits: "
                        "10}}` and `holding: db` on the phases that hold one)");
  const auto rate = offered_rate(s);
  if (!rate)
    throw SizingRefused("--resources " + file +
                        ": the scenario has no open arrival rate (use arrival kind poisson or "
                        "periodic): permits and threads are sized for a rate");
  const Workload w = generate_workload(s);
  ResourceSizing r;
  r.scenario = s.name;
  r.backend = std::string(to_string(s.backend.kind));
  r.rate = *rate;
  r.target_p99 = target_p99;
  const std::string_view workers = backend_info(s.backend.kind).workers;
  if (!workers.empty()) {
    r.thread_key = "backend." + std::string(workers);
    r.declared_threads = s.backend.initial_threads();
  }
  const double waits = resource_needs(s, w, r);
  r.threads_needed = r.rate * (r.length + waits);
  if (!simulate) return r;

  if (!r.thread_key.empty()) sweep_threads(file, load, target_p99, jobs, progress, r);
  simulate_suggested_permits(file, load, jobs, progress, r);
  return r;
}

nlohmann::ordered_json resource_sizing_json(const ResourceSizing& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["backend"] = r.backend;
  j["rate"] = r.rate;
  j["request_length"] = r.length;
  j["threads_needed"] = r.threads_needed;
  if (r.target_p99) j["target_p99"] = *r.target_p99;
  auto& res = j["resources"];
  res = nlohmann::ordered_json::array();
  for (const auto& n : r.resources) {
    nlohmann::ordered_json e;
    e["name"] = n.name;
    e["permits"] = n.permits;
    e["hold"] = n.hold;
    e["offered"] = n.offered;
    e["utilization"] = n.utilization;
    e["stable"] = n.stable;
    e["prob_wait"] = n.prob_wait;
    e["mean_wait"] = n.mean_wait;
    e["wait_p99"] = n.wait_p99;
    e["min_permits"] = n.min_permits;
    e["suggested_permits"] = n.suggested;
    if (n.simulated_suggested) {
      e["simulated_suggested"] = {
          {"latency_p99", (*n.simulated_suggested)[Metric::latency_p99]},
          {"resource_wait_mean", (*n.simulated_suggested)[Metric::resource_wait_mean]}};
    }
    res.push_back(e);
  }
  if (!r.thread_key.empty()) j["thread_key"] = r.thread_key;
  auto& sim = j["simulated"];
  sim = nlohmann::ordered_json::array();
  for (const auto& sz : r.simulated)
    sim.push_back({{"threads", sz.threads},
                   {"latency_p99", sz.metrics[Metric::latency_p99]},
                   {"latency_mean", sz.metrics[Metric::latency_mean]},
                   {"resource_wait_mean", sz.metrics[Metric::resource_wait_mean]},
                   {"throughput", sz.metrics[Metric::throughput]},
                   {"meets", sz.meets}});
  if (r.recommended) j["recommended_threads"] = *r.recommended;
  return j;
}

std::string resource_sizing_text(const ResourceSizing& r) {
  std::string out = fmt::format("{}: {} at {}, a request lasts {} on average (every phase)\n\n",
                                r.scenario, r.backend, rate_text(r.rate), format_seconds(r.length));
  for (const auto& n : r.resources) {
    out += fmt::format(
        "resource '{}': {} permits, held {} per request\n"
        "  Little's law: {:.2f} permits busy on average ({:.0f}% of {}); at least {} to keep up\n",
        n.name, n.permits, format_seconds(n.hold), n.offered, 100 * n.utilization, n.permits,
        n.min_permits);
    if (n.stable)
      out += fmt::format(
          "  Erlang C (M/M/{}): {:.1f}% of requests wait for a permit, mean wait {}, p99 wait {}\n",
          n.permits, 100 * n.prob_wait, format_seconds(n.mean_wait), format_seconds(n.wait_p99));
    else
      out += fmt::format("  {} permits cannot keep up: the queue for them grows without bound\n",
                         n.permits);
    out += fmt::format("  suggested permits: {} (p99 wait at most {:.0f}% of the hold)",
                       n.suggested, 100 * kPermitWaitShare);
    if (n.simulated_suggested)
      out += fmt::format("; simulated with them: p99 {}, mean permit wait {}",
                         format_seconds((*n.simulated_suggested)[Metric::latency_p99]),
                         format_seconds((*n.simulated_suggested)[Metric::resource_wait_mean]));
    out += "\n\n";
  }
  out += fmt::format(
      "threads: Little's law with the permit waits: {} x ({} + waits) = {:.1f} busy on average\n",
      rate_text(r.rate), format_seconds(r.length), r.threads_needed);
  if (r.simulated.empty()) return out;
  Table t({r.thread_key, "latency_p99", "latency_mean", "resource_wait_mean", "throughput", ""},
          {true, true, true, true, true, false});
  for (const auto& sz : r.simulated)
    t.add_row({std::to_string(sz.threads),
               format_metric(Metric::latency_p99, sz.metrics[Metric::latency_p99]),
               format_metric(Metric::latency_mean, sz.metrics[Metric::latency_mean]),
               format_metric(Metric::resource_wait_mean, sz.metrics[Metric::resource_wait_mean]),
               format_metric(Metric::throughput, sz.metrics[Metric::throughput]),
               sz.meets ? "meets" : ""});
  out += "\nsimulated (the scenario's machine and backend, permits as declared):\n" + t.str();
  if (r.recommended)
    out += fmt::format("\nrecommended: {} = {} ({})\n", r.thread_key, *r.recommended, r.basis);
  else
    out += "\nno simulated thread count meets the target\n";
  return out;
}

}  // namespace poolsim::validate
