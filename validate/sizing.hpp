// sizing.hpp: `poolsim size`: how many threads, for this load, on these CPUs,
// theory first and then confirmed (or corrected) by the simulator.
//
// The chain, each step with its source (models/queueing/, docs/queueing.md):
//   1. CPU utilisation rho = lambda C / capacity, capacity = min(cores, quota)
//      (little.hpp). rho >= 1 has no steady state: refused (SizingRefused, exit
//      2) with the CPUs it would need and by how much that exceeds the capacity.
//   2. Little's law L = lambda (C + W): requests in the system on average,
//      so threads busy on average when each holds its thread for C + W.
//   3. Goetz's formula N = capacity * U * (1 + W / C) (Java Concurrency in
//      Practice, 8.2), U = --target-utilization (default 1): sizes for
//      saturation and ignores the arrival rate.
//   4. The smallest pool whose response-time p99 meets the target, from
//      M/M/c (Erlang C; --service exponential) or the M/D/c approximation
//      (--service deterministic, the default: the command's --cpu and --wait
//      are fixed values). Service time S = C + W: a request holds its thread
//      for both. Without --target-p99 the target is 1.25 x what S alone gives
//      at p99 (deterministic: 1.25 S; exponential: 1.25 S ln 100), "queueing
//      may add a quarter". A target at or below S alone is unreachable by any
//      pool: reported, and the default target is used instead.
//   5. With --queue K: the pool has c threads and K queue slots, M/M/c/(c+K)
//      solved as a CTMC (mmck.hpp): rejection probability, throughput, mean
//      response and p99 of admitted requests (exponential service only).
//   6. A simulated sweep (sweep.hpp, in parallel): Poisson arrivals at the
//      rate, task [cpu C, wait W] (fixed, or exponential phases with those
//      means for --service exponential), backend pool with `threads` = each
//      candidate (and `queue` = K), on the machine profile with `cores`
//      overridden and limits.cpus = the quota. Candidates: the analytic size
//      +-4 steps (step = max(1, round(size / 16))) and Goetz's size; the
//      search extends down while everything meets the target and up while
//      nothing does (at most kMaxSearchRounds rounds each), then fills in the
//      sizes between the first passing size and the one a step below. The recommendation
//      is the smallest simulated size from which every larger simulated size
//      meets the target (robust to one lucky point). Unlike Erlang C, the
//      simulator models the CPUs: the threads compete for `cores` CPUs (and
//      the quota), so CPU queueing, slices, switches and throttling are in its
//      p99 and not in the analytic one; the report says so.
//   7. Container advice (--host-cores N with --cpus Q): the same load in the
//      container, with the pool sized by the host's CPU count (Goetz with N,
//      which is N for a CPU-bound load: what nproc or an old JVM's
//      availableProcessors() says) and by the quota (Goetz with Q, ceil(Q)
//      for CPU-bound); both simulated: throttled periods and time, p99 and
//      makespan. The recommendation stays the one simulated inside the
//      quota; the text says which pool's tail is longer in this simulation
//      (under an open load well below the quota, bursts on idle host CPUs can
//      make the host-sized pool's p99 shorter, at the price of stalls).
//   8. Task graphs (--graph FILE): work, critical path, the makespan bound
//      max(work / capacity, critical path) and the useful-thread bound
//      ceil(total task time / critical path) (Blumofe-Leiserson work/span:
//      parallelism T1 / Tinf); then a simulated sweep of the scenario's thread
//      count over powers of two up to that bound, recommending the smallest
//      within kGraphMakespanSlack of the best makespan.
//   9. Backends (--backend): what is sized is the backend's worker parameter
//      (backend_registry.hpp, BackendInfo::workers): `threads` for pool,
//      work-stealing, tbb and asio-pool, `min_threads` for injecting-pool
//      (the threads it starts with, .NET's SetMinThreads: below the need it
//      adds one thread per injection_delay without progress; max_threads is
//      raised to it when the default 512 is lower), `carriers` for
//      virtual-threads and `loops` for event-loop. The thread backends hold
//      their thread through the wait: servers c, service S = C + W, as above.
//      Virtual threads unmount and an event loop parks the request on a
//      timer: a carrier (loop) is held for C only, so the queueing model has
//      service C, and the wait adds W (its p99 with a distribution) after
//      it; Goetz's formula is then capacity x U (waits hold no carrier).
//      thread-per-task has nothing to size (refused, with Little's law).
//  10. A wait distribution (--wait '{dist: lognormal, ...}'): Little's law
//      and Goetz use its mean; the service time's own p99 is C + the wait's
//      p99; when the wait holds the thread, the queueing model is M/G/c
//      approximated as the M/M/c queue wait at the mean service time plus
//      the service time's own p99; the simulation draws from the
//      distribution.
// Left out: retries of rejected requests, timeouts, CPU-time distributions
// other than fixed and exponential, several request classes (use a scenario
// and `poolsim sweep`).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/queueing/erlang.hpp"
#include "models/scenario_loader.hpp"

