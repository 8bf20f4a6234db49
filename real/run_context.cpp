// run_context.cpp: recording, thread accounting and completion logic of one
// real repetition (the interface and its thread rules are in backend.hpp).
//
// Invariants:
//  - records_[id] is written by at most one thread at a time: the submitter
//    (or the releasing worker) writes `submit` before Backend::submit, whose
//    queue hand-over orders it before the executing thread writes start/end.
//  - every task is finalized at most once (final_flag_ CAS; a second
//    finalization is a backend bug and fails the run loudly);
//  - graph and closed clients follow models/completion.hpp (the simulator's
//    rules): GraphRelease, under graph_mu_, says which successors a final
//    task releases; the thread that made them ready submits them after the
//    lock is released, and successors of a rejected task are finalized as
//    not_run, never submitted; a client stops (active_clients_ - 1) when
//    closed_client_next says so;
//  - completed_ + rejected_ + not_run_ == tasks once all_done() (asserted by
//    the submitter at the end of the arrivals);
//  - live_threads_ counts OS threads from just before pthread_create to the
//    end of the thread's body (the submitter included, the sampler not).
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "models/assert.hpp"
#include "models/resource_pool.hpp"
#include "models/wait_policy.hpp"
#include "real/backend.hpp"
#include "real/cpu_work.hpp"
#include "real/result_codec.hpp"

namespace poolsim::real {
namespace {

thread_local ThreadSlot* tl_slot = nullptr;

Duration clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return Duration{static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec};
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line.empty() ? "unknown" : line;
}

// The limits that can make pthread_create fail, for the refusal message.
std::string thread_limits_text() {
  std::ostringstream os;
  rlimit nproc{};
  getrlimit(RLIMIT_NPROC, &nproc);
  os << "RLIMIT_NPROC=";
  if (nproc.rlim_cur == RLIM_INFINITY)
    os << "unlimited";
  else
    os << nproc.rlim_cur;
  os << ", kernel.threads-max=" << read_first_line("/proc/sys/kernel/threads-max");
  // pids controller: v1 mount, else the v2 unified hierarchy root.
  std::string pids = read_first_line("/sys/fs/cgroup/pids/pids.max");
  if (pids == "unknown") pids = read_first_line("/sys/fs/cgroup/pids.max");
  os << ", pids.max=" << pids;
  rlimit as{};
  getrlimit(RLIMIT_AS, &as);
  os << ", RLIMIT_AS=";
  if (as.rlim_cur == RLIM_INFINITY)
    os << "unlimited";
  else
    os << as.rlim_cur;
  return os.str();
}

}  // namespace

// ---- PhaseOps defaults: a thread runtime ----------------------------------
void PhaseOps::wait_blocking(RunContext& ctx, Duration d, bool inside_lock) {
  (void)inside_lock;
  ctx.sleep_blocking(d);
}
void PhaseOps::wait_releasing(RunContext& ctx, Duration d) { ctx.sleep_blocking(d); }
void PhaseOps::lock(RunContext& ctx, std::uint32_t lock) { ctx.lock_mutex(lock); }
void PhaseOps::unlock(RunContext& ctx, std::uint32_t lock) { ctx.unlock_mutex(lock); }
void PhaseOps::acquire(RunContext& ctx, std::uint16_t r) { ctx.acquire_blocking(r); }

// ---- construction -----------------------------------------------------------
RunContext::RunContext(const Scenario& s, const Workload& w, ContextOptions opt)
    : scenario_(s), workload_(w), opt_(opt), resources_(s.resources) {
  const std::size_t n = w.tasks.size();
  records_.assign(n, TaskRecord{});
  locks_ = std::make_unique<std::mutex[]>(std::max<std::size_t>(1, w.lock_names.size()));
  final_flag_ = std::make_unique<std::atomic<std::uint8_t>[]>(n);
  for (std::size_t i = 0; i < n; ++i) final_flag_[i].store(0, std::memory_order_relaxed);
  if (w.graph) graph_.emplace(w);
  expected_final_ = n;
  if (w.arrival == ArrivalKind::closed && !w.graph)
    active_clients_.store(static_cast<std::int64_t>(w.clients), std::memory_order_relaxed);
  // Slots for the threads the run will create (see slot_pool_): a thread
  // per task, or a runtime's few threads; capped, past which slots come
  // from the heap during the run.
  constexpr std::size_t kFewThreads = 256, kMaxPooled = std::size_t{1} << 20;
  const std::size_t expect = s.backend.kind == BackendKind::thread_per_task
                                 ? std::min(n + kFewThreads, kMaxPooled)
                                 : kFewThreads;
  slot_pool_.resize(expect);
  slots_.assign(expect, nullptr);
  // Calibrate before any measured work (no-op when the parent already did).
  units_per_ns();
}

