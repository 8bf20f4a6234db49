// Runtime costs: the profile's queue_handover, fiber_create, fiber_switch and
// timer_arm are charged as CPU time of the thread that does the work, once
// per push/pop, virtual-thread start, unmount/remount and timer, in every
// runtime whose twin does that work. Every kernel cost is zero here, so the
// run's CPU time is the tasks' work plus exactly these charges.
#include <catch2/catch.hpp>
#include <utility>

#include "runtime_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {
Duration cpu_of(const MachineProfile& m, BackendKind kind, int threads, const Workload& w) {
  const RunResult r = sim::simulate(backend_scenario(m, kind, threads), w);
  for (const TaskRecord& t : r.records) REQUIRE(t.outcome == TaskOutcome::completed);
  return r.counters.cpu_time;
}
// The submitter's last hand-over of a run.
Duration last_submit(const RunResult& r) {
  Duration last{0};
  for (const TaskRecord& t : r.records) last = std::max(last, t.submit);
  return last;
}
}  // namespace

TEST_CASE("runtime_costs.pool: a queue hand-over is charged to the submitter and to the worker",
          "[runtime][costs]") {
  // One worker on one CPU with the submitter, N empty tasks: the first goes
  // to the new worker directly, the other N-1 through the queue, each paying
  // one push (submitter) and one pop (worker), all on the one CPU.
  constexpr int kN = 1000;
  MachineProfile m = zero_machine(1);
  const Workload w = batch(kN, 0ns);
  const RunResult free = sim::simulate(pool_scenario(m, 1), w);
  m.queue_handover = 300ns;
  const RunResult paid = sim::simulate(pool_scenario(m, 1), w);
  CHECK(free.counters.cpu_time == 0ns);
  CHECK(paid.counters.cpu_time == 2 * (kN - 1) * 300ns);
  CHECK(makespan(paid) - makespan(free) == Approx(2 * (kN - 1) * 300e-9).epsilon(1e-6));
  // asio-pool is the same pool, started whole at the first submit: its
  // thread waits for work from the start, so every task, the first too,
  // goes through the queue.
  CHECK(cpu_of(m, BackendKind::asio_pool, 1, w) == 2 * kN * 300ns);
}

TEST_CASE(
    "runtime_costs.queue_push: the submitter pays queue_push per hand-over, the taker the rest of "
    "two queue_handover",
    "[runtime][costs]") {
  // A batch handed over on one CPU: the submitter's hand-overs come back to
  // back (the worker cannot run before its slice ends); the first starts
  // the worker, so the last is made after kN - 2 pushes. The CPU in all is
  // unchanged.
  constexpr int kN = 1000;
  MachineProfile m = zero_machine(1);
  m.queue_handover = 300ns;
  const Workload w = batch(kN, 0ns);
  const RunResult even = sim::simulate(pool_scenario(m, 1), w);
  m.queue_push = 100ns;
  const RunResult split = sim::simulate(pool_scenario(m, 1), w);
  CHECK(even.counters.cpu_time == 2 * (kN - 1) * 300ns);
  CHECK(split.counters.cpu_time == even.counters.cpu_time);
  CHECK(last_submit(even) == (kN - 2) * 300ns);
  CHECK(last_submit(split) == (kN - 2) * 100ns);
  CHECK(push_cost(m) == 100ns);
  CHECK(take_cost(m) == 500ns);
  // Virtual threads: the intake push on the submitter, the pop on a carrier.
  const RunResult vt = sim::simulate(backend_scenario(m, BackendKind::virtual_threads, 1), w);
  CHECK(last_submit(vt) <= (kN - 1) * 100ns);
  // More than two queue_handover is capped: the taker pays nothing.
  m.queue_push = 1ms;
  CHECK(push_cost(m) == 600ns);
  CHECK(take_cost(m) == 0ns);
}

TEST_CASE(
    "runtime_costs.pool: on two CPUs the submitter's and the worker's sides serialize on the "
    "queue's lock, only queue_lock_hold of them when the profile has it",
    "[runtime][costs][lock]") {
  // Submitter and worker on two CPUs: each push and pop holds the queue's
  // mutex for its hand-over (sim/queue_lock.hpp), so they cannot overlap:
  // the makespan grows by both sides per task. System calls free here.
  constexpr int kN = 1000;
  MachineProfile m = zero_machine(2);
  m.queue_handover = 1us;
  const RunResult whole = sim::simulate(pool_scenario(m, 1), batch(kN, 0ns));
  CHECK(whole.counters.cpu_time == 2 * (kN - 1) * 1us);
  CHECK(makespan(whole) >= 2 * (kN - 1) * 1e-6);
  CHECK(makespan(whole) < 2.1 * (kN - 1) * 1e-6);
  // Contended: somebody slept on the lock (a voluntary switch each).
  CHECK(whole.counters.switches_voluntary > 0);
  // With 0.1 us of each 1 us hand-over under the lock the two sides' own
  // parts (0.9 us each) run at once on the two CPUs: the makespan is about
  // one side per task. The submitter pays its part for every submission,
  // the first too (the harness's time stamp and record precede the pool's
  // decision to start a worker with it).
  m.queue_lock_hold = 100ns;
  const RunResult split = sim::simulate(pool_scenario(m, 1), batch(kN, 0ns));
  CHECK(split.counters.cpu_time == 2 * (kN - 1) * 1us + 900ns);
  CHECK(makespan(split) >= (kN - 1) * 1e-6);
  CHECK(makespan(split) < 1.2 * (kN - 1) * 1e-6);
  // A hold longer than the hand-over is all of it: the run without the field.
  m.queue_lock_hold = 5us;
  const RunResult over = sim::simulate(pool_scenario(m, 1), batch(kN, 0ns));
  CHECK(makespan(over) == makespan(whole));
  CHECK(over.counters.switches_voluntary == whole.counters.switches_voluntary);
}

