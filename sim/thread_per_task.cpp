// thread_per_task.cpp: the thread-per-task runtime (pthread_create, new
// Thread, CreateThread per task).
//
// Mechanism: submit() makes the submitting thread create a new OS thread for
// the task, computing machine.thread_create itself first (so 100k creations
// take 100k * thread_create of the submitter's CPU time, and are stretched
// when the new threads compete with it for the CPU). The new thread runs the
// task and exits, computing machine.thread_exit. Every thread's stack counts
// stack_touch toward memory_peak while it lives.
// Twin: real/thread_per_task.cpp. No policy: nothing is ever refused (the
// real runner refuses scenarios above run.max_threads; the simulator shows
// what would happen).
#include <memory>

#include "sim/driver.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

namespace {

class ThreadPerTask final : public Runtime {
 public:
  explicit ThreadPerTask(const SimContext& ctx) : k_(ctx.kernel), driver_(ctx.driver) {}

  Co submit(std::uint32_t task) override {
    co_await k_.spawn(driver_.execute(task), "thread");
  }

 private:
  Kernel& k_;
  Driver& driver_;
};

}  // namespace

std::unique_ptr<Runtime> make_thread_per_task(const SimContext& ctx) {
  return std::make_unique<ThreadPerTask>(ctx);
}

}  // namespace poolsim::sim
