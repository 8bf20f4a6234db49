// co.hpp: Co, the coroutine type of simulated threads and runtimes.
//
// A simulated OS thread is a C++20 coroutine that co_awaits kernel operations
// (Kernel::compute, sleep_for, wait, lock, spawn). Co is a lazy task: it
// starts when first awaited (or resumed by the kernel, for a thread's body)
// and returns to its awaiter when done: inline if it never suspended, else
// by symmetric transfer from its final suspend (see await_suspend).
// Only the kernel resumes a thread, and only from an engine event, never from
// inside another coroutine: a resume therefore never nests.
//
// Ownership: a Co owns its frame and destroys it; the kernel takes the frame
// of a thread's body with release(). An exception thrown in a coroutine
// propagates out of the kernel's resume() and out of simulate().
//
// Frames: a simulation creates and ends a few coroutine frames per task
// (execute, submit, the runtime's submit), so frames come from per-thread
// free lists by 64-byte size class (FramePool) instead of malloc: a freed
// frame is reused by the next frame of its class. Frames above 2 KiB, and
// every frame in AddressSanitizer builds (so that it still sees
// use-after-free), go to operator new. A pool keeps at most the peak number
// of frames alive at once and frees them when its thread ends.
//
// A thread's pool is created at its first frame and found through a plain
// thread_local pointer; a pthread key's destructor frees it. Not a
// thread_local object: glibc registers such an object's destructor with
// calloc at first use and aborts the whole process when that fails, which a
// sweep worker under `ulimit -v` met when the other workers' stacks had
// taken the address space. This way a thread without memory gets
// std::bad_alloc at its first frame, which the sweep handles (retries the
// point alone).
#pragma once

#include <pthread.h>

#include <array>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#define POOLSIM_FRAME_POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOLSIM_FRAME_POOL 0
#endif
#endif
#ifndef POOLSIM_FRAME_POOL
#define POOLSIM_FRAME_POOL 1
#endif

namespace poolsim::sim {

class FramePool {
 public:
  static constexpr std::size_t kGranule = 64, kClasses = 32;  // up to 2 KiB

  static void* allocate(std::size_t n) {
    const std::size_t c = (n + kGranule - 1) / kGranule;
    if (!POOLSIM_FRAME_POOL || c >= kClasses) return ::operator new(n);
    FramePool& p = local();
    if (Free* f = p.heads_[c]) {
      p.heads_[c] = f->next;
      return f;
    }
    return ::operator new(c* kGranule);
  }
  static void release(void* ptr, std::size_t n) noexcept {
    const std::size_t c = (n + kGranule - 1) / kGranule;
    if (!POOLSIM_FRAME_POOL || c >= kClasses) {
      ::operator delete(ptr);
      return;
    }
    FramePool* p = tl_pool;  // set by allocate(), which made this frame on this thread
    if (!p) {
      ::operator delete(ptr);
      return;
    }
    p->heads_[c] = new (ptr) Free{p->heads_[c]};
  }

  ~FramePool() {
    for (Free* f : heads_)
      while (f) ::operator delete(std::exchange(f, f->next));
  }

 private:
  struct Free {
    Free* next;
  };
  static inline thread_local FramePool* tl_pool = nullptr;  // trivially destructible

  // This thread's pool, made at its first frame (std::bad_alloc if there is
  // no memory for it, never an abort).
  static FramePool& local() {
    if (tl_pool) return *tl_pool;
    static const pthread_key_t key = [] {
      pthread_key_t k{};
      const auto at_exit = [](void* p) {
        tl_pool = nullptr;  // this runs on the ending thread
        delete static_cast<FramePool*>(p);
      };
      if (pthread_key_create(&k, at_exit) != 0) throw std::bad_alloc();
      return k;
    }();
    auto pool = std::make_unique<FramePool>();
    if (pthread_setspecific(key, pool.get()) != 0) throw std::bad_alloc();
    tl_pool = pool.release();
    return *tl_pool;
  }
  std::array<Free*, kClasses> heads_{};
};

class [[nodiscard]] Co {
 public:
  struct promise_type {
    static void* operator new(std::size_t n) { return FramePool::allocate(n); }
    static void operator delete(void* p, std::size_t n) noexcept { FramePool::release(p, n); }

    std::coroutine_handle<> continuation;
    bool running_inline = false;  // resumed from its awaiter's await_suspend

    Co get_return_object() { return Co{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
        const promise_type& p = h.promise();
        // Finished inside its awaiter's await_suspend: that call returns and
        // the awaiter continues without growing the stack.
        if (p.running_inline || !p.continuation) return std::noop_coroutine();
        return p.continuation;
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
  // Runs the awaited coroutine at once. If it finishes without suspending
  // (a submit that only enqueues), the awaiter continues directly (false);
  // if it suspends on a kernel operation, the awaiter stays suspended and is
  // resumed from the child's final suspend when the kernel resumes the child.
  // Loops of synchronously finishing calls thus never deepen the stack, even
  // where the compiler does not turn symmetric transfer into a tail call
  // (unoptimised and sanitizer builds).
  bool await_suspend(std::coroutine_handle<> awaiting) {
    promise_type& p = h_.promise();
    p.continuation = awaiting;
    p.running_inline = true;
    h_.resume();
    if (h_.done()) return false;
    p.running_inline = false;
    return true;
  }
  void await_resume() const noexcept {}

 private:
  Handle h_;
};

}  // namespace poolsim::sim
