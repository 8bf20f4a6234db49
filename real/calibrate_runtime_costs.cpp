// calibrate_runtime_costs.cpp: a runtime's own per-task CPU work, measured by
// `poolsim calibrate` (docs/calibration.md, "Runtime costs").
// A runtime's own per-task CPU work, measured by running the real backends
// themselves (real/pool.cpp, real/virtual_threads.cpp, real/event_loop.cpp,
// through run_repetition, in this process) on empty tasks: the run's CPU time
// (getrusage, every thread) divided by the task count, the median of several
// runs after a warm-up run. It includes the runner's per-task recording (a
// clock read at submit, start and end), which every real run pays too.
//   queue_handover_remote  two threads pinned to CPUs 0 and 1 take turns
//                   (a turn word) at a std::mutex-guarded std::deque, one
//                   pushing, one popping: the wall time per turn less that of
//                   turns with nothing done under the lock, less the push or
//                   pop on one CPU; median of rounds of 100,000 turns. What a
//                   push or pop adds when another CPU used the queue last
//                   (its lock word and the deque's lines move).
//   queue_lock_hold the same std::mutex and std::deque on one thread pinned
//                   to CPU 0: lock, push, unlock, lock, pop, unlock, 100,000
//                   times; the time per push or pop (median of rounds).
//                   The part of queue_handover under the queue's lock; the
//                   rest is each side's own work (the harness's time stamps
//                   and records), done outside it.
//   queue_handover  pool of 1 worker, a batch of `cpu: 0ns` tasks from the
//                   submitter, both on CPU 0 (so the queue's lock is not
//                   contended): half the CPU per task (one push by the
//                   submitter, one pop by the worker).
//   queue_push      the same runs: the mean gap between the submitter's
//                   consecutive hand-overs (its push, time stamps and
//                   record; the worker cannot run until its slice ends),
//                   gaps of 2 us or more (interruptions: noise_*) left out;
//                   the median of the runs' means: the submitting side's
//                   part of the two queue_handover.
//   steal_push      our work stealing, 1 worker, the same batch on CPU 0:
//                   the mean gap as queue_push's (its injection queue is a
//                   locked deque, as a worker's own is).
//   release_stamp   our work stealing, 1 worker on CPU 0, a fork-join of
//                   empty tasks (depth 6, fanout 3): the mean lag of each
//                   release's first hand-over (its successors share the
//                   release's instant as their intended arrival): the
//                   harness's second time stamp and the record's store.
//   tbb_enqueue     oneTBB, 1 worker, the same batch on CPU 0: the mean gap
//                   (arena.enqueue: a task object into the arena's stream).
//   tbb_spawn       oneTBB, 1 worker on CPU 0, a fork of 1,000 empty tasks:
//                   the mean gap between their hand-overs, which the worker
//                   makes back to back (task_group::run into its own pool).
//   fiber_create    virtual threads on 1 carrier, 1,000 closed clients
//                   issuing `cpu: 0ns` requests: the CPU per request less two
//                   queue_handover (the intake's push and pop).
//   fiber_switch    the same with `wait: 1ms` requests, so 1,000 virtual
//                   threads are alive and each resumes after ~1,000 others
//                   ran (its stack is cold): half the extra CPU per request
//                   (an unmount and a remount).
//   loop_post       event loop of 1 loop, 1,000 closed clients issuing
//                   `cpu: 0ns` requests: the mean gap (as queue_push's)
//                   between the submitter's consecutive posts of the clients' first
//                   requests (back to back; the later ones the loop posts
//                   itself): Asio's post from outside the loop (the handler
//                   allocated by malloc, the outstanding-work count, the
//                   push under the scheduler's mutex) with the harness's
//                   time stamp and record.
//   timer_arm       event loop of 1 loop, 1,000 closed clients: CPU per
//                   request with `wait: 1ms` less without (a timer armed,
//                   with 1,000 pending, and its completion dispatched).
//   task_remote     event loop, 1,000 closed clients issuing `cpu: 1us`,
//                   `wait: 1ms` requests: the CPU per task with 2 loops (on
//                   both CPUs) less with 1, divided by the share of tasks
//                   the 2-loop run started on another CPU than their
//                   submitter's (the harness counts them:
//                   RunContext::remote_starts). What a task's record and the
//                   runtime's per-task state (Asio's handler, its timer)
//                   cost to bring over from the other CPU's cache. With 1
//                   loop the loop submits its clients' next tasks itself and
//                   runs them on its own CPU; with 2, the round robin sends
//                   about half to the other loop (2026-12-04: 1.57 us per
//                   task against 2.43, 48% started remotely). The loops have
//                   no shared queue: the figure holds no lock contention.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/runner.hpp"