namespace {
// A pool of 1 worker, 1,000 empty tasks, hand-overs of 1 us: the CPU spent
// beyond the 2 x 999 hand-overs on two CPUs and on one.
std::pair<Duration, Duration> beyond_handovers(MachineProfile m) {
  constexpr int kN = 1000;
  m.queue_handover = 1us;
  const Workload w = batch(kN, 0ns);
  const auto extra = [&](int cores) {
    m.cores = cores;
    return sim::simulate(pool_scenario(m, 1), w).counters.cpu_time - 2 * (kN - 1) * 1us;
  };
  const Duration two = extra(2);
  return {two, extra(1)};
}
}  // namespace

TEST_CASE(
    "runtime_costs.pool: futex_call per contended lock call, queue_handover_remote per push or pop "
    "after another CPU's, on two CPUs only",
    "[runtime][costs][lock]") {
  // Two CPUs: the waiter's FUTEX_WAIT and the releaser's FUTEX_WAKE are paid
  // in whole calls; the pushes and pops alternate between the CPUs, and each
  // that follows the other CPU's pays the remote extra (at most all 2 x 999).
  // One CPU: the holder is never running while another thread wants the
  // lock (nothing preempts it inside its hand-over), and the queue never
  // leaves the CPU.
  struct Case {
    Duration MachineProfile::*field;
    Duration unit;
  };
  for (const Case c : {Case{&MachineProfile::futex_call, 250ns},
                       Case{&MachineProfile::queue_handover_remote, 300ns}}) {
    MachineProfile m = zero_machine(2);
    m.*c.field = c.unit;
    const auto [two, one] = beyond_handovers(m);
    CHECK(two > 0ns);
    CHECK(two % c.unit == 0ns);
    CHECK(one == 0ns);
    if (c.field == &MachineProfile::queue_handover_remote) CHECK(two <= 2 * 999 * c.unit);
  }
}

TEST_CASE(
    "runtime_costs.pool: a lock waiter sleeps only if the lock is held futex_wait_check after its "
    "try (futex_call when 0)",
    "[runtime][costs][lock]") {
  // Submitter and worker on two CPUs, hand-overs of 1 us all under the lock:
  // with the check at the end of a 100 ns futex_call a waiter that comes
  // early in a hold sleeps; with the check later than any hold nobody does,
  // and each contended try costs the check's CPU instead.
  constexpr int kN = 1000;
  MachineProfile m = zero_machine(2);
  m.queue_handover = 1us;
  m.futex_call = 100ns;
  const RunResult call = sim::simulate(pool_scenario(m, 1), batch(kN, 0ns));
  m.futex_wait_check = m.futex_call;
  const RunResult same = sim::simulate(pool_scenario(m, 1), batch(kN, 0ns));
  CHECK(same.counters.cpu_time == call.counters.cpu_time);
  CHECK(same.counters.switches_voluntary == call.counters.switches_voluntary);
  CHECK(makespan(same) == makespan(call));
  m.futex_wait_check = 2us;
  const RunResult late = sim::simulate(pool_scenario(m, 1), batch(kN, 0ns));
  CHECK(call.counters.switches_voluntary > 10);
  CHECK(late.counters.switches_voluntary < call.counters.switches_voluntary / 10);
  CHECK(late.counters.cpu_time > call.counters.cpu_time);
}

TEST_CASE("runtime_costs.injecting_pool: every task pays a queue hand-over", "[runtime][costs]") {
  constexpr int kN = 500;
  MachineProfile m = zero_machine(2);
  const Workload w = batch(kN, 10us);
  const Duration base = cpu_of(m, BackendKind::injecting_pool, 2, w);
  m.queue_handover = 400ns;
  CHECK(cpu_of(m, BackendKind::injecting_pool, 2, w) - base == 2 * kN * 400ns);
}

