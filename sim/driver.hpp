// driver.hpp: the workload side of a simulation: the submitter thread, the
// arrival processes, task execution and the per-task records.
//
// Arrivals (models/workload.hpp):
// - batch: one submitter thread (the process's main thread, a simulated OS
//   thread) submits every task at t = 0, one after another, paying whatever
//   submitting costs it (thread_create under thread-per-task);
// - poisson / periodic: the submitter sleeps until each task's arrival time
//   (an absolute timed wait, so timer_slack delays a submission but never
//   accumulates), then submits;
// - closed: each client issues its next task `think` after its previous one
//   finished (or was rejected), while the issue time is before
//   closed_duration. With think 0 the thread that completed the task issues
//   the next one itself, at once (as the real runner does:
//   RunContext::on_client_task_done calls submit_now on the finishing
//   thread), so under thread-per-task each finishing thread creates its
//   successor and pays thread_create; with a think time, and after a
//   rejection, the submitter keeps an agenda of due issues and sleeps until
//   the earliest (a completion that makes an earlier one due wakes it);
// - graph: the submitter submits the roots; a task's completion releases
//   each successor whose predecessors are all done, submitted by the
//   completing thread (as a continuation would be); a rejected task's
//   successors never run: they are final as not_run once their last
//   predecessor is final (models/completion.hpp, the real runner's rule).
// The graph and closed-client rules are models/completion.hpp's, shared with
// the real runner (real/run_context.cpp).
// After submitting, the submitter blocks (it joins the run) until the
// thread that makes the last task final (completed, rejected, or not_run:
// never issued, or a successor of a rejected graph task) wakes it; the run
// ends when it runs, where the real runner reads its switch counts and CPU
// time (check_done). Task times, and so every latency and the makespan,
// end at the last final.
// Invariant (asserted in finish()): at the end, completed + rejected +
// not_run == tasks, and the records agree with those counts.
//
// Records: intended = the task's intended arrival (its generated arrival,
// the end of its client's think time, its release; latency is measured from
// it); submit = when the submitter hands the task to the runtime; start
// = when a thread begins its first phase; end = its last phase finished;
// cpu = CPU time of that thread meanwhile (switch costs included); worker =
// the OS thread's id. Phases: cpu -> compute; wait -> timed sleep; lock ->
// lock, compute(hold), sleep(wait_inside), unlock.
// Bounded resources (models/resource_pool.hpp, which says where a task
// acquires and releases): acquiring a permit takes a free one or parks the
// task in the resource's FIFO (Kernel::park: a thread blocks, a virtual
// thread or an event-loop task unmounts); releasing hands the permit to the
// oldest waiter and unparks it (the releaser pays the wake-up). The wait is
// counted from the request to the instant the task proceeds (ResourceUse,
// reported as resource.NAME.* in RunResult::extra). At the end every permit
// is back and nobody waits (asserted in finish()).
// Streaming (DriverOptions::records off): instead of one record per task,
// the driver keeps a window of the tasks between the oldest one not yet
// final and the newest one issued, and folds each record into a
// RecordSummary when its task becomes final; a streamed workload's phases
// live in the same window. Memory then follows the tasks in the system, not
// the task count (open arrivals; a closed client's never-issued tasks keep
// the window from moving past them, so closed workloads and graphs keep
// about what their task list costs).
// Extra counters: tasks_in_system_mean, the time average of submitted but
// not yet final tasks, integrated online (Little's law's L, measured apart
// from the records).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "models/assert.hpp"
#include "models/completion.hpp"
#include "models/resource_pool.hpp"
#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "sim/co.hpp"
#include "sim/kernel.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

// A FIFO window over absolute indexes [base(), end()), in a power-of-two
// ring: indexing is a mask, growing doubles the ring. References do not
// survive a push_back (the ring may move): nothing holds one across a
// co_await.
template <class T>
class Ring {
 public:
  std::uint64_t base() const { return base_; }
  std::uint64_t end() const { return end_; }
  bool empty() const { return base_ == end_; }
  T& operator[](std::uint64_t i) { return buf_[i & mask_]; }
  T& front() { return buf_[base_ & mask_]; }
  void push_back(const T& v) {
    if (end_ - base_ == buf_.size()) grow();
    buf_[end_ & mask_] = v;
    ++end_;
  }
  void pop_front() { ++base_; }

 private:
  void grow() {
    std::vector<T> next(buf_.empty() ? 16 : 2 * buf_.size());
    const std::uint64_t mask = next.size() - 1;
    for (std::uint64_t i = base_; i < end_; ++i) next[i & mask] = std::move(buf_[i & mask_]);
    buf_ = std::move(next);
    mask_ = mask;
  }
  std::vector<T> buf_;
  std::uint64_t mask_ = 0, base_ = 0, end_ = 0;
};

struct DriverOptions {
  bool records = true;       // one TaskRecord per task in RunResult::records
  QuantilePolicy quantiles;  // records off: how the summary keeps latencies
};

