// calibrate_exits.cpp: the kernel work thread exits leave behind
// (sim/exit_work.hpp) as the fields rcu_gp_length, rcu_gp_interval and
// kthread_run.
//
// Mechanism: a spinner on every CPU keeps the CPUs busy, as in a loaded run,
// and the runs and CPU time of the kernel's own threads are read from
// /proc/<pid>/schedstat (run count, sum_exec_runtime) of every kernel thread
// (PF_KTHREAD), in two classes: the RCU grace-period kthread (rcu_preempt,
// rcu_sched) and the kworkers (reported, not modelled: sim/exit_work.hpp).
// Three phases:
//   1. no exits (kExitBaseNs): the classes' rates without exits;
//   2. isolated exits: a thread created and joined every kSparseGapNs, long
//      past a grace period, so each exit starts its own: the kthread's
//      runs per exit beyond its rate are the runs of one grace period;
//   3. batches every kBatchGapNs, of kBatch threads kept alive, then
//      released and joined, the creator and its threads on CPU 0 (about
//      800 exits a second, and of each batch's kernel stacks all but the
//      CPU's cache of 2 vfree'd by its kworker): grace periods back to back
//      (an exit during each), so the kthread's extra rate is
//      1 / rcu_gp_interval.
// rcu_gp_length is the runs of one grace period times rcu_gp_interval;
// kthread_run the kthread's extra CPU time over its extra runs in phase 3.
// Left out: kernel threads of other names (ksoftirqd: its runs stayed near
// its rate without exits here), and other processes' exits during the
// measurement (the quiet check before the noise step covers them).
#include <dirent.h>
#include <fmt/format.h>
#include <pthread.h>
#include <semaphore.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "real/calibrate_experiments.hpp"

