// kernel.cpp: the simulated OS (design, sources and omissions in kernel.hpp).
#include "sim/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/assert.hpp"
#include "sim/sis_util.hpp"

namespace poolsim::sim {

namespace {
// The extra lateness of a held-back timer (MachineProfile::timer_stall_*): a
// lognormal with the measured median and mean (a few stalls give a usable
// median and mean, not a p99), the mean alone when they do not spread.
Distribution timer_stall_time(const MachineProfile& m) {
  if (m.timer_stall_median <= Duration{0} || m.timer_stall_mean <= m.timer_stall_median)
    return Distribution::fixed(m.timer_stall_mean);
  return Distribution::lognormal(m.timer_stall_median,
                                 lognormal_p99_of(m.timer_stall_median, m.timer_stall_mean));
}
}  // namespace

Kernel::Kernel(Engine& engine, const MachineProfile& machine, const Limits& limits,
               KernelOptions opt)
    : engine_(engine),
      m_(machine),
      noise_(machine, opt.seed,
             limits.cpuset.empty() ? std::max(1, machine.cores)
                                   : static_cast<int>(limits.cpuset.size())),
      newidle_rng_(Rng::derive(opt.seed, 0x6e6577696466ULL)),
      timer_stall_rng_(Rng::derive(opt.seed, 0x74696d65725354ULL)),
      timer_stall_(timer_stall_time(machine)),
      trace_(opt.trace) {
  runtime_memory_ = m_.runtime_touch;
  if (m_.tick > Duration{0}) tick_offset_ = phase_offset(opt.tick_phase, m_.tick);
  xw_.on = ExitWork::enabled(m_);
  set_thread_stack(0);
  if (m_.slice <= Duration{0}) throw std::invalid_argument("machine.slice must be positive");
  if (m_.tick < Duration{0}) throw std::invalid_argument("machine.tick must not be negative");
  std::vector<int> hw = limits.cpuset;
  if (hw.empty())
    for (int i = 0; i < std::max(1, m_.cores); ++i) hw.push_back(i);
  cpus_.resize(hw.size());
  for (std::size_t i = 0; i < hw.size(); ++i) {
    cpus_[i].hw = hw[i];
    // A running system's CPUs have seen threads die: their caches are full.
    cpus_[i].kstacks = std::max(0, m_.kstack_cache);
  }
  load_idx_ = LevelIndex(cpu_count());
  pull_idx_ = LevelIndex(cpu_count());
  nr_idle_scan_ = std::max(m_.cores, cpu_count());
  lane0_ = engine_.add_lanes(static_cast<std::uint32_t>(cpu_count()));  // c.ev, one per CPU
  if (noise_.on()) noise_lane0_ = engine_.add_lanes(static_cast<std::uint32_t>(cpu_count()));
  if (limits.neighbour) {
    const GroupShareParams gp{
        limits.shares, limits.neighbour->shares, limits.neighbour->threads, m_.slice, m_.tick,
        tick_offset_};
    gs_ = std::make_unique<GroupShare>(engine_, gp, hw, std::max(1, m_.cores),
                                       &Kernel::on_group_share, &Kernel::group_runnable_on,
                                       &Kernel::group_load_on, this);
    for (int i = 0; i < cpu_count(); ++i) {
      Cpu& c = cpus_[static_cast<std::size_t>(i)];
      c.neighbours = gs_->neighbours_on(i);
      c.foreign = c.neighbours > 0;
      // The neighbour ran here alone before the run: its utilization has
      // reached the whole CPU.
      c.nb_util = c.foreign ? 1.0 : 0.0;
      c.nb_load = static_cast<double>(gs_->neighbour_weight(i)) / 1024.0;
    }
  }
  for (Cpu& c : cpus_) reindex(c);
  if (m_.tick > Duration{0}) {
    // The domain's balance_interval starts at its CPU count in ms (sd_init:
    // min_interval = sd_weight); each CPU last balanced somewhere within
    // its first busy interval before the run.
    for (int i = 0; i < cpu_count(); ++i) {
      Cpu& c = cpus_[static_cast<std::size_t>(i)];
      c.balance_ms = cpu_count();
      const double phase = std::fmod(opt.balance_phase + 0.6180339887498949 * i, 1.0);
      const auto back =
          static_cast<std::int64_t>(phase * static_cast<double>(busy_balance_ticks(c)));
      c.last_balance = tick_offset_ - m_.tick * (back + 1);
    }
  }
  if (limits.cpus) {
    const BandwidthParams bp{
        Duration{std::llround(*limits.cpus * static_cast<double>(limits.period.count()))},
        limits.period,
        limits.burst,
        m_.cfs_bandwidth_slice,
        m_.tick,
        tick_offset_,
        phase_offset(opt.period_phase, limits.period)};
    bw_ = std::make_unique<Bandwidth>(engine_, bp, cpu_count(), &Kernel::on_bandwidth, this);
  }
  if (trace_)
    for (const Cpu& c : cpus_) tr_.tracks.push_back({"cpu " + std::to_string(c.hw), true});
}

Kernel::~Kernel() {
  for (Thread& t : threads_)
    if (t.top) t.top.destroy();
}

// ---- threads ---------------------------------------------------------------

ThreadId Kernel::create_thread(Co body, const char* role, bool fresh_stack) {
  const ThreadId id = static_cast<ThreadId>(threads_.size());
  const WakeeFlips inherited = current_ != kNoThread ? threads_[current_].wakees : WakeeFlips{};
  threads_.emplace_back();
  Thread& t = threads_.back();
  t.wakees = inherited;
  t.top = body.release();
  t.cont = t.top;
  t.role = role;
  t.since = now();
  ++live_;
  ++active_;
  live_peak_ = std::max(live_peak_, live_);
  threads_series_.set(now(), live_);
  runnable_series_.set(now(), active_);
  // The main thread's memory is in the real runner's baseline; the first
  // thread after it brings the runtime's one-time memory.
  if (id == 1) memory_add(runtime_memory_);
  if (id != 0) {
    memory_add(m_.stack_touch);
    // Its start (thread_start, stack_fault on a new stack), then a new
    // arena's mmap, trim and mprotect, are the thread's first CPU work.
    threads_[id].overhead += m_.thread_start + (fresh_stack ? m_.stack_fault : Duration{0});
    if (arena_on_thread_start()) {
      // The process's first arena costs arena_create_first more.
      threads_[id].overhead +=
          m_.arena_create + (arenas_ == 1 ? m_.arena_create_first : Duration{0});
      threads_[id].new_arena = true;  // and arena_create_remote at its first run, if due
    }
  }
  if (trace_) tr_.tracks.push_back({std::string(role) + " " + std::to_string(id), false});
  if (id == 0 && exec_cpu_ < 0) {
    // The process's main thread: already running on the first CPU at t = 0
    // (the real submitter reads the origin while it runs), a neighbour
    // there too (GroupShare::run_at_origin).
    threads_[id].cpu = 0;
    // It ran before the run (the process's setup): the averages that left
    // (machine.origin_util), no new task's.
    seed_origin_pelt(id, 0);
    threads_[id].deadline = m_.slice;
    if (cpus_[0].foreign) {
      gs_->run_at_origin(0);
      set_foreign(cpus_[0], false);
    }
    cpus_[0].curr = id;
    start_on(cpus_[0], id);
    // It has just woken from a sleep, as the real runner's submitter has
    // (real/runner.cpp, start_slice_afresh: a 1 ms sleep right before the
    // origin, so it starts at the start of a slice): it refills its cache
    // as any thread switched back in after a sleep does, and no more.
    threads_[id].overhead = m_.cache_refill;
    seed_origin_helper();
    arm(cpus_[0]);
  } else {
    place_new(id, exec_cpu_);
  }
  return id;
}

namespace {
// The transitions of kernel.hpp's state diagram.
[[maybe_unused]] bool transition_ok(ThreadState from, ThreadState to) {
  switch (from) {
    case ThreadState::runnable:
      return to == ThreadState::running || to == ThreadState::throttled;
    case ThreadState::running:
      return to != ThreadState::running;
    case ThreadState::blocked:
      return to == ThreadState::runnable || to == ThreadState::throttled;
    case ThreadState::throttled:
      return to == ThreadState::runnable;
    case ThreadState::exited:
      return false;
  }
  return false;
}
}  // namespace

void Kernel::set_state(ThreadId id, ThreadState s) {
  Thread& t = threads_[id];
  if (t.state == s) return;
  POOLSIM_ASSERT(transition_ok(t.state, s), "thread state transition outside kernel.hpp's diagram");
  const auto is_active = [](ThreadState x) {
    return x == ThreadState::runnable || x == ThreadState::running || x == ThreadState::throttled;
  };
  const Duration now_ns = now();
  if (trace_ && now_ns > t.since && t.state != ThreadState::exited) {
    SpanKind k = SpanKind::runnable;
    switch (t.state) {
      case ThreadState::running:
        k = SpanKind::running;
        break;
      case ThreadState::blocked:
        k = SpanKind::blocked;
        break;
      case ThreadState::throttled:
        k = SpanKind::throttled;
        break;
      default:
        break;
    }
    tr_.spans.push_back({static_cast<std::uint32_t>(cpus_.size() + id), k,
                         k == SpanKind::running ? t.task : kNoTask, id, t.since, now_ns});
  }
  t.since = now_ns;
  pelt_state(t, s);
  if (is_active(t.state) != is_active(s)) {
    active_ += is_active(s) ? 1 : -1;
    runnable_series_.set(now_ns, active_);
  }
  t.state = s;
}

void Kernel::set_task(std::uint32_t task) {
  Thread& t = threads_[current_];
  if (trace_ && t.state == ThreadState::running && t.task != task) {
    const Duration now_ns = now();
    if (now_ns > t.since)
      tr_.spans.push_back({static_cast<std::uint32_t>(cpus_.size() + current_), SpanKind::running,
                           t.task, current_, t.since, now_ns});
    t.since = now_ns;
    Cpu& c = cpus_[exec_cpu_];
    close_cpu_span(c, SpanKind::running, current_, t.task);
    open_cpu_span(c);
  }
  t.task = task;
}

void Kernel::open_cpu_span(Cpu& c) { c.span_start = now(); }

void Kernel::close_cpu_span(Cpu& c, SpanKind kind, std::uint32_t thread, std::uint32_t task) {
  if (!trace_) return;
  const Duration now_ns = now();
  if (now_ns > c.span_start)
    tr_.spans.push_back(
        {static_cast<std::uint32_t>(&c - cpus_.data()), kind, task, thread, c.span_start, now_ns});
  c.span_start = now_ns;
}

// ---- coroutine requests ----------------------------------------------------

void Kernel::request_compute(std::coroutine_handle<> h, Duration d) {
  Thread& t = threads_[current_];
  t.cont = h;
  t.req = Req::compute;
  t.work = d;
}

void Kernel::request_spawn(std::coroutine_handle<> h, Duration cost, PendingSpawn* p) {
  request_compute(h, cost);
  threads_[current_].spawn = p;
}

// The creator's clone ended: the kernel makes the new thread, as the
// creator's own operation (it places it, and pays a wake's IPI). A
// reschedule that asked for (update_curr in the enqueue found the creator's
// deadline passed) switches the creator out on its way back to user space,
// and a cost it charged the creator is run before the creator's next
// instruction. True: the CPU was given its next event.
bool Kernel::finish_spawn(Cpu& c) {
  const ThreadId id = c.curr;
  PendingSpawn* p = std::exchange(threads_[id].spawn, nullptr);
  exec_cpu_ = static_cast<int>(&c - cpus_.data());
  current_ = id;
  p->id = create_thread(std::move(p->body), p->role, p->fresh);
  exec_cpu_ = -1;
  current_ = kNoThread;
  Thread& t = threads_[id];  // create_thread may have moved it
  POOLSIM_ASSERT(t.work <= Duration{0}, "a creator resumes with work left");
  t.req = Req::none;
  t.op = Op::resume;
  if (act_on_resched(c)) return true;
  if (t.overhead > Duration{0}) {
    arm(c);
    return true;
  }
  return false;
}

// A reschedule marked during the current thread's step (resched_curr)
// takes effect on its way back to user space: its slice's end (resched,
// which may keep it) or a wake that preempts it. True if one was pending.
bool Kernel::act_on_resched(Cpu& c) {
  if (c.need_resched) {
    resched(c);
    return true;
  }
  if (std::exchange(c.wake_resched, false)) {
    preempt(c);
    return true;
  }
  return false;
}

// The current thread leaves its system call. The tick was not simulated
// inside it (arm: a thread in a system call notices its slice's end on its
// way out): a tick at or after its slice's end that passed meanwhile, with
// another thread queued, marked it for a reschedule (task_tick_fair ->
// update_curr -> resched_curr), as a preempting wake did (wake_resched).
// True if one is pending: it acts on it before its next instruction.
bool Kernel::leave_syscall_resched() {
  POOLSIM_ASSERT(exec_cpu_ >= 0, "leave_syscall outside a thread's step");
  Thread& t = threads_[current_];
  POOLSIM_ASSERT(t.in_syscall, "leave_syscall outside a system call");
  t.in_syscall = false;
  Cpu& c = cpus_[static_cast<std::size_t>(exec_cpu_)];
  // No refresh_slice here: the renewals a thread running alone gets at
  // ticks were applied when the first thread was queued behind it
  // (enqueue_woken), and none came after, with the queue not empty.
  if (!rq_empty(c) && round_to_tick(c.slice_end) < now()) c.need_resched = true;
  return c.need_resched || c.wake_resched;
}

void Kernel::request_yield(std::coroutine_handle<> h) {
  request_compute(h, m_.yield_cost);
  threads_[current_].yield_pending = true;
}

void Kernel::request_block(std::coroutine_handle<> h, WaitQueue* q, Duration deadline) {
  Thread& t = threads_[current_];
  t.cont = h;
  t.req = Req::block;
  t.timed_out = false;
  if (q) wq_push(*q, current_);
  if (deadline != Duration{kNever}) {
    const Duration at = std::max(deadline, now()) + m_.timer_slack;
    t.timer = engine_.at(at, &Kernel::on_timer, this, current_);
    // Arming (and later cancelling) the hrtimer, run when it runs next.
    t.overhead += m_.sleep_cost;
    if (m_.timer_program > Duration{0} || m_.timer_idle_run > Duration{0} ||
        m_.hrtimer_slack > Duration{0})
      note_timer_armed(t, at);
  }
}

// The timer a thread arms on its CPU: the first to expire there, ahead of
// every pending timer and of the CPU's next tick (the arming thread runs,
// so the tick does), makes the kernel reprogram the timer device
// (__hrtimer_start_range_ns reports the new first timer, hrtimer_reprogram
// -> tick_program_event -> lapic_next_deadline's MSR write): the sleeper
// computes timer_program more. Probe of 2026-12-05 (1 ms and 300 us sleeps
// on a CPU kept awake, each classified by the 4 ms tick grid): 16.7-16.8 us
// of the sleeper's CPU a sleep ahead of the tick, 8.6-9.0 us behind it.
// A pool of 200 threads sleeping 10 ms arms every timer behind the tick.
// Left out: the idle task's reprogramming when the tick stops and restarts
// around an idle spell (not a thread's CPU time in the model).
void Kernel::note_timer_armed(Thread& t, Duration at) {
  POOLSIM_ASSERT(t.timer_cpu < 0, "a thread arms a second timer");
  const int cpu = t.cpu;
  POOLSIM_ASSERT(cpu >= 0, "a timer armed off any CPU");
  if (at < std::min(next_tick_at(), first_timer_on(cpu))) t.overhead += m_.timer_program;
  t.timer_entry = cpus_[static_cast<std::size_t>(cpu)].timers.emplace(at, id_of(t));
  t.timer_cpu = cpu;
}

// The CPU's next tick after now (kNever without a tick).
Duration Kernel::next_tick_at() const {
  return m_.tick > Duration{0} ? last_tick_at(now()) + m_.tick : Duration{kNever};
}

// The first expiry of the timers pending on `cpu` (kNever if none).
Duration Kernel::first_timer_on(int cpu) const {
  const PendingTimers& pending = cpus_[static_cast<std::size_t>(cpu)].timers;
  return pending.empty() ? Duration{kNever} : pending.begin()->first;
}

// The thread's timer fired or was cancelled: it leaves its CPU's pending set.
void Kernel::note_timer_gone(Thread& t) {
  if (t.timer_cpu < 0) return;
  POOLSIM_ASSERT(t.timer_entry->second == id_of(t), "a pending timer's entry names another thread");
  cpus_[static_cast<std::size_t>(t.timer_cpu)].timers.erase(t.timer_entry);
  t.timer_cpu = -1;
}

// A user thread's timed sleep is due at its deadline: its runtime keeps the
// expiry itself (Boost.Fiber's sleep queue, Asio's timer queue) and a busy
// host takes it at its next scheduling point; only a host that blocked
// waits for a kernel timer (UserThreads, the owner runtime's ready()).
std::coroutine_handle<> Kernel::user_sleep(std::coroutine_handle<> h, Duration deadline) {
  Thread& t = threads_[current_];
  if (t.user == nullptr) return {};
  return t.user->on_sleep(h, std::max(deadline, now()).count(), t.locks_held > 0);
}

std::coroutine_handle<> Kernel::user_park(std::coroutine_handle<> h, Parking& p) {
  Thread& t = threads_[current_];
  if (t.user == nullptr) return {};
  std::coroutine_handle<> next = t.user->on_park(h, t.locks_held > 0);
  if (next) p.user = t.user;
  return next;
}

void Kernel::unpark(Parking& p) {
  if (p.user != nullptr) {
    p.user->on_unpark(p.task);
    return;
  }
  const bool woke = notify_one(p.q);
  POOLSIM_ASSERT(woke, "unpark of a thread that is not parked");
  (void)woke;
}

bool Kernel::try_lock(Mutex& m) {
  if (m.owner_ != kNoThread) return false;
  m.owner_ = current_;
  ++threads_[current_].locks_held;
  return true;
}

void Kernel::unlock(Mutex& m) {
  if (m.owner_ != current_) throw std::logic_error("sim::Kernel: unlock by a non-owner");
  --threads_[current_].locks_held;
  if (m.waiters_.empty()) {
    m.owner_ = kNoThread;
    return;
  }
  const ThreadId next = wq_pop(m.waiters_);
  m.owner_ = next;  // direct hand-off, FIFO
  ++threads_[next].locks_held;
  wake(next, exec_cpu_);
}

bool Kernel::notify_one(WaitQueue& q) { return notify_first(q, false); }

// The waiter is woken by a timer of its own that fired on its CPU (a host
// blocked until its earliest due user thread: a futex timeout, a timerfd),
// with a timed sleep's wake path (wake(.., by_timer)), not a waker's.
bool Kernel::timer_notify_one(WaitQueue& q) { return notify_first(q, true); }

// The first waiter of `q`, its own timer cancelled, woken by the running
// thread or (by_timer) by a timer of its own.
bool Kernel::notify_first(WaitQueue& q, bool by_timer) {
  if (q.empty()) return false;
  const ThreadId id = wq_pop(q);
  Thread& t = threads_[id];
  engine_.cancel(t.timer);
  note_timer_gone(t);
  t.timed_out = false;
  wake(id, by_timer ? -1 : exec_cpu_, by_timer);
  return true;
}

int Kernel::notify_all(WaitQueue& q) {
  int n = 0;
  while (notify_one(q)) ++n;
  return n;
}

// ---- glibc's condition variable (CondVar) ----------------------------------

void Kernel::cv_block(std::coroutine_handle<> h, CondVar& cv, Duration deadline) {
  Thread& t = threads_[current_];
  POOLSIM_ASSERT(t.cv == nullptr, "a thread waits on a condition variable twice");
  const std::uint8_t g2 = cv.g1_ ^ 1;
  t.cv = &cv;
  t.cv_group = g2;
  ++cv.refs_[g2];
  request_block(h, &cv.group_[g2], deadline);
}

bool Kernel::cv_resumed() {
  Thread& t = threads_[current_];
  if (CondVar* cv = std::exchange(t.cv, nullptr)) {
    std::uint32_t& refs = cv->refs_[t.cv_group];
    POOLSIM_ASSERT(refs > 0, "a condition variable's group lost a reference it did not count");
    // __condvar_dec_grefs: the last reference to a group a signaller
    // quiesces wakes it (FUTEX_WAKE, paid by this thread).
    if (--refs == 0 && t.cv_group == cv->g1_) notify_all(cv->signallers_);
  }
  return !t.timed_out;
}

bool Kernel::cv_try_signal(CondVar& cv) {
  if (notify_one(cv.group_[cv.g1_])) return true;
  // __condvar_quiesce_and_switch_g1: nothing to do with G2 empty; else the
  // old G1 must hold no reference before the groups switch.
  if (cv.group_[cv.g1_ ^ 1].empty()) return true;
  if (cv.refs_[cv.g1_] > 0 && m_.cv_quiesce != 0) {
    ++cv.quiesce_waits_;
    return false;
  }
  cv.g1_ ^= 1;
  [[maybe_unused]] const bool woken = notify_one(cv.group_[cv.g1_]);
  POOLSIM_ASSERT(woken, "a group switch found the new G1 empty");
  return true;
}

void Kernel::on_timer(void* self, std::uint64_t arg) {
  auto& k = *static_cast<Kernel*>(self);
  const auto id = static_cast<ThreadId>(arg);
  const int cpu = k.threads_[id].timer_cpu;
  if (cpu < 0 || k.m_.hrtimer_slack <= Duration{0}) {
    k.expire_timer(id);
    return;
  }
  // The interrupt wakes this thread and every sleeper whose timer is due
  // with it, then its exit schedules once (the marks check_wakeup_preempt
  // left), picking among all of them.
  k.irq_ = {cpu, false, false};
  k.expire_timer(id);
  k.expire_due_with(cpu);
  const Irq irq = std::exchange(k.irq_, Irq{});
  Cpu& c = k.cpus_[static_cast<std::size_t>(cpu)];
  if (!k.has_curr(c) || k.threads_[c.curr].in_syscall) return;
  if (irq.deadline_passed || irq.preempts) k.act_on_wake(c, irq.deadline_passed, irq.preempts);
}

// A thread's timer expired: it wakes, timed out.
void Kernel::expire_timer(ThreadId id) {
  Thread& t = threads_[id];
  t.timer = {};
  note_timer_gone(t);
  t.timed_out = true;
  if (t.wq) wq_remove(*t.wq, id);
  wake(id, -1, true);
}

// A timer's interrupt on `cpu` runs every timer there whose soft expiry has
// passed (__hrtimer_run_queues; hrtimer_start_range_ns programs the device
// for the hard expiry, the deadline plus the thread's slack). The model
// fires a timer at deadline + timer_slack, hrtimer_slack of it being the
// slack and the rest the interrupt's way to the woken thread, so the
// interrupt came at now - (timer_slack - hrtimer_slack), and a timer whose
// deadline is at or before it (its model expiry at most hrtimer_slack from
// now) expires with it and wakes now. Probe of 2026-12-07
// (bench/probes/timer_coalesce.cpp: two sleepers and a SCHED_IDLE spinner
// on CPU 1, 300 tries): a sleep alone ended 64.8 us after its deadline
// (median); with another sleeper's deadline 30 us before it (that one's
// hard expiry 20 us after this deadline), 37.2 us.
// Left out: the tick (an hrtimer too, so a CPU running at a tick within a
// timer's slack runs it early) and timerfd timers (Asio's reactor, no
// slack), which would run sleepers' timers early the same way.
void Kernel::expire_due_with(int cpu) {
  PendingTimers& pending = cpus_[static_cast<std::size_t>(cpu)].timers;
  const Duration limit = now() + std::min(m_.hrtimer_slack, m_.timer_slack);
  while (!pending.empty() && pending.begin()->first <= limit) {
    const ThreadId y = pending.begin()->second;
    engine_.cancel(threads_[y].timer);
    expire_timer(y);
  }
}

// ---- wait queues -----------------------------------------------------------

void Kernel::wq_push(WaitQueue& q, ThreadId id) {
  Thread& t = threads_[id];
  t.wq = &q;
  t.wq_prev = q.tail_;
  t.wq_next = kNoThread;
  if (q.tail_ != kNoThread)
    threads_[q.tail_].wq_next = id;
  else
    q.head_ = id;
  q.tail_ = id;
  ++q.size_;
}

ThreadId Kernel::wq_pop(WaitQueue& q) {
  const ThreadId id = q.head_;
  wq_remove(q, id);
  return id;
}

void Kernel::wq_remove(WaitQueue& q, ThreadId id) {
  Thread& t = threads_[id];
  if (t.wq_prev != kNoThread)
    threads_[t.wq_prev].wq_next = t.wq_next;
  else
    q.head_ = t.wq_next;
  if (t.wq_next != kNoThread)
    threads_[t.wq_next].wq_prev = t.wq_prev;
  else
    q.tail_ = t.wq_prev;
  t.wq = nullptr;
  t.wq_next = t.wq_prev = kNoThread;
  --q.size_;
}

// ---- placement -------------------------------------------------------------

// select_idle_sibling with one LLC domain holding every CPU (kernel/sched/
// fair.c, 6.18), for a wake whose target is the thread's previous CPU (the
// model leaves wake_affine out): the target if idle; else the CPU it used
// before that (p->recent_used_cpu, rewritten here with the target) if idle;
// else select_idle_cpu's search from the CPU after the target, wrapping
// (for_each_cpu_wrap), which with SIS_UTIL (machine.sis_util) looks at only
// nr_idle_scan CPUs (update_idle_cpu_scan) and none when that is 0; else the
// target. Idle CPUs are read from the mask of CPUs with load 0 (idle with
// nothing queued, or throttled: its parked threads are no load).
int Kernel::select_idle_sibling(Thread& t, int target) {
  const int n = cpu_count();
  if (cpu_idle(cpus_[static_cast<std::size_t>(target)])) return target;
  const int recent = std::exchange(t.recent_cpu, target);
  if (recent >= 0 && recent != target && cpu_idle(cpus_[static_cast<std::size_t>(recent)]))
    return recent;
  const int scan = m_.sis_util > 0 ? nr_idle_scan_ : n;
  const int from = (target + 1) % n;
  const int j = scan > 0 ? load_idx_.first_from(0, from) : -1;
#ifndef NDEBUG
  int seen = -1;
  for (int i = 0; i < n; ++i)
    if (cpu_idle(cpus_[(from + i) % n])) {
      seen = (from + i) % n;
      break;
    }
  POOLSIM_ASSERT(scan <= 0 || seen == j, "idle mask disagrees with the CPUs");
#endif
  if (j < 0 || (j - from + n) % n >= scan) return target;
  return j;
}

void Kernel::wake(ThreadId id, int waker_cpu, bool by_timer) {
  Thread& t = threads_[id];
  if (t.block_pending) {  // woken before it went to sleep: it does not block
    t.block_pending = false;
    return;
  }
  if (t.delayed) expire_delayed(cpus_[static_cast<std::size_t>(t.last_cpu)]);
  const int target = t.last_cpu >= 0 ? t.last_cpu : (waker_cpu >= 0 ? waker_cpu : 0);
  // A delayed thread is still on its CPU's queue: ttwu_runnable wakes it in
  // place (requeue_delayed_entity), without select_task_rq.
  int c = t.delayed ? t.last_cpu : select_idle_sibling(t, target);
  // select_task_rq_fair's record_wakee and wake_wide by the waking thread.
  // A timer's wake is left out: the kernel records it for whatever the
  // interrupt found running (or the idle task), and with that the model's
  // event loops gathered flips from each other's timers and their wakes by
  // the submitter went wide, where the traced ones were packed (below).
  const bool wide = !t.delayed && waker_cpu >= 0 && current_ != kNoThread &&
                    wake_wide(threads_[current_].wakees, id, t.wakees.flips, now(),
                              static_cast<std::uint32_t>(cpu_count()));  // one LLC
  // A wide wake takes no wake_affine: the fast path's select_idle_sibling
  // from the previous CPU, which on a host that packs (wake_pack_util > 0:
  // its idle vCPUs are no candidates) keeps the previous CPU, busy or idle.
  // Traced 2026-12-07 (perf sched, bench/battery's vthreads: 2 carriers
  // that wake each other and the submitter, which wakes both): 8,704 of
  // 8,784 carrier wakes ran on the carrier's previous CPU, 993 of them
  // behind the submitter with the other CPU idle, and 39 of 3,454 wakes by
  // a running carrier took that carrier's CPU. The event loop's (evloop,
  // loops woken by the submitter alone, never wide): 1,015 of 1,240 wakes
  // of a loop whose previous CPU was the idle one ran on the submitter's.
  // (select_idle_sibling above still ran: it rewrites recent_used_cpu on
  // this path too.)
  // A timer's wake on such a host keeps the previous CPU too: the interrupt
  // runs on the CPU where the sleeper armed its timer, its last, so there
  // is no waker's CPU to pack onto, and select_idle_sibling offers no idle
  // vCPU. (A thread's wake from the woken thread's previous CPU is not the
  // same: the quickstart's ftrace saw such wakes leave an overloaded CPU,
  // busy_wake_cpu below; so this is the timer's own rule.) Probed
  // 2026-12-07 (bench/probes/timer_pack.cpp: a sleeper's timer firing on
  // CPU 0 loaded 0-90%, CPU 1 idle): 75-100% of the wakes ran on CPU 0 at
  // every load, where a condition variable's wake from CPU 0 of a thread
  // last on CPU 1 ran on CPU 0 at 77-93% up to 60% load and never at 80%
  // or 90% (the packing's threshold, below).
  // Nor does the rule below for a previous CPU that holds two or more
  // runnable threads move it: with two spinners on the fired CPU 0 and one
  // on CPU 1, 120 of 120 such wakes ran on CPU 0 (the same probe, `over`);
  // with CPU 1 idle, the battery's pools kept 1,015 of 1,015 (open-pool8)
  // and 1,073 of 1,073 (quota) on a CPU with a thread queued (perf), where
  // the probe's spinners, holding the fired CPU at full utilization, saw
  // them leave (`spin`; docs/validation.md, "A sleeper's wake on a busy
  // CPU, probed"). The model follows the pools.
  POOLSIM_ASSERT(!by_timer || (waker_cpu < 0 && t.last_cpu >= 0),
                 "a timer's wake has no waker and a previous CPU, where its timer fired");
  const bool keep_prev = (wide || by_timer) && m_.wake_pack_util > 0;
  if (keep_prev) c = target;
  const bool none_idle = !t.delayed && !cpu_idle(cpus_[static_cast<std::size_t>(c)]);
  // Wake-up packing (machine profile wake_pack_util; docs/simulator.md): a
  // host whose guest kernel avoids waking idle vCPUs keeps the woken thread
  // on the waker's CPU while that CPU is lightly used and nothing is queued
  // there, instead of waking the idle CPU the thread would go to; a thread
  // whose CPU is busy is left there (the packing spares an idle CPU, or
  // nothing). A timer's wake has no waker's CPU (it kept its own, above).
  if (!t.delayed && !keep_prev && waker_cpu >= 0 && c != waker_cpu &&
      cpu_idle(cpus_[static_cast<std::size_t>(c)]) && packs_wakes_onto(waker_cpu))
    c = waker_cpu;
  // No CPU idle: this guest kernel (the same wake path as its packing:
  // wake_pack_util > 0) moves the woken thread off a previous CPU that holds
  // clearly more runnable threads than another (busy_wake_cpu), where
  // select_idle_sibling keeps the previous CPU whatever its queue.
  if (none_idle && !keep_prev && m_.wake_pack_util > 0) c = busy_wake_cpu(c);
  charge_waker(c != waker_cpu ? m_.wake_cost + m_.wake_ipi : m_.wake_cost);
  // A timer fires on the CPU where the sleeper armed it, its last.
  if (by_timer) timer_interrupt(cpus_[static_cast<std::size_t>(t.last_cpu)], c);
  enqueue_woken(cpus_[c], id, false, by_timer ? t.last_cpu : -1);
}

// The host's wake-up packing (wake_pack_util): a wake whose waker is on
// `cpu` stays there, even with another CPU idle, while nothing is queued
// there and its utilization is under the threshold.
bool Kernel::packs_wakes_onto(int cpu) {
  return m_.wake_pack_util > 0 && rq_empty(cpus_[static_cast<std::size_t>(cpu)]) &&
         cpu_util(cpu) < m_.wake_pack_util;
}

// The waking (or creating) thread pays for the wake: CPU time it spends
// before its next operation progresses (Thread::overhead, consumed first by
// its next compute, or before it blocks if it blocks now: complete_op).
// Only in a thread's own step: a timer wake has no waker.
void Kernel::charge_waker(Duration cost) {
  if (current_ == kNoThread || exec_cpu_ < 0 || cost.count() <= 0) return;
  threads_[current_].overhead += cost;
}

// PELT (kernel/sched/pelt.c), continuous rather than in 1 ms steps: each
// thread's utilization (time running), runnable (time running or queued)
// and load (the same, weight 1024 = 1) averages, with weights halving every
// 32 ms (LOAD_AVG_PERIOD: y^32 = 0.5); a CPU's averages are the sums over the
// threads attached to it (cfs_rq->avg), which decay alike, so a CPU keeps
// its sums and how many of its threads run and are runnable, and a thread
// that moves takes its own averages along (migrate_task_rq_fair ->
// remove_entity_load_avg, attach at the enqueue); an exiting one removes
// them (task_dead_fair). A delayed sleeper counts as blocked.
namespace {
double pelt_decay(Duration dt) {
  constexpr double kHalfLifeNs = 32e6;
  return std::exp2(-static_cast<double>(dt.count()) / kHalfLifeNs);
}
// post_init_entity_util_avg: a new thread's utilization is half its CPU's
// spare capacity, or the CPU's utilization per unit of its load if that is
// less (with no utilization at all, the half).
double post_init_util(double cpu_util, double cpu_load) {
  const double cap = (1.0 - cpu_util) / 2;
  if (cap <= 0) return 0;
  return cpu_util > 0 ? std::min(cap, cpu_util / (cpu_load + 1.0 / 1024)) : cap;
}
bool pelt_runs(ThreadState s) { return s == ThreadState::running; }
bool pelt_queued(ThreadState s) {
  return s == ThreadState::running || s == ThreadState::runnable || s == ThreadState::throttled;
}
}  // namespace

void Kernel::pelt_cpu_update(Cpu& c) {
  const Duration t = now();
  if (t <= c.pelt_t) return;
  const double y = pelt_decay(t - c.pelt_t);
  c.util = c.util * y + (1.0 - y) * c.pelt_running;
  c.runnable = c.runnable * y + (1.0 - y) * c.pelt_runnable;
  c.load = c.load * y + (1.0 - y) * c.pelt_runnable;
  if (c.neighbours > 0) c.nb_util = c.nb_util * y + (1.0 - y) * (c.foreign ? 1.0 : 0.0);
  c.pelt_t = t;
}

void Kernel::pelt_thread_update(Thread& t) {
  const Duration at = now();
  if (at <= t.pelt_t) return;
  const double y = pelt_decay(at - t.pelt_t);
  const double run = pelt_runs(t.state) ? 1.0 : 0.0;
  const double queued = pelt_queued(t.state) ? 1.0 : 0.0;
  t.pelt_util = t.pelt_util * y + (1.0 - y) * run;
  t.pelt_runnable = t.pelt_runnable * y + (1.0 - y) * queued;
  t.pelt_load = t.pelt_load * y + (1.0 - y) * queued;
  t.pelt_t = at;
}

// The main thread's past (machine.origin_util): its averages at t = 0, all
// three at that utilization.
void Kernel::seed_origin_pelt(ThreadId id, int cpu) {
  Thread& t = threads_[id];
  const double u = m_.origin_util;
  t.pelt_born = true;
  t.pelt_util = u;
  t.pelt_runnable = u;
  t.pelt_load = u;
  t.pelt_t = now();
  pelt_attach(id, cpu);
}

// With a past (machine.origin_util), the one thread the process made just
// before t = 0 (the real runner's sampler, parked since; its later runs are
// the harness's): placed as any creation by the main thread now would be
// (fork_cpu), with post_init_entity_util_avg's share left there as a blocked
// thread's utilization that decays from t = 0 (its load is an idle-policy
// thread's, 3/1024: left out).
void Kernel::seed_origin_helper() {
  if (m_.origin_util <= 0) return;
  Cpu& c = cpus_[static_cast<std::size_t>(fork_cpu(0))];
  pelt_cpu_update(c);
  const double share = post_init_util(c.util, c.load);
  c.util += share;
  c.runnable += share;
}

void Kernel::pelt_attach(ThreadId id, int cpu) {
  Thread& t = threads_[id];
  if (t.pelt_cpu == cpu) return;
  pelt_thread_update(t);
  const int run = pelt_runs(t.state) ? 1 : 0;
  const int queued = pelt_queued(t.state) ? 1 : 0;
  if (t.pelt_cpu >= 0) {
    Cpu& from = cpus_[static_cast<std::size_t>(t.pelt_cpu)];
    pelt_cpu_update(from);
    pelt_detach(from, t);
    from.pelt_running -= run;
    from.pelt_runnable -= queued;
  }
  Cpu& to = cpus_[static_cast<std::size_t>(cpu)];
  pelt_cpu_update(to);
  if (!t.pelt_born) {
    // post_init_entity_util_avg (post_init_util); runnable the same; load
    // a full weight (init_entity_runnable_average).
    t.pelt_born = true;
    const double u = post_init_util(to.util, to.load);
    t.pelt_util = u;
    t.pelt_runnable = u;
    t.pelt_load = 1.0;
    t.pelt_t = now();
  }
  to.util += t.pelt_util;
  to.runnable += t.pelt_runnable;
  to.load += t.pelt_load;
  to.pelt_running += run;
  to.pelt_runnable += queued;
  t.pelt_cpu = cpu;
}

// The thread's state changes to `to`: its averages and its CPU's sums are
// brought up to now under the old state, then count the new one.
void Kernel::pelt_state(Thread& t, ThreadState to) {
  if (t.pelt_cpu < 0) return;
  Cpu& c = cpus_[static_cast<std::size_t>(t.pelt_cpu)];
  pelt_cpu_update(c);
  pelt_thread_update(t);
  c.pelt_running += (pelt_runs(to) ? 1 : 0) - (pelt_runs(t.state) ? 1 : 0);
  c.pelt_runnable += (pelt_queued(to) ? 1 : 0) - (pelt_queued(t.state) ? 1 : 0);
  POOLSIM_ASSERT(c.pelt_running >= 0 && c.pelt_running <= 1 && c.pelt_runnable >= 0,
                 "a CPU's PELT counts: at most one running thread, none negative");
  if (to == ThreadState::exited) {
    pelt_detach(c, t);
    t.pelt_cpu = -1;
  }
}

// A thread's averages taken off the sums of `c` (both up to date): it moves
// away or exits. Never below zero (the sums and the threads' averages round
// apart).
void Kernel::pelt_detach(Cpu& c, const Thread& t) {
  c.util = std::max(0.0, c.util - t.pelt_util);
  c.runnable = std::max(0.0, c.runnable - t.pelt_runnable);
  c.load = std::max(0.0, c.load - t.pelt_load);
}

void Kernel::set_cpu_state(Cpu& c, CpuState s) {
  running_cpus_ += (s == CpuState::running ? 1 : 0) - (c.state == CpuState::running ? 1 : 0);
  if (s == CpuState::idle && c.state == CpuState::running) c.idle_since = now();
  c.state = s;
  reindex(c);
  // OS noise runs on busy time: a CPU that starts running a thread arms its
  // next interruption unless one is pending; one that goes idle drops it (a
  // Poisson process has no memory, so the next busy stretch draws anew).
  if (s == CpuState::running) arm_busy_balance(c);
  if (!noise_.on()) return;
  if (s == CpuState::idle) {
    engine_.cancel(c.noise_ev);
    c.noise_ev = {};
  } else if (s == CpuState::running && !c.noise_ev.valid()) {
    const int idx = static_cast<int>(&c - cpus_.data());
    c.noise_ev =
        engine_.after_lane(noise_lane0_ + static_cast<std::uint32_t>(idx), noise_.next_gap(idx),
                           &Kernel::on_noise, this, static_cast<std::uint64_t>(idx));
  }
}

// An OS interruption of CPU `arg` (sim/noise.hpp): the thread running there
// makes no progress for the stolen time.
void Kernel::on_noise(void* self, std::uint64_t arg) {
  auto& k = *static_cast<Kernel*>(self);
  Cpu& c = k.cpus_[arg];
  c.noise_ev = {};
  if (c.state != CpuState::running) return;  // idle now: the next run arms a new one
  k.account(c);
  const int idx = static_cast<int>(arg);
  // What preempts here was woken elsewhere and takes an idle CPU when there
  // is one (noise_preempt_idle), unless the host packs wakes onto this CPU:
  // lightly used, nothing queued (wake_pack_util), it is treated as if
  // every CPU were busy (noise_preempt).
  const bool spared = k.machine_cpu_idle(idx) && !k.packs_wakes_onto(idx);
  const Interruption i = k.noise_.draw(idx, spared);
  k.stall(c, i.stolen, i.preempts);
  c.noise_ev = k.engine_.after_lane(k.noise_lane0_ + static_cast<std::uint32_t>(idx),
                                    k.noise_.next_gap(idx), &Kernel::on_noise, self, arg);
}

// Something else takes running CPU `c` for `stolen` (accounted up to now):
// no thread there progresses meanwhile, its slice and protection end that
// much later, and `preempts` (a switch to another task) counts as the
// running thread's involuntary switch.
void Kernel::stall(Cpu& c, Duration stolen, bool preempts) {
  const Duration from = std::max(now(), c.stall_until);
  c.stall_until = from + stolen;
  c.slice_end += stolen;
  c.protect_end += stolen;
  if (preempts) ++threads_[c.curr].nivcsw;
  arm(c);
}

// The interrupt of a sleeper's timer on CPU `tc` (the sleeper's last),
// which wakes it onto CPU `dest`. One interrupt runs every timer whose soft
// expiry has passed (__hrtimer_run_queues): the model fires a timer at its
// hard expiry, timer_slack after the deadline, so a timer that fires within
// timer_slack of the CPU's last timer interrupt was run by it, and costs
// only its wake-up (wake_cost, plus wake_ipi onto another CPU, as any
// wake). A new interrupt costs timer_irq (its entry and exit, the expiry,
// a wake-up onto that CPU) plus wake_ipi if the sleeper goes elsewhere. An
// idle CPU's interrupt costs nobody CPU time (its delay is
// timer_idle_exit), but it still runs the timers due with it.
void Kernel::timer_interrupt(Cpu& tc, int dest) {
  if (m_.timer_irq <= Duration{0}) return;
  const bool remote = dest != static_cast<int>(&tc - cpus_.data());
  // With the slack modelled (hrtimer_slack > 0), the timers an interrupt
  // runs fire with it (expire_due_with); without, a timer within
  // timer_slack of the last interrupt stands for one it ran.
  const bool with_last = m_.hrtimer_slack > Duration{0}
                             ? now() == tc.last_timer_irq
                             : now() - tc.last_timer_irq <= m_.timer_slack;
  if (!with_last) tc.last_timer_irq = now();
  if (tc.state != CpuState::running) return;
  const Duration ipi = remote ? m_.wake_ipi : Duration{0};
  // The interrupted thread computes it: its progress waits, its CPU time
  // and vruntime count it (no IRQ time accounting here). A sleeper woken
  // onto this CPU does not wait for it again: timer_slack, calibrated as a
  // sleep's overshoot on an awake CPU, holds the interrupt's path.
  account(tc);
  threads_[tc.curr].overhead += with_last ? m_.wake_cost + ipi : m_.timer_irq + ipi;
  arm(tc);
}

// Keeps the CPU's place in the two indexes true after a change of its state
// or queue length: load (queued + current) for placement, queue length of a
// non-idle CPU for idle pulls.
void Kernel::reindex(Cpu& c) {
  const int idx = static_cast<int>(&c - cpus_.data());
  const int load = static_cast<int>(cpu_load(c));
  if (load != c.load_level) {
    load_idx_.move(idx, load);
    c.load_level = load;
  }
  const bool pullable = (c.state != CpuState::idle || c.foreign) && !rq_empty(c);
  const int pull = pullable ? static_cast<int>(rq_size(c)) : LevelIndex::kAbsent;
  if (pull != c.pull_level) {
    pull_idx_.move(idx, pull);
    c.pull_level = pull;
  }
  POOLSIM_ASSERT(load_idx_.level_of(idx) == load && pull_idx_.level_of(idx) == pull,
                 "a CPU's index levels are its load and queue length");
  if (pullable) {
    rd_overloaded_ = true;  // add_nr_running: a second runnable thread here
    nohz_kick();
  }
}

double Kernel::cpu_util(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  pelt_cpu_update(c);
  return c.util + c.nb_util;
}

// A group of one CPU as sched_balance_find_dst_group sees it (fair.c:
// update_sg_wakeup_stats, group_classify with the domain's imbalance_pct;
// SMT, misfit and asymmetric capacity are not modelled): has_spare <
// fully_busy < overloaded, from its runnable count and PELT sums.
namespace {
enum class GroupType : std::uint8_t { has_spare, fully_busy, overloaded };
struct GroupStats {
  GroupType type;
  bool idle;
  double util, load;
};
// sd_init (kernel/sched/topology.c): a domain's imbalance_pct, 117 for the
// one domain of CPUs without SMT siblings that the model has.
constexpr double kImbalancePct = 117;
// glibc's default guard (pthread_attr_t guardsize): one page, 4 KiB on x86-64.
constexpr Bytes kStackGuard = 4096;
GroupStats group_stats(std::size_t nr, double util_sum, double runnable, double load) {
  const double util = std::min(util_sum, 1.0);  // cpu_util_without: at most the capacity
  GroupStats g{GroupType::has_spare, nr == 0, util, load};
  const bool util_full = util * kImbalancePct > 100;          // capacity*100 < util*pct
  const bool runnable_full = runnable * 100 > kImbalancePct;  // capacity*pct < runnable*100
  if (nr > 1 && (util_full || runnable_full))
    g.type = GroupType::overloaded;  // group_is_overloaded
  else if (nr >= 1 && (runnable_full || !(util * kImbalancePct < 100)))
    g.type = GroupType::fully_busy;  // !group_has_capacity
  return g;
}
// A CPU's group as its root run queue sums it: the scenario's threads
// (`nr` runnable) and the neighbour's group entity (fork_cpu, busy_balance).
template <class C>
GroupStats root_group_stats(std::size_t nr, const C& c) {
  return group_stats(nr, c.util + c.nb_util, c.runnable + c.neighbours, c.load + c.nb_load);
}
}  // namespace

// The least loaded CPU other than `cpu`, by runnable threads (cpu_load):
// the first at the lowest load level after `cpu` (wrapping), -1 with one
// CPU. `cpu` itself is at a level of its own when it is the only one there.
int Kernel::least_loaded_other(int cpu) {
  const int n = cpu_count();
  int other = -1;
  for (int level = load_idx_.min_level(); level <= load_idx_.max_level(); ++level) {
    const int j = load_idx_.first_from(level, (cpu + 1) % n);
    if (j >= 0 && j != cpu) {
      other = j;
      break;
    }
  }
#ifndef NDEBUG
  {
    // The index's answer is a scan's: the least loaded CPU other than
    // `cpu`, the first after it on ties (wrapping).
    std::size_t best_load = static_cast<std::size_t>(-1);
    int scan = -1;
    for (int i = 1; i < n; ++i) {
      const int j = (cpu + i) % n;
      const std::size_t load = cpu_load(cpus_[static_cast<std::size_t>(j)]);
      if (load < best_load) {
        best_load = load;
        scan = j;
      }
    }
    POOLSIM_ASSERT(scan == other, "load index disagrees with the CPUs");
  }
#endif
  return other;
}

// Where a new thread starts (wake_up_new_task -> select_task_rq_fair with
// WF_FORK -> sched_balance_find_dst_cpu). A host that packs (fork_pack_util)
// keeps it on the creator's CPU while that CPU is lightly used and nothing
// is queued there. Else mainline: the creator's CPU (the local group)
// unless another is better by sched_balance_find_dst_group's rules: an idle
// CPU over a busy one; a lower group type; among CPUs with spare capacity
// more idle CPUs; among busy ones, an average load lower by more than the
// imbalance (a 17% margin and 174/1024 of one thread's load). The other
// CPU compared is an idle one if any (the first after the creator's; the
// kernel takes the least utilized idle CPU), else the least loaded (the
// kernel compares every CPU's group type and PELT sums): exact on 2 CPUs,
// O(1) on many.
int Kernel::fork_cpu(int creator_cpu) {
  if (creator_cpu < 0) return load_idx_.first_from(load_idx_.min_level(), 0);
  Cpu& local = cpus_[static_cast<std::size_t>(creator_cpu)];
  if (m_.fork_pack_util > 0 && rq_empty(local) && cpu_util(creator_cpu) < m_.fork_pack_util)
    return creator_cpu;
  const int other = least_loaded_other(creator_cpu);  // -1 with one CPU
  if (other < 0) return creator_cpu;
  Cpu& idlest = cpus_[static_cast<std::size_t>(other)];
  pelt_cpu_update(local);
  pelt_cpu_update(idlest);
  const GroupStats l = root_group_stats(cpu_load(local), local);
  const GroupStats i = root_group_stats(cpu_load(idlest), idlest);
  if (l.type != i.type) return l.type < i.type ? creator_cpu : other;
  if (l.type == GroupType::has_spare)
    return (l.idle ? 1 : 0) >= (i.idle ? 1 : 0) ? creator_cpu : other;
  constexpr double kImbalance = static_cast<double>(1024 * 17 / 100) / 1024;
  if (i.load >= l.load + kImbalance) return creator_cpu;
  if (100 * l.load <= kImbalancePct * i.load) return creator_cpu;
  return other;
}

// Where this guest kernel wakes a thread when no CPU is idle: its previous
// CPU, unless that CPU is overloaded and another is not, the group types of
// sched_balance_find_dst_group (a lower type wins; between equal types the
// previous CPU stays) taken from the runnable threads alone: overloaded with
// more runnable threads than CPUs (two or more on one CPU). Measured
// 2026-12-06 (ftrace of the quickstart, 3 repetitions; docs/simulator.md,
// "wake placement with no CPU idle"): a worker woken by the submitter while both CPUs ran
// threads went to the other CPU in 14.3 of 18.6 wakes a repetition when its
// previous CPU held the submitter and a worker the submitter had preempted
// and the other CPU one worker, and stayed in 40.3 of 42 when the submitter
// ran there alone; a worker whose previous CPU ran one worker stayed there
// in 17.3 of 20.6 with the submitter alone on its CPU, 14.0 of 14.3 with a
// preempted worker beside it. With both CPUs overloaded the kernel compares
// PELT loads with a 17% margin; the model keeps the previous CPU (not
// traced). A CPU holding the neighbour's threads is no target: beside a
// neighbour on both CPUs, all 2,237 traced wakes stayed on their previous
// CPU (container-neighbour, 2026-12-06).
int Kernel::busy_wake_cpu(int prev) {
  const auto overloaded = [&](int cpu) {
    return cpu_load(cpus_[static_cast<std::size_t>(cpu)]) > 1;
  };
  if (!overloaded(prev)) return prev;
  const int least = least_loaded_other(prev);
  if (least < 0 || overloaded(least)) return prev;
  // A CPU where the neighbour's CPU-bound threads sit is no target: traced
  // beside a neighbour (container-neighbour, 2026-12-06), every worker woken
  // with no CPU idle stayed on its previous CPU, whatever the two queues.
  return cpus_[static_cast<std::size_t>(least)].neighbours == 0 ? least : prev;
}

void Kernel::place_new(ThreadId id, int creator_cpu) {
  const int best = fork_cpu(creator_cpu);
  // A new thread put on another CPU than its creator's computes
  // thread_start_remote more (its first run where nothing of it is cached).
  // The creator sends an IPI only to an idle CPU (resched_curr kicks it out
  // of idle), after it enqueued the thread on that CPU's run queue itself
  // (wake_up_new_task: fork_activate); a busy one finds the thread on its
  // queue, and a new thread's wake does not preempt it by the pick. The local
  // part is in thread_create.
  if (creator_cpu >= 0 && best != creator_cpu) {
    // On an idle CPU its first run costs thread_start_idle more (measured:
    // 36 us back to back, 110 us 3 ms apart here).
    if (cpu_idle(cpus_[static_cast<std::size_t>(best)])) {
      charge_waker(m_.wake_ipi + m_.fork_activate);
      threads_[id].overhead += m_.thread_start_idle;
    }
    threads_[id].overhead += m_.thread_start_remote;
  }
  enqueue_woken(cpus_[best], id, true);
}

// The woken (or new) thread's vruntime and deadline on the queue of `c`.
void Kernel::place_woken(Cpu& c, ThreadId id, bool is_new) {
  Thread& t = threads_[id];
  if (is_new) {
    // wake_up_new_task -> place_entity(ENQUEUE_INITIAL): a new task's lag
    // is 0 (__sched_fork, commit 86bfbb7ce4f6 "sched/fair: Add lag based
    // placement"), so it starts at the queue's average vruntime V, behind
    // every thread that is owed service; PLACE_DEADLINE_INITIAL gives its
    // first deadline half a slice on ("the existing tasks will be, on
    // average, halfway through their slice").
    t.vruntime = place(c, Duration{0});
    t.deadline = t.vruntime + m_.slice / 2;
  } else if (t.delayed) {
    undelay(c, id);
    // Woken while delayed (ttwu_runnable -> requeue_delayed_entity): its
    // lag is taken against V before any update_curr, i.e. with the current
    // thread's vruntime as of the kernel's last update of it (a tick, a
    // pick, an enqueue here). Lag > 0 (DELAY_ZERO): placed at that V with
    // lag 0 and a deadline a slice on (place_entity); else it keeps its
    // vruntime and the deadline it blocked with. The wake-up check that
    // follows brings the current thread up to date, so the time it ran
    // since then turns into the woken thread's lead.
    const Duration v = stale_avg_vruntime(c);
    if (t.vruntime < v) {
      t.vruntime = v;
      t.deadline = v + m_.slice;
    }
  } else {
    // PLACE_LAG: the lag it blocked with, clamped (entity_lag), placed
    // against this queue's V (place_entity: vd_i = ve_i + r_i/w_i).
    const Duration limit = m_.slice + m_.tick;
    t.vruntime = place(c, std::clamp(t.lag, -limit, limit));
    t.deadline = t.vruntime + m_.slice;
  }
  t.cpu = static_cast<int>(&c - cpus_.data());
  pelt_attach(id, t.cpu);
}

void Kernel::enqueue_woken(Cpu& c, ThreadId id, bool is_new, int timer_cpu) {
  const int idx = static_cast<int>(&c - cpus_.data());
  // Bring the queue's min_vruntime up to now before placing against it.
  if (idx != exec_cpu_) account(c);
  expire_delayed(c);
  place_woken(c, id, is_new);
  if (c.throttled) {  // joins the limbo of the throttled CPU
    rq_push(c, id);
    park_throttled(c);
    return;
  }
  if (c.foreign) {  // the neighbour holds the CPU: wait for the group's turn
    const bool first = rq_empty(c);
    rq_push(c, id);
    set_state(id, ThreadState::runnable);
    if (first) group_runnable(c);
    return;
  }
  if (cpu_idle(c)) {
    set_state(id, ThreadState::runnable);
    set_cpu_state(c, CpuState::waking);
    c.curr = id;
    // Brought out of idle by the thread's own timer, or by another CPU's
    // wake (the IPI path; a timer that fired elsewhere takes it too).
    // Either is later the longer the CPU idled (timer_idle_late,
    // idle_exit_late).
    const Duration idled = now() - c.idle_since;
    Duration delay = timer_cpu == idx
                         ? m_.timer_idle_exit + timer_idle_late_cost(m_, idled)
                         : m_.wakeup_latency + m_.idle_exit + idle_exit_late_cost(m_, idled);
    // Now and then the host holds such a timer back (timer_stall_share).
    if (timer_cpu == idx && m_.timer_stall_share > 0 &&
        timer_stall_rng_.uniform() < m_.timer_stall_share) {
      delay += timer_stall_.sample(timer_stall_rng_);
      ++timer_stalls_;
    }
    // Its own timer brought the CPU back: the idle exit restarts the
    // stopped tick, which reprograms the timer device when the tick is the
    // CPU's first event (no other timer pending before it), and that path
    // runs on the woken thread's clock (timer_idle_run). Probe of
    // 2026-12-05, 1 ms sleeps pinned to one CPU: a lone sleeper's CPU per
    // sleep 22.6 us behind the tick and 30.4 ahead of it with the CPU idle,
    // 9.0 and 16.8 with it kept awake; four sleepers taking turns, whose
    // timers keep the tick from being first, 9.3 us.
    if (timer_cpu == idx && (m_.tick <= Duration{0} || next_tick_at() <= first_timer_on(idx)))
      threads_[id].overhead += m_.timer_idle_run;
    if (delay.count() <= 0) {
      start_on(c, id);
    } else {
      POOLSIM_ASSERT(!engine_.pending(c.ev), "a waking CPU already has an event");
      c.ev = engine_.after_lane(lane0_ + static_cast<std::uint32_t>(idx), delay,
                                &Kernel::on_cpu_event, this, static_cast<std::uint64_t>(idx));
    }
    return;
  }
  const bool others_queued = !rq_empty(c) || !c.delayed.empty();
  rq_push(c, id);
  set_state(id, ThreadState::runnable);
  if (c.state != CpuState::running) return;  // waking or idle-throttled: seen when it starts
  if (idx != exec_cpu_) note_update(c);      // update_curr in enqueue_entity / the wake-up check
  refresh_slice(c);
  check_wakeup_preempt(c, id, is_new, others_queued);
}

// The wake-up check on the CPU the thread was queued on (running). A passed
// deadline reschedules (update_curr). A new thread does not preempt by the
// pick: only update_curr in enqueue_entity reschedules then, when other
// threads were already queued (nr_queued > 1) and the current thread's
// deadline or protection has passed, and the pick decides. That is what the
// creator probes measure: a creator that keeps its protection is switched
// out at its slice's ends only (in a task group with load on another CPU
// the kernel ends that protection now and then, and it is switched out
// after its second new thread: docs/validation.md, not modelled). 6.18's
// check_preempt_wakeup_fair only keeps NEXT_BUDDY off for WF_FORK; why its
// pick does not take the first new thread was not found (the guest
// cannot trace kernel functions). Any other wake goes through
// pick_eevdf, which drops a current thread that is no longer eligible (the
// woken one, placed with its lag, pulled V below it) before it looks at
// the protection (RUN_TO_PARITY), and preempts only if its pick is the
// woken thread (`pick_eevdf(cfs_rq) == pse`): a wake onto a queue where
// another thread comes first leaves the current one running.
void Kernel::check_wakeup_preempt(Cpu& c, ThreadId woken, bool is_new, bool others_queued) {
  const int idx = static_cast<int>(&c - cpus_.data());
  const bool unprotected = now() >= c.protect_end;
  bool deadline_passed = now() >= c.slice_end;
  bool preempts = false;
  if (is_new) {
    deadline_passed = deadline_passed && others_queued;
    preempts = !deadline_passed && others_queued && unprotected && wakeup_preempts(c);
  } else {
    preempts = !deadline_passed && (unprotected || !eligible(c, threads_[c.curr].vruntime)) &&
               wakeup_preempts(c, woken);
  }
  if (idx == exec_cpu_ || threads_[c.curr].in_syscall) {
    // The waker itself is the current thread, or the current thread is in
    // a system call: resched_curr marks it, and it is switched out on its
    // way back to user space, at the end of its step (complete_op; a step
    // that ends in a block blocks when it next runs).
    if (idx != exec_cpu_) arm(c);
    if (deadline_passed)
      c.need_resched = true;
    else if (preempts)
      c.wake_resched = true;
    return;
  }
  if (idx == irq_.cpu) {
    // One timer interrupt's wakes (on_timer): resched_curr only marks the
    // current thread, which is switched out once, at the interrupt's exit.
    irq_.deadline_passed = irq_.deadline_passed || deadline_passed;
    irq_.preempts = irq_.preempts || preempts;
    arm(c);
    return;
  }
  act_on_wake(c, deadline_passed, preempts);
}

// What a wake-up check decided for the running thread of `c`, done: a passed
// deadline reschedules (update_curr), a preempting wake switches it out, and
// otherwise it keeps the CPU to its next event.
void Kernel::act_on_wake(Cpu& c, bool deadline_passed, bool preempts) {
  if (deadline_passed)
    resched(c);
  else if (preempts)
    preempt(c);
  else
    arm(c);
}

// check_preempt_wakeup_fair past the current thread's protection:
// pick_eevdf over the queue with the current thread at its present
// deadline (the renewals it got at ticks, refresh_slice, are its slice_end);
// true if the pick is `woken` (kNoThread: if it is not the current thread).
bool Kernel::wakeup_preempts(Cpu& c, ThreadId woken) {
  threads_[c.curr].deadline = current_deadline(c);
  if (keep_current(c)) return false;
  return woken == kNoThread || rq_best(c)->t == woken;
}

// The current thread's deadline as update_curr leaves it: what is left of
// its slice (slice_end, with the renewals it got at ticks applied by
// refresh_slice) on from its vruntime, or a slice on once that has passed
// (update_deadline).
Duration Kernel::current_deadline(Cpu& c) {
  refresh_slice(c);
  const Thread& cur = threads_[c.curr];
  const Duration left = c.slice_end - now();
  return cur.vruntime + (left > Duration{0} ? left : m_.slice);
}

// update_curr: the kernel brought the current thread's vruntime up to date
// (call after account()).
void Kernel::note_update(Cpu& c) {
  c.upd_at = now();
  if (has_curr(c)) c.upd_v = threads_[c.curr].vruntime;
}

// avg_vruntime as requeue_delayed_entity reads it: the queue and the current
// thread at the vruntime the kernel last gave it, at its last update_curr or
// the last tick since (task_tick_fair), whichever is later.
Duration Kernel::stale_avg_vruntime(const Cpu& c) const {
  if (!has_curr(c)) return avg_vruntime(c);
  const Duration v = threads_[c.curr].vruntime;
  const Duration last_tick = last_tick_at(now());
  const Duration stale =
      last_tick <= c.upd_at ? c.upd_v : std::max(c.upd_v, v - (now() - last_tick));
  return avg_vruntime_with(c, std::min(stale, v));
}

// Is `t` still delayed on its CPU's queue? Until a pick there (the kernel's
// pick_eevdf takes an eligible delayed entity and dequeues it; here any
// pick), the CPU going idle (the last pick dequeues every delayed entity),
// or the tick that ends the protection of the thread that ran after it
// (update_curr reschedules then, as the delayed entity counts in nr_queued).
bool Kernel::still_delayed(const Thread& t) const {
  if (!t.delayed) return false;
  const Cpu& c = cpus_[static_cast<std::size_t>(t.last_cpu)];
  return c.state == CpuState::running && !c.throttled && !c.foreign && c.picks == t.delay_pick &&
         now() < t.delay_end;
}

// dequeue_entity with DELAY_DEQUEUE: a thread that blocks while not
// eligible (behind V, lag < 0) stays on its CPU's queue, delayed, and keeps
// weighing in V there; if no other thread took the CPU, the pick that finds
// only it dequeues it at once with lag 0 (DELAY_ZERO).
void Kernel::mark_delayed(Cpu& c, ThreadId id) {
  Thread& t = threads_[id];
  if (t.lag >= Duration{0}) return;
  if (c.state != CpuState::running || c.throttled || c.foreign) {
    t.lag = Duration{0};
    return;
  }
  t.delayed = true;
  t.delay_pick = c.picks;
  t.delay_end = round_to_tick(c.protect_end);
  c.delayed.push_back(id);
  c.avg_sum += t.vruntime - c.min_vruntime;  // avg_vruntime_add: still in the tree
  ++c.avg_n;
}

// The delayed entity leaves its queue: its weight leaves V.
void Kernel::undelay(Cpu& c, ThreadId id) {
  Thread& t = threads_[id];
  POOLSIM_ASSERT(t.delayed, "undelay of a thread that is not delayed");
  t.delayed = false;
  c.avg_sum -= t.vruntime - c.min_vruntime;
  --c.avg_n;
  c.delayed.erase(std::find(c.delayed.begin(), c.delayed.end(), id));
}

// Dequeues the delayed entities of `c` whose delay has ended (a pick took
// them, the CPU went idle, or the tick after the protection): lag 0
// (DELAY_ZERO: they were eligible when picked).
void Kernel::expire_delayed(Cpu& c) {
  for (std::size_t i = c.delayed.size(); i-- > 0;) {
    const ThreadId id = c.delayed[i];
    if (still_delayed(threads_[id])) continue;
    undelay(c, id);
    threads_[id].lag = Duration{0};
  }
}

// The current thread's deadline has passed: it gets a new deadline a slice on
// (update_deadline); switch if a queued thread comes first (pick_eevdf),
// otherwise the current one runs its new slice and no switch happens.
void Kernel::resched(Cpu& c) {
  c.need_resched = false;
  note_update(c);
  Thread& cur = threads_[c.curr];
  cur.deadline = cur.vruntime + m_.slice;
  if (!keep_current(c)) {
    preempt(c);
    return;
  }
  c.slice_end = now() + m_.slice;
  arm(c);
}

// pick_eevdf with the current thread on the queue: it stays if nothing
// queued is eligible, or if it is eligible and its deadline is strictly the
// earliest (entity_before(curr, best)).
bool Kernel::keep_current(Cpu& c) {
  const RqEntry* best_e = rq_best(c);
  if (best_e == nullptr) return true;
  const RqEntry& best = *best_e;
  const Thread& cur = threads_[c.curr];
  if (!eligible(c, cur.vruntime)) return false;
  return !eligible(c, best.v) || cur.deadline < best.d;
}

// ---- run queues ------------------------------------------------------------

// avg_vruntime: V, the mean vruntime of the queued threads and the current
// one, rounded down ("sign flips effective floor / ceil"); min_vruntime when
// the queue is empty.
Duration Kernel::avg_vruntime(const Cpu& c) const {
  return avg_vruntime_with(c, has_curr(c) ? threads_[c.curr].vruntime : Duration::max());
}

// avg_vruntime with the current thread counted at `curr_v` (none when
// Duration::max()): the queue's V as the kernel computes it from whatever
// vruntime it last gave the current thread.
Duration Kernel::avg_vruntime_with(const Cpu& c, Duration curr_v) const {
  Duration sum = c.avg_sum;
  std::int64_t n = c.avg_n;
  if (curr_v != Duration::max()) {
    sum += curr_v - c.min_vruntime;
    ++n;
  }
  if (n == 0) return c.min_vruntime;
  if (sum < Duration{0}) sum -= Duration{n - 1};
  return c.min_vruntime + sum / n;
}

// vruntime_eligible: v <= V, compared without the division.
bool Kernel::eligible(const Cpu& c, Duration v) const {
  Duration sum = c.avg_sum;
  std::int64_t n = c.avg_n;
  if (has_curr(c)) {
    sum += threads_[c.curr].vruntime - c.min_vruntime;
    ++n;
  }
  return sum >= (v - c.min_vruntime) * n;
}

// place_entity (PLACE_LAG): v = V - lag * (W + w) / W with W the threads on
// the queue (the current one included) and w = 1, the lag inflated so that
// it survives the thread's own effect on V; no lag on an empty queue.
Duration Kernel::place(const Cpu& c, Duration lag) const {
  const Duration v = avg_vruntime(c);
  const std::int64_t w = c.avg_n + (has_curr(c) ? 1 : 0);
  if (w == 0 || lag == Duration{0}) return v;
  return v - lag * (w + 1) / w;
}

// pick_eevdf over the queue: the eligible thread with the earliest
// deadline (FIFO on ties); with none eligible (the current thread is the one
// owed service) the earliest deadline.
const RqEntry* Kernel::rq_best(const Cpu& c) const {
  if (c.rq.empty()) return nullptr;
  return &c.rq.best([&](Duration v) { return eligible(c, v); });
}

void Kernel::rq_push(Cpu& c, ThreadId id) {
  const Thread& t = threads_[id];
  c.rq.push({t.deadline, t.vruntime, rq_seq_++, id});
  // avg_vruntime_add
  c.avg_sum += t.vruntime - c.min_vruntime;
  ++c.avg_n;
  POOLSIM_ASSERT(static_cast<std::size_t>(c.avg_n) == rq_size(c) + c.delayed.size(),
                 "avg_load counts the queue and its delayed entities");
#ifndef NDEBUG
  if (c.rq.size() <= 64) c.rq.check();
#endif
  reindex(c);
}

// Removes `e` from the queue (avg_vruntime_sub).
RqEntry Kernel::rq_take(Cpu& c, const RqEntry& e) {
  const RqEntry taken = c.rq.erase(e);
  c.avg_sum -= taken.v - c.min_vruntime;
  --c.avg_n;
  POOLSIM_ASSERT(static_cast<std::size_t>(c.avg_n) == rq_size(c) + c.delayed.size(),
                 "avg_load counts the queue and its delayed entities");
  reindex(c);
  return taken;
}

ThreadId Kernel::rq_pop_min(Cpu& c) { return rq_take(c, *rq_best(c)).t; }

namespace {
// sd_init (kernel/sched/topology.c): cache_nice_tries of a domain of CPUs
// that share a cache (SD_SHARE_LLC), and of one that does not (the last
// case); the model's single domain is either.
constexpr int kCacheNiceTries = 1;
}  // namespace

// The nohz idle balance (kernel/sched/fair.c, 6.18): an idle CPU's tick is
// stopped, so a busy CPU's tick (sched_balance_trigger ->
// nohz_balancer_kick) kicks an idle CPU when the busy one has a thread
// queued (rq->nr_running >= 2); the kicked CPU (kick_ilb: an IPI) balances
// for every idle CPU (_nohz_idle_balance -> sched_balance_rq, CPU_IDLE),
// each pulling from the busiest queue. The model's ticks are the multiples
// of machine.tick on every CPU; an idle CPU's balance interval
// (sd->balance_interval, 2 ms on 2 CPUs, at least a jiffy) is one tick, so
// the balance runs at each tick at which a queue holds a waiting thread and
// a CPU is idle, the IPI's wakeup_latency + idle_exit after it. No ticks
// (tick 0, the idealised tickless model): no periodic balance.
void Kernel::nohz_kick() {
  if (m_.tick <= Duration{0} || engine_.pending(nohz_ev_) || load_idx_.first_from(0, 0) < 0) return;
  nohz_ev_ = engine_.at(next_tick_at() + m_.wakeup_latency + m_.idle_exit, &Kernel::on_nohz_balance,
                        this, 0);
}

void Kernel::on_nohz_balance(void* self, std::uint64_t) {
  auto& k = *static_cast<Kernel*>(self);
  k.nohz_ev_ = {};
  k.rd_overloaded_ = !k.pull_idx_.empty();  // update_sd_lb_stats at the root domain
  k.update_idle_cpu_scan();
  // Every idle CPU in turn, from CPU 0, while a queue holds a waiting thread.
  for (int from = 0; from < k.cpu_count() && !k.pull_idx_.empty();) {
    const int j = k.load_idx_.first_from(0, from);
    if (j < from) break;  // none left (first_from wraps)
    from = j + 1;
    Cpu& c = k.cpus_[static_cast<std::size_t>(j)];
    if (!k.cpu_idle(c) || c.throttled || c.foreign) continue;  // cpu_idle: state idle
    if (k.pull(c, true)) k.start_on(c, k.rq_pop_min(c));
  }
  if (!k.pull_idx_.empty()) k.nohz_kick();
}

// sched_balance_newidle: a CPU going idle tries to pull a queued thread,
// unless the root domain is not overloaded; with the proportional newidle
// balance (machine.newidle_random) only as often as its recent balances
// succeeded (sim/newidle.hpp). Each balance that runs rewrites the
// overloaded flag (update_sd_lb_stats at the root domain). Left out: the
// skip when the CPU's average idle time is below the domain's newidle cost
// (avg_idle, max_newidle_lb_cost).
bool Kernel::newidle_balance(Cpu& c) {
  POOLSIM_ASSERT(rd_overloaded_ || pull_idx_.empty(),
                 "the overloaded flag is clear while a CPU has a thread queued behind another");
  if (!rd_overloaded_) return false;
  const bool proportional = m_.newidle_random > 0;
  std::uint32_t weight = 1;
  if (proportional && !c.newidle.roll(newidle_rng_, weight)) return false;
  rd_overloaded_ = !pull_idx_.empty();
  const bool pulled = pull(c);
  if (proportional) c.newidle.record(pulled ? weight : 0);
  return pulled;
}

bool Kernel::pull(Cpu& c, bool periodic) {
  // newidle_balance's busiest queue: the longest run queue of a CPU that is
  // not idle, the lowest-numbered on ties (the pull index holds exactly the
  // non-idle CPUs with a non-empty queue, at their queue length).
  const int src = pull_idx_.empty() ? -1 : pull_idx_.first_from(pull_idx_.max_level(), 0);
#ifndef NDEBUG
  int scan = -1;
  std::size_t most = 0;
  for (int j = 0; j < cpu_count(); ++j) {
    const Cpu& o = cpus_[j];
    if (&o == &c || (o.state == CpuState::idle && !o.foreign)) continue;
    if (rq_size(o) > most) {
      most = rq_size(o);
      scan = j;
    }
  }
  POOLSIM_ASSERT(scan == src, "pull index disagrees with the CPUs");
#endif
  if (src < 0) return false;
  Cpu& s = cpus_[src];
  // can_migrate_task: a thread that ran within cache_hot_time is cache-hot
  // (task_hot), and stays until more than kCacheNiceTries periodic balances
  // failed (sd->nr_balance_failed > sd->cache_nice_tries); only a periodic
  // balance counts its failure, and a move resets the count.
  if (periodic) {
    const Thread& cand = threads_[s.rq.oldest().t];
    if (cand.ran && now() - cand.ran_until < m_.cache_hot_time && c.lb_failed <= kCacheNiceTries) {
      ++c.lb_failed;
      return false;
    }
    c.lb_failed = 0;
  }
  if (src != exec_cpu_) {
    account(s);
    note_update(s);  // update_curr in dequeue_entity
  }
  expire_delayed(s);
  // The thread queued longest ago: detach_tasks takes from the tail of the
  // most-recently-used cfs_tasks list.
  migrate_queued(s, s.rq.oldest(), c);
  return true;
}

void Kernel::migrate_queued(Cpu& s, const RqEntry& entry, Cpu& c) {
  // update_entity_lag at the dequeue: V - v, clamped to
  // the largest slice plus TICK_NSEC (6.18's update_entity_lag).
  const Duration limit = m_.slice + m_.tick;
  const Duration lag = std::clamp(avg_vruntime(s) - entry.v, -limit, limit);
  const RqEntry e = rq_take(s, entry);
  if (s.foreign && rq_empty(s)) group_idle(s);
  Thread& t = threads_[e.t];
  // place_entity on this CPU; PLACE_REL_DEADLINE keeps the deadline's
  // distance from the vruntime.
  t.vruntime = place(c, lag);
  t.deadline = t.vruntime + (e.d - e.v);
  t.cpu = static_cast<int>(&c - cpus_.data());
  pelt_attach(e.t, t.cpu);
  rq_push(c, e.t);
}

namespace {
// sd_init (kernel/sched/topology.c): a busy CPU balances busy_factor times
// less often than an idle one; sysctl_sched_nr_migrate: the most queued
// threads one balance looks at (env->loop_max).
constexpr std::int64_t kBusyFactor = 16;
constexpr std::size_t kNrMigrate = 32;
}  // namespace

// get_sd_balance_interval(sd, busy): balance_interval x busy_factor ms in
// jiffies, rounded up (msecs_to_jiffies), less one (since 5.10, so that the
// levels' periods are not multiples of each other), clamped to one jiffy
// and max_load_balance_interval (HZ x CPUs / 10). On this 2-CPU host with
// HZ 250: 7 ticks (28 ms) after a balance that found an imbalance, 15 (60
// ms) once balanced.
std::int64_t Kernel::busy_balance_ticks(const Cpu& c) const {
  const std::int64_t tick = m_.tick.count();
  const std::int64_t ms = std::int64_t{1'000'000} * c.balance_ms * kBusyFactor;
  const std::int64_t hz = std::max<std::int64_t>(1, std::int64_t{1'000'000'000} / tick);
  const std::int64_t most = std::max<std::int64_t>(1, hz * cpu_count() / 10);
  return std::clamp<std::int64_t>((ms + tick - 1) / tick - 1, 1, most);
}

void Kernel::arm_busy_balance(Cpu& c) {
  if (m_.tick <= Duration{0} || cpu_count() < 2 || c.balance_ev.valid()) return;
  const Duration due = c.last_balance + m_.tick * busy_balance_ticks(c);
  const Duration at = std::max(due, round_to_tick(now()));
  c.balance_ev =
      engine_.at(at, &Kernel::on_busy_balance, this, static_cast<std::uint64_t>(&c - cpus_.data()));
}

// The tick at which a CPU's balance is due (sched_balance_trigger ->
// SCHED_SOFTIRQ -> sched_balance_domains): a CPU running a thread balances
// as busy; one that is not lets its next run arm the balance again (an idle
// CPU's balancing is the newidle and nohz paths').
void Kernel::on_busy_balance(void* self, std::uint64_t cpu) {
  auto& k = *static_cast<Kernel*>(self);
  Cpu& c = k.cpus_[cpu];
  c.balance_ev = {};
  if (c.state != CpuState::running || c.foreign) return;
  k.busy_balance(c);
  c.last_balance = k.now();
  k.arm_busy_balance(c);
}

// update_idle_cpu_scan at each periodic balance (not a newly idle CPU's):
// the LLC's summed utilization, each CPU's at most a CPU (cpu_util_cfs), in
// 1024ths. The LLC is the machine's: its CPUs outside a cpuset run nothing
// of the scenario's, and count as idle.
void Kernel::update_idle_cpu_scan() {
  if (m_.sis_util <= 0) return;
  std::uint64_t sum = 0;
  for (int j = 0; j < cpu_count(); ++j)
    sum += static_cast<std::uint64_t>(std::min(1.0, cpu_util(j)) * 1024);
  nr_idle_scan_ = sis_util_scan(sum, static_cast<std::uint64_t>(std::max(m_.cores, cpu_count())));
}

// sched_balance_rq for a busy CPU (CPU_NOT_IDLE) in the model's one domain,
// each CPU a group (fair.c, 6.18: update_sd_lb_stats, update_sd_pick_busiest,
// sched_balance_find_src_group, calculate_imbalance, detach_tasks). Each
// CPU's group type and load come from its root run queue's PELT sums
// (group_stats, as fork_cpu's). The busiest is the other CPU of the highest
// group type, then the highest load (the first after this one on ties); a
// busy CPU pulls only from an overloaded one, and, itself overloaded, only
// when the busiest's load exceeds its own by imbalance_pct and its own is
// below the average. The amount: with spare capacity here, the capacity
// left (migrate_util, by the threads' utilization: a domain without a
// shared last-level cache, as this host's, whose CPUs report no caches);
// else enough load to bring both towards the average (migrate_load, the
// smaller of the busiest's excess and this CPU's shortfall). detach_tasks
// then looks at up to sysctl_sched_nr_migrate queued threads, least
// recently queued first, skips the cache-hot (ran within cache_hot_time,
// until more than cache_nice_tries balances failed) and any whose share
// (halved per failed balance: shr_bound) exceeds what is left to move, and
// moves the rest until that is used up. A balance that found an imbalance
// resets the interval to its shortest, a balanced one doubles it (up to
// twice the CPU count in ms). Left out: active balancing (pushing a running
// thread after cache_nice_tries + 2 failures) and the balance's own CPU
// time.
bool Kernel::busy_balance(Cpu& l) {
  update_idle_cpu_scan();  // update_sd_lb_stats at the LLC domain
  const int n = cpu_count();
  const int li = static_cast<int>(&l - cpus_.data());
  double total = 0;
  int src = -1;
  GroupStats local{}, busiest{};
  for (int k = 0; k < n; ++k) {
    const int j = (li + k) % n;
    Cpu& o = cpus_[static_cast<std::size_t>(j)];
    pelt_cpu_update(o);
    const GroupStats g = root_group_stats(cpu_load(o), o);
    total += g.load;
    if (j == li) {
      local = g;
      continue;
    }
    if (o.throttled || rq_empty(o)) continue;  // nothing of the scenario's to pull
    if (src < 0 || g.type > busiest.type || (g.type == busiest.type && g.load > busiest.load)) {
      src = j;
      busiest = g;
    }
  }
  const double avg = total / n;
  bool unbalanced = src >= 0 && busiest.type == GroupType::overloaded && local.type <= busiest.type;
  if (unbalanced && local.type == GroupType::overloaded)
    unbalanced = local.load < busiest.load && local.load < avg &&
                 100 * busiest.load > kImbalancePct * local.load;
  const bool by_util = local.type == GroupType::has_spare;
  double imbalance = 0;
  if (unbalanced) {
    imbalance = by_util ? std::max(1.0, local.util) - local.util
                        : std::min(busiest.load - avg, avg - local.load);
    unbalanced = imbalance > 0;
  }
  if (!unbalanced) {  // out_balanced
    l.lb_failed = 0;
    if (l.balance_ms < 2 * n) l.balance_ms *= 2;
    return false;
  }
  l.balance_ms = n;  // "we were unbalanced, so reset the balancing interval"
  POOLSIM_ASSERT(src != li && l.state == CpuState::running,
                 "a busy balance pulls onto its own running CPU from another");
  Cpu& s = cpus_[static_cast<std::size_t>(src)];
  [[maybe_unused]] const std::size_t queued_before = rq_size(l) + rq_size(s);
  account(s);
  note_update(s);  // update_curr in dequeue_entity
  expire_delayed(s);
  account(l);
  note_update(l);  // update_curr in enqueue_entity
  const int moved = detach_tasks(s, l, imbalance, by_util);
  POOLSIM_ASSERT(rq_size(l) + rq_size(s) == queued_before,
                 "a busy balance moves queued threads and loses none");
  l.lb_failed = moved > 0 ? 0 : l.lb_failed + 1;
  if (moved > 0) arm(l);  // threads queued behind the current one: its slice end counts
  return moved > 0;
}

// detach_tasks + attach_tasks of a busy balance: from `s` onto `l`, up to
// sysctl_sched_nr_migrate queued threads, least recently queued first (the
// tail of the cfs_tasks list), skipping the cache-hot ones and any whose
// share (utilization or load, halved per failed balance: shr_bound)
// exceeds what is left of `imbalance`; the number moved.
int Kernel::detach_tasks(Cpu& s, Cpu& l, double imbalance, bool by_util) {
  std::vector<RqEntry> cand;
  cand.reserve(rq_size(s));
  s.rq.for_each([&](const RqEntry& e) { cand.push_back(e); });
  const std::size_t look = std::min({kNrMigrate, cand.size(), cpu_load(s)});
  std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(look), cand.end(),
                    [](const RqEntry& a, const RqEntry& b) { return a.seq < b.seq; });
  const int failed = std::min(l.lb_failed, 62);
  int moved = 0;
  for (std::size_t i = 0; i < look && imbalance > 0; ++i) {
    Thread& t = threads_[cand[i].t];
    if (t.ran && now() - t.ran_until < m_.cache_hot_time && l.lb_failed <= kCacheNiceTries)
      continue;  // task_hot
    pelt_thread_update(t);
    const double share = by_util ? t.pelt_util : std::max(t.pelt_load, 1.0 / 1024);
    if (std::ldexp(share, -failed) > imbalance) continue;
    migrate_queued(s, cand[i], l);
    imbalance -= share;
    ++moved;
  }
  POOLSIM_ASSERT(static_cast<std::size_t>(moved) <= look,
                 "a balance moves at most the sysctl_sched_nr_migrate threads it looked at");
  return moved;
}

// ---- the CPU state machine ---------------------------------------------------

Duration Kernel::round_to_tick(Duration t) const {
  const Duration tick = m_.tick;
  if (tick <= Duration{0}) return t;
  return tick_grid_ceil(t, tick, tick_offset_);
}

Duration Kernel::last_tick_at(Duration t) const {
  const Duration tick = m_.tick;
  if (tick <= Duration{0}) return t;
  return tick_grid_floor(t, tick, tick_offset_);
}

void Kernel::account(Cpu& c) {
  if (c.state != CpuState::running) return;
  // Time an OS interruption stole (stall_until) is nobody's progress; the
  // kernel may still charge it to the thread's CPU time (noise_charged).
  const Duration from = std::max(c.seg_start, std::min(now(), c.stall_until));
  const Duration d = now() - from;
  POOLSIM_ASSERT(d >= Duration{0}, "a CPU's accounted run starts in the future");
  if (d <= Duration{0}) return;
  Thread& t = threads_[c.curr];
  const Duration o = std::min(d, t.overhead);
  t.overhead -= o;
  t.work = std::max(Duration{0}, t.work - (d - o));
  t.cpu_time += d;
  if (m_.noise_charged > 0 && from > c.seg_start)
    t.cpu_time += Duration{
        std::llround(static_cast<double>((from - c.seg_start).count()) * m_.noise_charged)};
  t.vruntime += d;
  c.seg_start = now();
  update_min_vruntime(c);
}

void Kernel::update_min_vruntime(Cpu& c) {
  Duration v = Duration::max();
  if (c.state == CpuState::running) v = threads_[c.curr].vruntime;
  if (!c.rq.empty()) v = std::min(v, c.rq.leftmost().v);
  if (v == Duration::max() || v <= c.min_vruntime) return;
  // avg_vruntime_update: the queued keys are relative to min_vruntime.
  c.avg_sum -= c.avg_n * (v - c.min_vruntime);
  c.min_vruntime = v;
}

// Lazily applies the slice renewals a thread running alone got at ticks
// (update_deadline), so that slice_end is the end of its current slice.
void Kernel::refresh_slice(Cpu& c) {
  const Duration slice = m_.slice, tick = m_.tick;
  const Duration first = round_to_tick(c.slice_end);
  const Duration now_ns = now();
  if (now_ns <= first) return;
  const Duration period = tick > Duration{0} ? ((slice + tick - Duration{1}) / tick) * tick : slice;
  c.slice_end = first + ((now_ns - first - Duration{1}) / period) * period + slice;
}

void Kernel::arm(Cpu& c) {
  const Thread& t = threads_[c.curr];
  Duration at = std::max(now(), c.stall_until) + t.overhead + t.work;
  // A thread in a system call notices the end of its slice on its way out.
  if (!rq_empty(c) && !t.in_syscall) {
    refresh_slice(c);
    at = std::min(at, std::max(now(), round_to_tick(c.slice_end)));
  }
  // The CPU's lane holds one event: a pending one is replaced (cancelled and scheduled anew).
  const auto idx = static_cast<std::uint32_t>(&c - cpus_.data());
  c.ev = engine_.at_lane(lane0_ + idx, at.count(), &Kernel::on_cpu_event, this, idx);
}

void Kernel::on_cpu_event(void* self, std::uint64_t arg) {
  auto& k = *static_cast<Kernel*>(self);
  Cpu& c = k.cpus_[arg];
  c.ev = {};
  if (c.state == CpuState::waking) {
    k.start_on(c, c.curr);
    return;
  }
  k.account(c);
  k.expire_delayed(c);
  const Thread& t = k.threads_[c.curr];
  if (t.overhead + t.work <= Duration{0}) {
    k.complete_op(c);
    return;
  }
  // The tick noticed the end of the slice.
  if (!rq_empty(c) && !t.in_syscall) {
    k.resched(c);
    return;
  }
  k.arm(c);
}

void Kernel::start_on(Cpu& c, ThreadId id) {
  const int idx = static_cast<int>(&c - cpus_.data());
  if (bw_ && !bw_->start(idx)) {  // no runtime: the CPU is throttled, the thread waits
    c.curr = kNoThread;
    set_cpu_state(c, CpuState::idle);
    rq_push(c, id);
    c.throttled = true;
    open_cpu_span(c);
    park_throttled(c);
    group_idle(c);
    return;
  }
  Thread& t = threads_[id];
  POOLSIM_ASSERT(!c.throttled, "a thread starts on a throttled CPU");
  POOLSIM_ASSERT(!c.foreign, "a thread starts on a CPU the neighbour holds");
  POOLSIM_ASSERT(t.state == ThreadState::runnable, "only a runnable thread starts");
  Duration cost = m_.switch_cost;
  if (t.ran) cost += m_.cache_refill;
  if (t.last_cpu >= 0 && t.last_cpu != idx) cost += m_.migration_cost;
  // A CPU that idled: the host evicted the caches it held meanwhile, and
  // the first thread to run refills them (machine.idle_refill; a switch
  // between threads passes through idle at one instant and pays nothing).
  if (c.state != CpuState::running) cost += idle_refill_cost(m_, now() - c.idle_since);
  t.overhead += cost;
  if (!t.ran && id != 0) {
    worker_stack_on_first_run(t);
    // Its arena's new page-table pages cost more while another CPU is busy.
    if (t.new_arena && other_cpu_busy(idx)) t.overhead += m_.arena_create_remote;
  }
  t.ran = true;
  t.last_cpu = idx;
  t.cpu = idx;
  POOLSIM_ASSERT(t.pelt_cpu == idx, "a thread runs on the CPU whose PELT sums hold it");
  c.curr = id;
  set_cpu_state(c, CpuState::running);
  c.need_resched = false;
  c.wake_resched = false;
  // The run lasts until the vruntime reaches the deadline: a slice, half of
  // one for a new thread's first run (PLACE_DEADLINE_INITIAL).
  c.seg_start = now();
  c.slice_end =
      std::max(c.seg_start, c.stall_until) + std::max(Duration{0}, t.deadline - t.vruntime);
  c.protect_end = c.slice_end;  // set_protect_slice: vprot = the deadline it was picked with
  ++c.picks;
  note_update(c);
  expire_delayed(c);
  set_state(id, ThreadState::running);
  open_cpu_span(c);
  update_min_vruntime(c);
  arm(c);
}

// The end of a sched_yield (yield_task_fair, 6.18): update_curr, then the
// deadline a slice on; the schedule() that follows keeps the yielder only if
// it is still the pick. True if another thread took the CPU.
bool Kernel::yield_switches(Cpu& c) {
  note_update(c);
  threads_[c.curr].deadline = current_deadline(c) + m_.slice;
  if (keep_current(c)) return false;
  yielding_ = true;
  preempt(c);  // it resumes from its yield when next picked
  yielding_ = false;
  return true;
}

void Kernel::complete_op(Cpu& c) {
  const ThreadId id = c.curr;
  if (threads_[id].op == Op::exit) {
    do_exit(c);
    return;
  }
  if (std::exchange(threads_[id].block_pending, false)) {
    block_now(c, id);
    return;
  }
  if (std::exchange(threads_[id].yield_pending, false) && yield_switches(c)) return;
  if (threads_[id].spawn != nullptr && finish_spawn(c)) return;
  {
    Thread& t = threads_[id];
    t.req = Req::none;
    c.need_resched = false;
    c.wake_resched = false;
    exec_cpu_ = static_cast<int>(&c - cpus_.data());
    current_ = id;
    std::coroutine_handle<> h = std::exchange(t.cont, {});
    h.resume();  // may create threads: `t` is not used after this line
    exec_cpu_ = -1;
    current_ = kNoThread;
  }
  Thread& t = threads_[id];
  if (t.top.done()) {
    // The exit system call clears the thread's tid first (do_exit ->
    // exit_mm_release): its queued stack is free before the rest of the exit.
    free_queued_stack(t);
    t.op = Op::exit;
    t.work = exit_run(t);
    t.task = kNoTask;
    if (t.work <= Duration{0} && t.overhead <= Duration{0}) {
      do_exit(c);
      return;
    }
    arm(c);
    return;
  }
  switch (t.req) {
    case Req::compute:
      t.op = Op::resume;
      if (t.in_syscall || !act_on_resched(c)) arm(c);
      return;
    case Req::block:
      if (t.overhead > Duration{0} && !c.wake_resched) {
        // The wake it just made (futex_wake, the IPI) runs to its end
        // before the thread can block: the CPU runs the overhead first, and
        // a wake that comes meanwhile cancels the block.
        t.block_pending = true;
        t.op = Op::resume;
        arm(c);
        return;
      }
      if (std::exchange(c.wake_resched, false)) {
        // Preempted by the thread it woke on its way back to user space: it
        // blocks when it runs again (unless a wake comes first).
        t.block_pending = true;
        preempt(c);
        return;
      }
      block_now(c, id);
      return;
    case Req::none:
      break;
  }
  throw std::logic_error("sim::Kernel: a thread suspended outside a kernel operation");
}

// The current thread blocks: its CPU picks the next thread, and it may stay
// there delayed (DELAY_DEQUEUE).
void Kernel::block_now(Cpu& c, ThreadId id) {
  switch_out(c, true);
  pick_next(c);
  mark_delayed(c, id);
}

void Kernel::switch_out(Cpu& c, bool voluntary) {
  const ThreadId id = c.curr;
  engine_.cancel(c.ev);
  expire_delayed(c);
  update_min_vruntime(c);
  const Duration v_avg = avg_vruntime(c);  // with the thread still on the queue
  Thread& t = threads_[id];
  // The deadline it leaves with (put_prev_entity does not touch it): the
  // rest of its slice, a new slice if that ended (update_deadline at the
  // tick or the update_curr of this switch); a yielder's is the one its
  // yield pushed back (yield_task_fair). A woken thread preempts one in
  // the middle of its slice, which resumes with what was left.
  if (!yielding_) t.deadline = current_deadline(c);
  close_cpu_span(c, SpanKind::running, id, t.task);
  t.ran_until = now();
  c.curr = kNoThread;
  set_cpu_state(c, CpuState::idle);
  bw_stop(c, voluntary && rq_empty(c));
  if (voluntary) {
    ++t.nvcsw;
    t.lag = v_avg - t.vruntime;  // update_entity_lag (clamped at the wake)
    t.cpu = -1;
    set_state(id, ThreadState::blocked);
  } else {
    ++t.nivcsw;
    rq_push(c, id);
    set_state(id, c.throttled ? ThreadState::throttled : ThreadState::runnable);
  }
}

void Kernel::preempt(Cpu& c) {
  switch_out(c, false);
  pick_next(c);
}

void Kernel::pick_next(Cpu& c) {
  POOLSIM_ASSERT(c.curr == kNoThread && c.state == CpuState::idle, "pick_next on a busy CPU");
  if (c.throttled) {  // its threads wait for the unthrottle
    park_throttled(c);
    group_idle(c);
    return;
  }
  if (c.foreign) return;  // the neighbour holds it: the queue waits for the group's turn
  // A CPU with neighbour threads never goes idle (no newidle pull): the
  // neighbour runs when the scenario has nothing there.
  if (rq_empty(c) && (c.neighbours > 0 || !newidle_balance(c))) {
    expire_delayed(c);  // going idle: the last pick dequeues every delayed entity
    group_idle(c);
    return;
  }
  start_on(c, rq_pop_min(c));
}

Duration Kernel::creation_cost(StackSource src, bool& fresh) {
  Duration cost = m_.thread_create;
  if (exec_cpu_ < 0) return cost;  // the process's first thread: made before t = 0
  Cpu& c = cpus_[exec_cpu_];
  if (!std::exchange(created_, true)) cost += m_.thread_create_first;
  // Memory an exit freed is what the next creation takes; beyond the exits
  // so far, the new thread's task, kernel stack and page tables are new
  // pages (MachineProfile::thread_create_fresh).
  if (exits_unreused_ > 0) {
    --exits_unreused_;
  } else {
    cost += m_.thread_create_fresh;
  }
  if (c.kstacks > 0) {
    --c.kstacks;
  } else {
    cost += m_.kstack_alloc;
  }
  if (src == StackSource::cache && !take_cached_stack()) {
    fresh = true;
    cost += stack_map_cost();
  }
  return cost;
}

Duration Kernel::stack_map_cost() const {
  // Another CPU is busy, running a thread of the process or the neighbour's:
  // the new stack's first touch costs stack_map_remote more (measured the
  // same with a spinner of another process, docs/simulator.md).
  return m_.stack_map + (other_cpu_busy(exec_cpu_) ? m_.stack_map_remote : Duration{0});
}

bool Kernel::machine_cpu_idle(int self) const {
  // The machine's CPUs outside the scenario's (its cpuset) run nothing of it.
  if (m_.cores > cpu_count()) return true;
  if (running_cpus_ >= cpu_count()) return false;  // every CPU runs a thread: no scan
  for (std::size_t i = 0; i < cpus_.size(); ++i)
    if (static_cast<int>(i) != self && cpus_[i].state == CpuState::idle && !cpus_[i].foreign)
      return true;
  return false;
}

bool Kernel::other_cpu_busy(int self) const {
  const bool self_running =
      self >= 0 && cpus_[static_cast<std::size_t>(self)].state == CpuState::running;
  if (running_cpus_ > (self_running ? 1 : 0)) return true;
  for (std::size_t i = 0; i < cpus_.size(); ++i)
    if (cpus_[i].foreign && static_cast<int>(i) != self) return true;
  return false;
}

void Kernel::set_thread_stack(Bytes size) {
  const Bytes s = size > 0 ? size : m_.stack_reserve;
  // A cached block is the stack and its guard (allocate_stack adds
  // attr->guardsize, one page by default, to the requested size).
  stack_slots_ = s > 0 ? m_.stack_cache / (s + kStackGuard) : 0;
}

bool Kernel::take_cached_stack() {
  if (stacks_cached_ > 0) {
    --stacks_cached_;
    return true;
  }
  ++stacks_mapped_;
  return false;
}

int Kernel::release_stack() {
  Thread& t = threads_[current_];
  POOLSIM_ASSERT(!t.stack_released, "a thread's stack released twice");
  t.stack_released = true;
  t.stack_queued = true;
  ++stacks_dying_;
  return trim_stack_cache();
}

int Kernel::trim_stack_cache() {
  // __nptl_free_stacks: free blocks only, until the cache is under its size.
  int unmaps = 0;
  while (stacks_cached_ + stacks_dying_ > stack_slots_ && stacks_cached_ > 0) {
    --stacks_cached_;
    ++stacks_unmapped_;
    ++unmaps;
  }
  return unmaps;
}

void Kernel::body_ended() {
  Thread& t = threads_[current_];
  POOLSIM_ASSERT(!t.counted_out, "a thread's body ended twice");
  t.counted_out = true;
  --live_;
  threads_series_.set(now(), live_);
}

void Kernel::free_queued_stack(Thread& t) {
  if (!t.stack_queued) return;
  POOLSIM_ASSERT(stacks_dying_ > 0, "a queued stack the cache does not count");
  t.stack_queued = false;
  --stacks_dying_;
  ++stacks_cached_;
}

void Kernel::return_stack() {
  // At the exit itself (the tid is cleared): queued free, and the cache
  // trimmed (the unmaps are not charged: see do_exit).
  ++stacks_cached_;
  trim_stack_cache();
}

void Kernel::do_exit(Cpu& c) {
  const ThreadId id = c.curr;
  // finish_task_switch -> put_task_stack: the dead thread's kernel stack goes
  // to this CPU's cache while it has room (else vfree).
  if (c.kstacks < m_.kstack_cache) ++c.kstacks;
  ++exits_unreused_;  // its task's memory, for the next creation
  if (id != 0) {
    // Its task freed after an RCU grace period: the kernel's threads' work
    // (sim/exit_work.hpp).
    exit_work_note();
    // release_task -> __exit_signal folded the thread's runtime into the
    // process's (signal->sum_sched_runtime) and unhashed it before the end
    // of its exit (the rest of exit_notify, do_task_dead's last switch): the
    // process's CPU clock (getrusage, CLOCK_PROCESS_CPUTIME_ID) never counts
    // that end, exit_unaccounted of the exit's run. The CPU still ran it.
    Thread& t = threads_[id];
    t.cpu_time -= std::min({m_.exit_unaccounted, exit_run(t), t.cpu_time});
  }
  engine_.cancel(c.ev);
  close_cpu_span(c, SpanKind::running, id, kNoTask);
  c.curr = kNoThread;
  set_cpu_state(c, CpuState::idle);
  bw_stop(c, rq_empty(c));
  set_state(id, ThreadState::exited);
  Thread& t = threads_[id];
  t.cpu = -1;
  if (t.top) {
    t.top.destroy();
    t.top = {};
  }
  if (!t.counted_out) {
    --live_;
    threads_series_.set(now(), live_);
  }
  if (id != 0) {
    // Its stack back to glibc's cache (a cache over its size unmaps free
    // stacks; only thread per task, which releases its threads' stacks
    // itself, charges that). A stack it queued itself was freed when its
    // body ended (complete_op), the start of the exit.
    POOLSIM_ASSERT(!t.stack_queued, "an exiting thread's queued stack still counted as in use");
    if (!t.stack_released) return_stack();
    memory_release(m_.stack_touch + t.stack_extra);
    --arena_threads_;  // its arena goes to glibc's free list, still mapped
  }
  pick_next(c);
}

// ---- memory ----------------------------------------------------------------

void Kernel::memory_add(Bytes b) {
  memory_ += b;
  memory_peak_ = std::max(memory_peak_, memory_);
}

void Kernel::memory_release(Bytes b) {
  memory_ -= b;
  POOLSIM_ASSERT(memory_ >= 0, "memory released that was never added");
}

namespace {
constexpr Bytes kHeapPage = 4096;
// The 4 KiB pages that `b` bytes from the start of a heap reach into.
Bytes heap_pages(Bytes b) { return (b + kHeapPage - 1) / kHeapPage; }
}  // namespace

Duration Kernel::heap_touch(Bytes b) {
  memory_add(b);
  heap_ += b;
  if (heap_ <= heap_peak_) return Duration{0};
  const Bytes faults = heap_pages(heap_) - heap_pages(heap_peak_);
  heap_peak_ = heap_;
  return m_.page_fault * faults;
}

void Kernel::heap_release(Bytes b) {
  heap_ -= b;
  POOLSIM_ASSERT(heap_ >= 0, "heap memory released that was never touched");
  memory_release(b);
}

Duration Kernel::arena_touch(ArenaHeap& h, Bytes b) {
  if (m_.arena_header <= 0) return heap_touch(b);
  h.used += b;
  if (h.used <= h.high) return Duration{0};
  const Bytes added = heap_pages(m_.arena_header + h.used) - heap_pages(m_.arena_header + h.high);
  h.high = h.used;
  memory_add(added * kHeapPage);
  return m_.page_fault * added;
}

void Kernel::arena_release(ArenaHeap& h, Bytes b) {
  if (m_.arena_header <= 0) return heap_release(b);
  h.used -= b;
  POOLSIM_ASSERT(h.used >= 0, "arena memory released that was never touched");
}

// glibc's arena_get2 on a thread's first malloc (every runtime thread mallocs
// at once: the real harness registers it): a free arena, one whose threads
// exited, if there is one (get_free_list); else a new arena (_int_new_arena)
// while the process has fewer than malloc_arenas_per_cpu per CPU of its
// affinity mask, the main arena (the submitter's) included; else it shares
// one (reused_arena). So the arenas mapped are the most non-main threads
// alive at once, up to the limit, and none is ever unmapped. True when the
// thread maps a new one (it pays arena_create).
bool Kernel::arena_on_thread_start() {
  ++arena_threads_;
  const int limit = std::max(1, m_.malloc_arenas_per_cpu * static_cast<int>(cpus_.size()));
  if (arena_threads_ <= arenas_ || arenas_ + 1 >= limit) return false;
  ++arenas_;
  memory_add(m_.malloc_arena);
  return true;
}

// A thread's first run: its runtime's loop calls library functions, and the
// first call of each in the process runs the dynamic linker's lazy binding on
// that thread's stack, deeper than a blocked thread goes; the first threads
// to run pay it, each at most worker_stack_each_, until the runtime's total
// is spent (set_worker_stack). Kept until the thread exits.
void Kernel::worker_stack_on_first_run(Thread& t) {
  t.stack_extra = std::min(worker_stack_each_, worker_stack_left_);
  worker_stack_left_ -= t.stack_extra;
  memory_add(t.stack_extra);
}

// ---- CFS bandwidth control (the mechanism is in sim/bandwidth.cpp) ---------

// The threads queued on throttled CPU c wait (the task-based throttle's
// limbo); the Bandwidth starts c's throttled clock.
void Kernel::park_throttled(Cpu& c) {
  reindex(c);  // a throttled CPU's parked threads are no load (cpu_load)
  c.rq.for_each([&](const RqEntry& e) { set_state(e.t, ThreadState::throttled); });
  if (!rq_empty(c)) bw_->parked(static_cast<int>(&c - cpus_.data()));
}

// The CPU stopped running a group thread (`empty`: none is left on it); it
// may have been throttled for runtime it owes (put_prev_entity).
void Kernel::bw_stop(Cpu& c, bool empty) {
  if (!bw_) return;
  const int idx = static_cast<int>(&c - cpus_.data());
  bw_->stop(idx, empty);
  if (bw_->throttled(idx) && !c.throttled) {
    c.throttled = true;
    open_cpu_span(c);
  }
}

void Kernel::on_bandwidth(void* self, int cpu, bool throttle) {
  auto& k = *static_cast<Kernel*>(self);
  Cpu& c = k.cpus_[static_cast<std::size_t>(cpu)];
  if (throttle) {  // its running thread returns to user mode and parks
    c.throttled = true;
    k.account(c);
    k.switch_out(c, false);
    k.open_cpu_span(c);
    k.park_throttled(c);
    k.group_idle(c);
    return;
  }
  k.close_cpu_span(c, SpanKind::throttled, kNoThread, kNoTask);
  c.throttled = false;
  k.reindex(c);
  c.rq.for_each([&](const RqEntry& e) { k.set_state(e.t, ThreadState::runnable); });
  if (c.state != CpuState::idle || rq_empty(c)) return;
  if (c.foreign)
    k.group_runnable(c);
  else
    k.pick_next(c);
}

// ---- a noisy neighbour (the root's choice is in sim/group_share.cpp) -------

void Kernel::set_foreign(Cpu& c, bool foreign) {
  pelt_cpu_update(c);
  c.foreign = foreign;
}

void Kernel::group_idle(Cpu& c) {
  if (c.neighbours == 0) return;
  gs_->dequeue(static_cast<int>(&c - cpus_.data()));
  set_foreign(c, true);
  reindex(c);
}

void Kernel::group_runnable(Cpu& c) {
  if (!gs_->enqueue(static_cast<int>(&c - cpus_.data()))) return;
  set_foreign(c, false);
  reindex(c);
  if (c.state == CpuState::idle) pick_next(c);
}

int Kernel::group_runnable_on(const void* self, int cpu) {
  const auto& k = *static_cast<const Kernel*>(self);
  const Cpu& c = k.cpus_[static_cast<std::size_t>(cpu)];
  if (c.throttled) return 0;
  return static_cast<int>(rq_size(c)) + (c.state != CpuState::idle ? 1 : 0);
}

// The scenario's PELT load average on the CPU, brought up to now.
double Kernel::group_load_on(void* self, int cpu) {
  auto& k = *static_cast<Kernel*>(self);
  Cpu& c = k.cpus_[static_cast<std::size_t>(cpu)];
  k.pelt_cpu_update(c);
  return c.load;
}

void Kernel::on_group_share(void* self, int cpu, bool run) {
  auto& k = *static_cast<Kernel*>(self);
  Cpu& c = k.cpus_[static_cast<std::size_t>(cpu)];
  if (run) {  // the scenario's group entity was picked at the root
    k.set_foreign(c, false);
    k.reindex(c);
    if (c.state == CpuState::idle) k.pick_next(c);
    return;
  }
  // The neighbour's turn: the running thread is preempted and waits.
  POOLSIM_ASSERT(c.state != CpuState::waking, "the neighbour preempts a waking CPU");
  k.set_foreign(c, true);
  if (c.state == CpuState::running) {
    k.account(c);
    k.switch_out(c, false);
  }
  k.reindex(c);
}

// ---- results -----------------------------------------------------------------

void Kernel::finish(RunResult& r) {
  const Duration now_ns = now();
  for (Cpu& c : cpus_) {
    account(c);
    if (c.state == CpuState::running)
      close_cpu_span(c, SpanKind::running, c.curr, threads_[c.curr].task);
    if (c.throttled) close_cpu_span(c, SpanKind::throttled, kNoThread, kNoTask);
  }
  if (bw_) bw_->finish();
  RunCounters& k = r.counters;
  k = {};
  Duration cpu{0};
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    const Thread& t = threads_[i];
    k.switches_voluntary += t.nvcsw;
    k.switches_involuntary += t.nivcsw;
    cpu += t.cpu_time;
    if (trace_ && t.state != ThreadState::exited && now_ns > t.since) {
      SpanKind kind = SpanKind::runnable;
      if (t.state == ThreadState::running) kind = SpanKind::running;
      if (t.state == ThreadState::blocked) kind = SpanKind::blocked;
      if (t.state == ThreadState::throttled) kind = SpanKind::throttled;
      tr_.spans.push_back({static_cast<std::uint32_t>(cpus_.size() + i), kind,
                           kind == SpanKind::running ? t.task : kNoTask,
                           static_cast<std::uint32_t>(i), t.since, now_ns});
    }
  }
  k.cpu_time = cpu;
  k.threads_peak = live_peak_;
  k.memory_peak = memory_peak_;
  if (bw_) {
    const BandwidthStats& st = bw_->stats();
    k.throttled_periods = st.nr_throttled;
    k.throttled_time = st.throttled_time;
    k.burst_periods = st.nr_bursts;
    k.burst_time = st.burst_time;
  }
  // Kernel threads' runs after exits that took a CPU from a thread (only
  // with the mechanism on: sim/exit_work.hpp).
  if (xw_.on) r.extra["exit_kthread_preemptions"] = static_cast<double>(xw_.runs);
  if (m_.timer_stall_share > 0) r.extra["timer_stalls"] = static_cast<double>(timer_stalls_);
  // The main thread's utilization at t = 0, as the real harness reads its
  // submitter's.
  if (m_.origin_util > 0) r.extra["origin_util"] = m_.origin_util;
  r.threads_series = threads_series_.take();
  r.runnable_series = runnable_series_.take();
  if (trace_) r.trace = std::move(tr_);
}

}  // namespace poolsim::sim