RunContext::~RunContext() {
  const int fd = statm_fd_.exchange(-1);
  if (fd >= 0) ::close(fd);
}

// ---- clock --------------------------------------------------------------------
Duration RunContext::monotonic_now() { return clock_ns(CLOCK_MONOTONIC); }
Duration RunContext::now() const { return monotonic_now() - origin_; }
void RunContext::set_origin_now() { origin_ = monotonic_now(); }

// ---- threads ------------------------------------------------------------------
namespace {
void first_malloc() {
  void* volatile block = std::malloc(64);  // volatile: the pair is not elided
  std::free(block);
}
}  // namespace

ThreadSlot* RunContext::current_slot() { return tl_slot; }

ThreadSlot& RunContext::new_slot(std::string name) {
  std::lock_guard lk(slots_mu_);
  ThreadSlot* slot = nullptr;
  if (n_slots_ < slot_pool_.size()) {
    slot = &slot_pool_[n_slots_];
  } else {
    overflow_.push_back(std::make_unique<ThreadSlot>());
    slot = overflow_.back().get();
  }
  slot->name = std::move(name);
  if (opt_.trace) slot->spans.reserve(64);
  slot->index = static_cast<std::uint32_t>(n_slots_);
  if (n_slots_ < slots_.size())
    slots_[n_slots_] = slot;
  else
    slots_.push_back(slot);
  ++n_slots_;
  return *slot;
}

namespace {
// An atomic maximum: raises `peak` to `value` unless it is already higher.
template <class T>
void raise_to(std::atomic<T>& peak, T value) {
  T seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_acq_rel)) {
  }
}
}  // namespace

void RunContext::thread_entered() {
  raise_to(peak_threads_, live_threads_.fetch_add(1, std::memory_order_relaxed) + 1);
}

namespace {
const Bytes kPageSize = static_cast<Bytes>(sysconf(_SC_PAGESIZE));

int open_statm() { return ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC); }

// Anonymous bytes of this process from /proc/self/statm's text (resident
// less shared, in pages); 0 if it is not that text. A hand parser: sscanf
// took kilobytes of the stack, and on a thread's first probe each new page
// of its stack faulted (10-20 us here).
Bytes parse_statm_anon(const char* text, Bytes page) {
  unsigned long long field[3] = {};
  const char* p = text;
  for (unsigned long long& f : field) {
    while (*p == ' ') ++p;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') f = f * 10 + static_cast<unsigned long long>(*p++ - '0');
  }
  if (field[1] < field[2]) return 0;
  return static_cast<Bytes>(field[1] - field[2]) * page;
}
}  // namespace

// With the file kept open (from warm_thread_start, before the origin) a
// read is one pread: no path walk of /proc/self, no new open file and no seq_file
// buffer to allocate and free. The first probe of a run's first worker, an
// open, read and close with sscanf, took 50-80 us between its start and its
// first task (2026-12-06, work stealing, 2 threads; docs/real-backends.md).
Bytes RunContext::statm_anon_bytes() {
  int fd = statm_fd_.load(std::memory_order_acquire);
  const bool own = fd < 0;
  if (own) fd = open_statm();
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (own) ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return parse_statm_anon(buf, kPageSize);
}

void RunContext::probe_memory_at_new_high() {
  // Threads that have started (their stacks and arenas touched), not those
  // counted live from just before pthread_create: a burst of creations
  // would otherwise read its high before most of its threads ran.
  const int started = threads_started_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (!probe_on_.load(std::memory_order_acquire)) return;
  int last = probe_started_.load(std::memory_order_relaxed);
  if (started <= last || (last > 256 && started < last + last / 64)) return;
  if (!probe_started_.compare_exchange_strong(last, started, std::memory_order_relaxed)) return;
  raise_to(probe_peak_, statm_anon_bytes());
}

