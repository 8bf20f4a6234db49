// driver.cpp: arrivals, task execution and records (design in driver.hpp).
#include "sim/driver.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "models/assert.hpp"

namespace poolsim::sim {

Driver::Driver(Kernel& kernel, const Scenario& scenario, const Workload& workload,
               DriverOptions opt)
    : k_(kernel),
      scenario_(scenario),
      workload_(workload),
      keep_records_(opt.records),
      records_(opt.records ? workload.tasks.size() : 0),
      summary_(opt.quantiles),
      locks_(workload.lock_names.size()) {
  if (workload_.graph) graph_.emplace(workload_);
  // A streamed workload of known length: the summary's exact latencies get
  // their room at once (up to the exact limit) instead of by doubling.
  if (!opt.records && workload_.streamed() &&
      workload_.stream->limit() != std::numeric_limits<std::uint64_t>::max())
    summary_.reserve(static_cast<std::size_t>(
        std::min<std::uint64_t>(workload_.stream->limit(), opt.quantiles.exact_limit)));
  resources_.reserve(scenario.resources.size());
  for (const ResourceSpec& r : scenario.resources)
    resources_.push_back({FifoPermits<Parking*>(r.permits), {}});
}

void Driver::start() {
  if (!rt_) throw std::logic_error("sim::Driver: no runtime");
  submitter_id_ = k_.create_thread(submitter(), "submitter");
}

void Driver::in_system_step(int delta) {
  const std::int64_t now = k_.now().count();
  area_ += static_cast<long double>(in_system_) * static_cast<long double>(now - last_change_);
  last_change_ = now;
  in_system_ += delta;
}

void Driver::make_final(TaskOutcome outcome, std::uint32_t count) {
  switch (outcome) {
    case TaskOutcome::completed:
      outcomes_.completed += count;
      break;
    case TaskOutcome::rejected:
      outcomes_.rejected += count;
      break;
    case TaskOutcome::not_run:
      outcomes_.not_run += count;
      break;
  }
  POOLSIM_ASSERT(workload_.streamed() || outcomes_.final() <= workload_.tasks.size(),
                 "a task was made final twice");
}

// The run ends where the real runner's submitter sees every task final
// (real/submitter.cpp): called on the submitter itself, at once (the real
// one checks all_done() before it blocks); on any other thread, the last
// final wakes the submitter parked at the end of its work (the real
// RunContext::notify_submitter: the waker pays the wake-up), and the run
// ends when it runs (Driver::submitter). The real run's switch counts and
// CPU time are read there (real/runner.cpp, usage_mark), so whatever the
// runtime's threads do meanwhile (a worker woken by the last spawn finding
// nothing and parking again) counts in both halves. A closed workload's
// submitter asleep on its agenda was woken when the last client stopped.
void Driver::check_done() {
  if (!finished()) return;
  if (!final_at_) final_at_ = k_.now();
  if (k_.self() == submitter_id_)
    k_.engine().stop();
  else
    k_.notify_all(park_q_);  // none yet if it has not parked: it checks itself first
}

void Driver::extend_live(std::uint32_t task) {
  while (live_.end() <= task) live_.push_back(Live{});
}

void Driver::record_final(std::uint32_t task) {
  if (keep_records_ && !workload_.streamed()) return;
  Live& e = live(task);
  POOLSIM_ASSERT(!e.final, "a task becomes final twice");
  e.final = true;
  if (!keep_records_) {
    summary_.add(e.rec);
  } else {
    if (records_.size() <= task) records_.resize(task + std::size_t{1});
    records_[task] = e.rec;
  }
  while (!live_.empty() && live_.front().final) {
    for (std::uint32_t i = 0; i < live_.front().phase_count; ++i) phases_.pop_front();
    live_.pop_front();
  }
}

std::uint32_t Driver::phase_count(std::uint32_t task) {
  return workload_.streamed() ? live(task).phase_count : workload_.tasks[task].phase_count;
}

Phase Driver::phase(std::uint32_t task, std::uint32_t i) {
  if (!workload_.streamed()) return workload_.phases[workload_.tasks[task].first_phase + i];
  return phases_[live(task).first_phase + i];
}

Co Driver::submit(std::uint32_t task, Duration intended) {
  TaskRecord& rec = record(task);
  rec.intended = intended;
  rec.submit = k_.now();
  rec.submit_cpu = static_cast<std::int16_t>(k_.current_cpu());
  in_system_step(+1);
  co_await rt_->submit(task);
}

Co Driver::submitter() {
  const auto& tasks = workload_.tasks;
  if (workload_.graph) {
    for (std::uint32_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].pred_count == 0) co_await submit(i, Duration{0});
  } else if (workload_.arrival == ArrivalKind::closed) {
    for (std::uint32_t c = 0; c < workload_.clients; ++c) {
      const ClientStep first = closed_client_first(workload_, c);
      if (first.next) {
        agenda_.push({first.due.count(), *first.next});
        ++clients_active_;
      } else {
        make_final(TaskOutcome::not_run, first.never_issued);
      }
    }
    make_final(TaskOutcome::not_run, closed_unowned_tasks(workload_));
    check_done();
    while (clients_active_ > 0) {
      if (agenda_.empty()) {
        submitter_asleep_ = AgendaSleep{};
        co_await k_.wait(agenda_q_);
        submitter_asleep_.reset();
        continue;
      }
      const Due next = agenda_.top();
      if (next.t > k_.now().count()) {
        submitter_asleep_ = AgendaSleep{next.t};
        co_await k_.wait_until(agenda_q_, Duration{next.t});
        submitter_asleep_.reset();
        continue;
      }
      agenda_.pop();
      co_await submit(next.task, Duration{next.t});
    }
  } else if (workload_.streamed()) {
    co_await submit_stream();
  } else {
    for (std::uint32_t i = 0; i < tasks.size(); ++i) {
      if (tasks[i].arrival > k_.now()) co_await k_.sleep_until(tasks[i].arrival);
      co_await submit(i, tasks[i].arrival);
    }
  }
  check_done();  // every task final already: the run ends here
  if (!k_.engine().stopped()) {
    // The main thread joins the run: it blocks until the last final wakes
    // it (check_done), and the run ends when it runs.
    co_await k_.wait(park_q_);
    k_.engine().stop();
  }
  // The main thread goes on past the run's end (the real one stops the
  // backend and reports), where nothing more is simulated: it neither
  // blocks (a switch the real run does not count) nor ends (a live thread).
  co_await k_.compute(std::chrono::hours(24 * 365));
}

