// sizing.cpp: the `poolsim size` chain (see sizing.hpp): analytic numbers,
// the simulated sweep around them, container advice, and task-graph bounds.
#include "validate/sizing.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "models/backend_registry.hpp"
#include "models/queueing/little.hpp"
#include "models/queueing/mmck.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"
#include "validate/output.hpp"
#include "validate/sweep.hpp"
#include "validate/table.hpp"

namespace poolsim::validate {

namespace {

using queueing::ServiceShape;

// The loader's default run.max_threads (docs/scenarios.md, "Run"): a pool
// above it is refused, so the sweep never proposes one.
constexpr int kMaxPoolThreads = 20000;
// "Within 2% of the best p99": when no simulated size meets the target, the
// smallest size that is this close to the best is the one worth having.
constexpr double kBestP99Slack = 0.02;
// A request count below this gives a p99 from fewer than 10 tail samples.
constexpr std::int64_t kMinRequests = 1000;

std::string shape_name(ServiceShape s) {
  return s == ServiceShape::deterministic ? "deterministic" : "exponential";
}

std::string rate_text(double r) { return fmt::format("{:.6g}/s", r); }

// What the service time alone gives at p99: no pool can do better.
double service_alone_p99(double service_time, ServiceShape shape) {
  return shape == ServiceShape::deterministic ? service_time : service_time * std::log(100.0);
}

double model_p99(int c, double rate, double mu, ServiceShape shape) {
  if (!queueing::mmc_stable(c, rate, mu)) return std::numeric_limits<double>::infinity();
  return shape == ServiceShape::deterministic ? queueing::mdc_response_quantile(c, rate, mu, 0.99)
                                              : queueing::mmc_response_quantile(c, rate, mu, 0.99);
}

double model_mean(int c, double rate, double mu, ServiceShape shape) {
  if (!queueing::mmc_stable(c, rate, mu)) return std::numeric_limits<double>::infinity();
  return (shape == ServiceShape::deterministic ? queueing::mdc_mean_wait(c, rate, mu)
                                               : queueing::mmc(c, rate, mu).mean_wait) +
         1.0 / mu;
}

// ---- the backend and the wait distribution (sizing.hpp, steps 9 and 10) ----

bool holds(const SizingInputs& in) { return wait_holds_worker(in.backend); }
// The mean time a request holds its worker: the queueing model's service time.
double held_time(const SizingInputs& in) { return in.cpu + (holds(in) ? in.wait : 0.0); }
double wait_p99_of(const SizingInputs& in) { return in.wait_dist.empty() ? in.wait : in.wait_p99; }
// The service time is a distribution the closed forms do not cover: M/G/c.
bool general_service(const SizingInputs& in) { return !in.wait_dist.empty() && holds(in); }

// What a request takes at p99 with no queueing at all: no size does better.
double alone_p99(const SizingInputs& in) {
  if (in.wait_dist.empty() && holds(in)) return service_alone_p99(in.cpu + in.wait, in.service);
  return service_alone_p99(in.cpu, in.service) + wait_p99_of(in);
}

// The queueing model's p99 and mean response time with c workers.
double p99_at(const SizingInputs& in, int c) {
  const double mu = 1.0 / held_time(in);
  if (general_service(in)) {
    if (!queueing::mmc_stable(c, in.rate, mu)) return std::numeric_limits<double>::infinity();
    return queueing::mmc_wait_quantile(c, in.rate, mu, 0.99) + alone_p99(in);
  }
  return model_p99(c, in.rate, mu, in.service) + (holds(in) ? 0.0 : wait_p99_of(in));
}
double mean_at(const SizingInputs& in, int c) {
  const double mu = 1.0 / held_time(in);
  if (general_service(in)) {
    if (!queueing::mmc_stable(c, in.rate, mu)) return std::numeric_limits<double>::infinity();
    return queueing::mmc(c, in.rate, mu).mean_wait + held_time(in);
  }
  return model_mean(c, in.rate, mu, in.service) + (holds(in) ? 0.0 : in.wait);
}

std::string model_name(const SizingInputs& in) {
  if (general_service(in))
    return "M/G/c (the M/M/c queue wait at the mean service time, plus the service time's own "
           "p99)";
  return in.service == ServiceShape::deterministic ? "M/D/c (Allen-Cunneen approximation)"
                                                   : "M/M/c (Erlang C)";
}

// The smallest worker count whose model p99 is within `target`.
std::optional<int> smallest_meeting(const SizingInputs& in, double target) {
  if (in.wait_dist.empty() && holds(in))
    return queueing::smallest_servers_for(
        in.rate, 1.0 / held_time(in),
        queueing::ResponseTarget::at_quantile(0.99, target, in.service));
  if (target <= alone_p99(in)) return std::nullopt;
  const int from = std::max(1, static_cast<int>(std::ceil(in.rate * held_time(in))));
  for (int c = from; c <= kMaxPoolThreads; ++c)
    if (p99_at(in, c) <= target) return c;
  return std::nullopt;
}

// "threads", "carriers", "loops": what the report counts.
std::string unit_of(const SizingInputs& in) {
  switch (in.backend) {
    case BackendKind::virtual_threads:
      return "carriers";
    case BackendKind::event_loop:
      return "loops";
    default:
      return "threads";
  }
}

// The header's note on what is sized, for a backend other than the pool.
std::string sized_note(const SizingInputs& in) {
  const std::string key = sizing_worker_key(in.backend);
  switch (in.backend) {
    case BackendKind::pool:
      return "";
    case BackendKind::injecting_pool:
      return fmt::format(
          ", backend injecting-pool: sizing {} (the threads it starts with; below the need it "
          "adds one per injection_delay without progress)",
          key);
    case BackendKind::tbb:
      return fmt::format(", backend tbb: sizing {} (simulated as work-stealing)", key);
    case BackendKind::asio_pool:
      return fmt::format(", backend asio-pool: sizing {} (simulated as a pool)", key);
    default:
      return fmt::format(", backend {}: sizing {}", to_string(in.backend), key);
  }
}

nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

bool meets_target(const Metrics& m, double target) {
  const double total = m[Metric::completed] + m[Metric::rejected];
  const bool few_rejected = total > 0 && m[Metric::rejected] <= kMaxRejectedFraction * total;
  return m[Metric::completed] > 0 && m[Metric::latency_p99] <= target && few_rejected;
}

// Simulates the sizing scenario at each of `threads` (skipping sizes already
// in `done`), appending to `done`, kept sorted by threads.
void simulate_sizes(const SizingInputs& in, const std::vector<int>& threads, double target,
                    std::vector<SimulatedSize>& done, const SizingProgress& progress) {
  std::vector<int> todo;
  for (int t : threads) {
    if (t < 1 || t > kMaxPoolThreads) continue;
    const bool seen = std::any_of(done.begin(), done.end(),
                                  [&](const SimulatedSize& s) { return s.threads == t; });
    if (!seen && std::find(todo.begin(), todo.end(), t) == todo.end()) todo.push_back(t);
  }
  if (todo.empty()) return;
  SweepOptions so;
  // The largest size first: an injecting pool's max_threads is raised to it.
  so.text = sizing_scenario_yaml(in, *std::max_element(todo.begin(), todo.end()));
  so.load = in.load;
  VaryAxis axis{sizing_worker_key(in.backend), {}};
  for (int t : todo) axis.values.push_back(std::to_string(t));
  so.axes = {axis};
  so.jobs = in.jobs;
  so.on_phase = progress.on_phase;
  so.on_point = progress.on_point;
  const SweepResult r = run_sweep(so);
  // The sweep's points are in the order of the axis' values: todo's order.
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    SimulatedSize s;
    s.threads = todo[i];
    s.metrics = r.points[i].predicted;
    s.meets = meets_target(s.metrics, target);
    done.push_back(s);
  }
  std::sort(done.begin(), done.end(),
            [](const SimulatedSize& a, const SimulatedSize& b) { return a.threads < b.threads; });
}

// The smallest size from which every larger simulated size meets the target.
std::optional<int> smallest_stable_meeting(const std::vector<SimulatedSize>& sims) {
  std::optional<int> best;
  for (auto it = sims.rbegin(); it != sims.rend(); ++it) {
    if (!it->meets) break;
    best = it->threads;
  }
  return best;
}

void check_inputs(const SizingInputs& in) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (!positive(in.rate)) throw SizingRefused("--rate must be greater than 0/s");
  if (!positive(in.cpu))
    throw SizingRefused(
        "--cpu must be greater than 0 (a request with no CPU time needs no CPU-bound sizing: "
        "its pool size is Little's law, rate x wait)");
  if (!(in.wait >= 0) || !std::isfinite(in.wait)) throw SizingRefused("--wait must be 0 or more");
  if (in.cores < 1) throw SizingRefused("--cores (or --host-cores) must be at least 1");
  if (in.cpus && !positive(*in.cpus)) throw SizingRefused("--cpus must be greater than 0");
  if (in.host_cores && !in.cpus)
    throw SizingRefused(
        "--host-cores needs --cpus: the container advice compares the host's CPU count with the "
        "quota");
  if (in.target_p99 && !positive(*in.target_p99))
    throw SizingRefused("--target-p99 must be greater than 0");
  if (in.queue && *in.queue < 0) throw SizingRefused("--queue must be 0 or more");
  if (!(in.target_utilization > 0 && in.target_utilization <= 1))
    throw SizingRefused("--target-utilization must be in (0, 1]");
  if (in.requests < kMinRequests)
    throw SizingRefused(
        fmt::format("--requests must be at least {} (a p99 needs tail samples)", kMinRequests));
  if (in.backend == BackendKind::thread_per_task)
    throw SizingRefused(fmt::format(
        "--backend thread-per-task: nothing to size, it starts one thread per request (Little's "
        "law: {:.4g}/s x {} = {:.4g} threads alive on average); size a pool, work-stealing, "
        "injecting-pool, virtual-threads or event-loop instead",
        in.rate, format_seconds(in.cpu + in.wait), in.rate * (in.cpu + in.wait)));
  if (in.queue && in.backend != BackendKind::pool)
    throw SizingRefused(fmt::format("--queue: {} has no bounded queue (only --backend pool has)",
                                    to_string(in.backend)));
}

}  // namespace