namespace poolsim::real::calib {

namespace {
// CPU seconds per task of the real backend `backend` (a YAML flow map) running
// `count` tasks made of the single phase `phase` with the arrival `arrival`
// (a YAML flow map), in this process (run_repetition, no sampler): one value
// per run, after one warm-up run.
struct BackendRun {
  double cpu_per_task = 0;    // seconds
  double remote_share = 0;    // tasks started on another CPU than their submitter's, per task
  double submit_gap = 0;      // mean seconds between consecutive hand-overs (mean_submit_gap)
  double first_wave_gap = 0;  // the same among the first wave's (intended at 0: closed clients)
  double release_lag = 0;     // mean lag of a release's first hand-over (mean_release_lag)
};

// The hand-over instants of a run's tasks, in seconds, in order; with
// `first_wave`, only those meant to arrive at the origin (a closed run's
// first request of each client, posted back to back by the submitter).
std::vector<double> handovers(const RunResult& r, bool first_wave = false) {
  std::vector<double> at;
  for (const TaskRecord& rec : r.records)
    if (rec.outcome != TaskOutcome::not_run && (!first_wave || rec.intended == Duration{0}))
      at.push_back(to_seconds(rec.submit));
  std::sort(at.begin(), at.end());
  return at;
}

// A gap between two hand-overs this long or longer had the submitter
// interrupted: the OS noise the profile's noise_* fields model (the noise
// calibration's threshold for an interrupted quantum, real/os_noise.cpp).
constexpr double kInterrupted = 2e-6;

// The mean gap between consecutive hand-overs of a run (or of its first
// wave), the first (which starts the runtime) left out, and so are the
// interrupted ones (kInterrupted). A mean, not a median: every 128th push
// into a std::deque allocates a block, and some posts find a line another
// CPU wrote; the lag of a burst is their sum (2026-12-05: the pool's
// gaps' mean 7-11% over their median, the event loop's 8-48%, virtual
// threads' 10-40%).
double mean_submit_gap(const RunResult& r, bool first_wave = false) {
  const std::vector<double> at = handovers(r, first_wave);
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = 2; i < at.size(); ++i) {
    const double gap = at[i] - at[i - 1];
    if (gap >= kInterrupted) continue;
    sum += gap;
    ++n;
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}
// The mean lag of each release's first hand-over (handovers_by_release):
// the harness's stamps between the release and its hand-over
// (release_stamp). Lags of 2 us or more (interruptions) left out.
double mean_release_lag(const RunResult& r) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& [at, submits] : handovers_by_release(r.records)) {
    const double lag = submits.front() - to_seconds(at);
    if (lag < 0 || lag >= kInterrupted) continue;
    sum += lag;
    ++n;
  }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

// The runs of backend_runs with any workload (a YAML block under
// `workload:`, indented by two spaces).
std::vector<BackendRun> workload_runs(const std::string& backend, const std::string& workload,
                                      int count, int trials) {
  const std::string yaml = fmt::format(
      "name: calibrate-runtime-costs\nseed: 1\nmachine: default\n"
      "workload:\n{}"
      "backend: {}\nrun: {{reps: 1, warmup: 0, timeout: 60s}}\n",
      workload, backend);
  const Scenario s = load_scenario_text(yaml, "<calibrate>");
  const Workload w = generate_workload(s);
  RealOptions opt;
  opt.sample_period = Duration{0};
  std::vector<BackendRun> out;
  for (int t = 0; t <= trials; ++t) {
    const RunResult r = run_repetition(s, w, opt);
    std::int64_t done = 0;
    for (const TaskRecord& rec : r.records) done += rec.outcome == TaskOutcome::completed;
    if (done < count)
      throw std::runtime_error("calibrate: a runtime-cost run completed too few tasks");
    const auto remote = r.extra.find("remote_starts");
    const double n = static_cast<double>(done);
    if (t > 0)
      out.push_back({to_seconds(r.counters.cpu_time) / n,
                     remote == r.extra.end() ? 0.0 : remote->second / n, mean_submit_gap(r),
                     mean_submit_gap(r, true), mean_release_lag(r)});
  }
  return out;
}

std::vector<BackendRun> backend_runs(const std::string& backend, const std::string& arrival,
                                     const std::string& phase, int count, int trials) {
  return workload_runs(backend, fmt::format("  arrival: {}\n  task:\n    - {}\n", arrival, phase),
                       count, trials);
}

std::vector<double> backend_cpu_per_task(const std::string& backend, const std::string& arrival,
                                         const std::string& phase, int count, int trials) {
  std::vector<double> out;
  for (const BackendRun& r : backend_runs(backend, arrival, phase, count, trials))
    out.push_back(r.cpu_per_task);
  return out;
}

}  // namespace