void RunContext::thread_left() {
  live_threads_.fetch_sub(1, std::memory_order_relaxed);
  threads_started_.fetch_sub(1, std::memory_order_relaxed);
}

ThreadSlot& RunContext::register_current_thread(std::string name) {
  first_malloc();
  thread_entered();
  ThreadSlot& s = new_slot(std::move(name));
  tl_slot = &s;
  probe_memory_at_new_high();
  return s;
}

void RunContext::reenter_current_thread(ThreadSlot& slot) {
  thread_entered();
  tl_slot = &slot;
  probe_memory_at_new_high();
}

// In a new process the first statm read cost 52-69 us and the first
// pthread_setname_np 13-23 us of CPU, a later thread's 10-17 and 3 us
// (2026-12-06, a forked child on CPU 0, three runs): the first of them fell
// on the run's first worker, between its creation and its first task (an
// ftrace of a 2-thread pool: 276 us from the worker's first run to its first
// task, against 81 us of thread_start, stack_fault and arena_create
// predicted).
void RunContext::warm_thread_start() {
  if (statm_fd_.load(std::memory_order_relaxed) < 0)
    statm_fd_.store(open_statm(), std::memory_order_release);
  (void)statm_anon_bytes();
  char name[16] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof name) == 0)
    pthread_setname_np(pthread_self(), name);
}

void RunContext::unregister_current_thread() {
  tl_slot = nullptr;
  thread_left();
}

struct ThreadTrampoline {
  RunContext* ctx;
  std::string name;
  std::function<void()> body;

  static void* run(void* arg) {
    std::unique_ptr<ThreadTrampoline> self(static_cast<ThreadTrampoline*>(arg));
    // A runtime's thread mallocs (tasks, strings, library state), so its
    // first malloc attaches it to a malloc arena, a new one while the
    // process has fewer than the limit: memory (malloc_arena) and CPU
    // (arena_create) the model charges every thread. The harness's own
    // bookkeeping is made before the run (new_slot), so it does it here.
    first_malloc();
    ThreadSlot& slot = self->ctx->new_slot(std::move(self->name));
    tl_slot = &slot;
    {
      char short_name[16];
      std::snprintf(short_name, sizeof short_name, "%s", slot.name.c_str());
      pthread_setname_np(pthread_self(), short_name);
    }
    self->ctx->probe_memory_at_new_high();
    self->body();
    tl_slot = nullptr;
    self->ctx->thread_left();
    return nullptr;
  }
};

pthread_t RunContext::spawn(std::string name, Bytes stack, std::function<void()> body,
                            bool detached) {
  if (opt_.max_threads > 0 && live_threads() + 1 > opt_.max_threads) {
    refuse("run.max_threads = " + std::to_string(opt_.max_threads) +
           " reached: the backend wanted thread " + std::to_string(live_threads() + 1) +
           " (raise run.max_threads or bound the backend)");
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  const Bytes min_stack = static_cast<Bytes>(PTHREAD_STACK_MIN);
  if (stack > 0)
    pthread_attr_setstacksize(&attr, static_cast<std::size_t>(std::max(stack, min_stack)));
  if (detached) pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  auto* tramp = new ThreadTrampoline{this, name, std::move(body)};
  thread_entered();
  pthread_t t{};
  const int rc = pthread_create(&t, &attr, &ThreadTrampoline::run, tramp);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete tramp;
    thread_left();
    refuse("pthread_create failed for '" + name + "' (" + std::strerror(rc) + ") with " +
           std::to_string(live_threads()) + " threads alive, stack " + std::to_string(stack) +
           " B; limits: " + thread_limits_text());
  }
  return t;
}

void RunContext::join(pthread_t t) { pthread_join(t, nullptr); }

// ---- executing ------------------------------------------------------------------
void RunContext::execute(std::uint32_t task) {
  PhaseOps ops;
  execute(task, ops);
}

