// submitter.cpp: the arrival driver of a real repetition, run on the child's
// main thread (the submitter, thread 0).
//
// Mechanism (mirrors the simulator's arrivals, docs/scenarios.md):
//  - batch: every task handed over at t = 0, in id order, by this one thread;
//  - poisson / periodic: clock_nanosleep(TIMER_ABSTIME) to origin + arrival,
//    then hand it over (a late submitter never sleeps: it catches up);
//  - closed: each client's first task after its think time; later tasks are
//    released by the completion of the previous one (RunContext), inline
//    when think is 0, else through the timer queue served here;
//  - graph: the roots at t = 0; other nodes are released by completions.
// Then it serves the timer queue until every task is finalized.
// Left out: coordinated omission correction; a late open arrival is recorded
// with its real (late) submit time, as a real load generator would.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "models/assert.hpp"
#include "real/backend.hpp"

namespace poolsim::real {
namespace {

void sleep_until_monotonic(Duration abs) {
  timespec ts{static_cast<time_t>(abs.count() / 1000000000),
              static_cast<long>(abs.count() % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

// The runner keeps per task a 48-byte record, a descriptor and a final
// flag, which no program a user runs has: written at construction, long
// before the origin, they are out of the caches when the submitter writes
// the first wave's records (java-mixed's 5,000 first posts took 0.143 us
// each, p50, with 250,000 tasks generated against 0.038 us with 12,000,
// 2026-12-04). So the lines of the tasks handed over at t = 0 are read in
// the order the submitter will write them, up to kWarmTasks of them (3
// lines each, 3 MiB: within this machine kind's 4 MiB L2), just before the
// origin. Closed clients' first tasks are tasks 0 .. clients-1
// (closed_task_id), side by side.
void RunContext::warm_first_wave() {
  constexpr std::uint32_t kWarmTasks = 16384;
  const Workload& w = workload_;
  unsigned sink = 0;
  for (const std::uint32_t i : first_wave_tasks(w, kWarmTasks)) {
    sink += static_cast<unsigned>(records_[i].submit_cpu);
    sink += final_flag_[i].load(std::memory_order_relaxed);
    sink += w.tasks[i].id;
  }
  asm volatile("" : : "r"(sink));  // the reads stay (real/cpu_work.cpp's burn does the same)
}

void RunContext::drive_arrivals() {
  const Workload& w = workload_;
  const auto n = static_cast<std::uint32_t>(w.tasks.size());
  if (w.graph) {
    for (std::uint32_t i = 0; i < n; ++i)
      if (w.tasks[i].pred_count == 0) submit_now(i, Duration{0});
  } else {
    switch (w.arrival) {
      case ArrivalKind::batch:
        for (std::uint32_t i = 0; i < n; ++i) submit_now(i, w.tasks[i].arrival);
        break;
      case ArrivalKind::poisson:
      case ArrivalKind::periodic:
        for (std::uint32_t i = 0; i < n; ++i) {
          const Duration at = w.tasks[i].arrival;
          if (now() < at) sleep_until_monotonic(origin_ + at);
          submit_now(i, at);
        }
        break;
      case ArrivalKind::closed:
        // Tasks no client owns are never issued.
        not_run_.fetch_add(closed_unowned_tasks(w), std::memory_order_relaxed);
        for (std::uint32_t c = 0; c < w.clients; ++c) {
          const ClientStep first = closed_client_first(w, c);
          if (!first.next) {
            not_run_.fetch_add(first.never_issued, std::memory_order_relaxed);
            if (active_clients_.fetch_sub(1, std::memory_order_acq_rel) == 1) notify_submitter();
            continue;
          }
          if (first.due.count() == 0) {
            submit_now(*first.next, first.due);
          } else {
            schedule_submit(*first.next, first.due);
          }
        }
        break;
    }
  }
  // Serve the timer queue (closed clients' think times) until done.
  std::unique_lock lk(sub_mu_);
  for (;;) {
    if (all_done()) {
      // Every task is final, once, and the records agree with the counts
      // (their writers released them through finalized_ / active_clients_,
      // which all_done() acquired).
      POOLSIM_ASSERT(outcomes().consistent(records_),
                     "the outcome counts disagree with the task records");
      return;
    }
    if (due_.empty()) {
      sub_cv_.wait(lk, [this] { return all_done() || !due_.empty(); });
      continue;
    }
    const Due next = due_.front();
    if (now() >= next.at) {
      std::pop_heap(due_.begin(), due_.end(), std::greater<>{});
      due_.pop_back();
      lk.unlock();
      submit_now(next.task, next.at);
      lk.lock();
      continue;
    }
    const auto deadline = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(origin_ + next.at));
    sub_cv_.wait_until(lk, deadline);
  }
}

}  // namespace poolsim::real