TEST_CASE(
    "runtime_costs.virtual_threads: fiber_create once per task, fiber_switch per unmount and "
    "remount",
    "[runtime][costs][vt]") {
  constexpr int kN = 300;
  const Workload no_wait = phased(kN, [](int) { return std::vector<Phase>{cpu(5us)}; });
  const Workload two_waits = phased(kN, [](int) {
    return std::vector<Phase>{cpu(5us), wait(1ms), cpu(5us), wait(2ms)};
  });
  const MachineProfile zero = zero_machine(2);
  const Duration base0 = cpu_of(zero, BackendKind::virtual_threads, 2, no_wait);
  const Duration base2 = cpu_of(zero, BackendKind::virtual_threads, 2, two_waits);
  CHECK(base0 == kN * 5us);
  CHECK(base2 == kN * 10us);
  SECTION("queue_handover: the intake push and pop") {
    MachineProfile m = zero;
    m.queue_handover = 250ns;
    CHECK(cpu_of(m, BackendKind::virtual_threads, 2, two_waits) - base2 == 2 * kN * 250ns);
  }
  SECTION("fiber_create: once per virtual thread, whatever its waits") {
    MachineProfile m = zero;
    m.fiber_create = 700ns;
    CHECK(cpu_of(m, BackendKind::virtual_threads, 2, no_wait) - base0 == kN * 700ns);
    CHECK(cpu_of(m, BackendKind::virtual_threads, 2, two_waits) - base2 == kN * 700ns);
  }
  SECTION("fiber_switch: an unmount and a remount per wait, nothing without waits") {
    MachineProfile m = zero;
    m.fiber_switch = 600ns;
    CHECK(cpu_of(m, BackendKind::virtual_threads, 2, no_wait) == base0);
    CHECK(cpu_of(m, BackendKind::virtual_threads, 2, two_waits) - base2 == kN * 2 * 2 * 600ns);
  }
  SECTION("the costs stretch a CPU-bound run of virtual threads") {
    MachineProfile m = zero;
    m.queue_handover = 1us;
    m.fiber_create = 2us;
    m.fiber_switch = 1us;
    const RunResult free =
        sim::simulate(backend_scenario(zero, BackendKind::virtual_threads, 1), no_wait);
    const RunResult paid =
        sim::simulate(backend_scenario(m, BackendKind::virtual_threads, 1), no_wait);
    // One carrier, one CPU's worth of work: each task's 5 us plus its start.
    CHECK(makespan(paid) - makespan(free) > kN * 2e-6);
  }
}

TEST_CASE("runtime_costs.event_loop: a post per task and timer_arm per wait",
          "[runtime][costs][el]") {
  constexpr int kN = 300;
  const Workload two_waits = phased(kN, [](int) {
    return std::vector<Phase>{cpu(5us), wait(1ms), cpu(5us), wait(2ms)};
  });
  const MachineProfile zero = zero_machine(2);
  const Duration base = cpu_of(zero, BackendKind::event_loop, 2, two_waits);
  CHECK(base == kN * 10us);
  MachineProfile m = zero;
  m.timer_arm = 900ns;
  CHECK(cpu_of(m, BackendKind::event_loop, 2, two_waits) - base == kN * 2 * 900ns);
  m = zero;
  m.queue_handover = 200ns;
  CHECK(cpu_of(m, BackendKind::event_loop, 2, two_waits) - base == 2 * kN * 200ns);
  // loop_post: the submitter's posts from outside the loops; this batch
  // has no closed clients, so every post is the submitter's.
  m = zero;
  m.loop_post = 700ns;
  CHECK(cpu_of(m, BackendKind::event_loop, 2, two_waits) - base == kN * 700ns);
  m.queue_handover = 200ns;  // the loop's take is still a pool's pop
  CHECK(cpu_of(m, BackendKind::event_loop, 2, two_waits) - base == kN * (700ns + 200ns));
  // Fiber costs are not an event loop's.
  m = zero;
  m.fiber_create = 5us;
  m.fiber_switch = 5us;
  CHECK(cpu_of(m, BackendKind::event_loop, 2, two_waits) == base);
}

TEST_CASE(
    "runtime_costs.event_loop: loop_post is the submitter's post and a loop posting its closed "
    "clients' next requests pays a pool's push",
    "[runtime][costs][el]") {
  // Four closed clients without think time, five requests each: the
  // submitter posts the four first requests, the loop each next one as the
  // previous ends.
  const Workload w = closed_clients(4, 5, 1s, 0ns, 5us);
  MachineProfile m = zero_machine(2);
  const auto cpu = [&] {
    return sim::simulate(backend_scenario(m, BackendKind::event_loop, 1), w).counters.cpu_time;
  };
  const Duration base = cpu();
  CHECK(base == 20 * 5us);
  m.loop_post = 700ns;
  CHECK(cpu() - base == 4 * 700ns);
  m.loop_post = 0ns;
  m.queue_handover = 100ns;
  m.queue_push = 300ns;  // a pool's push: every post when loop_post is 0
  const Duration pushes = cpu();
  m.loop_post = 700ns;
  CHECK(cpu() - pushes == 4 * (700ns - 200ns));  // push_cost caps at 2 queue_handover
}

