// simulate.cpp: wires engine, kernel, driver and the backend's runtime.
//
// The simulated runtime of each backend kind is the table kRuntimes, one
// entry per kind of the backend registry (models/backend_registry.hpp) in its
// order, checked at compile time (static self-registration would be dropped
// by the linker from a static library).
#include "sim/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "models/backend_registry.hpp"
#include "models/rng.hpp"
#include "sim/driver.hpp"
#include "sim/engine.hpp"
#include "sim/kernel.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

namespace {

struct RuntimeFactory {
  BackendKind kind;
  std::unique_ptr<Runtime> (*make)(const SimContext&);
};
constexpr RuntimeFactory kRuntimes[] = {
    {BackendKind::thread_per_task, make_thread_per_task},
    {BackendKind::pool, make_pool},
    {BackendKind::work_stealing, make_work_stealing},
    {BackendKind::injecting_pool, make_injecting_pool},
    {BackendKind::virtual_threads, make_virtual_threads},
    {BackendKind::event_loop, make_event_loop},
    {BackendKind::tbb, make_tbb},
    {BackendKind::asio_pool, make_asio_pool},
};
static_assert(in_registry_order(kRuntimes), "one simulated runtime per backend kind");

std::unique_ptr<Runtime> make_runtime(const SimContext& ctx) {
  return kRuntimes[backend_index(ctx.scenario.backend.kind)].make(ctx);
}

// Events between two checks of the budget when no progress display asks.
constexpr std::uint64_t kBudgetCheckEvery = 1u << 20;

std::string si(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// Throws EventBudgetExceeded once the run has fired more events than
// run.max_events, or by default more than kEventBudgetBase plus
// kEventBudgetPerTask per task finished so far.
void check_event_budget(const Scenario& s, const Engine& engine, const SimProgress& p) {
  const bool fixed = s.run.max_events > 0;
  const std::uint64_t budget =
      fixed ? s.run.max_events : kEventBudgetBase + kEventBudgetPerTask * p.final_tasks;
  if (engine.fired() <= budget) return;
  std::string what = "the simulation of '" + s.name + "' stopped after " +
                     si(static_cast<double>(engine.fired())) + " events at simulated time " +
                     si(to_seconds(p.now)) + " s with " + std::to_string(p.final_tasks) +
                     " tasks finished";
  if (p.task_limit > 0) what += " of " + std::to_string(p.task_limit);
  what += fixed ? ": run.max_events is " + std::to_string(budget)
                : ": the event budget is " + si(static_cast<double>(kEventBudgetBase)) + " + " +
                      std::to_string(kEventBudgetPerTask) + " per finished task";
  what +=
      " (threads sharing a CPU cost an event per slice, so tasks of hours of CPU on a contended "
      "machine take billions); shorten the tasks or raise the budget with --set run.max_events=N";
  throw EventBudgetExceeded(what);
}

}  // namespace

bool can_stream(const Scenario& s) {
  if (s.workload.graph || !s.workload.arrival) return false;
  if (s.workload.arrival->kind == ArrivalKind::closed) return false;
  const BackendKind k = s.backend.kind;
  return k != BackendKind::virtual_threads && k != BackendKind::event_loop;
}

bool draws_differ(const Scenario& s) {
  return noise_share(s.machine) > 0 || s.limits.cpus.has_value() || s.machine.newidle_random > 0 ||
         s.machine.timer_stall_share > 0;
}

std::uint64_t noise_seed(std::uint64_t seed, std::uint64_t draw) {
  // A stream number no other derivation uses (workload streams are small,
  // the noise's own per-CPU streams start at 2^48).
  constexpr std::uint64_t kNoiseDrawBase = std::uint64_t{3} << 56;
  return draw == 0 ? seed : Rng::derive(seed, kNoiseDrawBase + draw).next();
}

namespace {
// frac(draw x alpha): a Weyl sequence, whose first N terms spread evenly.
double weyl(std::uint64_t draw, double alpha) {
  const double x = static_cast<double>(draw % (std::uint64_t{1} << 32)) * alpha;
  return x - std::floor(x);
}
}  // namespace

double draw_tick_phase(std::uint64_t draw) {
  constexpr double kSilver = 0.4142135623730950;  // sqrt(2) - 1
  return weyl(draw, kSilver);
}

double draw_phase(std::uint64_t draw) {
  constexpr double kGolden = 0.6180339887498949;  // (sqrt(5) - 1) / 2
  return weyl(draw, kGolden);
}

double draw_balance_phase(std::uint64_t draw) {
  constexpr double kBronze = 0.3027756377319946;  // (sqrt(13) - 3) / 2
  return weyl(draw, kBronze);
}

RunResult simulate(const Scenario& s, const Workload& w, const SimOptions& opt) {
  if (w.streamed() && !can_stream(s))
    throw std::logic_error("sim::simulate: this scenario cannot run from a task stream");
  Engine engine;
  Kernel kernel(engine, s.machine, s.limits,
                KernelOptions{opt.trace, noise_seed(s.seed, opt.draw), draw_phase(opt.draw),
                              draw_tick_phase(opt.draw), draw_balance_phase(opt.draw)});
  kernel.set_thread_stack(s.backend.stack);
  Driver driver(kernel, s, w, DriverOptions{opt.records, opt.quantiles});
  const SimContext ctx{kernel, driver, s, w};
  std::unique_ptr<Runtime> runtime = make_runtime(ctx);
  driver.set_runtime(runtime.get());
  driver.start();
  // The same event order as Engine::run(), paused every `every` events for
  // the progress display and the event budget.
  SimProgress p;
  p.task_limit =
      w.streamed()
          ? (w.stream->limit() == std::numeric_limits<std::uint64_t>::max() ? 0 : w.stream->limit())
          : w.tasks.size();
  if (w.streamed()) p.arrivals_end = w.stream->end();
  std::uint64_t every =
      opt.progress ? std::max<std::uint64_t>(1, opt.progress_every) : kBudgetCheckEvery;
  if (s.run.max_events > 0) every = std::min(every, s.run.max_events + 1);
  bool more = true;
  while (more && !engine.stopped()) {
    for (std::uint64_t i = 0; i < every && (more = engine.step()) && !engine.stopped(); ++i) {
    }
    p.final_tasks = driver.final_count();
    p.now = engine.now();
    if (opt.progress) opt.progress(p);
    if (more) check_event_budget(s, engine, p);
  }

  RunResult r;
  r.mode = "simulated";
  r.cpus_available = s.capacity();
  kernel.finish(r);
  driver.finish(r);
  runtime->report(r.extra);
  if (w.graph) {
    // The bound no schedule can beat: all the CPU work spread over the
    // capacity, and the longest dependency chain run alone.
    const double work = to_seconds(w.total_work), path = to_seconds(w.critical_path);
    r.extra["total_work"] = work;
    r.extra["critical_path"] = path;
    r.extra["bound_makespan"] = std::max(work / s.capacity(), path);
  }
  r.extra["sim_events"] = static_cast<double>(engine.fired());
  return r;
}

}  // namespace poolsim::sim
