// sweep.cpp: loading the grid points, the parallel simulated and the
// sequential measured runs (see sweep.hpp).
#include "validate/sweep.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <stdexcept>

#include "models/workload.hpp"
#include "sim/simulate.hpp"
#include "validate/prediction.hpp"
#include "validate/replications.hpp"
#include "validate/usable_cpus.hpp"
#include "validate/worker_pool.hpp"

namespace poolsim::validate {

namespace {

// Every key path of a YAML tree: "workload.arrival.rate", "workload.task[0].cpu".
void key_paths(const YAML::Node& n, const std::string& prefix, std::vector<std::string>& out) {
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string p = prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar();
      out.push_back(p);
      key_paths(it->second, p, out);
    }
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i)
      key_paths(n[i], prefix + "[" + std::to_string(i) + "]", out);
  }
}

// The scenario's key paths that could be what `key` meant: those ending in
// ".key" (the user gave the last part only), else the closest by spelling.
std::vector<std::string> suggest_key_paths(const SweepOptions& opt, const std::string& key) {
  std::vector<std::string> paths;
  try {
    key_paths(opt.text.empty() ? YAML::LoadFile(opt.file) : YAML::Load(opt.text), "", paths);
  } catch (const YAML::Exception&) {
    return {};
  }
  std::vector<std::string> out;
  const std::string last = key.substr(key.find_last_of('.') + 1);
  for (const auto& p : paths)
    if (p.size() > last.size() && p.compare(p.size() - last.size(), last.size(), last) == 0 &&
        (p[p.size() - last.size() - 1] == '.'))
      out.push_back(p);
  if (out.empty())
    if (auto s = did_you_mean(key, paths)) out.push_back(*s);
  return out;
}

// A loader error in terms of the sweep: an override of a varied key is the
// --vary flag; any other error says which point it happened at.
[[noreturn]] void rethrow_for_point(const SweepOptions& opt, const ScenarioError& e,
                                    const std::vector<std::string>& values) {
  for (std::size_t i = 0; i < opt.axes.size(); ++i) {
    const std::string set = opt.axes[i].key + "=" + values[i];
    if (e.where() != "--set " + set) continue;
    std::string msg = e.message();
    if (msg.rfind("unknown key", 0) == 0) {
      const auto paths = suggest_key_paths(opt, opt.axes[i].key);
      if (!paths.empty()) {
        std::string list;
        for (const auto& p : paths) list += (list.empty() ? "'" : "', '") + p;
        msg = fmt::format(
            "unknown key '{}': a --vary key is the full path from the scenario's top; did you "
            "mean {}'?",
            e.key(), list);
      }
    }
    throw ScenarioError("--vary " + abbreviate(set), e.key(), msg);
  }
  throw ScenarioError(e.where(), e.key(),
                      e.message() + " (sweep point " + point_label(opt.axes, values) + ")");
}

std::size_t worker_count(const SweepOptions& opt, std::size_t points) {
  const std::size_t want = opt.jobs > 0 ? static_cast<std::size_t>(opt.jobs) : usable_cpus();
  return std::max<std::size_t>(1, std::min(points, want));
}

// Simulation on worker_count() workers; a worker handles whatever point it
// draws and writes only points[i] and errors[i]. A point that runs out of
// memory while other workers hold theirs (each simulation and each thread's
// malloc arena take memory; `ulimit -v` makes that tight) is not an error
// yet: it is run again after the pool, alone, and only a failure then counts.
void simulate_all(const SweepOptions& opt, const std::vector<Scenario>& scenarios,
                  std::vector<SweepPoint>& points) {
  std::vector<std::exception_ptr> errors(points.size());
  std::vector<char> out_of_memory(points.size(), 0);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto run = [&](std::size_t i) {
    try {
      simulate_point(opt, scenarios[i], points[i]);
      if (opt.on_point) opt.on_point(point_label(opt.axes, points[i].values));
      return true;
    } catch (const std::bad_alloc&) {
      out_of_memory[i] = 1;
    } catch (const sim::EventBudgetExceeded& e) {
      errors[i] = std::make_exception_ptr(sim::EventBudgetExceeded(
          "sweep point " + point_label(opt.axes, points[i].values) + ": " + e.what()));
      failed.store(true);
    } catch (...) {
      errors[i] = std::current_exception();
      failed.store(true);
    }
    return false;
  };
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= points.size() || failed.load()) return;
      run(i);
    }
  };
  const std::size_t workers = run_workers(worker_count(opt, points.size()), worker, opt.on_note);
  const auto retry =
      static_cast<std::size_t>(std::count(out_of_memory.begin(), out_of_memory.end(), char{1}));
  if (retry > 0 && !failed.load()) {
    if (opt.on_note)
      opt.on_note(
          fmt::format("{} points ran out of memory with {} workers; running them again one "
                      "at a time",
                      retry, workers));
    for (std::size_t i = 0; i < points.size() && !failed.load(); ++i) {
      if (!out_of_memory[i]) continue;
      out_of_memory[i] = 0;
      if (!run(i) && out_of_memory[i])
        throw std::runtime_error("sweep point " + point_label(opt.axes, points[i].values) +
                                 ": out of memory even when simulated alone");
    }
  }
  // The lowest failing index wins, so the error does not depend on timing.
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