// Open arrivals drawn as the submitter reaches them: each task's phases go
// into the window, then it is submitted at its arrival time.
Co Driver::submit_stream() {
  TaskStream& stream = *workload_.stream;
  Task t;
  std::vector<Phase> buf;
  while (stream.next(t, buf)) {
    Live& e = live(t.id);
    e.first_phase = phases_.end();
    e.phase_count = t.phase_count;
    for (const Phase& p : buf) phases_.push_back(p);
    if (t.arrival > k_.now()) co_await k_.sleep_until(t.arrival);
    co_await submit(t.id, t.arrival);
  }
  stream_done_ = true;
}

Co Driver::execute(std::uint32_t task) {
  const ThreadId self = k_.self();
  // No reference into the records is held across a co_await (the window
  // may move when tasks are issued meanwhile).
  record(task).start = k_.now();
  record(task).worker = self;
  k_.set_task(task);
  const Duration cpu0 = k_.thread_cpu_time(self);
  // Started on another CPU than its submitter's: counted in every runtime,
  // as the real harness counts it (RunContext::task_started), and paid
  // what the runtime says it costs (Runtime::remote_start_cost).
  const std::int16_t from = record(task).submit_cpu;
  if (from >= 0 && k_.current_cpu() != from) {
    ++remote_starts_;
    if (const Duration cost = rt_->remote_start_cost(); cost > Duration{0})
      co_await k_.compute(cost);
  }
  const std::uint32_t phases = phase_count(task);
  for (std::uint32_t i = 0; i < phases; ++i) {
    const Phase p = phase(task, i);
    const HoldingStep hold =
        holding_step(i == 0 ? kNoResource : phase(task, i - 1).resource, p.resource,
                     i + 1 == phases ? kNoResource : phase(task, i + 1).resource);
    if (hold.acquire_before) {
      // Parked right here, not in a nested coroutine: a user thread's
      // unmount transfers to its host from execute's own frame, as a sleep.
      Parking parking;  // in this frame until the permit is handed over
      parking.task = task;
      const Duration asked = k_.now();
      if (!resources_[p.resource].permits.acquire(&parking)) co_await k_.park(parking);
      granted(p.resource, k_.now() - asked);
    }
    switch (p.kind) {
      case PhaseKind::cpu:
        co_await k_.compute(p.duration);
        break;
      case PhaseKind::wait:
        if (p.duration.count() > 0) co_await k_.sleep_for(p.duration);
        break;
      case PhaseKind::lock: {
        POOLSIM_ASSERT(p.lock < locks_.size(), "a lock phase names a lock of the workload");
        Mutex& m = locks_[p.lock];
        co_await k_.lock(m);
        co_await k_.compute(p.duration);
        if (p.wait_inside.count() > 0) co_await k_.sleep_for(p.wait_inside);
        k_.unlock(m);
        break;
      }
    }
    if (hold.release_after) release(p.resource);
  }
  TaskRecord& rec = record(task);
  rec.end = k_.now();
  rec.cpu = k_.thread_cpu_time(self) - cpu0;
  rec.outcome = TaskOutcome::completed;
  k_.set_task(kNoTask);
  co_await completed(task);
}

void Driver::granted(std::uint16_t r, Duration waited) {
  Resource& res = resources_[r];
  res.use.granted(waited, res.permits.in_use());
}

void Driver::release(std::uint16_t r) {
  if (const auto next = resources_[r].permits.release()) k_.unpark(**next);
}