bool wait_holds_worker(BackendKind kind) {
  return kind != BackendKind::virtual_threads && kind != BackendKind::event_loop;
}

std::string sizing_worker_key(BackendKind kind) {
  const std::string_view w = backend_info(kind).workers;
  if (w.empty())
    throw SizingRefused(
        fmt::format("--backend {}: it has no worker count to size", to_string(kind)));
  return "backend." + std::string(w);
}

std::string sizing_scenario_yaml(const SizingInputs& in, int threads) {
  // Durations in whole nanoseconds (at least 1), rates and quotas with every
  // significant digit, so the loader reads back exactly these inputs.
  const auto ns = [](double s) {
    return fmt::format("{}ns", std::max<long long>(1, std::llround(s * 1e9)));
  };
  const auto phase = [&](const char* kind, double seconds) {
    YAML::Node p;
    if (in.service == ServiceShape::exponential) {
      p[kind]["dist"] = "exponential";
      p[kind]["mean"] = ns(seconds);
    } else {
      p[kind] = ns(seconds);
    }
    return p;
  };
  YAML::Node y;
  y["name"] = "size-pool";
  y["description"] = fmt::format("poolsim size, {} requests at {}, {} CPU + {} wait ({})",
                                 in.requests, rate_text(in.rate), format_seconds(in.cpu),
                                 in.wait_dist.empty() ? format_seconds(in.wait) : in.wait_dist,
                                 shape_name(in.service));
  y["seed"] = in.seed;
  y["machine"]["base"] = in.machine;
  y["machine"]["cores"] = in.cores;
  if (in.cpus) y["limits"]["cpus"] = fmt::format("{:.17g}", *in.cpus);
  y["workload"]["arrival"]["kind"] = "poisson";
  y["workload"]["arrival"]["rate"] = fmt::format("{:.17g}/s", in.rate);
  y["workload"]["arrival"]["count"] = in.requests;
  y["workload"]["task"].push_back(phase("cpu", in.cpu));
  if (!in.wait_dist.empty()) {
    YAML::Node p;
    p["wait"] = YAML::Load(in.wait_dist);
    y["workload"]["task"].push_back(p);
  } else if (in.wait > 0) {
    y["workload"]["task"].push_back(phase("wait", in.wait));
  }
  y["backend"]["kind"] = std::string(to_string(in.backend));
  y["backend"][std::string(backend_info(in.backend).workers)] = threads;
  // An injecting pool starting above its default max_threads gets that many.
  if (in.backend == BackendKind::injecting_pool) {
    for (const auto& p : backend_info(in.backend).params)
      if (p.key == "max_threads" && threads > std::stoi(std::string(p.default_text)))
        y["backend"]["max_threads"] = threads;
  }
  if (in.queue) y["backend"]["queue"] = *in.queue;
  y["run"]["max_threads"] = kMaxPoolThreads + 1;
  YAML::Emitter out;
  out << y;
  return std::string(out.c_str()) + "\n";
}