// thread_create_first (real/calibrate_experiments.hpp).
Measurement measure_first_creation(int reps, double reserve) {
  // Larger than any stack glibc's cache holds (calibrate's own threads
  // filled the cache its children inherit; the runner's parent has none):
  // each creation maps its own stack, as in a run's children.
  const auto stack = static_cast<std::int64_t>(reserve > 0 ? reserve : 8 << 20) + (64 << 10);
  const std::string yaml = fmt::format(
      "name: calibrate-first-creation\nseed: 1\nmachine: default\nlimits: {{cpuset: \"0\"}}\n"
      "workload:\n  arrival: {{kind: batch, count: 3}}\n  task:\n    - {{cpu: 0ns}}\n"
      "backend: {{kind: pool, threads: 2, stack: {}B}}\nrun: {{reps: {}, warmup: 1, timeout: "
      "60s}}\n",
      stack, reps);
  const Scenario s = load_scenario_text(yaml, "<calibrate>");
  const Workload w = generate_workload(s);
  RealOptions opt;
  opt.sample_series = false;
  std::vector<double> extra, first, second;
  for (const RunResult& r : run_scenario(s, w, opt)) {
    const std::vector<double> at = handovers(r);
    if (at.size() < 3) continue;
    first.push_back(at[1] - at[0]);
    second.push_back(at[2] - at[1]);
    extra.push_back(first.back() - second.back());
  }
  if (extra.empty()) throw std::runtime_error("calibrate: the first-creation runs failed");
  return summarize(
      "thread_create_first", {std::max(0.0, mean_of(extra))},
      fmt::format("the runner (forked children, their sampler, the origin), the real pool of 2 "
                  "workers on CPU 0 alone, 3 empty tasks at once: the first hand-over's creation "
                  "(median {}) less the second's (median {}), mean of {} repetitions (median {})",
                  format_seconds(quantile(first, 0.5)), format_seconds(quantile(second, 0.5)),
                  extra.size(), format_seconds(quantile(extra, 0.5))));
}

// origin_util (real/calibrate_experiments.hpp).
Measurement measure_origin_util(int reps) {
  const std::string yaml = fmt::format(
      "name: calibrate-origin\nseed: 1\nmachine: default\n"
      "workload:\n  arrival: {{kind: batch, count: 3}}\n  task:\n    - {{cpu: 10us}}\n"
      "backend: {{kind: pool, threads: 2}}\nrun: {{reps: {}, warmup: 1, timeout: 60s}}\n",
      reps);
  const Scenario s = load_scenario_text(yaml, "<calibrate>");
  RealOptions opt;
  opt.sample_series = false;
  std::vector<double> util;
  for (const RunResult& r : run_scenario(s, generate_workload(s), opt)) {
    const auto it = r.extra.find("origin_util");
    if (it != r.extra.end()) util.push_back(it->second);
  }
  if (util.empty())
    return summarize("origin_util", {0.0},
                     "the kernel does not show a thread's se.avg.util_avg: no past assumed");
  return summarize(
      "origin_util", util,
      fmt::format("the runner (forked children, their sampler, the origin), the real pool of 2 "
                  "workers, 3 tasks of 10 us: the submitter's se.avg.util_avg just before the "
                  "origin, median of {} repetitions ({:.3f}-{:.3f})",
                  util.size(), *std::min_element(util.begin(), util.end()),
                  *std::max_element(util.begin(), util.end())));
}

