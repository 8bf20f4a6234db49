// work_stealing.cpp: our work-stealing runtime (ForkJoinPool / oneTBB /
// Taskflow style), the real twin of sim/work_stealing.cpp.
//
// Mechanism: `threads` workers, each with its own deque; external
// submissions go to one global injection queue (FIFO); a task submitted by a
// worker (a graph successor or a closed client's next task released by a
// completion on that worker) goes to that worker's own deque. A worker looks
// for work with models/steal_policy.hpp's find_work(), the simulated twin's
// code: its own deque at the owner end (LIFO, cache-warm), the injection
// queue (oldest first), then the other workers' deques at the far end (FIFO
// steal), victims in a random order from StealPolicy::victim; after
// StealPolicy::spin_rounds failed rounds (SpinThenPark) it parks until a
// submit wakes it.
// Deques: a mutex per deque around std::deque, not a lock-free Chase-Lev
// deque (Chase and Lev, SPAA 2005). The ends are the same (owner LIFO, thief
// FIFO); the cost differs by an uncontended lock per push/pop (tens of ns),
// which is far below the task granularities poolsim scenarios use.
// Parking without lost wake-ups (Dekker-style): a submitter increments
// pending_ then reads sleepers_; a parking worker increments sleepers_ then
// re-reads pending_ under park_mu_ before waiting; both seq_cst, so at least
// one of them sees the other; the notifier takes and releases park_mu_ before
// it notifies, so a parker that saw no task is already waiting.
// Counters (RunResult::extra, StealCounts, the simulated twin's names):
// steals, failed_steals (a victim found empty), parks, local_pops,
// injection_pops, spin_rounds (failed rounds followed by a pause).
// Left out: stealing half a queue (Go, Tokio), the submitter helping (the
// common ForkJoinPool), a LIFO slot.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "models/rng.hpp"
#include "models/steal_policy.hpp"
#include "real/backend.hpp"

namespace poolsim::real {
namespace {

class WorkStealing;

struct alignas(64) WsWorker {
  std::mutex mu;
  std::deque<std::uint32_t> deque;  // back = owner end, front = thief end
  int index = 0;
  Rng rng{0};
  StealCounts c;  // written only by the owner; read after join
};

thread_local WsWorker* tl_worker = nullptr;
thread_local const WorkStealing* tl_owner = nullptr;

class WorkStealing final : public Backend {
 public:
  explicit WorkStealing(const BackendSpec& spec)
      : threads_(std::max(1, spec.threads)), stack_(spec.stack) {}

  void start(RunContext& ctx) override {
    ctx_ = &ctx;
    for (int i = 0; i < threads_; ++i) {
      auto w = std::make_unique<WsWorker>();
      w->index = i;
      w->rng = Rng::derive(ctx.scenario().seed, static_cast<std::uint64_t>(i));
      workers_.push_back(std::move(w));
    }
    for (int i = 0; i < threads_; ++i) {
      WsWorker* w = workers_[static_cast<std::size_t>(i)].get();
      handles_.push_back(
          ctx.spawn("worker " + std::to_string(i + 1), stack_, [this, w] { worker_loop(*w); }));
    }
  }

  void submit(std::uint32_t task) override {
    if (tl_owner == this && tl_worker != nullptr) {
      std::lock_guard lk(tl_worker->mu);
      tl_worker->deque.push_back(task);
    } else {
      std::lock_guard lk(inj_mu_);
      injection_.push_back(task);
    }
    pending_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      // Taking park_mu_ orders this after a parker's check of pending_ (it
      // is then inside wait(), or saw the task and did not wait); the
      // notify follows the unlock, so the woken worker does not find the
      // mutex held and block on it again (real/pool.cpp).
      { std::lock_guard lk(park_mu_); }
      park_cv_.notify_one();
    }
  }

  void stop() override {
    {
      std::lock_guard lk(park_mu_);
      stopping_.store(true, std::memory_order_seq_cst);
    }
    park_cv_.notify_all();
    for (pthread_t t : handles_) ctx_->join(t);
    handles_.clear();
  }

  void report(std::map<std::string, double>& extra) const override {
    StealCounts sum;
    for (const auto& w : workers_) sum.add(w->c);
    sum.report(extra);
  }

 private:
  void worker_loop(WsWorker& w) {
    tl_worker = &w;
    tl_owner = this;
    SpinThenPark idle(policy_.spin_rounds);
    Queues queues{*this};
    for (;;) {
      if (auto t = find_work(
              queues, w.index, threads_, true, [&w] { return w.rng.next(); }, w.c)) {
        idle.found();
        ctx_->execute(*t);
        continue;
      }
      if (stopping_.load(std::memory_order_acquire)) break;
      if (idle.missed() == SpinThenPark::Next::spin) {
        ++w.c.spins;
        spin_pause();
        continue;
      }
      park(w);
    }
    tl_worker = nullptr;
    tl_owner = nullptr;
  }

  // The queues as find_work() sees them: each deque under its own mutex.
  struct Queues {
    WorkStealing& ws;
    std::optional<std::uint32_t> pop_local(int self) {
      WsWorker& w = *ws.workers_[static_cast<std::size_t>(self)];
      std::lock_guard lk(w.mu);
      if (w.deque.empty()) return std::nullopt;
      const std::uint32_t t = w.deque.back();
      w.deque.pop_back();
      return taken(t);
    }
    std::optional<std::uint32_t> pop_injection() {
      std::lock_guard lk(ws.inj_mu_);
      return take_front(ws.injection_);
    }
    std::optional<std::uint32_t> steal(int victim) {
      WsWorker& v = *ws.workers_[static_cast<std::size_t>(victim)];
      std::lock_guard lk(v.mu);
      return take_front(v.deque);
    }
    // Called with the deque's mutex held.
    std::optional<std::uint32_t> take_front(std::deque<std::uint32_t>& d) {
      if (d.empty()) return std::nullopt;
      const std::uint32_t t = d.front();
      d.pop_front();
      return taken(t);
    }
    std::uint32_t taken(std::uint32_t t) {
      ws.pending_.fetch_sub(1, std::memory_order_relaxed);
      return t;
    }
  };

  void park(WsWorker& w) {
    std::unique_lock lk(park_mu_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (pending_.load(std::memory_order_seq_cst) == 0 &&
        !stopping_.load(std::memory_order_seq_cst)) {
      ++w.c.parks;
      park_cv_.wait(lk);
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }

  static void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  const int threads_;
  const Bytes stack_;
  const StealPolicy policy_{};
  RunContext* ctx_ = nullptr;
  std::vector<std::unique_ptr<WsWorker>> workers_;
  std::vector<pthread_t> handles_;
  std::mutex inj_mu_;
  std::deque<std::uint32_t> injection_;
  std::atomic<std::int64_t> pending_{0};
  std::atomic<int> sleepers_{0};
  std::mutex park_mu_;
  std::condition_variable park_cv_;
  std::atomic<bool> stopping_{false};
};

}  // namespace

std::unique_ptr<Backend> make_work_stealing_backend(const BackendSpec& spec) {
  return std::make_unique<WorkStealing>(spec);
}

}  // namespace poolsim::real