namespace {

// The message of a load the CPUs cannot carry: what it needs, what there is,
// by how much it exceeds it, and what would help.
std::string overload_message(const SizingInputs& in, const SizingReport& r) {
  const double excess = r.cpus_needed - r.capacity;
  return (
      fmt::format("the CPUs cannot carry this load: {} x {} of CPU per request needs {:.4g} "
                  "CPUs, the capacity is {:.4g} "
                  "CPUs ({}): CPU utilisation would be {:.1f}%, {:.4g} CPUs ({:.1f}%) more than "
                  "there is. No pool size "
                  "helps; lower the rate below {} or give it more than {:.4g} CPUs",
                  rate_text(in.rate), format_seconds(in.cpu), r.cpus_needed, r.capacity,
                  in.cpus && *in.cpus < in.cores ? fmt::format("quota --cpus {:.4g}", *in.cpus)
                                                 : fmt::format("{} cores", in.cores),
                  r.cpu_utilization * 100, excess, excess / r.capacity * 100,
                  rate_text(r.capacity / in.cpu), r.cpus_needed));
}

// Steps 1-4 of sizing.hpp: CPU utilisation (an overload is refused), Little's
// law, Goetz's formula, the latency target and the queueing model's size.
void analytic_sizing(const SizingInputs& in, SizingReport& r) {
  r.in = in;
  r.capacity = queueing::cpu_capacity(in.cores, in.cpus);
  r.cpus_needed = queueing::cpus_needed(in.rate, in.cpu);
  r.cpu_utilization = queueing::cpu_utilization(in.rate, in.cpu, r.capacity);
  if (r.cpu_utilization >= 1.0) throw SizingRefused(overload_message(in, r));
  r.service_time = held_time(in);
  r.littles_law_concurrency = queueing::littles_law_concurrency(in.rate, in.cpu + in.wait);
  r.formula_exact = queueing::goetz_pool_size(r.capacity, in.target_utilization,
                                              holds(in) ? in.wait : 0.0, in.cpu);
  r.formula_threads = std::max(1, static_cast<int>(std::ceil(r.formula_exact - 1e-9)));

  // The latency target and the analytic size.
  const double alone = alone_p99(in);
  const double default_target = kDefaultTargetFactor * alone;
  if (in.target_p99) {
    r.target_p99 = *in.target_p99;
    r.target_origin = "--target-p99";
  } else {
    r.target_p99 = default_target;
    r.target_origin =
        fmt::format("default: {:.2f} x the p99 of the service time alone ({}, {})",
                    kDefaultTargetFactor, format_seconds(alone),
                    in.wait_dist.empty() ? shape_name(in.service) : "C + the wait's p99");
  }
  r.erlang_c_threads = smallest_meeting(in, r.target_p99);
  const std::string model = model_name(in);
  if (!r.erlang_c_threads) {
    r.erlang_c_note = fmt::format(
        "no pool meets p99 <= {} under {}: the service time alone takes {} at p99 ({} service){}; "
        "using the default target {} ({:.2f} x that) instead",
        format_seconds(r.target_p99), model, format_seconds(alone), shape_name(in.service),
        in.service == ServiceShape::exponential
            ? ", since an exponential service time has p99 = mean x ln 100 = 4.6 x mean"
            : "",
        format_seconds(default_target), kDefaultTargetFactor);
    r.target_p99 = default_target;
    r.target_origin = "default (the --target-p99 given is unreachable)";
    r.erlang_c_threads = smallest_meeting(in, r.target_p99);
  } else if (!holds(in)) {
    r.erlang_c_note = fmt::format(
        "{} on the {}: a request holds one for its CPU time C = {} only ({} the wait), then "
        "waits {} (p99 {}) off it",
        model, unit_of(in), format_seconds(in.cpu),
        in.backend == BackendKind::virtual_threads ? "virtual threads unmount on"
                                                   : "the loop parks the request on a timer for",
        format_seconds(in.wait), format_seconds(wait_p99_of(in)));
  } else {
    r.erlang_c_note = fmt::format(
        "{}, service time S = C + W = {} held per request{}", model, format_seconds(r.service_time),
        in.wait_dist.empty() ? "" : fmt::format(" on average (p99 {})", format_seconds(alone)));
  }
  // smallest_servers_for only fails beyond kMaxServersSearched for a reachable target.
  r.analytic_threads =
      r.erlang_c_threads.value_or(static_cast<int>(std::ceil(in.rate * r.service_time)) + 1);
  r.recommended = r.analytic_threads;
  r.recommendation_basis = "analytic (" + model + "); not simulated (--no-simulate)";
}

// Step 6's search: the analytic size +-4 steps and Goetz's size, extended down
// while everything meets the target and up while nothing does, then refined
// between the first passing size and the one a step below.
void search_simulated_sizes(const SizingInputs& in, SizingReport& r,
                            const SizingProgress& progress) {
  const int step = std::max(1, static_cast<int>(std::lround(r.analytic_threads / 16.0)));
  std::vector<int> first;
  for (int k = -4; k <= 4; ++k) first.push_back(r.analytic_threads + k * step);
  first.push_back(r.formula_threads);
  simulate_sizes(in, first, r.target_p99, r.simulated, progress);
  // Down while everything simulated meets the target.
  for (int round = 1; round <= kMaxSearchRounds; ++round) {
    if (r.simulated.empty() || !r.simulated.front().meets || r.simulated.front().threads <= 1)
      break;
    const int lo = r.simulated.front().threads, s = step << round;
    simulate_sizes(in, {lo - s, lo - 2 * s, lo - 3 * s, lo - 4 * s, 1}, r.target_p99, r.simulated,
                   progress);
  }
  // Up while nothing meets it and more threads still help.
  for (int round = 1; round <= kMaxSearchRounds; ++round) {
    if (r.simulated.empty() || r.simulated.back().meets) break;
    const double before = r.simulated.back().metrics[Metric::latency_p99];
    const int hi = r.simulated.back().threads, s = step << round;
    simulate_sizes(in, {hi + s, hi + 2 * s, hi + 3 * s, hi + 4 * s}, r.target_p99, r.simulated,
                   progress);
    if (r.simulated.back().metrics[Metric::latency_p99] > before * (1 - kBestP99Slack)) break;
  }
  // Refine: the sizes between the recommendation and the failing size one step below.
  if (const auto best = smallest_stable_meeting(r.simulated); best && step > 1) {
    std::vector<int> between;
    for (int t = *best - step + 1; t < *best; ++t) between.push_back(t);
    simulate_sizes(in, between, r.target_p99, r.simulated, progress);
  }
}

// The recommendation from the simulated sizes, and the sentence that says on
// what it rests.
void recommend_from_simulation(SizingReport& r) {
  if (const auto best = smallest_stable_meeting(r.simulated)) {
    r.simulated_meets = true;
    r.recommended = *best;
    r.recommendation_basis = fmt::format(
        "simulated: the smallest size from which every larger simulated size has p99 <= {}{}",
        format_seconds(r.target_p99),
        r.recommended == r.analytic_threads ? "; it confirms the analytic size"
        : r.recommended > r.analytic_threads
            ? fmt::format("; {} more than the analytic size: CPU contention the queueing model "
                          "does not see",
                          r.recommended - r.analytic_threads)
            : fmt::format("; {} fewer than the analytic size, which errs on the safe side",
                          r.analytic_threads - r.recommended));
  } else if (!r.simulated.empty()) {
    double best_p99 = std::numeric_limits<double>::infinity();
    for (const auto& s : r.simulated) best_p99 = std::min(best_p99, s.metrics[Metric::latency_p99]);
    for (const auto& s : r.simulated)
      if (s.metrics[Metric::latency_p99] <= best_p99 * (1 + kBestP99Slack)) {
        r.recommended = s.threads;
        break;
      }
    r.recommendation_basis = fmt::format(
        "simulated: NO size meets p99 <= {}; the best simulated p99 is {}, and {} threads come "
        "within {:.0f}% "
        "of it. More threads do not help: the CPUs (or the service time itself) bound the "
        "latency",
        format_seconds(r.target_p99), format_seconds(best_p99), r.recommended, kBestP99Slack * 100);
  }
}

// The analytic model at the recommended size, and M/M/c/K with --queue.
void predict_at_recommended(const SizingInputs& in, SizingReport& r) {
  const double mu = 1.0 / r.service_time;
  const int c = r.recommended;
  r.predicted_p99 = p99_at(in, c);
  r.predicted_mean = mean_at(in, c);
  r.predicted_prob_wait = queueing::erlang_c(c, in.rate * r.service_time);
  r.thread_utilization = in.rate * r.service_time / c;
  if (in.queue) {
    const auto m = queueing::mmck(c, c + static_cast<int>(*in.queue), in.rate, mu);
    SizingReport::Bounded b;
    b.threads = c;
    b.queue = *in.queue;
    b.blocking = m.blocking_probability;
    b.throughput = m.throughput;
    b.mean_response = m.mean_response;
    b.response_p99 = queueing::mmck_response_quantile(m, 0.99);
    r.bounded = b;
  }
}

// Step 7: the pool sized by the host's CPU count against the pool sized by
// the quota, both simulated.
ContainerAdvice container_advice(const SizingInputs& in, const SizingReport& r,
                                 const SizingProgress& progress) {
  ContainerAdvice a;
  a.host_cores = *in.host_cores;
  a.quota = *in.cpus;
  a.by_host = std::max(
      1, static_cast<int>(std::ceil(queueing::goetz_pool_size(a.host_cores, in.target_utilization,
                                                              holds(in) ? in.wait : 0.0, in.cpu) -
                                    1e-9)));
  a.by_quota = std::max(
      1, static_cast<int>(std::ceil(queueing::goetz_pool_size(a.quota, in.target_utilization,
                                                              holds(in) ? in.wait : 0.0, in.cpu) -
                                    1e-9)));
  if (in.simulate) {
    std::vector<SimulatedSize> both;
    simulate_sizes(in, {a.by_quota, a.by_host}, r.target_p99, both, progress);
    for (const auto& s : both) {
      if (s.threads == a.by_host) a.host_sized = s;
      if (s.threads == a.by_quota) a.quota_sized = s;
    }
  }
  return a;
}

}  // namespace