TEST_CASE(
    "runtime_costs.page_fault: a runtime's task objects fault in the pages its heap grows into, "
    "once per page of its high-water mark",
    "[runtime][costs][memory]") {
  // oneTBB: a batch of 1,000 tasks of 1 KiB objects, enqueued before either
  // worker takes one (one CPU, the submitter runs until its slice ends): the
  // heap grows to 1,000 KiB, 250 pages, each faulted by the submitter.
  constexpr int kN = 1000;
  MachineProfile m = zero_machine(1);
  m.slice = 1s;
  m.tbb_task = 1024;
  const Workload w = batch(kN, 0ns);
  const Duration base = cpu_of(m, BackendKind::tbb, 2, w);
  m.page_fault = 10us;
  const RunResult paid = sim::simulate(backend_scenario(m, BackendKind::tbb, 2), w);
  CHECK(paid.counters.cpu_time - base == 250 * 10us);
  CHECK(last_submit(paid) >= 249 * 10us);  // the submitter's own faults delay its hand-overs
  // A stream whose objects are freed before the next arrives reuses one
  // page: only the first touch faults.
  std::vector<Duration> at(kN);
  for (int i = 0; i < kN; ++i) at[static_cast<std::size_t>(i)] = i * 1ms;
  const Workload spaced = make_workload(ArrivalKind::periodic, at, std::vector<Duration>(kN, 1us));
  m.page_fault = 0ns;
  const Duration spaced_base = cpu_of(m, BackendKind::tbb, 2, spaced);
  m.page_fault = 10us;
  CHECK(cpu_of(m, BackendKind::tbb, 2, spaced) - spaced_base == 10us);
  // Virtual threads and the event loop: a user thread's state (fiber_touch,
  // loop_task_touch) is touched by the host at its first mount; 1,000
  // sleeping at once hold 1,000 x 4 KiB.
  const Workload sleepers = phased(kN, [](int) { return std::vector<Phase>{wait(50ms)}; });
  for (const BackendKind kind : {BackendKind::virtual_threads, BackendKind::event_loop}) {
    MachineProfile u = zero_machine(1);
    u.fiber_touch = u.loop_task_touch = 4096;
    const Duration ubase = cpu_of(u, kind, 1, sleepers);
    u.page_fault = 10us;
    CHECK(cpu_of(u, kind, 1, sleepers) - ubase == kN * 10us);
  }
}

TEST_CASE(
    "runtime_costs.tbb_worker_start: each oneTBB worker sets itself up before it looks for work",
    "[runtime][costs]") {
  // Two workers, a batch of 2 tasks of 1 ms on 2 CPUs: each worker pays
  // tbb_worker_start before its first task; our own work stealing does not.
  MachineProfile m = zero_machine(2);
  const Workload w = batch(2, 1ms);
  const Duration base = cpu_of(m, BackendKind::tbb, 2, w);
  m.tbb_worker_start = 50us;
  const RunResult paid = sim::simulate(backend_scenario(m, BackendKind::tbb, 2), w);
  CHECK(paid.counters.cpu_time - base == 2 * 50us);
  Duration first_start = Duration::max();
  for (const TaskRecord& r : paid.records) first_start = std::min(first_start, r.start);
  CHECK(first_start >= 50us);
  CHECK(cpu_of(m, BackendKind::work_stealing, 2, w) ==
        cpu_of(zero_machine(2), BackendKind::work_stealing, 2, w));
}

TEST_CASE("runtime_costs: runs with runtime costs are deterministic", "[runtime][costs]") {
  MachineProfile m = costly_machine(2);
  m.queue_handover = 300ns;
  m.fiber_create = 1us;
  m.fiber_switch = 500ns;
  m.timer_arm = 1us;
  const Workload w = phased(200, [](int i) {
    return std::vector<Phase>{cpu(Duration{1000 + 37 * i}), wait(Duration{100000 + 101 * i})};
  });
  for (BackendKind k : {BackendKind::pool, BackendKind::injecting_pool,
                        BackendKind::virtual_threads, BackendKind::event_loop}) {
    const RunResult a = sim::simulate(backend_scenario(m, k, 2), w);
    const RunResult b = sim::simulate(backend_scenario(m, k, 2), w);
    REQUIRE(a.records.size() == b.records.size());
    for (std::size_t i = 0; i < a.records.size(); ++i) {
      CHECK(a.records[i].start == b.records[i].start);
      CHECK(a.records[i].end == b.records[i].end);
    }
    CHECK(a.counters.cpu_time == b.counters.cpu_time);
  }
}

// ---- thread stacks outside glibc's stack cache (thread-per-task) ----------

namespace {
MachineProfile stack_machine(int cores, Bytes cache) {
  MachineProfile m = zero_machine(cores);
  m.stack_reserve = 8 * 1024 * 1024;
  m.stack_cache = cache;
  m.stack_map = 10us;
  m.stack_unmap = 4us;
  m.tlb_shootdown = 20us;
  return m;
}
RunResult tpt(const MachineProfile& m, const Workload& w) {
  return sim::simulate(tpt_scenario(m), w);
}
}  // namespace