void RunContext::execute(std::uint32_t task, PhaseOps& ops) {
  task_started(task);
  const auto phases = workload_.phases_of(workload_.tasks[task]);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const Phase& p = phases[i];
    const HoldingStep hold = holding_step(phases, i);
    if (hold.acquire_before) ops.acquire(*this, p.resource);
    switch (p.kind) {
      case PhaseKind::cpu:
        run_cpu(p.duration);
        break;
      case PhaseKind::wait:
        wait_phase(ops, p.duration, false);
        break;
      case PhaseKind::lock:
        ops.lock(*this, p.lock);
        run_cpu(p.duration);
        if (p.wait_inside.count() > 0) wait_phase(ops, p.wait_inside, true);
        ops.unlock(*this, p.lock);
        break;
    }
    if (hold.release_after) release_resource(p.resource);
  }
  task_finished(task);
}

// The pinning rule, once: models/wait_policy.hpp says whether this wait
// blocks the OS thread or frees it, the runtime's ops say how.
void RunContext::wait_phase(PhaseOps& ops, Duration d, bool inside_lock) {
  if (d.count() <= 0) return;
  switch (wait_effect(scenario_.backend.kind, inside_lock)) {
    case WaitEffect::block_thread:
      ops.wait_blocking(*this, d, inside_lock);
      break;
    case WaitEffect::release_thread:
      ops.wait_releasing(*this, d);
      break;
  }
}