SizingReport size_pool(const SizingInputs& in, const SizingProgress& progress) {
  check_inputs(in);
  SizingReport r;
  analytic_sizing(in, r);
  if (in.simulate) {
    search_simulated_sizes(in, r, progress);
    recommend_from_simulation(r);
  }
  predict_at_recommended(in, r);
  if (in.host_cores && in.cpus) r.container = container_advice(in, r, progress);
  return r;
}

// Long because it writes the report's fields in their documented order (docs/sizing.md).
nlohmann::ordered_json sizing_json(const SizingReport& r) {
  nlohmann::ordered_json j;
  auto& in = j["inputs"];
  in["rate"] = r.in.rate;
  in["cpu"] = r.in.cpu;
  in["wait"] = r.in.wait;
  in["cores"] = r.in.cores;
  if (r.in.cpus) in["cpus"] = *r.in.cpus;
  if (r.in.host_cores) in["host_cores"] = *r.in.host_cores;
  if (r.in.target_p99) in["target_p99"] = *r.in.target_p99;
  if (r.in.queue) in["queue"] = *r.in.queue;
  in["service"] = shape_name(r.in.service);
  in["target_utilization"] = r.in.target_utilization;
  in["backend"] = std::string(to_string(r.in.backend));
  if (!r.in.wait_dist.empty()) {
    in["wait_dist"] = r.in.wait_dist;
    in["wait_p99"] = r.in.wait_p99;
  }
  j["sized"] = sizing_worker_key(r.in.backend);
  j["cpu_utilization"] = r.cpu_utilization;
  j["littles_law_concurrency"] = r.littles_law_concurrency;
  j["formula_threads"] = r.formula_threads;
  j["erlang_c_threads"] =
      r.erlang_c_threads ? nlohmann::ordered_json(*r.erlang_c_threads) : nullptr;
  j["recommended_threads"] = r.recommended;
  auto& p = j["predicted"];
  p["threads"] = r.recommended;
  p["latency_p99"] = finite_or_null(r.predicted_p99);
  p["latency_mean"] = finite_or_null(r.predicted_mean);
  p["cpu_utilization"] = r.cpu_utilization;
  p["prob_wait"] = r.predicted_prob_wait;
  p["thread_utilization"] = r.thread_utilization;
  p["model"] = general_service(r.in)                         ? "M/G/c"
               : r.in.service == ServiceShape::deterministic ? "M/D/c"
                                                             : "M/M/c";
  auto& s = j["simulated"];
  s["threads"] = nlohmann::ordered_json::array();
  s["latency_p99"] = nlohmann::ordered_json::array();
  s["latency_mean"] = nlohmann::ordered_json::array();
  s["cpu_utilization"] = nlohmann::ordered_json::array();
  s["rejected"] = nlohmann::ordered_json::array();
  s["meets_target"] = nlohmann::ordered_json::array();
  for (const auto& x : r.simulated) {
    s["threads"].push_back(x.threads);
    s["latency_p99"].push_back(x.metrics[Metric::latency_p99]);
    s["latency_mean"].push_back(x.metrics[Metric::latency_mean]);
    s["cpu_utilization"].push_back(x.metrics[Metric::cpu_utilization]);
    s["rejected"].push_back(x.metrics[Metric::rejected]);
    s["meets_target"].push_back(x.meets);
  }
  j["target_p99"] = r.target_p99;
  j["target_origin"] = r.target_origin;
  j["capacity_cpus"] = r.capacity;
  j["cpus_needed"] = r.cpus_needed;
  j["service_time"] = r.service_time;
  j["formula_exact"] = r.formula_exact;
  j["analytic_threads"] = r.analytic_threads;
  j["simulated_meets_target"] = r.simulated_meets;
  j["recommendation_basis"] = r.recommendation_basis;
  if (r.bounded) {
    auto& b = j["bounded_queue"];
    b["threads"] = r.bounded->threads;
    b["queue"] = r.bounded->queue;
    b["model"] = "M/M/c/K";
    b["rejection_probability"] = r.bounded->blocking;
    b["throughput"] = r.bounded->throughput;
    b["latency_mean"] = r.bounded->mean_response;
    b["latency_p99"] = r.bounded->response_p99;
  }
  if (r.container) {
    auto& c = j["container"];
    c["host_cores"] = r.container->host_cores;
    c["quota_cpus"] = r.container->quota;
    auto one = [&](const char* key, int threads, const SimulatedSize& sz) {
      auto& e = c[key];
      e["threads"] = threads;
      if (sz.threads == threads) {
        for (auto m : {Metric::latency_p99, Metric::latency_max, Metric::latency_mean,
                       Metric::makespan, Metric::throttled_periods, Metric::throttled_time,
                       Metric::switches_involuntary, Metric::cpu_utilization})
          e[std::string(to_string(m))] = sz.metrics[m];
      }
    };
    one("sized_by_host", r.container->by_host, r.container->host_sized);
    one("sized_by_quota", r.container->by_quota, r.container->quota_sized);
    c["recommendation"] = "size by the quota";
  }
  return j;
}