Co Driver::completed(std::uint32_t task) {
  in_system_step(-1);
  make_final(TaskOutcome::completed, 1);
  record_final(task);
  if (graph_) {
    // One successor at a time: a submit may suspend this thread, and the
    // next successor's count is taken after it (the order is part of the
    // run's determinism). Every successor this completion releases is
    // released now, at the completion: its intended arrival, from which the
    // submits before its own count as its submit lag (the real twin's
    // RunContext::release_successors). Until 2026-12-06 each took the time
    // of its own submit, so that lag was always 0. The first hand-over
    // comes machine.release_stamp after the release (stamp_release).
    const Duration released = k_.now();
    bool stamped = false;
    for (std::uint32_t s : workload_.successors_of(workload_.tasks[task])) {
      switch (graph_->predecessor_final(s, true)) {
        case Release::wait:
          break;
        case Release::submit:
          if (!std::exchange(stamped, true)) co_await stamp_release();
          co_await submit(s, released);
          break;
        case Release::not_run:
          release_not_run(s);
          break;
      }
    }
  }
  if (workload_.arrival == ArrivalKind::closed && !workload_.graph) {
    if (const auto next = client_next(task, true)) {
      const Duration released = k_.now();
      co_await stamp_release();
      co_await submit(*next, released);
    }
  }
  check_done();
}

// The completing thread's CPU between a release and its first hand-over:
// the real runner's second time stamp (the release's is the first) and the
// record's store (RunContext::release_successors, on_client_task_done),
// machine.release_stamp; nothing in the `default` profile.
Co Driver::stamp_release() {
  if (const Duration d = k_.machine().release_stamp; d > Duration{0}) co_await k_.compute(d);
}

void Driver::release_not_run(std::uint32_t task) {
  not_run_scratch_.clear();
  graph_->cascade_not_run(task, not_run_scratch_);
  // Their records keep outcome not_run and zero times (never submitted).
  make_final(TaskOutcome::not_run, static_cast<std::uint32_t>(not_run_scratch_.size()));
}

void Driver::reject(std::uint32_t task) {
  TaskRecord& rec = record(task);
  rec.outcome = TaskOutcome::rejected;
  rec.start = rec.end = k_.now();
  in_system_step(-1);
  make_final(TaskOutcome::rejected, 1);
  record_final(task);
  if (graph_) {
    for (std::uint32_t s : workload_.successors_of(workload_.tasks[task]))
      if (graph_->predecessor_final(s, false) == Release::not_run) release_not_run(s);
  }
  // reject() is not a coroutine: its next issue goes through the agenda.
  if (workload_.arrival == ArrivalKind::closed && !workload_.graph) (void)client_next(task, false);
  check_done();
}

std::optional<std::uint32_t> Driver::client_next(std::uint32_t task, bool issue_now) {
  const ClientStep step = closed_client_next(workload_, task, k_.now());
  if (!step.next) {
    make_final(TaskOutcome::not_run, step.never_issued);  // the client stops
    POOLSIM_ASSERT(clients_active_ > 0, "a closed client stops twice");
    --clients_active_;
    if (clients_active_ == 0) wake_submitter_before(std::nullopt);
    return std::nullopt;
  }
  if (issue_now && step.due == k_.now()) return step.next;
  agenda_.push({step.due.count(), *step.next});
  wake_submitter_before(step.due.count());
  return std::nullopt;
}

void Driver::wake_submitter_before(std::optional<std::int64_t> due) {
  if (!submitter_asleep_) return;
  const std::optional<std::int64_t>& deadline = submitter_asleep_->deadline;
  if (due && deadline && *due >= *deadline) return;  // it wakes by itself first
  submitter_asleep_.reset();
  k_.notify_one(agenda_q_);
}

void Driver::finish(RunResult& r) {
  in_system_step(0);
  // Averaged up to the last final (the run's own end; the submitter's wake
  // after it holds no task).
  const double end = static_cast<double>(final_at_.value_or(k_.now()).count());
  extra_["tasks_in_system_mean"] = end > 0 ? static_cast<double>(area_ / end) : 0.0;
  extra_["remote_starts"] = static_cast<double>(remote_starts_);
  POOLSIM_ASSERT(finished(), "the run ended with tasks not final");
  if (keep_records_ && workload_.streamed()) records_.resize(workload_.stream->drawn());
  POOLSIM_ASSERT(!keep_records_ || outcomes_.consistent(records_),
                 "the outcome counts disagree with the task records");
  if (keep_records_)
    r.records = std::move(records_);
  else
    r.summary = std::move(summary_);
  for (auto& [name, value] : extra_) r.extra[name] += value;
  std::vector<ResourceUse> use;
  for (const Resource& res : resources_) {
    POOLSIM_ASSERT(res.permits.in_use() == 0 && res.permits.waiting() == 0,
                   "the run ended with a permit held or a task waiting for one");
    use.push_back(res.use);
  }
  report_resources(scenario_.resources, use, r.extra);
}

}  // namespace poolsim::sim
