// sizing_resources.hpp: `poolsim size --resources FILE`: a request stream
// whose requests hold a bounded resource (a connection pool, a semaphore):
// the permits each resource needs, the threads the backend needs beside
// them, and a simulated sweep that confirms both.
//
// The chain (models/queueing/, docs/queueing.md; docs/sizing.md, "Bounded
// resources"):
//   1. The scenario's open arrival rate lambda (poisson or periodic; other
//      arrivals are refused: they offer no rate) and, from its generated
//      workload, each resource's mean hold per request h (the phases holding
//      it, as sampled; models/warnings.cpp's capacity uses the same sum).
//   2. Little's law per resource: a = lambda h permits busy on average
//      (Erlangs); fewer than a + 1 permits cannot keep up (utilisation a / c
//      must stay below 1).
//   3. Erlang C (M/M/c, the hold taken as exponential: the conservative
//      reading of a fixed hold) at the declared permits: probability of
//      waiting, mean wait Wq and its p99; and the smallest permit count whose
//      p99 wait is at most kPermitWaitShare of the hold.
//   4. Threads: a thread-holding backend keeps its worker for the whole
//      request, the permit wait included: Little's law with Wq,
//      lambda (L + sum of Wq), L the mean request length.
//   5. Simulation (the scenario's own backend and machine): the thread count
//      swept around step 4 (x 0.75 .. 2, and the declared count, then x 0.75
//      while the smallest still meets the goal, kMaxSearchRounds times); the
//      recommended count is the smallest simulated one whose p99 meets
//      --target-p99, or, without a target, is within kThreadP99Slack of the
//      p99 of the largest count (more threads no longer help: the permits
//      are the limit). Then each resource's suggested permits, simulated at
//      the recommended thread count, to confirm the Erlang C answer.
// Left out: several resources interacting (each is sized on its own), a
// backend without a thread count (thread-per-task) gets no thread sweep.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario_loader.hpp"
#include "validate/sizing.hpp"

namespace poolsim::validate {

// Permits are suggested so that the p99 wait for one is at most this share
// of the hold itself.
inline constexpr double kPermitWaitShare = 0.1;
// Without --target-p99: the smallest thread count within this fraction of
// the p99 that the largest simulated count gives.
inline constexpr double kThreadP99Slack = 0.10;

struct ResourceNeed {
  std::string name;
  int permits = 0;                             // declared
  double hold = 0;                             // seconds held per request (mean)
  double offered = 0;                          // lambda h, Erlangs
  double utilization = 0;                      // offered / permits
  bool stable = false;                         // offered < permits
  double prob_wait = 0;                        // Erlang C at the declared permits
  double mean_wait = 0;                        // Wq, seconds
  double wait_p99 = 0;                         // seconds
  int min_permits = 0;                         // floor(offered) + 1
  int suggested = 0;                           // smallest with p99 wait <= kPermitWaitShare * hold
  std::optional<Metrics> simulated_suggested;  // the scenario with `suggested` permits
};

struct ResourceSizing {
  std::string scenario;
  std::string backend;     // its kind
  std::string thread_key;  // "backend.threads"; empty: not swept
  int declared_threads = 0;
  double rate = 0;            // lambda
  double length = 0;          // mean request length (every phase), seconds
  double threads_needed = 0;  // lambda (length + sum of Wq)
  std::optional<double> target_p99;
  std::vector<ResourceNeed> resources;
  std::vector<SimulatedSize> simulated;  // by threads
  std::optional<int> recommended;
  std::string basis;  // how the recommendation was chosen
};

// Throws SizingRefused for a scenario without resources or without an open
// arrival rate; ScenarioError for a bad file.
ResourceSizing size_resources(const std::string& file, const LoadOptions& load,
                              std::optional<double> target_p99, bool simulate, int jobs,
                              const SizingProgress& progress = {});
nlohmann::ordered_json resource_sizing_json(const ResourceSizing& r);
std::string resource_sizing_text(const ResourceSizing& r);

}  // namespace poolsim::validate
