// co.hpp: Co, the coroutine type of simulated threads and runtimes.
//
// A simulated OS thread is a C++20 coroutine that co_awaits kernel operations
// (Kernel::compute, sleep_for, wait, lock, spawn). Co is a lazy task: it
// starts when first resumed and, when awaited by another Co, hands control
// over by symmetric transfer and returns to its awaiter when done, so nested
// calls (a worker loop awaiting execute_task awaiting compute) cost no stack.
// Only the kernel resumes a thread, and only from an engine event, never from
// inside another coroutine: a resume therefore never nests.
//
// Ownership: a Co owns its frame and destroys it; the kernel takes the frame
// of a thread's body with release(). An exception thrown in a coroutine
// propagates out of the kernel's resume() and out of simulate().
#pragma once

#include <coroutine>
#include <exception>
#include <utility>

namespace poolsim::sim {

class [[nodiscard]] Co {
 public:
  struct promise_type {
    std::coroutine_handle<> continuation;

    Co get_return_object() { return Co{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        auto c = h.promise().continuation;
        return c ? c : std::noop_coroutine();
      }
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { throw; }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Co() = default;
  explicit Co(Handle h) : h_(h) {}
  Co(Co&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Co& operator=(Co&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Co(const Co&) = delete;
  Co& operator=(const Co&) = delete;
  ~Co() {
    if (h_) h_.destroy();
  }

  // Gives up ownership of the frame (the kernel owns thread bodies).
  Handle release() { return std::exchange(h_, {}); }

  bool await_ready() const noexcept { return !h_ || h_.done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    h_.promise().continuation = awaiting;
    return h_;
  }
  void await_resume() const noexcept {}

 private:
  Handle h_;
};

}  // namespace poolsim::sim