Scenario load_point(const SweepOptions& opt, const std::vector<std::string>& values) {
  LoadOptions lo = opt.load;
  for (std::size_t i = 0; i < opt.axes.size(); ++i)
    lo.sets.push_back(opt.axes[i].key + "=" + values[i]);
  try {
    return opt.text.empty() ? load_scenario(opt.file, lo)
                            : load_scenario_text(opt.text, "<sweep scenario>", lo);
  } catch (const ScenarioError& e) {
    rethrow_for_point(opt, e, values);
  }
}

SweepPoint make_point(const SweepOptions& opt, std::size_t index, const Scenario& s) {
  SweepPoint p;
  p.index = index;
  p.values = grid_point(opt.axes, index);
  p.backend = s.backend;
  return p;
}

void simulate_point(const SweepOptions& opt, const Scenario& s, SweepPoint& p) {
  try {
    if (opt.replications > 1) {
      // One worker per point already: the replications run on this thread.
      const Replicated rep = replicate(s, opt.replications, 1);
      p.predicted = rep.mean();
      p.spread = rep.stats;
      p.warnings = rep.warnings;
      return;
    }
    const Workload w = generate_workload(s);
    // One simulation, or the mean of opt.draws (draw 0 alone is plain
    // simulate), on this point's worker.
    const Prediction pr = predict(s, w, sim::SimOptions{}, opt.draws, 1);
    p.predicted = pr.metrics;
    p.warnings = overload_warnings(s, w, pr.first, p.predicted);
  } catch (const std::invalid_argument& e) {
    // Generation refuses a workload over the task cap: say which point.
    throw std::invalid_argument("sweep point " + point_label(opt.axes, p.values) + ": " + e.what());
  }
}

void measure_point(const SweepOptions& opt, const Scenario& s, SweepPoint& p) {
  const Workload w = generate_workload(s);
  const auto reps = real::run_scenario(s, w, opt.real);
  std::vector<Metrics> ms;
  ms.reserve(reps.size());
  for (const auto& rep : reps) ms.push_back(compute_metrics(rep));
  p.measured = summarize(ms);
}

SweepResult sweep_header(const SweepOptions& opt) {
  SweepResult r;
  r.axes = opt.axes;
  r.measured = opt.measure;
  r.replications = opt.replications;
  r.source = opt.file;
  r.grid_points = grid_size(opt.axes, opt.max_points);
  const Scenario first = load_point(opt, grid_point(opt.axes, 0));
  r.scenario = first.name;
  r.graph = first.workload.is_graph();
  if (first.workload.arrival) r.arrival = first.workload.arrival->kind;
  return r;
}

SweepResult run_sweep(const SweepOptions& opt) {
  const auto started = std::chrono::steady_clock::now();
  SweepResult r = sweep_header(opt);
  std::vector<std::size_t> indices = shard_indices(r.grid_points, opt.shard.value_or(Shard{1, 1}));
  // Load (and so validate) every point before running any.
  std::vector<Scenario> scenarios;
  scenarios.reserve(indices.size());
  for (std::size_t i : indices) {
    scenarios.push_back(load_point(opt, grid_point(opt.axes, i)));
    r.points.push_back(make_point(opt, i, scenarios.back()));
  }

  // Measured points run before the simulation: its worker threads leave
  // their malloc arenas and cached stacks in this process, and every
  // repetition's child, a fork of it, would start with them (a new thread
  // there reuses a resident stack and arena: less memory_peak, cheaper
  // creation than in a fresh process).
  if (opt.measure) {
    if (opt.on_phase) opt.on_phase("measure", indices.size());
    for (std::size_t i = 0; i < indices.size(); ++i) {
      measure_point(opt, scenarios[i], r.points[i]);
      if (opt.on_point) opt.on_point(point_label(opt.axes, r.points[i].values));
    }
  }
  if (opt.on_phase) opt.on_phase("simulate", indices.size());
  simulate_all(opt, scenarios, r.points);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace poolsim::validate