// task_remote (see the header comment).
Measurement measure_task_remote(int trials, int count, int cpus) {
  if (cpus < 2) return summarize("task_remote", {0.0}, "one CPU: no task starts on another CPU");
  const std::string closed =
      fmt::format("{{kind: closed, clients: 1000, think: 0ms, duration: 60s, count: {}}}", count);
  const std::string phases = "{cpu: 1us}\n    - {wait: 1ms}";
  const auto one = backend_runs("{kind: event-loop, loops: 1}", closed, phases, count, trials);
  const auto two = backend_runs("{kind: event-loop, loops: 2}", closed, phases, count, trials);
  std::vector<double> per_start, c1, c2, share;
  for (std::size_t k = 0; k < one.size() && k < two.size(); ++k) {
    c1.push_back(one[k].cpu_per_task);
    c2.push_back(two[k].cpu_per_task);
    share.push_back(two[k].remote_share);
    if (two[k].remote_share > 0.05)
      per_start.push_back(std::max(0.0, two[k].cpu_per_task - one[k].cpu_per_task) /
                          two[k].remote_share);
  }
  if (per_start.empty())
    return summarize("task_remote", {0.0},
                     "real event loop, 2 loops: no task started on another CPU than its "
                     "submitter's");
  return summarize(
      "task_remote", per_start,
      fmt::format("real event loop, 1000 closed clients, {} requests of 1 us and a 1 ms wait: CPU "
                  "per task with 2 loops ({:.3g} us) less with 1 ({:.3g} us), per task started on "
                  "another CPU than its submitter's ({:.0f}% of them)",
                  count, quantile(c2, 0.5) * 1e6, quantile(c1, 0.5) * 1e6,
                  quantile(share, 0.5) * 100));
}

namespace {
// A push and a pop of real/pool.cpp's queue under its mutex, on this thread,
// `turns` times: wall nanoseconds per push or pop (the lines stay in this
// CPU's cache, the lock is never contended).
double local_push_pop_ns(std::mutex& mu, std::deque<std::uint32_t>& q, long turns) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < turns; ++i) {
    {
      std::lock_guard lk(mu);
      q.push_back(static_cast<std::uint32_t>(i));
    }
    std::lock_guard lk(mu);
    q.pop_front();
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         (2.0 * static_cast<double>(turns));
}
}  // namespace

// queue_lock_hold (see the header comment).
Measurement measure_queue_lock_hold(int rounds) {
  constexpr long kTurns = 100000;
  std::mutex mu;
  std::deque<std::uint32_t> q;
  pin_self(0);
  local_push_pop_ns(mu, q, kTurns);  // warm-up: the deque's blocks, the code
  std::vector<double> ns;
  for (int r = 0; r < rounds; ++r) ns.push_back(local_push_pop_ns(mu, q, kTurns) * 1e-9);
  return summarize("queue_lock_hold", ns,
                   fmt::format("a std::mutex-guarded std::deque on CPU 0: lock, push, unlock, "
                               "lock, pop, unlock, {} times; time per push or pop, median of {} "
                               "rounds",
                               kTurns, rounds));
}

// queue_handover_remote (see the header comment).
Measurement measure_queue_handover_remote(int rounds, int cpus) {
  if (cpus < 2)
    return summarize("queue_handover_remote", {0.0}, "one CPU: no other CPU to take the queue");
  constexpr long kTurns = 100000;
  alignas(64) std::atomic<long> turn{0};
  std::mutex mu;
  std::deque<std::uint32_t> q;  // real/pool.cpp's queue
  const auto wall = [] { return std::chrono::steady_clock::now(); };
  const auto ns_per = [](auto d, double n) {
    return std::chrono::duration<double, std::nano>(d).count() / n;
  };
  // Two threads pinned to CPUs 0 and 1 take turns; with `op` each turn pushes
  // (CPU 0) or pops (CPU 1) under the mutex. Wall time per turn.
  const auto alternate = [&](bool op) {
    turn.store(0);
    const auto side = [&](int me) {
      pin_self(me);
      for (long i = 0; i < kTurns; ++i) {
        const long mine = 2 * i + me;
        while (turn.load(std::memory_order_acquire) != mine) {
        }
        if (op) {
          std::lock_guard lk(mu);
          if (me == 0)
            q.push_back(static_cast<std::uint32_t>(i));
          else
            q.pop_front();
        }
        turn.store(mine + 1, std::memory_order_release);
      }
    };
    const auto t0 = wall();
    std::thread other(side, 1);
    side(0);
    other.join();
    return ns_per(wall() - t0, 2.0 * kTurns);
  };
  // The same push and pop on one CPU, the lines staying in its cache.
  const auto local = [&] {
    pin_self(0);
    return local_push_pop_ns(mu, q, kTurns);
  };
  std::vector<double> extra;
  double e = 0, o = 0, l = 0;
  for (int r = 0; r < rounds; ++r) {
    e = alternate(false);
    o = alternate(true);
    l = local();
    extra.push_back(std::max(0.0, o - e - l) * 1e-9);
  }
  return summarize("queue_handover_remote", extra,
                   fmt::format("threads on CPUs 0 and 1 take turns at a locked deque (push, pop): "
                               "{:.0f} ns per turn less {:.0f} ns with nothing under the lock, "
                               "less {:.0f} ns on one CPU (last of {} rounds)",
                               o, e, l, rounds));
}

