// simulate.cpp: wires engine, kernel, driver and the backend's runtime.
//
// The runtime registry is the switch in make_runtime(): one case per backend
// kind that has a simulated runtime (static self-registration would be
// dropped by the linker from a static library).
#include "sim/simulate.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include "sim/driver.hpp"
#include "sim/engine.hpp"
#include "sim/kernel.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

namespace {

std::unique_ptr<Runtime> make_runtime(const SimContext& ctx) {
  switch (ctx.scenario.backend.kind) {
    case BackendKind::thread_per_task: return make_thread_per_task(ctx);
    case BackendKind::pool: return make_pool(ctx);
    case BackendKind::work_stealing: return make_work_stealing(ctx);
    case BackendKind::injecting_pool: return make_injecting_pool(ctx);
    case BackendKind::virtual_threads: return make_virtual_threads(ctx);
    case BackendKind::event_loop: return make_event_loop(ctx);
    case BackendKind::tbb: return make_tbb(ctx);
    case BackendKind::asio_pool: return make_asio_pool(ctx);
  }
  throw UnsupportedBackend("backend '" + std::string(to_string(ctx.scenario.backend.kind)) +
                           "' has no simulated runtime yet");
}

}  // namespace

bool can_stream(const Scenario& s) {
  if (s.workload.graph || !s.workload.arrival) return false;
  if (s.workload.arrival->kind == ArrivalKind::closed) return false;
  const BackendKind k = s.backend.kind;
  return k != BackendKind::virtual_threads && k != BackendKind::event_loop;
}

RunResult simulate(const Scenario& s, const Workload& w, const SimOptions& opt) {
  if (w.streamed() && !can_stream(s))
    throw std::logic_error("sim::simulate: this scenario cannot run from a task stream");
  Engine engine;
  Kernel kernel(engine, s.machine, s.limits, KernelOptions{opt.trace});
  Driver driver(kernel, s, w, DriverOptions{opt.records, opt.quantiles});
  const SimContext ctx{kernel, driver, s, w};
  std::unique_ptr<Runtime> runtime = make_runtime(ctx);
  driver.set_runtime(runtime.get());
  driver.start();
  if (!opt.progress) {
    engine.run();
  } else {
    // The same event order as run(), paused every progress_every events.
    SimProgress p;
    p.task_limit = w.streamed() ? (w.stream->limit() == std::numeric_limits<std::uint64_t>::max()
                                       ? 0
                                       : w.stream->limit())
                                : w.tasks.size();
    if (w.streamed()) p.arrivals_end = w.stream->end();
    const std::uint64_t every = std::max<std::uint64_t>(1, opt.progress_every);
    bool more = true;
    while (more && !engine.stopped()) {
      for (std::uint64_t i = 0; i < every && (more = engine.step()) && !engine.stopped(); ++i) {
      }
      p.final_tasks = driver.final_count();
      p.now = engine.now();
      opt.progress(p);
    }
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