class Driver {
 public:
  Driver(Kernel& kernel, const Scenario& scenario, const Workload& workload,
         DriverOptions opt = {});

  void set_runtime(Runtime* rt) { rt_ = rt; }
  // Creates the submitter thread at t = 0 (call before running the engine).
  void start();

  // Runs the task's phases on the current thread, then completes it.
  Co execute(std::uint32_t task);
  // The runtime refused the task (its rejection policy discarded it).
  void reject(std::uint32_t task);
  // Runtime-specific counters (reported in RunResult::extra).
  void add_extra(const std::string& name, double value) { extra_[name] += value; }

  bool finished() const {
    return workload_.streamed() ? stream_done_ && outcomes_.final() == workload_.stream->drawn()
                                : outcomes_.final() == workload_.tasks.size();
  }
  // Tasks final so far (progress).
  std::size_t final_count() const { return outcomes_.final(); }
  // Moves the records and extra counters into r.
  void finish(RunResult& r);

 private:
  struct Due {
    std::int64_t t;
    std::uint32_t task;
    bool operator>(const Due& o) const { return t > o.t || (t == o.t && task > o.task); }
  };

  // A task between the oldest one not final and the newest issued.
  struct Live {
    TaskRecord rec;
    std::uint64_t first_phase = 0;  // streamed workloads: index in phases_
    std::uint32_t phase_count = 0;
    bool final = false;
  };
  Live& live(std::uint32_t task) {
    POOLSIM_ASSERT(task >= live_.base(), "a final task is touched again");
    if (task >= live_.end()) extend_live(task);
    return live_[task];
  }
  void extend_live(std::uint32_t task);
  TaskRecord& record(std::uint32_t task) {
    return keep_records_ && !workload_.streamed() ? records_[task] : live(task).rec;
  }
  // The task's record is complete: fold it into the summary, let the window move.
  void record_final(std::uint32_t task);
  std::uint32_t phase_count(std::uint32_t task);
  Phase phase(std::uint32_t task, std::uint32_t i);

  Co submitter();
  Co submit_stream();
  // Hands `task` to the runtime now; `intended` is its intended arrival.
  Co submit(std::uint32_t task, Duration intended);
  // machine.release_stamp on the completing thread, before a release's first
  // hand-over (driver.cpp).
  Co stamp_release();
  Co completed(std::uint32_t task);
  // Graph: `task`'s successors that can never run (a predecessor was
  // rejected) become final as not_run.
  void release_not_run(std::uint32_t task);
  void make_final(TaskOutcome outcome, std::uint32_t count);
  void in_system_step(int delta);
  // The client of `task` is done with it: returns the next task when it is
  // due now (think 0) and `issue_now`, for the caller to submit; otherwise
  // puts it on the submitter's agenda (or ends the client) and returns none.
  std::optional<std::uint32_t> client_next(std::uint32_t task, bool issue_now);
  // Wakes the submitter if it sleeps on the agenda past `due` (nullopt: the
  // last client stopped).
  void wake_submitter_before(std::optional<std::int64_t> due);
  void check_done();
  // A permit of resource r was granted after `waited` (accounting).
  void granted(std::uint16_t r, Duration waited);
  // Gives a permit of r back: to the oldest waiter (unparked) or free.
  void release(std::uint16_t r);

  Kernel& k_;
  const Scenario& scenario_;
  const Workload& workload_;
  Runtime* rt_ = nullptr;
  bool keep_records_ = true;
  std::vector<TaskRecord> records_;
  RecordSummary summary_;
  Ring<Live> live_;     // indexed by task id
  Ring<Phase> phases_;  // streamed: phases of the tasks in live_
  bool stream_done_ = false;
  std::vector<Mutex> locks_;
  struct Resource {
    FifoPermits<Parking*> permits;
    ResourceUse use;
  };
  std::vector<Resource> resources_;    // Scenario::resources, same order
  std::optional<GraphRelease> graph_;  // graph workloads only
  std::vector<std::uint32_t> not_run_scratch_;
  std::map<std::string, double> extra_;
  OutcomeCounts outcomes_;
  // Little's law bookkeeping
  std::int64_t in_system_ = 0;
  std::int64_t remote_starts_ = 0;  // tasks started on another CPU than their submitter's
  std::int64_t last_change_ = 0;
  long double area_ = 0;
  // closed clients
  std::priority_queue<Due, std::vector<Due>, std::greater<>> agenda_;
  std::uint32_t clients_active_ = 0;
  WaitQueue agenda_q_;
  // The submitter's sleep on the agenda: none while it is awake; otherwise
  // the instant it wakes by itself (or until notified: no deadline).
  struct AgendaSleep {
    std::optional<std::int64_t> deadline;  // unset: until notified
  };
  std::optional<AgendaSleep> submitter_asleep_;
  WaitQueue park_q_;  // the submitter, after its work, until the last final
  ThreadId submitter_id_ = kNoThread;
  std::optional<Duration> final_at_;  // when the last task became final
};

}  // namespace poolsim::sim
