// completion.cpp: graph release and closed-client rules (design in
// completion.hpp).
#include "models/completion.hpp"

#include <algorithm>

#include "models/assert.hpp"

namespace poolsim {

GraphRelease::GraphRelease(const Workload& w) : w_(w) {
  preds_left_.reserve(w.tasks.size());
  for (const Task& t : w.tasks) preds_left_.push_back(t.pred_count);
  doomed_.assign(w.tasks.size(), 0);
}

Release GraphRelease::predecessor_final(std::uint32_t succ, bool completed) {
  POOLSIM_ASSERT(preds_left_[succ] > 0,
                 "a task released twice: more final predecessors than edges");
  if (!completed) doomed_[succ] = 1;
  if (--preds_left_[succ] > 0) return Release::wait;
  return doomed_[succ] != 0 ? Release::not_run : Release::submit;
}

void GraphRelease::cascade_not_run(std::uint32_t task, std::vector<std::uint32_t>& not_run) {
  std::vector<std::uint32_t> stack{task};
  while (!stack.empty()) {
    const std::uint32_t t = stack.back();
    stack.pop_back();
    POOLSIM_ASSERT(preds_left_[t] == 0 && doomed_[t] != 0,
                   "only a released task with a failed predecessor is marked not_run");
    not_run.push_back(t);
    for (std::uint32_t s : w_.successors_of(w_.tasks[t]))
      if (predecessor_final(s, false) == Release::not_run) stack.push_back(s);
  }
}

void GraphRelease::task_final(std::uint32_t task, bool completed, std::vector<std::uint32_t>& ready,
                              std::vector<std::uint32_t>& not_run) {
  for (std::uint32_t s : w_.successors_of(w_.tasks[task])) {
    switch (predecessor_final(s, completed)) {
      case Release::wait:
        break;
      case Release::submit:
        ready.push_back(s);
        break;
      case Release::not_run:
        cascade_not_run(s, not_run);
        break;
    }
  }
}

namespace {

// The tasks some client owns: client c's k-th for every c and k (the rest,
// past clients * per_client, are never issued).
std::uint64_t owned_tasks(const Workload& w) {
  return std::min<std::uint64_t>(static_cast<std::uint64_t>(w.clients) * w.per_client,
                                 w.tasks.size());
}

// Client-owned tasks at or after `task` in its client's sequence (task,
// task + clients, ...).
std::uint32_t remaining_from(const Workload& w, std::uint64_t task) {
  const std::uint64_t owned = owned_tasks(w);
  return task < owned ? static_cast<std::uint32_t>((owned - task + w.clients - 1) / w.clients) : 0;
}

}  // namespace

ClientStep closed_client_next(const Workload& w, std::uint32_t task, Duration now) {
  POOLSIM_ASSERT(w.per_client > 0 && w.clients > 0, "a closed workload has tasks per client");
  const std::uint64_t next = static_cast<std::uint64_t>(task) + w.clients;
  ClientStep step;
  if (next < owned_tasks(w)) {
    step.due = now + w.tasks[next].think;
    if (step.due < w.closed_duration) {
      step.next = static_cast<std::uint32_t>(next);
      return step;
    }
  }
  step.never_issued = remaining_from(w, next);
  return step;
}

ClientStep closed_client_first(const Workload& w, std::uint32_t client) {
  ClientStep step;
  const std::uint64_t first = closed_task_id(w, client, 0);
  if (w.per_client == 0 || first >= owned_tasks(w)) return step;  // owns nothing
  step.due = w.tasks[first].think;
  if (step.due < w.closed_duration) {
    step.next = static_cast<std::uint32_t>(first);
  } else {
    step.never_issued = remaining_from(w, first);
  }
  return step;
}

std::uint32_t closed_unowned_tasks(const Workload& w) {
  return static_cast<std::uint32_t>(w.tasks.size() - owned_tasks(w));
}

std::vector<std::uint32_t> first_wave_tasks(const Workload& w, std::uint32_t limit) {
  std::vector<std::uint32_t> out;
  const auto n = static_cast<std::uint32_t>(w.tasks.size());
  if (w.graph) {
    for (std::uint32_t i = 0; i < n && out.size() < limit; ++i)
      if (w.tasks[i].pred_count == 0) out.push_back(i);
  } else if (w.arrival == ArrivalKind::closed) {
    for (std::uint32_t c = 0; c < w.clients && out.size() < limit; ++c) {
      const ClientStep first = closed_client_first(w, c);
      if (first.next && first.due.count() == 0) out.push_back(*first.next);
    }
  } else {
    for (std::uint32_t i = 0; i < n && out.size() < limit && w.tasks[i].arrival.count() == 0; ++i)
      out.push_back(i);
  }
  return out;
}

bool OutcomeCounts::consistent(const std::vector<TaskRecord>& records) const {
  OutcomeCounts seen;
  for (const TaskRecord& r : records) {
    switch (r.outcome) {
      case TaskOutcome::completed:
        ++seen.completed;
        break;
      case TaskOutcome::rejected:
        ++seen.rejected;
        break;
      case TaskOutcome::not_run:
        ++seen.not_run;
        break;
    }
  }
  return seen.completed == completed && seen.rejected == rejected && seen.not_run == not_run &&
         final() == records.size();
}

}  // namespace poolsim
