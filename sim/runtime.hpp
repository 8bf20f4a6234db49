// runtime.hpp: the seam between the simulated OS and the simulated thread
// runtimes.
//
// A runtime is one class in one file (sim/thread_per_task.cpp, sim/pool.cpp,
// ...), the twin of real/<same name>.cpp, and calls the shared decision logic
// in models/*_policy.hpp. It sees:
//   - the Kernel: create OS threads (co_await k.spawn(body, role), which
//     charges thread_create to the caller), compute, sleep, block on wait
//     queues and get notified, lock mutexes;
//   - the Driver: execute(task) runs a task's phases on the current thread
//     and reports its completion (which may submit successors of a graph or
//     the next request of a closed client, through submit()); reject(task)
//     records a refusal.
// submit() is called on the submitting OS thread (k.self()), which is on a
// CPU; whatever it costs that thread it pays with co_await.
//
// Adding a runtime: write make_<name>(ctx) in its own file, declare it here,
// and add its entry to kRuntimes in sim/simulate.cpp (a new backend kind also
// needs its entry in models/backend_registry.hpp and a real factory).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "sim/co.hpp"
#include "sim/kernel.hpp"

namespace poolsim::sim {

class Driver;

struct SimContext {
  Kernel& kernel;
  Driver& driver;
  const Scenario& scenario;
  const Workload& workload;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  // Hands task `task` to the runtime, on the calling OS thread.
  virtual Co submit(std::uint32_t task) = 0;
  // Runtime-specific counters for RunResult::extra, read once after the run
  // (the twin of real::Backend::report; counting in the runtime's own fields
  // avoids a map update per event).
  virtual void report(std::map<std::string, double>& extra) const { (void)extra; }
  // CPU the starting thread spends on a task that starts on another CPU
  // than its submitter's (Driver::execute counts those in every runtime).
  // None unless the runtime measured one: the event loop's task_remote.
  virtual Duration remote_start_cost() const { return Duration{0}; }
};

std::unique_ptr<Runtime> make_thread_per_task(const SimContext& ctx);
std::unique_ptr<Runtime> make_pool(const SimContext& ctx);
// How a pool's threads start (sim/pool.cpp).
enum class PoolStart : std::uint8_t {
  // ThreadPoolExecutor: a core thread per submission while fewer than the
  // core size live, with the task as its first task.
  on_demand,
  // asio::thread_pool as the real twin starts it (real/asio_pool.cpp): the
  // first submission makes every thread, and waits until each has run its
  // registration and arrived at a rendezvous, before it posts its task.
  all_at_first_submit,
};
std::unique_ptr<Runtime> make_pool(const SimContext& ctx, PoolStart start);
std::unique_ptr<Runtime> make_work_stealing(const SimContext& ctx);
std::unique_ptr<Runtime> make_injecting_pool(const SimContext& ctx);
std::unique_ptr<Runtime> make_virtual_threads(const SimContext& ctx);
std::unique_ptr<Runtime> make_event_loop(const SimContext& ctx);
std::unique_ptr<Runtime> make_tbb(const SimContext& ctx);
std::unique_ptr<Runtime> make_asio_pool(const SimContext& ctx);

}  // namespace poolsim::sim