namespace {

// The simulated sweep's table, every size with the model's p99 beside it.
void simulated_sizes_text(std::ostringstream& o, const SizingReport& r) {
  const auto& in = r.in;
  o << fmt::format(
      "\nSimulated sweep ({} Poisson requests per size, {} backend, machine '{}' with {} "
      "cores{}). The simulator "
      "models the CPUs: the {} compete for them, so CPU queueing, slices and "
      "switches are in these "
      "p99s and not in the queueing model's.\n",
      in.requests, to_string(in.backend), in.machine, in.cores,
      in.cpus ? fmt::format(", quota {:.4g} CPUs", *in.cpus) : "",
      in.backend == BackendKind::pool ? std::string("pool's threads") : unit_of(in));
  Table t({unit_of(in), "p99 sim", "p99 model", "mean sim", "cpu util", "rejected", "meets p99"},
          {true, true, true, true, true, true, false});
  for (const auto& s : r.simulated) {
    const double mp = p99_at(in, s.threads);
    std::string note = s.meets ? "yes" : "no";
    if (s.threads == r.recommended)
      note += "  <- recommended";
    else if (s.threads == r.analytic_threads)
      note += "  (queueing model)";
    else if (s.threads == r.formula_threads)
      note += "  (Goetz)";
    t.add_row({std::to_string(s.threads), format_seconds(s.metrics[Metric::latency_p99]),
               std::isfinite(mp) ? format_seconds(mp) : std::string("unstable"),
               format_seconds(s.metrics[Metric::latency_mean]),
               fmt::format("{:.1f}%", s.metrics[Metric::cpu_utilization] * 100),
               fmt::format("{:.0f}", s.metrics[Metric::rejected]), note});
  }
  o << t.str();
}

// The container advice: the host-sized and the quota-sized pool side by side,
// and what the simulation says of the trap.
void container_text(std::ostringstream& o, const SizingReport& r) {
  const auto& a = *r.container;
  o << fmt::format(
      "\nContainer: a {:.4g}-CPU quota on a {}-core host. Sizing by the host's CPU count (nproc, "
      "or an old JVM's "
      "availableProcessors()) gives {} threads; by the quota, {}. Both simulated in the "
      "container:\n",
      a.quota, a.host_cores, a.by_host, a.by_quota);
  Table t({"pool sized by", "threads", "p99", "max", "mean", "makespan", "throttled periods",
           "throttled time", "invol. switches"},
          {false, true, true, true, true, true, true, true, true});
  auto row = [&](const std::string& name, int threads, const SimulatedSize& s) {
    if (s.threads != threads) {
      t.add_row({name, std::to_string(threads), "-", "-", "-", "-", "-", "-", "-"});
      return;
    }
    t.add_row({name, std::to_string(threads), format_seconds(s.metrics[Metric::latency_p99]),
               format_seconds(s.metrics[Metric::latency_max]),
               format_seconds(s.metrics[Metric::latency_mean]),
               format_seconds(s.metrics[Metric::makespan]),
               fmt::format("{:.0f}", s.metrics[Metric::throttled_periods]),
               format_seconds(s.metrics[Metric::throttled_time]),
               fmt::format("{:.0f}", s.metrics[Metric::switches_involuntary])});
  };
  row(fmt::format("host ({} cores)", a.host_cores), a.by_host, a.host_sized);
  row(fmt::format("quota ({:.4g} CPUs)", a.quota), a.by_quota, a.quota_sized);
  o << t.str();
  o << fmt::format("The recommendation above ({} threads) was simulated inside the quota. ",
                   r.recommended);
  if (a.host_sized.threads == a.by_host && a.quota_sized.threads == a.by_quota) {
    const auto& h = a.host_sized.metrics;
    const auto& q = a.quota_sized.metrics;
    if (h[Metric::latency_p99] > q[Metric::latency_p99])
      o << fmt::format(
          "The host-sized pool's p99 is {:.1f}x longer: its threads burn the period's runtime "
          "in a burst on many CPUs, then every thread of the group stalls until the next "
          "period (CFS bandwidth control).\n",
          h[Metric::latency_p99] / q[Metric::latency_p99]);
    else
      o << fmt::format(
          "This simulation does not show the trap in the p99: the host-sized pool's p99 is not "
          "longer ({} vs {}), because a burst runs on idle host CPUs until the period's quota "
          "is spent; it pays with stalls of the whole group ({:.0f} throttled periods, max "
          "latency {} vs {}). The quota caps the CPU time either way (makespan {} vs {}).\n",
          format_seconds(h[Metric::latency_p99]), format_seconds(q[Metric::latency_p99]),
          h[Metric::throttled_periods], format_seconds(h[Metric::latency_max]),
          format_seconds(q[Metric::latency_max]), format_seconds(h[Metric::makespan]),
          format_seconds(q[Metric::makespan]));
  } else {
    o << "\n";
  }
}

}  // namespace