namespace poolsim::validate {

// A load the CPUs cannot carry, or inputs that cannot describe one: exit 2.
struct SizingRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The p99 target without --target-p99: what service alone gives, times this.
inline constexpr double kDefaultTargetFactor = 1.25;
// At most this many rounds of extending the simulated sweep up or down.
inline constexpr int kMaxSearchRounds = 3;
// A graph's recommended thread count: the smallest whose simulated makespan is
// within this fraction of the best one.
inline constexpr double kGraphMakespanSlack = 0.05;
// With a bounded queue, a simulated size meets the target only if it rejects
// at most this fraction of the requests (one in a thousand).
inline constexpr double kMaxRejectedFraction = 0.001;

struct SizingInputs {
  double rate = 0;                    // requests per second
  double cpu = 0;                     // seconds of CPU per request
  double wait = 0;                    // seconds of blocking wait per request
  int cores = 0;                      // CPUs of the machine the pool runs on
  std::optional<double> cpus;         // CFS quota in CPUs
  std::optional<int> host_cores;      // container advice: the host's CPU count
  std::optional<double> target_p99;   // seconds
  std::optional<std::int64_t> queue;  // bounded queue slots
  queueing::ServiceShape service = queueing::ServiceShape::deterministic;
  double target_utilization = 1.0;  // Goetz's U
  // --backend: the runtime sized (step 9); its worker parameter is varied.
  BackendKind backend = BackendKind::pool;
  // --wait as a distribution, in the scenario syntax ("{dist: lognormal,
  // median: 20ms, p99: 200ms}"); empty: `wait` is a fixed time. `wait` is
  // then its mean and `wait_p99` its 99th percentile (seconds).
  std::string wait_dist;
  double wait_p99 = 0;
  // Simulation.
  bool simulate = true;
  std::int64_t requests = 20000;  // arrivals per simulated point
  std::uint64_t seed = 1;
  std::string machine = "default";
  int jobs = 0;      // 0: hardware concurrency
  LoadOptions load;  // config directory, host profile hook
};

struct SimulatedSize {
  int threads = 0;
  Metrics metrics;
  bool meets = false;
};

struct ContainerAdvice {
  int host_cores = 0;
  double quota = 0;
  int by_host = 0;   // Goetz with the host's CPU count
  int by_quota = 0;  // Goetz with the quota
  SimulatedSize host_sized, quota_sized;
};

struct SizingReport {
  SizingInputs in;
  double capacity = 0;                 // CPUs
  double cpus_needed = 0;              // lambda C
  double cpu_utilization = 0;          // rho
  double service_time = 0;             // S = C + W
  double littles_law_concurrency = 0;  // lambda S
  double formula_exact = 0;            // Goetz, unrounded
  int formula_threads = 0;             // ceil
  double target_p99 = 0;
  std::string target_origin;  // "--target-p99" or how the default was chosen
  std::optional<int> erlang_c_threads;
  std::string erlang_c_note;  // why it is missing, or what it assumed
  int analytic_threads = 0;   // what the sweep is centred on
  // The analytic model at the recommended size.
  double predicted_p99 = 0, predicted_mean = 0, predicted_prob_wait = 0, thread_utilization = 0;
  // --queue: M/M/c/K at the recommended size.
  struct Bounded {
    int threads = 0;
    std::int64_t queue = 0;
    double blocking = 0, throughput = 0, mean_response = 0, response_p99 = 0;
  };
  std::optional<Bounded> bounded;
  std::vector<SimulatedSize> simulated;  // sorted by threads
  bool simulated_meets = false;          // some simulated size meets the target
  int recommended = 0;
  std::string recommendation_basis;
  std::optional<ContainerAdvice> container;
};

// The scenario YAML `size` simulates for `threads` (Poisson arrivals,
// [cpu, wait], the backend with its worker parameter = threads).
std::string sizing_scenario_yaml(const SizingInputs& in, int threads);
// The scenario key `size` varies for this backend ("backend.threads",
// "backend.carriers", ...); throws SizingRefused for thread-per-task.
std::string sizing_worker_key(BackendKind kind);
// True when a request holds its worker through the wait (OS-thread
// backends); false for virtual-threads and event-loop.
bool wait_holds_worker(BackendKind kind);

// Runs the chain above. Throws SizingRefused on an overloaded or meaningless
// input. `on_phase`/`on_point` report simulation progress (see SweepOptions).
struct SizingProgress {
  std::function<void(const std::string& phase, std::size_t points)> on_phase;
  std::function<void(const std::string& label)> on_point;
};
SizingReport size_pool(const SizingInputs& in, const SizingProgress& progress = {});

// The JSON of docs/cli.md ("inputs", "cpu_utilization",
// "littles_law_concurrency", "formula_threads", "erlang_c_threads",
// "recommended_threads", "predicted", "simulated": {"threads", "latency_p99"}),
// extended with the rest of the report.
nlohmann::ordered_json sizing_json(const SizingReport& r);
// The human report: every number with where it comes from.
std::string sizing_text(const SizingReport& r);

// ---- task graphs ------------------------------------------------------------

struct GraphSizing {
  std::string scenario;
  std::size_t tasks = 0;
  double work = 0;            // CPU seconds (cpu + lock hold)
  double total_length = 0;    // every phase of every task: what threads are held for
  double critical_path = 0;   // seconds
  double capacity = 0;        // CPUs
  double makespan_bound = 0;  // max(work / capacity, critical path)
  int useful_threads = 0;     // ceil(total_length / critical_path)
  std::string thread_key;     // the backend key varied ("backend.threads"); empty: not simulated
  std::vector<SimulatedSize> simulated;
  std::optional<int> recommended;
};

// Work/span numbers of a graph workload (also used by `simulate`'s summary).
struct GraphBounds {
  double work = 0, total_length = 0, critical_path = 0, makespan_bound = 0;
  int useful_threads = 0;
};
GraphBounds graph_bounds(double capacity, double work, double total_length, double critical_path);

// Loads the scenario (must have workload.graph), computes the bounds and, if
// `simulate`, sweeps the thread count. Throws SizingRefused for a scenario
// without a graph.
GraphSizing size_graph(const std::string& file, const LoadOptions& load, bool simulate, int jobs,
                       const SizingProgress& progress = {});
nlohmann::ordered_json graph_sizing_json(const GraphSizing& g);
std::string graph_sizing_text(const GraphSizing& g);

}  // namespace poolsim::validate
