// work_stealing.cpp: the simulated work-stealing runtime (ForkJoinPool /
// oneTBB / Taskflow style), twin of real/work_stealing.cpp; sim/tbb.cpp runs
// the same code with oneTBB's parameters (sim/work_stealing.hpp).
//
// Mechanism: `threads` workers, each with its own deque (back = owner end,
// front = thief end) and one global injection queue (FIFO). submit() on a
// worker thread (a graph successor or a closed client's next task released
// by a completion there) pushes to that worker's own deque, so spawned work
// runs on its spawner unless another worker steals it; submit() from any
// other thread (the submitter) appends to the injection queue. Either way
// one parked worker is woken (the real twin notifies when a worker sleeps);
// the oneTBB flavour wakes every parked worker, and only when the submit
// finds the arena empty (wake_all_when_empty).
// A worker's search is models/steal_policy.hpp's find_work(), the code the
// real twin runs: its own deque at the back (LIFO), the injection queue's
// oldest task, then the other deques' oldest tasks, victims in
// StealPolicy::victim order from a start drawn from the worker's own stream
// Rng::derive(seed, index) (the real twin's streams, so both try the same
// victims in the same order). After spin_rounds failed rounds
// (SpinThenPark) it parks on one wait queue until a submit wakes it.
// Spinning costs CPU as the real loops spend it: each failed round is
// computed work, flavor.spin_cost (ours: threads + 1 looks into locked
// queues, each queue_handover, then one pause instruction; oneTBB: one
// prolonged_pause, tbb_pause), and from flavor.yield_from failed rounds on
// each round also calls sched_yield (Kernel::yield_cpu: alone on its CPU it
// costs yield_cost; with another thread eligible there it hands the CPU
// over, an involuntary switch). Until 2026-12-02 the rounds together lasted
// a wake-up of a parked worker (wakeup_latency + idle_exit, ~100 us here),
// the budget oneTBB's comment aims at, while the real loops spin for about
// 2 us (ours) or a few hundred (oneTBB's 100 yields): docs/validation.md.
// Workers start at the first submit, created by the submitting thread (it
// pays thread_create for each), as the real twin's start() does, called by
// the first hand-over; with chain_start, each new worker starts up to two more
// (oneTBB's RML private_server::wake_some wakes at most two, and every woken
// worker propagates the chain reaction), so creation costs spread over the
// workers.
// Invariants: pending_ = tasks in all deques and the injection queue, never
// negative (asserted); a worker parks only right after a failed round in
// the same resume (no event in between), so no wake-up is lost.
// Counters (RunResult::extra): steals, failed_steals (a victim found
// empty), parks, local_pops, injection_pops, spin_rounds (pauses computed).
// Left out: the lock-free Chase-Lev deque's races (a steal and a pop never
// collide here), stealing half a queue (Go, Tokio), the submitter helping
// (common ForkJoinPool), a LIFO slot, and a steal's own CPU cost.
#include "sim/work_stealing.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "models/assert.hpp"
#include "models/rng.hpp"
#include "models/steal_policy.hpp"
#include "sim/driver.hpp"

namespace poolsim::sim {

namespace {

class WorkStealing final : public Runtime {
 public:
  WorkStealing(const SimContext& ctx, const WorkStealingFlavor& flavor)
      : k_(ctx.kernel), driver_(ctx.driver), flavor_(flavor) {
    flavor_.threads = std::max(1, flavor_.threads);
    flavor_.spin_rounds = std::max(1, flavor_.spin_rounds);
    const auto& m = k_.machine();
    if (flavor_.runtime_bytes) k_.set_runtime_memory(*flavor_.runtime_bytes);
    k_.set_worker_stack(m.worker_stack, flavor_.worker_stack_total);
    workers_.resize(static_cast<std::size_t>(flavor_.threads));
    for (int i = 0; i < flavor_.threads; ++i)
      workers_[static_cast<std::size_t>(i)].rng =
          Rng::derive(ctx.scenario.seed, static_cast<std::uint64_t>(i));
  }