TEST_CASE("stack_cache: without a cache threads map and unmap their stacks, CPU as counted",
          "[runtime][costs][stacks]") {
  constexpr int kN = 200;
  const Workload w = batch(kN, 5us);
  const Duration base1 = tpt(zero_machine(1), w).counters.cpu_time;
  const Duration base2 = tpt(zero_machine(2), w).counters.cpu_time;
  // One CPU: map + unmap per thread, no other CPU to interrupt. The run
  // ends when the last task completes, so the unmaps of the last thread or
  // two (after their task) may fall outside the measured CPU time.
  // Nearly every thread maps its own: the creator, switched out on its way
  // back from mapping a stack when its slice ended during the call
  // (Kernel::leave_syscall), may let a thread end and free its stack before
  // the next creation, which takes it from the cache (size 0: glibc's
  // queue_stack adds it unconditionally; only the next queueing trims).
  const RunResult one = tpt(stack_machine(1, 0), w);
  const auto maps1 = static_cast<int>(extra(one, "stacks_mapped"));
  const auto unmaps1 = static_cast<int>(extra(one, "stacks_unmapped"));
  CHECK(maps1 <= kN);
  CHECK(maps1 >= kN - 2);
  // The last thread or two may still be on their way out (the exit's
  // madvise, then the munmap, each behind the mmap lock) at the end.
  CHECK(unmaps1 >= maps1 - 2);
  CHECK(one.counters.cpu_time - base1 <= maps1 * 10us + unmaps1 * 4us);
  CHECK(one.counters.cpu_time - base1 >= maps1 * 10us + (unmaps1 - 2) * 4us);
  // Nothing preempts a holder inside its system call, so on one CPU nobody
  // finds the mmap lock held: no spin, no sleep on it.
  CHECK(extra(one, "mmap_lock_spin") == 0);
  CHECK(extra(one, "mmap_lock_sleeps") == 0);
  // Two CPUs: every munmap also shoots down the other CPU's TLB, and a
  // writer that finds the mmap lock held spins (sim/mmap_lock.hpp) on CPU
  // time of its own, counted apart.
  // A queued stack is not free while its thread still runs its exit path,
  // so with two CPUs a creation sometimes finds the previous thread's stack
  // free in the cache even at size 0 (glibc's queue_stack adds it
  // unconditionally; only the next queueing trims free ones): the CPU is
  // bounded by the maps and unmaps counted.
  const RunResult two = tpt(stack_machine(2, 0), w);
  const auto spin =
      std::chrono::round<Duration>(std::chrono::duration<double>(extra(two, "mmap_lock_spin")));
  const auto maps = static_cast<int>(extra(two, "stacks_mapped"));
  const auto unmaps = static_cast<int>(extra(two, "stacks_unmapped"));
  CHECK(spin > Duration{0});
  CHECK(maps <= kN);
  CHECK(unmaps <= maps);
  CHECK(two.counters.cpu_time - base2 - spin <= maps * 10us + unmaps * (4us + 20us));
  CHECK(two.counters.cpu_time - base2 - spin >= maps * 10us + (unmaps - 2) * (4us + 20us));
}

TEST_CASE(
    "kernel.spawn: a creator whose slice ended is switched out on its return from clone, before "
    "it takes the mmap lock for the next stack",
    "[mechanism][costs][stacks]") {
  // One CPU, no stack cache: the creator maps every stack under the mmap
  // lock (10 us), then creates the thread (5 us). Its slice ends at a
  // creation (the new thread's enqueue finds its deadline passed), and the
  // kernel switches it out there, on its way back to user space, holding
  // nothing: the new threads then run, take the lock for their madvise and
  // munmap, and none of them waits. (Until 2026-12-03 the creator ran on in
  // zero time into its next mapping, took the lock, and was switched out
  // holding it: every thread that ran then slept on the lock, 1,779
  // voluntary switches against 13 measured in ios-thread-create.)
  constexpr int kN = 400;
  MachineProfile m = stack_machine(1, 0);
  m.thread_create = 5us;
  const RunResult r = tpt(m, batch(kN, 5us));
  // Nearly every stack mapped: glibc queues an exiting thread's stack even
  // in a cache of size 0 and trims it at the next exit, so a creation just
  // after an exit may take it.
  CHECK(extra(r, "stacks_mapped") <= kN);
  CHECK(extra(r, "stacks_mapped") >= kN * 9 / 10);
  CHECK(r.counters.switches_involuntary > 0);  // the creator's slice ended, more than once
  CHECK(r.counters.switches_voluntary <= 1);   // the submitter's last wait at most
}

