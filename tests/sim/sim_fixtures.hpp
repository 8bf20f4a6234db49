// sim_fixtures.hpp: hand-built scenarios and workloads for the simulator's
// tests, so each test states exactly the machine and tasks it runs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "models/rng.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

namespace poolsim::test {

using namespace std::chrono_literals;

// Every cost zero: the closed-form oracles hold exactly.
inline MachineProfile zero_machine(int cores, Duration slice = 1ms, Duration tick = 0ns) {
  MachineProfile m;
  m.name = "zero";
  m.cores = cores;
  m.slice = slice;
  m.tick = tick;
  return m;
}

inline Scenario pool_scenario(const MachineProfile& m, int threads) {
  Scenario s;
  s.name = "test";
  s.machine = m;
  s.backend.kind = BackendKind::pool;
  s.backend.threads = threads;
  s.backend.max_threads = threads;
  return s;
}

inline Scenario tpt_scenario(const MachineProfile& m) {
  Scenario s;
  s.name = "test";
  s.machine = m;
  s.backend.kind = BackendKind::thread_per_task;
  return s;
}

// Tasks of one cpu phase each; arrival[i] and work[i] given.
inline Workload make_workload(ArrivalKind kind, const std::vector<Duration>& arrivals,
                              const std::vector<Duration>& work) {
  Workload w;
  w.arrival = kind;
  for (std::size_t i = 0; i < work.size(); ++i) {
    Task t;
    t.id = static_cast<std::uint32_t>(i);
    t.arrival = arrivals.empty() ? Duration{0} : arrivals[i];
    t.first_phase = static_cast<std::uint32_t>(w.phases.size());
    t.phase_count = 1;
    w.phases.push_back({PhaseKind::cpu, 0, work[i], Duration{0}});
    w.tasks.push_back(t);
  }
  return w;
}

inline Workload batch(int n, Duration work) {
  return make_workload(ArrivalKind::batch, {}, std::vector<Duration>(n, work));
}

// `clients` closed clients of `per_client` requests of `work` CPU each,
// thinking `think` between them, for `duration`; client c's k-th request is
// task k x clients + c (closed_task_id).
inline Workload closed_clients(std::uint32_t clients, std::uint32_t per_client, Duration duration,
                               Duration think, Duration work) {
  Workload w;
  w.arrival = ArrivalKind::closed;
  w.clients = clients;
  w.per_client = per_client;
  w.closed_duration = duration;
  for (std::uint32_t i = 0; i < clients * per_client; ++i) {
    Task t;
    t.id = i;
    t.client = i % clients;
    t.think = think;
    t.first_phase = 0;
    t.phase_count = 1;
    w.tasks.push_back(t);
  }
  w.phases.push_back({PhaseKind::cpu, 0, work, Duration{0}});
  return w;
}

inline Duration exp_sample(Rng& r, double mean_ns) {
  return Duration{static_cast<std::int64_t>(std::llround(-std::log(r.uniform_open0()) * mean_ns))};
}

// Poisson arrivals at `rate` per second; service exponential (or fixed).
inline Workload poisson(std::uint64_t seed, int n, double rate, Duration service,
                        bool exponential_service) {
  Rng r(seed);
  std::vector<Duration> arr, work;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += -std::log(r.uniform_open0()) / rate * 1e9;
    arr.push_back(Duration{static_cast<std::int64_t>(std::llround(t))});
    work.push_back(exponential_service ? exp_sample(r, static_cast<double>(service.count()))
                                       : service);
  }
  return make_workload(ArrivalKind::poisson, arr, work);
}

inline double mean_of(const RunResult& r, Duration TaskRecord::*a, Duration TaskRecord::*b) {
  double sum = 0;
  int n = 0;
  for (const TaskRecord& t : r.records)
    if (t.outcome == TaskOutcome::completed) {
      sum += to_seconds(t.*a - t.*b);
      ++n;
    }
  return n ? sum / n : 0;
}
inline double mean_wait(const RunResult& r) {
  return mean_of(r, &TaskRecord::start, &TaskRecord::submit);
}
inline double mean_response(const RunResult& r) {
  return mean_of(r, &TaskRecord::end, &TaskRecord::submit);
}
inline double makespan(const RunResult& r) {
  Duration m{0};
  for (const TaskRecord& t : r.records) m = std::max(m, t.end);
  return to_seconds(m);
}
inline double first_completion(const RunResult& r) {
  Duration m = Duration::max();
  for (const TaskRecord& t : r.records)
    if (t.outcome == TaskOutcome::completed) m = std::min(m, t.end);
  return to_seconds(m);
}

// Erlang C: probability that an arrival waits in M/M/c with offered load a.
inline double erlang_c(int c, double a) {
  double term = 1, sum = 1;  // k = 0
  for (int k = 1; k < c; ++k) {
    term *= a / k;
    sum += term;
  }
  const double last = term * a / c;  // a^c / c!
  const double top = last * c / (c - a);
  return top / (sum + top);
}

}  // namespace poolsim::test