  Co submit(std::uint32_t task) override {
    if (!started_) {
      started_ = true;
      const int first = flavor_.chain_start ? std::min(2, flavor_.threads) : flavor_.threads;
      for (int i = 0; i < first; ++i) co_await start_worker(i);
    }
    const int w = worker_index(k_.self());
    // The task object is built before the push (task_group::defer): its
    // bytes count from here, and a heap that grows past its high-water mark
    // faults its new pages in on this thread (Kernel::heap_touch).
    Duration cost = k_.heap_touch(flavor_.queued_task_bytes);
    if (const Duration push = w >= 0 ? flavor_.spawn_cost : flavor_.push_cost; push > Duration{0}) {
      const bool remote = shared_cpu_ >= 0 && shared_cpu_ != k_.current_cpu();
      cost += push + (remote ? k_.machine().queue_handover_remote : Duration{0});
    }
    // A worker's first spawn sets up what its later ones reuse (oneTBB: the
    // thread's tbbmalloc heap, its slot's task pool).
    if (w >= 0 && !std::exchange(workers_[static_cast<std::size_t>(w)].spawned, true))
      cost += flavor_.first_spawn_cost;
    if (cost > Duration{0}) co_await k_.compute(cost);
    shared_cpu_ = static_cast<std::int16_t>(k_.current_cpu());  // where it ran when it pushed
    if (w >= 0)
      workers_[static_cast<std::size_t>(w)].deque.push_back(task);
    else
      injection_.push_back(task);
    ++pending_;
    if (!flavor_.wake_all_when_empty) {
      // The twin's park_cv_.notify_one: glibc's signal may wait for a parker
      // it woke before to run (CondVar).
      if (park_cv_.waiters() > 0)
        while (!k_.cv_try_signal(park_cv_)) co_await k_.cv_quiesce(park_cv_);
    } else if (std::exchange(arena_empty_, false)) {
      // oneTBB's advertise_new_work: the submit that turns the arena from
      // empty to full asks the market for every worker and wakes them all;
      // while it is full, a submit wakes nobody.
      k_.notify_all(park_);
    }
  }

  void report(std::map<std::string, double>& extra) const override {
    StealCounts sum;
    for (const Worker& w : workers_) sum.add(w.c);
    sum.report(extra);
  }

 private:
  struct Worker {
    std::deque<std::uint32_t> deque;  // back = owner end, front = thief end
    Rng rng{0};
    StealCounts c;
    bool spawned = false;  // it has submitted from inside the runtime (first_spawn_cost paid)
  };

  // The queues as find_work() sees them; the simulator's single event loop
  // needs no lock.
  struct Queues {
    WorkStealing& ws;
    std::optional<std::uint32_t> pop_local(int self) {
      return take_back(ws.workers_[static_cast<std::size_t>(self)].deque);
    }
    std::optional<std::uint32_t> pop_injection() { return take_front(ws.injection_); }
    std::optional<std::uint32_t> steal(int victim) {
      return take_front(ws.workers_[static_cast<std::size_t>(victim)].deque);
    }
    std::optional<std::uint32_t> take_back(std::deque<std::uint32_t>& d) {
      if (d.empty()) return std::nullopt;
      const std::uint32_t t = d.back();
      d.pop_back();
      taken();
      return t;
    }
    std::optional<std::uint32_t> take_front(std::deque<std::uint32_t>& d) {
      if (d.empty()) return std::nullopt;
      const std::uint32_t t = d.front();
      d.pop_front();
      taken();
      return t;
    }
    void taken() {
      ws.shared_cpu_ = static_cast<std::int16_t>(ws.k_.current_cpu());
      --ws.pending_;
      POOLSIM_ASSERT(ws.pending_ >= 0, "more tasks taken than submitted");
      ws.k_.heap_release(ws.flavor_.queued_task_bytes);
    }
  };