namespace {
// steal_push, tbb_enqueue and tbb_spawn (see the header comment), on the
// CPU the caller pinned itself to: the submitter's pushes in a batch, and
// oneTBB's spawns from a worker (the 1,000 tasks a fork releases, handed
// over back to back).
std::vector<Measurement> measure_steal_submits(int trials, int count, const std::string& batch) {
  std::vector<double> steal, enqueue, spawn;
  for (const BackendRun& r :
       backend_runs("{kind: work-stealing, threads: 1}", batch, "cpu: 0ns", count, trials))
    steal.push_back(r.submit_gap);
  for (const BackendRun& r :
       backend_runs("{kind: tbb, threads: 1}", batch, "cpu: 0ns", count, trials))
    enqueue.push_back(r.submit_gap);
  constexpr int kFanout = 1000;
  for (const BackendRun& r : workload_runs(
           "{kind: tbb, threads: 1}",
           fmt::format("  graph: {{fork_join: {{depth: 1, fanout: {}, leaf: [{{cpu: 0ns}}], "
                       "fork: [{{cpu: 0ns}}], join: [{{cpu: 0ns}}]}}}}\n",
                       kFanout),
           kFanout, trials))
    spawn.push_back(r.submit_gap);
  // release_stamp: a fork-join of fanout 3 (364 releases of three, 364 of
  // one), each release's first hand-over by the worker that completed its
  // predecessor.
  std::vector<double> stamp;
  for (const BackendRun& r : workload_runs(
           "{kind: work-stealing, threads: 1}",
           "  graph: {fork_join: {depth: 6, fanout: 3, leaf: [{cpu: 0ns}], fork: [{cpu: 0ns}], "
           "join: [{cpu: 0ns}]}}\n",
           729, trials))
    stamp.push_back(r.release_lag);
  return {
      summarize("steal_push", steal,
                "the real work stealing, 1 worker, a batch of empty tasks, on CPU 0: the mean gap "
                "between the submitter's consecutive hand-overs (gaps of 2 us or more, "
                "interruptions, left out)"),
      summarize("tbb_enqueue", enqueue,
                "the real oneTBB, 1 worker, a batch of empty tasks, on CPU 0: the mean gap "
                "between the submitter's consecutive hand-overs (arena.enqueue; gaps of 2 us or "
                "more left out)"),
      summarize("tbb_spawn", spawn,
                fmt::format("the real oneTBB, 1 worker, on CPU 0: a fork of {} empty tasks, the "
                            "mean gap between their consecutive hand-overs by the worker "
                            "(task_group::run; gaps of 2 us or more left out)",
                            kFanout)),
      summarize("release_stamp", stamp,
                "the real work stealing, 1 worker, on CPU 0: a fork-join of empty tasks (depth 6, "
                "fanout 3), the mean lag of each release's first hand-over after the release's "
                "time stamp (lags of 2 us or more left out)")};
}
}  // namespace

