// completion.hpp: what a task's end releases, written once for the
// simulator's driver (sim/driver.cpp) and the real runner (real/run_context.cpp,
// real/submitter.cpp), so the two halves run the same program.
//
// Rules:
// - graph (fork-join): a task is submitted when its last predecessor is
//   final. A predecessor refused by the runtime (rejected) dooms every task
//   that depends on it: a doomed task is never submitted; when its last
//   predecessor is final it is itself final as not_run, and it dooms its own
//   successors in turn. This is what a real program does: a node whose input
//   was never computed cannot run (a Java CompletableFuture chain completes
//   exceptionally, a TBB flow graph node never fires). The run ends when
//   every task is final: completed, rejected or not_run.
// - closed clients: client c owns tasks c, c + clients, c + 2*clients, ...
//   (per_client of them: closed_task_id, models/workload.hpp); it issues its
//   first task after that task's think time and each next one `think` after
//   the previous one was final (completed or rejected), while
//   the issue instant is before closed_duration; otherwise it stops and its
//   remaining tasks are never issued (not_run).
// - outcome counts: every task ends exactly one of completed, rejected,
//   not_run; at the end of a run completed + rejected + not_run == tasks.
// Invariants (GraphRelease): preds_left[s] only decreases and reaches 0
// exactly once, so each task is released (submitted or not_run) at most
// once; a task is doomed only before it is released.
// No threads, no clock here: the simulator calls it from its single event
// loop, the real runner under its own mutex (the order of the calls is the
// twin's, so the simulator stays deterministic).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/result.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"

namespace poolsim {

// The verdict on one successor when one of its predecessors becomes final.
enum class Release : std::uint8_t {
  wait,     // other predecessors are not final yet
  submit,   // every predecessor completed: hand it to the runtime
  not_run,  // every predecessor is final and one of them did not complete
};

class GraphRelease {
 public:
  explicit GraphRelease(const Workload& w);

  // A predecessor of `succ` became final; `completed` is false when it was
  // rejected or not_run.
  Release predecessor_final(std::uint32_t succ, bool completed);

  // `task` was released as not_run: marks its descendants, and appends to
  // `not_run` every task (task first) that is now final as not_run, in
  // depth-first order (explicit stack: a long doomed pipeline must not
  // recurse).
  void cascade_not_run(std::uint32_t task, std::vector<std::uint32_t>& not_run);

  // Every successor of `task`, which became final: appends the ones to
  // submit to `ready` and the ones (and their descendants) final as not_run
  // to `not_run`, in successor order. For a twin that submits after the
  // bookkeeping (the real runner, outside its lock).
  void task_final(std::uint32_t task, bool completed, std::vector<std::uint32_t>& ready,
                  std::vector<std::uint32_t>& not_run);

 private:
  const Workload& w_;
  std::vector<std::uint32_t> preds_left_;  // predecessors not yet final
  std::vector<std::uint8_t> doomed_;       // a predecessor did not complete
};

// The next step of a closed client after `task` was final at `now`.
struct ClientStep {
  std::optional<std::uint32_t> next;  // the task to issue, at `due`; unset: the client stops
  Duration due{};
  std::uint32_t never_issued = 0;  // when it stops: its remaining tasks (final as not_run)
};
ClientStep closed_client_next(const Workload& w, std::uint32_t task, Duration now);

// Client c's first issue (at its first task's think time), or a stop when
// that is not before closed_duration (or the client owns no task).
ClientStep closed_client_first(const Workload& w, std::uint32_t client);

// Tasks no client owns (from clients * per_client on): never issued.
std::uint32_t closed_unowned_tasks(const Workload& w);

// The tasks handed over at t = 0, in the order a submitter hands them over
// (graph roots; closed clients' first tasks with no think time; open tasks
// arriving at 0), at most `limit` of them.
std::vector<std::uint32_t> first_wave_tasks(const Workload& w, std::uint32_t limit);

// The final outcomes of a run, counted by the twin as it finalizes tasks.
struct OutcomeCounts {
  std::uint64_t completed = 0, rejected = 0, not_run = 0;
  std::uint64_t final() const { return completed + rejected + not_run; }
  // The records agree with the counts and every task is final.
  bool consistent(const std::vector<TaskRecord>& records) const;
};

}  // namespace poolsim
