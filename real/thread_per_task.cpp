// thread_per_task.cpp: a new OS thread per task (CreateThread, `new Thread`,
// pthread_create), the real twin of sim/thread_per_task.cpp.
//
// Mechanism: submit() calls pthread_create (through RunContext::spawn, with
// the scenario's `stack` size) on the submitting thread, so the creation cost
// is paid by the submitter as in CreateThread code; the thread runs the task
// and exits. Threads are created detached (the handle closed at once, as
// CloseHandle(CreateThread(...)) code does), so nothing joins them; stop()
// waits until the last task thread has finished its body.
// Invariant: alive_ counts task threads from before pthread_create until the
// end of their body; stop() returns only when it is 0.
// Left out: a thread that exits is gone for the OS a little after its body
// ends (TLS destructors, stack release); that tail is not counted.
#include <atomic>
#include <memory>

#include "real/backend.hpp"

namespace poolsim::real {
namespace {

class ThreadPerTask final : public Backend {
 public:
  explicit ThreadPerTask(const BackendSpec& spec) : stack_(spec.stack) {}

  void start(RunContext& ctx) override { ctx_ = &ctx; }

  void submit(std::uint32_t task) override {
    alive_->fetch_add(1, std::memory_order_relaxed);
    // The thread holds its own reference to the counter: it may still be
    // notifying after stop() returned and this backend was destroyed.
    ctx_->spawn(
        "thread " + std::to_string(task), stack_,
        [ctx = ctx_, alive = alive_, task] {
          ctx->execute(task);
          if (alive->fetch_sub(1, std::memory_order_acq_rel) == 1) alive->notify_all();
        },
        /*detached=*/true);
  }

  void stop() override {
    for (int n = alive_->load(std::memory_order_acquire); n != 0;
         n = alive_->load(std::memory_order_acquire))
      alive_->wait(n, std::memory_order_acquire);
  }

 private:
  RunContext* ctx_ = nullptr;
  Bytes stack_;
  std::shared_ptr<std::atomic<int>> alive_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace

std::unique_ptr<Backend> make_thread_per_task_backend(const BackendSpec& spec) {
  return std::make_unique<ThreadPerTask>(spec);
}

}  // namespace poolsim::real