// Long because it writes the report's lines in the order a reader follows them.
std::string sizing_text(const SizingReport& r) {
  std::ostringstream o;
  const auto& in = r.in;
  const std::string cap_text =
      in.cpus && *in.cpus < in.cores
          ? fmt::format("quota {:.4g} CPUs on {} cores", *in.cpus, in.cores)
          : fmt::format("{} cores", in.cores);
  o << fmt::format(
      "poolsim size: {} requests, {} CPU + {} wait each ({} service), {} (capacity {:.4g} "
      "CPUs){}\n\n",
      rate_text(in.rate), format_seconds(in.cpu),
      in.wait_dist.empty() ? format_seconds(in.wait)
                           : fmt::format("{} (mean {}, p99 {})", in.wait_dist,
                                         format_seconds(in.wait), format_seconds(in.wait_p99)),
      shape_name(in.service), cap_text, r.capacity, sized_note(in));
  o << fmt::format(
      "  CPU utilisation       {:>8.1f}%   lambda x C / capacity = {} x {} / {:.4g} CPUs "
      "({:.3g} CPUs busy on average)\n",
      r.cpu_utilization * 100, rate_text(in.rate), format_seconds(in.cpu), r.capacity,
      r.cpus_needed);
  if (holds(in))
    o << fmt::format(
        "  Little's law L        {:>9.1f}   lambda x (C + W) = {} x {}: requests in flight, so "
        "threads "
        "busy on average\n",
        r.littles_law_concurrency, rate_text(in.rate), format_seconds(in.cpu + in.wait));
  else
    o << fmt::format(
        "  Little's law L        {:>9.1f}   lambda x (C + W) = {} x {}: requests in flight ({}), "
        "of which lambda x C = {:.3g} hold a {} on average\n",
        r.littles_law_concurrency, rate_text(in.rate), format_seconds(in.cpu + in.wait),
        in.backend == BackendKind::virtual_threads ? "virtual threads" : "pending callbacks",
        in.rate * in.cpu, unit_of(in) == "carriers" ? "carrier" : "loop");
  if (holds(in))
    o << fmt::format(
        "  Goetz's formula       {:>9}   capacity x U x (1 + W/C) = {:.4g} x {:.2f} x (1 + {}/{}) "
        "= "
        "{:.1f} "
        "(Java Concurrency in Practice 8.2; sizes for saturation, ignores the rate)\n",
        r.formula_threads, r.capacity, in.target_utilization, format_seconds(in.wait),
        format_seconds(in.cpu), r.formula_exact);
  else
    o << fmt::format(
        "  Goetz's formula       {:>9}   capacity x U = {:.4g} x {:.2f} = {:.1f}: the wait holds "
        "no "
        "{} (Java Concurrency in Practice 8.2 with W = 0)\n",
        r.formula_threads, r.capacity, in.target_utilization, r.formula_exact,
        unit_of(in) == "carriers" ? "carrier" : "loop");
  o << fmt::format("  latency target p99    {:>9}   {}\n", format_seconds(r.target_p99),
                   r.target_origin);
  if (r.erlang_c_threads)
    o << fmt::format("  queueing model        {:>9}   smallest {} with p99 <= {}: {}\n",
                     *r.erlang_c_threads,
                     in.backend == BackendKind::pool ? std::string("pool") : unit_of(in),
                     format_seconds(r.target_p99), r.erlang_c_note);
  else
    o << fmt::format("  queueing model        {:>9}   {}\n", "-", r.erlang_c_note);
  if (r.bounded)
    o << fmt::format(
        "  bounded queue         {:>9}   M/M/c/K with {} threads + {} queue slots (exponential "
        "service): "
        "rejects {:.3g} of requests, throughput {}, mean {}, p99 {} (admitted)\n",
        fmt::format("{:.2g}", r.bounded->blocking), r.bounded->threads, r.bounded->queue,
        r.bounded->blocking, rate_text(r.bounded->throughput),
        format_seconds(r.bounded->mean_response), format_seconds(r.bounded->response_p99));

  if (!r.simulated.empty()) simulated_sizes_text(o, r);
  if (in.target_p99 && *in.target_p99 != r.target_p99)
    o << fmt::format(
        "\nNOT within --target-p99 {}: no size reaches it (see the queueing model line); the "
        "recommendation below is for the default target {}\n",
        format_seconds(*in.target_p99), format_seconds(r.target_p99));
  o << fmt::format("\nrecommended: {} {} ({})\n", r.recommended, unit_of(in),
                   r.recommendation_basis);
  o << fmt::format(
      "  at {} {} the model predicts p99 {}, mean {}, P(wait) {:.3f}, {} busy {:.1f}%\n",
      r.recommended, unit_of(in),
      std::isfinite(r.predicted_p99) ? format_seconds(r.predicted_p99) : "unstable",
      std::isfinite(r.predicted_mean) ? format_seconds(r.predicted_mean) : "unstable",
      r.predicted_prob_wait, unit_of(in), r.thread_utilization * 100);

  if (r.container)
    container_text(o, r);
  else if (in.cpus && *in.cpus < in.cores)
    o << fmt::format(
        "\n(sized inside the {:.4g}-CPU quota; for the container advice, what a pool sized by "
        "the host's {} CPUs or by the quota does in it, add --host-cores {} or --host-cores {} "
        "--container)\n",
        *in.cpus, in.cores, in.cores, in.cores);
  return o.str();
}