// The nine runtime costs (see the header comment): queue_handover,
// queue_push, steal_push, tbb_enqueue, tbb_spawn, fiber_create,
// fiber_switch, loop_post, timer_arm.
std::vector<Measurement> measure_runtime_costs(int trials, int count, int cpus) {
  const std::string batch = fmt::format("{{kind: batch, count: {}}}", count);
  constexpr int kClients = 1000;
  const std::string closed = fmt::format(
      "{{kind: closed, clients: {}, think: 0ms, duration: 60s, count: {}}}", kClients, count);
  const std::string vt = "{kind: virtual-threads, carriers: 1}",
                    el = "{kind: event-loop, loops: 1}";
  // The pool on one CPU: its queue lock is then never held by a thread
  // running on the other CPU, so the figure is the uncontended hand-over
  // (contention is the model's: sim/queue_lock.hpp, futex_call). On two
  // CPUs the same run measured 276-403 ns per task against 156-170.
  // The same runs give the submitter's own part, queue_push: the worker
  // cannot run before the submitter's slice ends, so the gaps between its
  // hand-overs are its push and its records alone.
  pin_self(0);
  std::vector<double> pool, push;
  for (const BackendRun& r :
       backend_runs("{kind: pool, threads: 1}", batch, "cpu: 0ns", count, trials)) {
    pool.push_back(r.cpu_per_task);
    push.push_back(std::min(r.submit_gap, r.cpu_per_task));
  }
  std::vector<Measurement> steal_submits = measure_steal_submits(trials, count, batch);
  unpin_self(cpus);  // the other runtimes on every CPU, as before
  const auto vt0 = backend_cpu_per_task(vt, closed, "cpu: 0ns", count, trials);
  const auto vt1 = backend_cpu_per_task(vt, closed, "wait: 1ms", count, trials);
  // The event loop's closed clients: the submitter posts their first
  // requests back to back (later ones the loop posts itself), so the first
  // wave's gaps are an outside post each (loop_post).
  std::vector<double> el0, post;
  for (const BackendRun& r : backend_runs(el, closed, "cpu: 0ns", count, trials)) {
    el0.push_back(r.cpu_per_task);
    post.push_back(r.first_wave_gap);
  }
  const auto el1 = backend_cpu_per_task(el, closed, "wait: 1ms", count, trials);
  // Derived per run (run i of each experiment), so the spread shows.
  std::vector<double> qh, fc, fs, ta;
  for (double p : pool) qh.push_back(p / 2);
  const double qh_med = quantile(qh, 0.5);
  for (std::size_t k = 0; k < static_cast<std::size_t>(trials); ++k) {
    fc.push_back(std::max(0.0, vt0[k] - 2 * qh_med));
    fs.push_back(std::max(0.0, (vt1[k] - vt0[k]) / 2));
    ta.push_back(std::max(0.0, el1[k] - el0[k]));
  }
  const auto us = [](const std::vector<double>& v) { return quantile(v, 0.5) * 1e6; };
  std::vector<Measurement> out{
      summarize(
          "queue_handover", qh,
          fmt::format(
              "real pool, 1 worker, a batch of {} empty tasks, on CPU 0: CPU per task ({:.3g} us) "
              "/ 2 (push + pop)",
              count, us(pool))),
      summarize("queue_push", push,
                fmt::format("the same runs: the mean gap between the submitter's consecutive "
                            "hand-overs (the worker waits on the same CPU; gaps of 2 us or more, "
                            "interruptions, left out), of {:.3g} us per task",
                            us(pool))),
      summarize(
          "fiber_create", fc,
          fmt::format(
              "real virtual threads, 1 carrier, {} closed clients, {} empty requests: CPU per "
              "request ({:.3g} us) - 2 queue_handover",
              kClients, count, us(vt0))),
      summarize(
          "fiber_switch", fs,
          fmt::format("the same with `wait: 1ms` requests ({:.3g} us): half the extra (unmount + "
                      "remount, {} fibers alive)",
                      us(vt1), kClients)),
      summarize("loop_post", post,
                fmt::format("the event loop's runs without waits: the mean gap between the "
                            "submitter's consecutive posts of the {} clients' first requests (gaps "
                            "of 2 us or more, interruptions, left out)",
                            kClients)),
      summarize("timer_arm", ta,
                fmt::format(
                    "real event loop, 1 loop, {} closed clients: CPU per request with `wait: 1ms` "
                    "({:.3g} us) - without ({:.3g} us)",
                    kClients, us(el1), us(el0)))};
  for (Measurement& m : steal_submits) out.push_back(std::move(m));
  return out;
}

}  // namespace poolsim::real::calib