TEST_CASE("stack_cache: cached stacks are reused without mapping", "[runtime][costs][stacks]") {
  constexpr int kN = 200;
  const Workload w = batch(kN, 5us);
  const Bytes stack = 8 * 1024 * 1024;
  // A cache that holds every stack: nothing is ever unmapped, and a stack
  // is mapped only when every earlier one is still in use: a few dozen for
  // 200 threads. (Not bounded by threads_peak: a thread leaves that count
  // when its body ends, and its stack goes back to the cache after.)
  const RunResult big = tpt(stack_machine(2, kN * stack), w);
  CHECK(extra(big, "stacks_unmapped") == 0);
  CHECK(extra(big, "stacks_mapped") >= 1);
  CHECK(extra(big, "stacks_mapped") < kN / 2);
  // glibc's default, 40 MiB: five 8 MiB stacks, but a cached block is the
  // stack and its guard page, so it keeps four; there are fewer maps than
  // without it. (Mapped - unmapped also counts the stacks of threads still
  // on their way out at the end.)
  const RunResult five = tpt(stack_machine(2, 5 * stack), w);
  CHECK(extra(five, "stacks_cached") <= 4);
  CHECK(extra(five, "stacks_mapped") - extra(five, "stacks_unmapped") >=
        extra(five, "stacks_cached"));
  CHECK(extra(five, "stacks_mapped") < kN);
  CHECK(five.counters.cpu_time < tpt(stack_machine(2, 0), w).counters.cpu_time);
}

TEST_CASE(
    "stack_cache: a slice that ends inside an unmap switches the thread out on its way back to "
    "user space, holding glibc's stack cache lock",
    "[runtime][costs][stacks]") {
  // One CPU, 1 ms slices and ticks, no stack cache; a thread of 60 ms of
  // CPU keeps the CPU's queue busy while a thread of 0.2 ms comes every
  // 4 ms. Each short one, exiting, unmaps the stack of the one before it
  // under glibc's stack cache lock, and the unmap takes 3 ms, so a tick
  // past its slice comes inside the system call. On its way back to user
  // space (exit_to_user_mode_loop) it is switched out with the lock still
  // held, and the submitter, creating the next thread meanwhile, sleeps on
  // the lock (get_cached_stack). Until 2026-12-05 the reschedule waited for
  // the holder's next computation, after its unlock: no sleep on the lock.
  MachineProfile m = stack_machine(1, 0);
  m.slice = 1ms;
  m.tick = 1ms;
  m.stack_unmap = 3ms;
  std::vector<Duration> at{Duration{0}};
  std::vector<Duration> cpu{60ms};
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 3; ++j) {
      at.push_back(Duration(1ms) + i * Duration(8ms));
      cpu.push_back(200us);
    }
  }
  const RunResult r = tpt(m, make_workload(ArrivalKind::periodic, at, cpu));
  CHECK(extra(r, "stacks_unmapped") >= 5);
  CHECK(extra(r, "stack_lock_sleeps") >= 1);
  CHECK(r.counters.switches_involuntary >= 1);
}

TEST_CASE("stack_cache: 40 MiB keeps four 8 MiB stacks, as glibc's does",
          "[runtime][costs][stacks]") {
  // Three rounds of six threads of 1 ms, 10 ms apart: all six of a round are
  // alive together, and all have exited before the next round. The first
  // round maps six; their exits leave four in the cache (8 MiB + a 4 KiB
  // guard each: five would be over 40 MiB) and unmap two; each later round
  // takes the four and maps two. Measured with glibc 2.41 on this machine
  // (2026-12-04): bench/probes/stack_cache.cpp, creating and joining three
  // rounds of six threads with 8 MiB stacks, makes 10 mmap and 6 munmap
  // calls of 8 MiB + 4 KiB (`perf stat -e syscalls:sys_enter_mmap --filter
  // 'len == 0x801000'`).
  std::vector<Duration> at;
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 6; ++i) at.push_back(round * Duration(10ms));
  const Workload w = make_workload(ArrivalKind::periodic, at, std::vector<Duration>(18, 1ms));
  // The simulated run ends when the last task completes: the last thread's
  // exit (its stack's return, an unmap) is not in it.
  const RunResult r = tpt(stack_machine(2, 40 * 1024 * 1024), w);
  CHECK(extra(r, "stacks_mapped") == 10);
  CHECK(extra(r, "stacks_unmapped") == 5);
  CHECK(extra(r, "stacks_cached") == 3);
}

TEST_CASE("stack_cache: every runtime's threads map their stacks in a new process",
          "[runtime][costs][stacks]") {
  // The cache is the process's (Kernel::take_cached_stack), not thread per
  // task's alone: a pool, work stealing or event loop making its workers in
  // a new process finds it empty, and the creator computes stack_map for
  // each of them, exactly.
  const Workload w = batch(40, 50us);
  for (BackendKind k : {BackendKind::pool, BackendKind::work_stealing, BackendKind::event_loop,
                        BackendKind::asio_pool, BackendKind::virtual_threads}) {
    INFO(to_string(k));
    for (int threads : {1, 3}) {
      const Duration base =
          sim::simulate(backend_scenario(zero_machine(2), k, threads), w).counters.cpu_time;
      const Duration mapped =
          sim::simulate(backend_scenario(stack_machine(2, 40 * 8 * 1024 * 1024), k, threads), w)
              .counters.cpu_time;
      CHECK(mapped - base == threads * Duration(10us));
    }
  }
}