  // The calling thread pays thread_create; the new worker's id is mapped to
  // its index before it can run.
  Co start_worker(int i) {
    const ThreadId t = co_await k_.spawn(worker(i), flavor_.role);
    if (i > 0) k_.memory_add(flavor_.worker_bytes);  // the first one's is in runtime_bytes
    if (worker_of_.size() <= t) worker_of_.resize(t + 1, -1);
    worker_of_[t] = i;
  }

  int worker_index(ThreadId t) const { return t < worker_of_.size() ? worker_of_[t] : -1; }

  Co worker(int i) {
    if (flavor_.chain_start) {
      for (int child = 2 * i + 2; child <= 2 * i + 3 && child < flavor_.threads; ++child)
        co_await start_worker(child);
    }
    // The library's set-up of the worker before it first looks for work,
    // measured up to its first arena entry (calibrate's tbb_worker_start),
    // here after the chain's creations.
    if (flavor_.worker_start_cost > Duration{0}) co_await k_.compute(flavor_.worker_start_cost);
    Worker& w = workers_[static_cast<std::size_t>(i)];
    SpinThenPark idle(flavor_.spin_rounds);
    Queues queues{*this};
    for (;;) {
      const auto t = find_work(
          queues, i, flavor_.threads, flavor_.all_victims_per_round, [&w] { return w.rng.next(); },
          w.c);
      if (t) {
        idle.found();
        co_await driver_.execute(*t);
        continue;
      }
      if (idle.missed() == SpinThenPark::Next::spin) {
        ++w.c.spins;
        co_await k_.compute(flavor_.spin_cost);
        if (flavor_.yield_from >= 0 && idle.failed() > flavor_.yield_from) co_await k_.yield_cpu();
        continue;
      }
      ++w.c.parks;
      // Out of work (pending_ is 0 after a failed round): the arena is empty
      // again (oneTBB: is_out_of_work marks the pool state EMPTY and the
      // workers leave).
      POOLSIM_ASSERT(pending_ == 0, "a worker parks with tasks queued");
      arena_empty_ = true;
      if (flavor_.wake_all_when_empty)
        co_await k_.wait(park_);
      else
        co_await k_.cv_wait(park_cv_);
    }
  }

  Kernel& k_;
  Driver& driver_;
  WorkStealingFlavor flavor_;
  std::vector<Worker> workers_;
  std::vector<int> worker_of_;  // ThreadId -> worker index, -1 for other threads
  std::deque<std::uint32_t> injection_;
  // The CPU of the last push or take anywhere in the runtime (-1: none
  // yet): every one of them writes the runtime's shared state (the real
  // twin's pending_ count; oneTBB's task_group reference count and pool
  // state), whose line a submit on another CPU then brings over.
  std::int16_t shared_cpu_ = -1;
  std::int64_t pending_ = 0;
  bool started_ = false;
  bool arena_empty_ = true;  // wake_all_when_empty: the arena's pool state
  WaitQueue park_;           // oneTBB's sleeping workers (wake_all_when_empty)
  CondVar park_cv_;          // our work stealing's: the twin's std::condition_variable
};

}  // namespace

std::unique_ptr<Runtime> make_work_stealing_runtime(const SimContext& ctx,
                                                    const WorkStealingFlavor& flavor) {
  return std::make_unique<WorkStealing>(ctx, flavor);
}

std::unique_ptr<Runtime> make_work_stealing(const SimContext& ctx) {
  WorkStealingFlavor f;
  f.threads = ctx.scenario.backend.threads;
  f.spin_rounds = StealPolicy{}.spin_rounds;
  // A failed round of the real twin looks into threads + 1 locked queues
  // (its own deque, the injection queue, every victim), each about one side
  // of a locked hand-over, then runs one pause instruction.
  f.spin_cost = ctx.kernel.machine().queue_handover * (std::max(1, f.threads) + 1);
  // Its submits lock a deque and push, from the submitter or a worker alike.
  f.push_cost = f.spawn_cost = ctx.kernel.machine().steal_push;
  f.worker_stack_total = ctx.kernel.machine().steal_stack;
  return make_work_stealing_runtime(ctx, f);
}

}  // namespace poolsim::sim