void RunContext::task_started(std::uint32_t task) {
  ThreadSlot* slot = tl_slot;
  if (slot == nullptr) fail("task started on a thread the run does not know (register it first)");
  TaskRecord& r = records_[task];
  r.start = now();
  r.worker = slot->index;
  if (r.submit_cpu >= 0 && sched_getcpu() != r.submit_cpu) ++slot->remote_starts;
  slot->current_task = task;
  if (opt_.per_task_cpu) slot->task_cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void RunContext::task_finished(std::uint32_t task) {
  ThreadSlot* slot = tl_slot;
  TaskRecord& r = records_[task];
  r.end = now();
  if (workload_.graph) prefetch_successor_records(task);
  if (opt_.per_task_cpu && slot != nullptr)
    r.cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - slot->task_cpu_start;
  r.outcome = TaskOutcome::completed;
  if (opt_.trace && slot != nullptr) span(SpanKind::task, r.start, r.end, task);
  if (slot != nullptr) slot->current_task = TraceSpan::kNoTask;
  finalize(task, TaskOutcome::completed);
}

void RunContext::task_rejected(std::uint32_t task) {
  TaskRecord& r = records_[task];
  r.end = now();
  r.start = r.end;
  r.outcome = TaskOutcome::rejected;
  finalize(task, TaskOutcome::rejected);
}

void RunContext::run_cpu(Duration work) {
  running_.fetch_add(1, std::memory_order_relaxed);
  const Duration t0 = opt_.trace ? now() : Duration{};
  burn(work);
  running_.fetch_sub(1, std::memory_order_relaxed);
  if (opt_.trace) {
    ThreadSlot* slot = tl_slot;
    span(SpanKind::running, t0, now(), slot ? slot->current_task : TraceSpan::kNoTask);
  }
}

void RunContext::sleep_blocking(Duration d) {
  if (d.count() <= 0) return;
  const Duration t0 = opt_.trace ? now() : Duration{};
  const Duration until = monotonic_now() + d;
  timespec ts{static_cast<time_t>(until.count() / 1000000000),
              static_cast<long>(until.count() % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
  if (opt_.trace) {
    ThreadSlot* slot = tl_slot;
    span(SpanKind::blocked, t0, now(), slot ? slot->current_task : TraceSpan::kNoTask);
  }
}

void RunContext::lock_mutex(std::uint32_t lock) {
  std::mutex& m = locks_[lock];
  if (m.try_lock()) return;
  const Duration t0 = opt_.trace ? now() : Duration{};
  m.lock();
  if (opt_.trace) {
    ThreadSlot* slot = tl_slot;
    span(SpanKind::blocked, t0, now(), slot ? slot->current_task : TraceSpan::kNoTask);
  }
}

void RunContext::unlock_mutex(std::uint32_t lock) { locks_[lock].unlock(); }

namespace {
// A thread waiting for a permit: blocks on its own condition variable.
struct ThreadWaiter final : ResourceTable::Waiter {
  std::mutex mu;
  std::condition_variable cv;
  bool granted = false;
  // Notified under the lock: the waiter cannot return (and drop its
  // reference) before this call has let go of the record.
  void grant() override {
    std::lock_guard lk(mu);
    granted = true;
    cv.notify_one();
  }
};
}  // namespace

void RunContext::acquire_blocking(std::uint16_t r) {
  if (resources_.try_acquire(r)) {
    resources_.granted(r, Duration{0});
    return;
  }
  const Duration t0 = now();
  auto w = std::make_shared<ThreadWaiter>();
  if (!resources_.acquire(r, w)) {
    std::unique_lock lk(w->mu);
    w->cv.wait(lk, [&] { return w->granted; });
  }
  const Duration t1 = now();
  resources_.granted(r, t1 - t0);
  if (opt_.trace) {
    ThreadSlot* slot = tl_slot;
    span(SpanKind::blocked, t0, t1, slot ? slot->current_task : TraceSpan::kNoTask);
  }
}

void RunContext::span(SpanKind kind, Duration begin, Duration end, std::uint32_t task) {
  ThreadSlot* slot = tl_slot;
  if (!opt_.trace || slot == nullptr) return;
  TraceSpan sp;
  sp.track = slot->index;
  sp.kind = kind;
  sp.task = task;
  sp.begin = begin;
  sp.end = end;
  slot->spans.push_back(sp);
}

// ---- completion ------------------------------------------------------------------
void RunContext::attach(Backend* backend) { backend_ = backend; }

void RunContext::ensure_started() {
  if (started_.load(std::memory_order_acquire)) return;
  started_.store(true, std::memory_order_release);
  backend_->start(*this);
}

// The first hand-over starts the runtime, on the submitter, at t >= 0, as
// the simulator's runtimes make their threads in their first submit.
// Started before the origin, the runtime was still starting when the clock
// began (java-mixed: the first hand-over 275 us after t = 0); made to settle
// first, its threads blocked ahead of their creator (positive lag) and their
// first wakes preempted the submitter (docs/real-backends.md).
void RunContext::submit_now(std::uint32_t task, Duration intended) {
  records_[task].intended = intended;
  records_[task].submit = now();
  records_[task].submit_cpu = static_cast<std::int16_t>(sched_getcpu());
  ensure_started();
  backend_->submit(task);
}

void RunContext::mark_final(std::uint32_t task) {
  std::uint8_t expected = 0;
  if (!final_flag_[task].compare_exchange_strong(expected, 1, std::memory_order_acq_rel))
    fail("task " + std::to_string(task) + " finalized twice (a backend ran or rejected it twice)");
}

void RunContext::count_finalized(std::uint64_t n) {
  const std::uint64_t total = finalized_.fetch_add(n, std::memory_order_acq_rel) + n;
  POOLSIM_ASSERT(total <= expected_final_, "more tasks made final than the run has");
  if (workload_.arrival != ArrivalKind::closed || workload_.graph) {
    if (total == expected_final_) notify_submitter();
  }
}

void RunContext::finalize(std::uint32_t task, TaskOutcome outcome) {
  mark_final(task);
  const bool completed = outcome == TaskOutcome::completed;
  (completed ? completed_ : rejected_).fetch_add(1, std::memory_order_relaxed);
  if (workload_.graph) {
    release_successors(task, completed);
  } else if (workload_.arrival == ArrivalKind::closed) {
    on_client_task_done(task);
  }
  count_finalized(1);
}

void RunContext::release_successors(std::uint32_t task, bool completed) {
  std::vector<std::uint32_t> ready, not_run;
  {
    std::lock_guard lk(graph_mu_);
    graph_->task_final(task, completed, ready, not_run);
  }
  // Doomed successors: final as not_run (their records keep that outcome),
  // never submitted.
  for (std::uint32_t t : not_run) mark_final(t);
  if (!not_run.empty()) {
    not_run_.fetch_add(not_run.size(), std::memory_order_relaxed);
    count_finalized(not_run.size());
  }
  const Duration released = now();
  for (std::uint32_t s : ready) submit_now(s, released);
}

// The records a completion's successors take their hand-over stamps in
// (release_successors), asked for as soon as the task's end is stamped, so
// that they arrive while the completion's bookkeeping runs (its final flag,
// the graph's lock). Without it, in a 1-worker fork-join on CPU 0 (fanout
// 3), 45% of the gaps between a release's hand-overs took 120-200 ns
// against 40-50 for the rest: those whose 48-byte record began a 64-byte
// line the release had not written yet, whose store the next hand-over's
// locked instruction (the runtime's queue lock) then waited for. With it
// the gaps' mean is 50-58 ns against 78-108, near the 41 ns `steal_push`
// that calibrate measures on back-to-back hand-overs (docs/real-backends.md,
// "The cost of the measurement itself"). The record is the harness's, not
// the runtime's work, and the model has no such cost.
void RunContext::prefetch_successor_records(std::uint32_t task) const {
  for (std::uint32_t s : workload_.successors_of(workload_.tasks[task])) {
    const auto* first = reinterpret_cast<const char*>(&records_[s]);
    __builtin_prefetch(first, 1);
    __builtin_prefetch(first + sizeof(TaskRecord) - 1, 1);
  }
}

void RunContext::on_client_task_done(std::uint32_t task) {
  const Duration done_at = now();
  const ClientStep step = closed_client_next(workload_, task, done_at);
  if (step.next) {
    if (step.due == done_at) {
      submit_now(*step.next, done_at);
    } else {
      schedule_submit(*step.next, step.due);
    }
    return;
  }
  not_run_.fetch_add(step.never_issued, std::memory_order_relaxed);
  if (active_clients_.fetch_sub(1, std::memory_order_acq_rel) == 1) notify_submitter();
}

OutcomeCounts RunContext::outcomes() const {
  OutcomeCounts c;
  c.completed = completed_.load(std::memory_order_acquire);
  c.rejected = rejected_.load(std::memory_order_acquire);
  c.not_run = not_run_.load(std::memory_order_acquire);
  return c;
}

void RunContext::schedule_submit(std::uint32_t task, Duration due) {
  {
    std::lock_guard lk(sub_mu_);
    due_.push_back(Due{due, task});
    std::push_heap(due_.begin(), due_.end(), std::greater<>{});
  }
  sub_cv_.notify_one();
}

void RunContext::notify_submitter() {
  {
    std::lock_guard lk(sub_mu_);
    done_ = true;
  }
  sub_cv_.notify_all();
}

bool RunContext::all_done() const {
  if (workload_.arrival == ArrivalKind::closed && !workload_.graph)
    return active_clients_.load(std::memory_order_acquire) == 0;
  return finalized_.load(std::memory_order_acquire) == expected_final_;
}

Trace RunContext::collect_trace() {
  Trace tr;
  std::lock_guard lk(slots_mu_);
  tr.tracks.reserve(n_slots_);
  std::size_t n = 0;
  for (std::size_t i = 0; i < n_slots_; ++i) n += slots_[i]->spans.size();
  tr.spans.reserve(n);
  for (std::size_t i = 0; i < n_slots_; ++i) {
    const ThreadSlot& s = *slots_[i];
    tr.tracks.push_back(TraceTrack{s.name, false});
    tr.spans.insert(tr.spans.end(), s.spans.begin(), s.spans.end());
  }
  std::sort(tr.spans.begin(), tr.spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.track < b.track);
  });
  return tr;
}

std::size_t RunContext::thread_count_registered() {
  std::lock_guard lk(slots_mu_);
  return n_slots_;
}

std::int64_t RunContext::remote_starts() {
  std::lock_guard lk(slots_mu_);
  std::int64_t n = 0;
  for (std::size_t i = 0; i < n_slots_; ++i) n += slots_[i]->remote_starts;
  return n;
}

// ---- failure ------------------------------------------------------------------
namespace {
[[noreturn]] void report_and_exit(int fd, ChildStatus st, const std::string& why,
                                  std::atomic<bool>& failing) {
  if (failing.exchange(true)) {
    // Another thread is already reporting; it will end the process.
    for (;;) pause();
  }
  if (fd >= 0) {
    write_frame(fd, st, why);
    _exit(st == ChildStatus::refused ? 3 : 4);
  }
  std::fprintf(stderr, "poolsim real run: %s\n", why.c_str());
  std::abort();
}
}  // namespace

void RunContext::refuse(const std::string& why) {
  report_and_exit(opt_.fail_fd, ChildStatus::refused, why, failing_);
}

void RunContext::fail(const std::string& why) {
  report_and_exit(opt_.fail_fd, ChildStatus::failed, why, failing_);
}

}  // namespace poolsim::real