// ---- task graphs ------------------------------------------------------------

GraphBounds graph_bounds(double capacity, double work, double total_length, double critical_path) {
  GraphBounds b;
  b.work = work;
  b.total_length = total_length;
  b.critical_path = critical_path;
  b.makespan_bound = std::max(capacity > 0 ? work / capacity : 0.0, critical_path);
  b.useful_threads =
      critical_path > 0
          ? std::max(1, static_cast<int>(std::ceil(total_length / critical_path - 1e-9)))
          : 1;
  return b;
}

namespace {
// Graph sweeps stop here: a wider graph is simulated at this many threads at most.
constexpr int kMaxGraphThreads = 1024;
}  // namespace

GraphSizing size_graph(const std::string& file, const LoadOptions& load, bool simulate, int jobs,
                       const SizingProgress& progress) {
  const Scenario s = load_scenario(file, load);
  if (!s.workload.is_graph())
    throw SizingRefused("--graph " + file +
                        ": the scenario has no workload.graph (for a request stream, give "
                        "--rate, --cpu and --wait instead)");
  const Workload w = generate_workload(s);
  GraphSizing g;
  g.scenario = s.name;
  g.tasks = w.tasks.size();
  double total_length = 0;
  for (const auto& t : w.tasks) total_length += to_seconds(w.length_of(t));
  g.capacity = s.capacity();
  const auto b =
      graph_bounds(g.capacity, to_seconds(w.total_work), total_length, to_seconds(w.critical_path));
  g.work = b.work;
  g.total_length = b.total_length;
  g.critical_path = b.critical_path;
  g.makespan_bound = b.makespan_bound;
  g.useful_threads = b.useful_threads;
  const std::string_view workers = backend_info(s.backend.kind).workers;
  g.thread_key = workers.empty() ? "" : "backend." + std::string(workers);
  if (!simulate || g.thread_key.empty()) return g;

  const int top = std::min(g.useful_threads, kMaxGraphThreads);
  std::set<int> sizes{top, std::min(s.cores(), top)};
  for (int t = 1; t < top; t *= 2) sizes.insert(t);
  SweepOptions so;
  so.file = file;
  so.load = load;
  VaryAxis axis{g.thread_key, {}};
  for (int t : sizes) axis.values.push_back(std::to_string(t));
  so.axes = {axis};
  so.jobs = jobs;
  so.on_phase = progress.on_phase;
  so.on_point = progress.on_point;
  const SweepResult r = run_sweep(so);
  double best = std::numeric_limits<double>::infinity();
  auto size = sizes.begin();  // the sweep's points are in the order of the axis' values
  for (const auto& p : r.points) {
    SimulatedSize sz;
    sz.threads = *size++;
    sz.metrics = p.predicted;
    best = std::min(best, p.predicted[Metric::makespan]);
    g.simulated.push_back(sz);
  }
  for (auto& sz : g.simulated) {
    sz.meets = sz.metrics[Metric::makespan] <= best * (1 + kGraphMakespanSlack);
    if (sz.meets && !g.recommended) g.recommended = sz.threads;
  }
  return g;
}