TEST_CASE("thread_start: a new thread starts with its own start-up, more on a new stack or CPU",
          "[runtime][costs][stacks]") {
  // One worker, one task of 50 us: the task starts thread_start (+
  // stack_fault: the stack cache of a new process is empty) after the
  // worker began, and the run's CPU grows by exactly that. Thread per task
  // with a cache that keeps every stack: 40 spaced tasks, each on the stack
  // the previous thread left, pay thread_start alone, but the first.
  const Workload one = batch(1, 50us);
  MachineProfile m = zero_machine(2);
  const RunResult base = sim::simulate(backend_scenario(m, BackendKind::pool, 1), one);
  m.thread_start = 5us;
  m.stack_fault = 7us;
  const RunResult r = sim::simulate(backend_scenario(m, BackendKind::pool, 1), one);
  CHECK(r.records[0].start - base.records[0].start == Duration(12us));
  CHECK(r.counters.cpu_time - base.counters.cpu_time == Duration(12us));
  const Workload spaced40 = make_workload(
      ArrivalKind::periodic,
      [] {
        std::vector<Duration> at;
        for (int i = 0; i < 40; ++i) at.push_back(i * Duration(1ms));
        return at;
      }(),
      std::vector<Duration>(40, 5us));
  // Two workers on two CPUs: the second starts on the CPU its creator does
  // not run on and computes thread_start_remote more; on one CPU no thread
  // starts elsewhere.
  const Workload two = batch(2, 50us);
  MachineProfile r2 = zero_machine(2), r1 = zero_machine(1);
  const Duration b2 =
      sim::simulate(backend_scenario(r2, BackendKind::pool, 2), two).counters.cpu_time;
  const Duration b1 =
      sim::simulate(backend_scenario(r1, BackendKind::pool, 2), two).counters.cpu_time;
  r2.thread_start_remote = r1.thread_start_remote = 30us;
  CHECK(sim::simulate(backend_scenario(r2, BackendKind::pool, 2), two).counters.cpu_time - b2 ==
        Duration(30us));
  CHECK(sim::simulate(backend_scenario(r1, BackendKind::pool, 2), two).counters.cpu_time == b1);
  MachineProfile t = stack_machine(1, 40 * 8 * 1024 * 1024);
  const Duration tbase = tpt(t, spaced40).counters.cpu_time;
  t.thread_start = 5us;
  t.stack_fault = 7us;
  CHECK(tpt(t, spaced40).counters.cpu_time - tbase == 40 * Duration(5us) + Duration(7us));
}

// ---- kernel thread stacks (kernel/fork.c's per-CPU cache of two) ----------

namespace {
// kN tasks of 5 us arriving 1 ms apart: every thread has exited long before
// the next creation.
Workload spaced(int n) {
  std::vector<Duration> at;
  for (int i = 0; i < n; ++i) at.push_back(i * Duration(1ms));
  return make_workload(ArrivalKind::periodic, at, std::vector<Duration>(n, 5us));
}
}  // namespace

TEST_CASE("kernel.kstack: a creator pays kstack_alloc when its threads die on another CPU",
          "[mechanism][costs][stacks]") {
  constexpr int kN = 50;
  const Workload w = spaced(kN);
  MachineProfile m1 = zero_machine(1), m2 = zero_machine(2);
  const Duration base1 = tpt(m1, w).counters.cpu_time;
  const Duration base2 = tpt(m2, w).counters.cpu_time;
  m1.kstack_alloc = m2.kstack_alloc = 10us;
  // One CPU: each thread dies where its creator runs and gives its stack
  // back to that CPU's cache before the next creation: never an allocation.
  CHECK(tpt(m1, w).counters.cpu_time - base1 == Duration{0});
  // Two CPUs: each new thread goes to the idle CPU 1 and dies there, so CPU
  // 0's two cached stacks are used up and every later creation allocates.
  CHECK(tpt(m2, w).counters.cpu_time - base2 == (kN - 2) * Duration(10us));
  // Without a cache every creation allocates, on one CPU too.
  m1.kstack_cache = 0;
  CHECK(tpt(m1, w).counters.cpu_time - base1 == kN * Duration(10us));
}

TEST_CASE("kernel.sleep_cost: every timed sleep costs its sleeper sleep_cost",
          "[mechanism][costs]") {
  constexpr int kN = 50;
  // A pool of one worker fed at 1 ms intervals: the submitter sleeps to each
  // arrival after the first (a timed sleep), the worker waits untimed.
  MachineProfile m = zero_machine(2);
  const Workload w = spaced(kN);
  const Duration base = sim::simulate(pool_scenario(m, 1), w).counters.cpu_time;
  m.sleep_cost = 3us;
  CHECK(sim::simulate(pool_scenario(m, 1), w).counters.cpu_time - base == (kN - 1) * Duration(3us));
}

