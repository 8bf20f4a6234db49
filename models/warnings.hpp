// warnings.hpp: a run's verdict on its own load: is the backend keeping up?
//
// A simulation of an overloaded open system still ends (the workload is
// finite) and prints a throughput and a p99, which read like an answer; they
// are a measure of how long the run was. This file decides, from the scenario
// (the offered load), the generated workload (what one request needs) and the
// run (what was served), whether the offered load exceeded what the backend
// can serve, and says so in one line naming the bottleneck.
//
// Mechanism:
//   1. Offered rate lambda: the scenario's open arrival rate (poisson `rate`,
//      periodic 1 / `interval`). Batch, closed and graph workloads have none:
//      a batch is drained by definition and a closed client waits for its
//      answer, so neither can outpace the backend; they get no overload check.
//   2. Capacities (Little's law per resource, the service-demand bound of
//      operational analysis, Denning & Buzen 1978): each resource r of
//      units_r units, held hold_r seconds by a mean request, serves at most
//      units_r / hold_r requests per second:
//        CPUs       the CPUs the scenario may use (cpuset or cores), hold =
//                   mean CPU work per request (cpu + lock hold phases);
//        quota      the same with the CFS quota when it is the tighter one;
//        threads    a thread-holding backend (pool, work-stealing, tbb,
//                   asio-pool, injecting-pool) holds a worker for the whole
//                   request (cpu + wait + lock); the pool's workers are
//                   `threads`, or `max_threads` when a bounded queue lets it
//                   grow (ThreadPoolExecutor); injecting-pool `max_threads`;
//        carriers / event loops  virtual threads and the event loop hold a
//                   carrier / loop only for the CPU phases (waits unmount);
//        lock L     each lock (each shard) is held by one request at a time,
//                   hold = its mean hold (CPU + wait inside) per request;
//        resource R a bounded resource (`resources:`) of `permits` permits,
//                   hold = the mean time per request its phases hold one
//                   (every phase `holding: R`, as sampled; the wait for the
//                   permit itself is not part of the hold).
//      The bottleneck is the resource with the lowest bound.
//   3. Overload when either
//        a. lambda >= the bottleneck's bound: no steady state exists (the
//           queue grows without bound, whatever the run's length); or
//        b. the run shows it: over the second half of the arrival window the
//           requests in the system grew by more than kBacklogGrowth of that
//           half's arrivals. A stable system's backlog is stationary, so its
//           growth is noise around 0; an overloaded one grows by (1 -
//           mu/lambda) of the arrivals. This catches what the bounds leave out
//           (switch costs, wake-ups, throttling stalls).
//      The message: offered and served rate (throughput = completed /
//      makespan), the bottleneck and its bound with the arithmetic.
//   4. Rejections (a bounded queue refusing work) are warned about separately
//      (kind `rejected`): the served rate then stays below the offered one
//      without any backlog growth.
// Invariants: a pure function of its inputs; never a warning for a workload
// without an open arrival rate other than `rejected`.
// Left out: memory and thread limits (the run fails).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"

namespace poolsim {

// Growth of the requests in the system over the second half of the arrival
// window, as a fraction of that half's arrivals, above which a run is
// overloaded (3b above). A stationary M/M/c backlog at rho = 0.9 moves by a
// few percent of 1000 arrivals; an overload at lambda = 1.2 mu grows by 17%.
inline constexpr double kBacklogGrowth = 0.10;
// Fewer arrivals than this in the second half: too few to judge a trend.
inline constexpr std::int64_t kMinTrendArrivals = 50;

struct Warning {
  std::string kind;     // "overload", "rejected"
  std::string message;  // one line
};

// One resource's bound on the served rate (2 above).
struct Capacity {
  std::string resource;   // "CPUs", "quota", "threads", "carriers", "event loops", "lock 'stock'"
  double units = 0;       // 1.5 (CPUs), 8 (threads), 1 (a lock)
  std::string unit_name;  // "CPUs", "threads", "carriers", "loops", "holder"
  double hold = 0;        // seconds one mean request holds one unit
  double max_rate = 0;    // units / hold, requests per second
  // "threads (8 threads / 34.0 ms = 235/s)"
  std::string describe() const;
};

// "58.6/s", "235/s", "1500/s": three significant digits, never an exponent.
std::string rate_text(double per_second);

// The scenario's open arrival rate per second (poisson, periodic), if any.
std::optional<double> offered_rate(const Scenario& s);
// Every resource's bound for this scenario and its generated workload, in the
// order above; resources a request does not hold are left out.
std::vector<Capacity> capacities(const Scenario& s, const Workload& w);
// The lowest bound of capacities(), if any resource is held at all.
std::optional<Capacity> bottleneck(const Scenario& s, const Workload& w);
// What the mean request holds, summed task by task (in task order, so that
// a list and a stream of the same tasks give the same doubles).
struct HoldSums {
  HoldSums(std::size_t locks, std::size_t permits)
      : lock_hold(locks, 0.0), permit_hold(permits, 0.0) {}
  void add(std::span<const Phase> phases);
  std::size_t tasks = 0;
  double cpu = 0, length = 0;
  std::vector<double> lock_hold, permit_hold;
};

// bottleneck() of the tasks of a streamed workload (GenerateOptions::stream,
// with its lock_names), added one by one as a TaskStream draws them: the
// list generate_workload would make of them is never built, the bound is
// the one it gives (the same sums in the same order), and the horizon rule
// it checks that list with is checked by bottleneck() (it throws the same).
class StreamBound {
 public:
  StreamBound(const Scenario& s, std::vector<std::string> lock_names);
  void add(const Task& t, std::span<const Phase> phases);
  std::size_t tasks() const { return sums_.tasks; }
  std::optional<Capacity> bottleneck() const;

 private:
  const Scenario& s_;
  std::vector<std::string> lock_names_;
  HoldSums sums_;
  OpenSerialLength serial_;
};
// The same for the tasks `stream` draws from where it stands to its end.
std::optional<Capacity> bottleneck(const Scenario& s, TaskStream& stream,
                                   const std::vector<std::string>& lock_names);

// Growth of the requests in the system over the second half of the arrival
// window (arrivals minus completions there), and that half's arrivals.
struct BacklogTrend {
  std::int64_t arrivals = 0;  // submitted in (T/2, T], T = last submission
  std::int64_t growth = 0;    // arrivals - completions in (T/2, T]
};
BacklogTrend backlog_trend(const RunResult& r);

// The warnings of one run (empty when the backend keeps up).
std::vector<Warning> overload_warnings(const Scenario& s, const Workload& w, const RunResult& r,
                                       const Metrics& m);
// The same with the bottleneck given (bottleneck() of the workload; read only
// when the scenario has an offered rate).
std::vector<Warning> overload_warnings(const Scenario& s, const std::optional<Capacity>& neck,
                                       const RunResult& r, const Metrics& m);

}  // namespace poolsim