nlohmann::ordered_json graph_sizing_json(const GraphSizing& g) {
  nlohmann::ordered_json j;
  j["scenario"] = g.scenario;
  auto& gr = j["graph"];
  gr["tasks"] = g.tasks;
  gr["work"] = g.work;
  gr["total_length"] = g.total_length;
  gr["critical_path"] = g.critical_path;
  gr["capacity_cpus"] = g.capacity;
  gr["makespan_lower_bound"] = g.makespan_bound;
  gr["useful_threads_max"] = g.useful_threads;
  j["recommended_threads"] = g.recommended ? nlohmann::ordered_json(*g.recommended) : nullptr;
  if (!g.simulated.empty()) {
    auto& s = j["simulated"];
    s["key"] = g.thread_key;
    for (const auto& x : g.simulated) {
      s["threads"].push_back(x.threads);
      s["makespan"].push_back(x.metrics[Metric::makespan]);
      s["latency_p99"].push_back(x.metrics[Metric::latency_p99]);
      s["cpu_utilization"].push_back(x.metrics[Metric::cpu_utilization]);
    }
  }
  return j;
}

std::string graph_sizing_text(const GraphSizing& g) {
  std::ostringstream o;
  o << fmt::format("poolsim size --graph: scenario {}, {} tasks, capacity {:.4g} CPUs\n\n",
                   g.scenario, g.tasks, g.capacity);
  o << fmt::format("  work (CPU)            {:>10}   sum of every task's CPU phases\n",
                   format_seconds(g.work));
  o << fmt::format(
      "  total task time       {:>10}   sum of every task's phases (CPU + waits): thread time "
      "held\n",
      format_seconds(g.total_length));
  o << fmt::format(
      "  critical path         {:>10}   the longest dependency chain (every phase counts)\n",
      format_seconds(g.critical_path));
  o << fmt::format(
      "  makespan >=           {:>10}   max(work / capacity, critical path) = max({} / {:.4g}, "
      "{})\n",
      format_seconds(g.makespan_bound), format_seconds(g.work), g.capacity,
      format_seconds(g.critical_path));
  o << fmt::format(
      "  useful threads <=     {:>10}   ceil(total task time / critical path): the graph's average "
      "parallelism (work/span)\n",
      g.useful_threads);
  if (g.thread_key.empty()) {
    o << "\nThe scenario's backend has no thread count to sweep (thread-per-task): not "
         "simulated.\n";
    return o.str();
  }
  if (!g.simulated.empty()) {
    o << fmt::format("\nSimulated sweep of {}:\n", g.thread_key);
    Table t({"threads", "makespan", "vs bound", "cpu util", "note"},
            {true, true, true, true, false});
    for (const auto& x : g.simulated) {
      const double ms = x.metrics[Metric::makespan];
      t.add_row({std::to_string(x.threads), format_seconds(ms),
                 fmt::format("{:.2f}x", ms / g.makespan_bound),
                 fmt::format("{:.1f}%", x.metrics[Metric::cpu_utilization] * 100),
                 g.recommended && *g.recommended == x.threads ? "<- recommended" : ""});
    }
    o << t.str();
    if (g.recommended)
      o << fmt::format(
          "\nrecommended: {} threads (the smallest simulated count within {:.0f}% of the best "
          "makespan)\n",
          *g.recommended, kGraphMakespanSlack * 100);
  }
  return o.str();
}

}  // namespace poolsim::validate
