// asio_pool.cpp: the real asio::thread_pool (standalone Asio 1.22), the real
// twin of sim/asio_pool.cpp (modelled as a fixed pool with one FIFO queue)
// and the stand-in for plain FIFO pools: GCD's global concurrent queue, a
// fixed Executors.newFixedThreadPool, boost::asio::thread_pool in servers.
//
// Mechanism. asio::thread_pool(threads) starts `threads` threads itself (in
// its constructor, asio::detail::posix_thread, default attributes: the
// stack is RLIMIT_STACK, not the scenario's `stack`), all running one
// asio::detail::scheduler: a single handler queue under a mutex, FIFO, idle
// threads waiting on a condition variable (or one of them in epoll). Each
// task is one asio::post of a handler that calls RunContext::execute with the
// default thread ops: waits block the pool thread, locks are the context's
// std::mutex. The library decides which thread runs which handler; nothing
// here reorders the queue. A completion that releases successors posts them
// from the pool thread; with one thread Asio queues those on the thread's
// private queue (its single-thread optimisation), still in order.
//
// Threads. The pool's threads are the library's, so they register
// themselves: start() posts one registration job per thread and each job,
// after register_current_thread(), waits at a rendezvous until all `threads`
// jobs are running. A thread held at the rendezvous cannot take a second
// job, so the `threads` jobs run on `threads` distinct threads: every pool
// thread is registered exactly once, when the first hand-over starts the
// runtime and before the first task is posted. stop() does the same
// with unregister_current_thread() (every task is finalized, so the threads
// are idle and take one job each), then thread_pool::join(), which lets
// run() return and joins every thread: none is left after stop().
// threads_peak = threads + 1 (the submitter).
//
// Counters (RunResult::extra): threads, posted (tasks posted from the
// submitter), posted_from_workers (released by a completion on a pool
// thread).
//
// Left out: thread_pool's default size (2 x hardware threads) since the
// scenario always gives `threads`; strands and executors other than the
// pool's own; per-thread stack size.
#include <algorithm>
#include <asio/post.hpp>
#include <asio/thread_pool.hpp>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "real/backend.hpp"

namespace poolsim::real {
namespace {

thread_local bool tl_pool_thread = false;

class AsioPool final : public Backend {
 public:
  explicit AsioPool(const BackendSpec& spec) : threads_(std::max(1, spec.threads)) {}

  void start(RunContext& ctx) override {
    ctx_ = &ctx;
    pool_.emplace(static_cast<std::size_t>(threads_));
    on_every_thread([this](int i) {
      ctx_->register_current_thread("asio worker " + std::to_string(i + 1));
      tl_pool_thread = true;
    });
  }

  void submit(std::uint32_t task) override {
    if (tl_pool_thread) {
      posted_from_workers_.fetch_add(1, std::memory_order_relaxed);
    } else {
      posted_.fetch_add(1, std::memory_order_relaxed);
    }
    asio::post(*pool_, [this, task] { ctx_->execute(task); });
  }

  void stop() override {
    on_every_thread([this](int) {
      tl_pool_thread = false;
      ctx_->unregister_current_thread();
    });
    pool_->join();
    pool_.reset();
  }

  void report(std::map<std::string, double>& extra) const override {
    extra["threads"] = threads_;
    extra["posted"] = static_cast<double>(posted_.load(std::memory_order_relaxed));
    extra["posted_from_workers"] =
        static_cast<double>(posted_from_workers_.load(std::memory_order_relaxed));
  }

 private:
  // Runs `action(i)` once on each of the pool's threads (see the design
  // comment: the rendezvous makes the threads distinct) and returns when
  // all have done it. Called on the submitter while the pool is idle.
  void on_every_thread(const std::function<void(int)>& action) {
    // Shared with the jobs: a job may still be leaving its wait after the
    // submitter has returned from here.
    struct Rendezvous {
      std::mutex mu;
      std::condition_variable cv;
      int next = 0;
      int arrived = 0;
    };
    auto r = std::make_shared<Rendezvous>();
    const int n = threads_;
    for (int j = 0; j < n; ++j) {
      asio::post(*pool_, [r, n, &action] {
        int i = 0;
        {
          std::lock_guard lk(r->mu);
          i = r->next++;
        }
        action(i);  // before arriving: the caller (and `action`) is still waiting
        std::unique_lock lk(r->mu);
        if (++r->arrived == n) r->cv.notify_all();
        r->cv.wait(lk, [&] { return r->arrived == n; });
      });
    }
    std::unique_lock lk(r->mu);
    r->cv.wait(lk, [&] { return r->arrived == n; });
  }

  const int threads_;
  RunContext* ctx_ = nullptr;
  std::optional<asio::thread_pool> pool_;
  std::atomic<std::int64_t> posted_{0};
  std::atomic<std::int64_t> posted_from_workers_{0};
};

}  // namespace

std::unique_ptr<Backend> make_asio_pool_backend(const BackendSpec& spec) {
  return std::make_unique<AsioPool>(spec);
}

}  // namespace poolsim::real