TEST_CASE("kernel.fresh: a creation beyond the process's exits so far pays thread_create_fresh",
          "[mechanism][costs][stacks]") {
  constexpr int kN = 50;
  MachineProfile m = zero_machine(2);
  // Thread per task, each thread dead before the next creation: only the
  // first finds no exit's memory to take.
  const Workload spaced_w = spaced(kN);
  const Duration base = tpt(m, spaced_w).counters.cpu_time;
  // A pool of 4 whose workers all stay alive: every creation is fresh.
  const Workload b = batch(40, 50us);
  const Duration pool_base = sim::simulate(pool_scenario(m, 4), b).counters.cpu_time;
  m.thread_create_fresh = 30us;
  CHECK(tpt(m, spaced_w).counters.cpu_time - base == Duration(30us));
  CHECK(sim::simulate(pool_scenario(m, 4), b).counters.cpu_time - pool_base == 4 * Duration(30us));
}

TEST_CASE("kernel.first_creation: the run's first creation alone pays thread_create_first",
          "[mechanism][costs][stacks]") {
  MachineProfile m = zero_machine(2);
  // A pool of 4 (four creations in the run) and a thread per task whose
  // threads each die before the next is made (fifty): one first either way.
  const Workload b = batch(40, 50us);
  const Workload spaced_w = spaced(50);
  const Duration pool_base = sim::simulate(pool_scenario(m, 4), b).counters.cpu_time;
  const Duration tpt_base = tpt(m, spaced_w).counters.cpu_time;
  m.thread_create_first = 25us;
  CHECK(sim::simulate(pool_scenario(m, 4), b).counters.cpu_time - pool_base == Duration(25us));
  CHECK(tpt(m, spaced_w).counters.cpu_time - tpt_base == Duration(25us));
  // The first hand-over waits for it: the first task starts 25 us later.
  m.thread_create_first = Duration{0};
  const RunResult before = sim::simulate(pool_scenario(m, 1), batch(2, 50us));
  m.thread_create_first = 25us;
  const RunResult after = sim::simulate(pool_scenario(m, 1), batch(2, 50us));
  CHECK(after.records[0].start - before.records[0].start == Duration(25us));
}

TEST_CASE(
    "runtime_costs.task_remote: an event-loop task started on another CPU than its submitter's "
    "pays "
    "task_remote once, counted as remote_starts, and none on one CPU",
    "[runtime][costs]") {
  // 2 loops on 2 CPUs, 200 tasks of 10 us from the submitter: the CPU beyond
  // the tasks' work is exactly task_remote per remote start, the count the
  // run reports; on one CPU nothing starts remotely. The thread runtimes
  // count their remote starts and pay nothing for them.
  constexpr int kN = 200;
  const Workload w = batch(kN, 10us);
  MachineProfile m = zero_machine(2);
  const RunResult free = sim::simulate(backend_scenario(m, BackendKind::event_loop, 2), w);
  m.task_remote = 700ns;
  const RunResult paid = sim::simulate(backend_scenario(m, BackendKind::event_loop, 2), w);
  const double remote = extra(paid, "remote_starts");
  CHECK(extra(free, "remote_starts") > 0);
  CHECK(remote > 0);
  CHECK(remote <= kN);
  CHECK(paid.counters.cpu_time - free.counters.cpu_time ==
        static_cast<std::int64_t>(remote) * 700ns);
  for (const BackendKind kind :
       {BackendKind::pool, BackendKind::work_stealing, BackendKind::thread_per_task}) {
    CAPTURE(std::string(to_string(kind)));
    const RunResult r = sim::simulate(backend_scenario(m, kind, 2), w);
    CHECK(extra(r, "remote_starts") > 0);
    CHECK(r.counters.cpu_time == kN * 10us);
  }
  m.cores = 1;
  const RunResult one = sim::simulate(backend_scenario(m, BackendKind::event_loop, 2), w);
  CHECK(extra(one, "remote_starts") == 0);
}

TEST_CASE(
    "runtime_costs.remote_resumes: virtual threads count their starts and resumes on another CPU, "
    "and pay nothing for them",
    "[runtime][costs]") {
  // 2 carriers on 2 CPUs, 200 tasks of 10 us, a wait of 10-59 us and 10 us
  // more: some start on another CPU than the submitter's and some resume on
  // another CPU than the one they unmounted on; task_remote is the event
  // loop's and costs them nothing; on one CPU there are none.
  constexpr int kN = 200;
  const Workload w = phased(kN, [](int i) {
    return std::vector<Phase>{cpu(10us), wait(10us + (i * 13 % 50) * 1us), cpu(10us)};
  });
  MachineProfile m = zero_machine(2);
  m.task_remote = 900ns;
  const RunResult r = sim::simulate(backend_scenario(m, BackendKind::virtual_threads, 2), w);
  CHECK(extra(r, "remote_starts") > 0);
  CHECK(extra(r, "remote_resumes") > 0);
  CHECK(extra(r, "remote_resumes") <= kN);
  CHECK(r.counters.cpu_time == kN * 20us);
  m.cores = 1;
  const RunResult one = sim::simulate(backend_scenario(m, BackendKind::virtual_threads, 2), w);
  CHECK(extra(one, "remote_starts") == 0);
  CHECK(extra(one, "remote_resumes") == 0);
}