namespace poolsim::real::calib {
namespace {

constexpr std::int64_t kExitBaseNs = 600'000'000;
constexpr std::int64_t kSparseGapNs = 150'000'000;
constexpr int kSparseExits = 6;
constexpr std::int64_t kBatchGapNs = 5'000'000;
constexpr int kBatch = 4;
constexpr int kBatches = 120;
constexpr int kCachedStacks = 2;  // kernel/fork.c NR_CACHED_STACKS: reported stacks over it

void* exit_at_once(void*) { return nullptr; }

void* wait_then_exit(void* sem) {
  while (sem_wait(static_cast<sem_t*>(sem)) != 0) {
  }
  return nullptr;
}

struct KthreadWindow {
  KthreadRuns runs;
  double seconds = 0;
};

// The kernel threads' counters across `body`.
template <class F>
KthreadWindow measure_window(F&& body) {
  const KthreadRuns a = read_kthread_runs();
  const std::int64_t t0 = now_ns();
  body();
  const std::int64_t t1 = now_ns();
  const KthreadRuns b = read_kthread_runs();
  return {b - a, static_cast<double>(t1 - t0) * 1e-9};
}

}  // namespace

KthreadClass kthread_class(std::string_view comm) {
  if (comm == "rcu_preempt" || comm == "rcu_sched") return KthreadClass::rcu_gp;
  if (comm.substr(0, 8) == "kworker/") return KthreadClass::kworker;
  return KthreadClass::other;
}

bool parse_kthread_stat(std::string_view stat, std::string& comm) {
  // pid (comm) state ppid pgrp session tty_nr tpgid flags ...: comm may hold
  // spaces and parentheses, so the last ')' ends it.
  const auto l = stat.find('('), r = stat.rfind(')');
  if (l == std::string_view::npos || r == std::string_view::npos || r < l) return false;
  comm.assign(stat.substr(l + 1, r - l - 1));
  unsigned long flags = 0;
  const std::string rest(stat.substr(r + 1));
  if (std::sscanf(rest.c_str(), " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1) return false;
  constexpr unsigned long kPfKthread = 0x00200000;  // include/linux/sched.h PF_KTHREAD
  return (flags & kPfKthread) != 0;
}

KthreadRuns read_kthread_runs() {
  KthreadRuns k;
  DIR* d = opendir("/proc");
  if (!d) return k;
  std::string comm;
  while (const dirent* e = readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream stat(fmt::format("/proc/{}/stat", pid));
    std::string line;
    if (!std::getline(stat, line) || !parse_kthread_stat(line, comm)) continue;
    const KthreadClass c = kthread_class(comm);
    if (c == KthreadClass::other) continue;
    std::ifstream ss(fmt::format("/proc/{}/schedstat", pid));
    double ns = 0, wait = 0, runs = 0;
    if (!(ss >> ns >> wait >> runs)) continue;
    if (c == KthreadClass::rcu_gp) {
      k.gp_runs += runs;
      k.gp_ns += ns;
    } else {
      k.kw_runs += runs;
      k.kw_ns += ns;
    }
  }
  closedir(d);
  return k;
}

std::vector<Measurement> exit_work_fields(const ExitWorkPhases& p) {
  const KthreadRuns& b = p.base;
  const double gp_rate0 = b.gp_runs / p.base_s, kw_rate0 = b.kw_runs / p.base_s;
  const double ns_rate0 = b.gp_ns / p.base_s;
  // Phase 2: the grace period's runs, one grace period per exit.
  const double gp_runs = std::max(0.0, (p.sparse.gp_runs - gp_rate0 * p.sparse_s) / p.sparse_exits);
  // Phase 3: grace periods back to back.
  const double runs_extra = p.batch.gp_runs - gp_rate0 * p.batch_s;
  const double interval = runs_extra > 0 ? p.batch_s / runs_extra : 0;
  const double length = gp_runs * interval;
  const double ns_extra = p.batch.gp_ns - ns_rate0 * p.batch_s;
  const double run = runs_extra > 0 ? std::max(0.0, ns_extra / runs_extra) * 1e-9 : 0;
  const std::string how = fmt::format(
      "spinners on every CPU; without exits {:.0f} grace-period kthread and {:.0f} kworker runs "
      "a second; {} isolated exits: {:.2f} kthread runs each beyond that; {} batches of {} "
      "(grace periods back to back): {:.0f} kthread runs a second; kworkers (not modelled) {:.0f} "
      "runs for {:.0f} kernel stacks over the cache",
      gp_rate0, kw_rate0, p.sparse_exits, gp_runs, p.batches, p.batch_size,
      p.batch.gp_runs / p.batch_s, p.batch.kw_runs, p.batch_vfrees);
  std::vector<Measurement> out;
  out.push_back(summarize("rcu_gp_length", {length}, how));
  out.push_back(summarize("rcu_gp_interval", {interval},
                          "the batches' time over the grace-period kthread's extra runs in it"));
  out.push_back(summarize("kthread_run", {run},
                          "the kthread's extra CPU time (schedstat) over its extra runs"));
  return out;
}

std::vector<Measurement> measure_exit_work(int cpus) {
  std::vector<std::unique_ptr<Spinner>> spinners;
  for (int c = 0; c < cpus; ++c) spinners.push_back(std::make_unique<Spinner>(c));
  // Earlier experiments' exits: let their grace periods end.
  sleep_until_ns(now_ns() + 100'000'000);
  ExitWorkPhases p;
  p.sparse_exits = kSparseExits;
  p.batches = kBatches;
  p.batch_size = kBatch;
  const KthreadWindow base = measure_window([] { sleep_until_ns(now_ns() + kExitBaseNs); });
  p.base = base.runs;
  p.base_s = base.seconds;
  const KthreadWindow sparse = measure_window([] {
    std::int64_t t = now_ns();
    for (int i = 0; i < kSparseExits; ++i) {
      pthread_t th;
      if (pthread_create(&th, nullptr, &exit_at_once, nullptr) == 0) pthread_join(th, nullptr);
      t += kSparseGapNs;
      sleep_until_ns(t);
    }
  });
  p.sparse = sparse.runs;
  p.sparse_s = sparse.seconds;
  // The creator and its threads on CPU 0: every stack is freed there.
  pin_self(0);
  int made = 0;
  const KthreadWindow batch = measure_window([&] {
    sem_t sem;
    sem_init(&sem, 0, 0);
    std::int64_t t = now_ns();
    for (int b = 0; b < kBatches; ++b) {
      std::vector<pthread_t> ths;
      for (int i = 0; i < kBatch; ++i) {
        pthread_t th;
        if (pthread_create(&th, nullptr, &wait_then_exit, &sem) == 0) ths.push_back(th);
      }
      for (std::size_t i = 0; i < ths.size(); ++i) sem_post(&sem);
      for (pthread_t th : ths) pthread_join(th, nullptr);
      made += static_cast<int>(ths.size());
      p.batch_vfrees += std::max(0, static_cast<int>(ths.size()) - kCachedStacks);
      t += kBatchGapNs;
      sleep_until_ns(t);
    }
    sem_destroy(&sem);
  });
  unpin_self(cpus);
  p.batch = batch.runs;
  p.batch_s = batch.seconds;
  spinners.clear();
  if (made == 0) return {};
  return exit_work_fields(p);
}

}  // namespace poolsim::real::calib
