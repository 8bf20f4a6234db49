// workload.hpp: the generated task list, the one input that the simulator and
// the real backends both execute.
//
// generate_workload(scenario, seed) is a pure function: the same scenario and
// seed give the same list, bit for bit (tested). All durations are sampled
// here, never at execution time, so a simulated and a measured run execute the
// very same tasks. Storage is flat (tasks, phases, successor lists in three
// arrays) so a million tasks cost a few tens of MiB.
//
// Arrivals: batch and graph roots arrive at 0; poisson and periodic at their
// generated times; closed workloads give each client a fixed sequence of
// per_client tasks (client c's k-th is task k*clients + c: closed_task_id),
// issued one after another with the task's `think` before it, until `duration` ends.
// per_client is sized from the mean cycle (think + sum of mean phase times)
// with a 2x margin; a client that runs out stops, counted in `exhausted`.
//
// Streaming: open arrivals can be drawn on demand (TaskStream), so a
// simulation of 100M tasks does not hold 100M tasks; the list form is that
// stream collected.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "models/units.hpp"

namespace poolsim {

enum class PhaseKind : std::uint8_t { cpu, wait, lock };

// Phase::resource of a phase that holds no resource.
inline constexpr std::uint16_t kNoResource = 0xffff;

struct Phase {
  PhaseKind kind = PhaseKind::cpu;
  std::uint32_t lock = 0;  // lock phases: index into Workload::lock_names
  Duration duration{};     // cpu: work; wait: wait time; lock: CPU work while holding
  Duration wait_inside{};  // lock: blocking wait while holding (0 = none)
  // The resource it runs holding a permit of (index into
  // Scenario::resources), or kNoResource; models/resource_pool.hpp says
  // where a task acquires and releases it.
  std::uint16_t resource = kNoResource;
};

struct Task {
  std::uint32_t id = 0;
  std::uint16_t cls = 0;     // class index (0 for a single task shape / graph)
  Duration arrival{};        // submission time (closed: 0, issued by its client)
  Duration think{};          // closed: think time before it is issued
  std::uint32_t client = 0;  // closed: issuing client
  std::uint32_t first_phase = 0, phase_count = 0;
  std::uint32_t first_succ = 0, succ_count = 0;
  std::uint32_t pred_count = 0;  // graph: tasks that must finish first
};

class TaskStream;

struct Workload {
  ArrivalKind arrival = ArrivalKind::batch;
  bool graph = false;
  // Open arrivals generated as they are consumed (GenerateOptions::stream):
  // tasks and phases stay empty and the simulator draws from `stream`;
  // total_work and critical_path are known once it is exhausted
  // (sync_stream()).
  std::shared_ptr<TaskStream> stream;
  std::vector<Task> tasks;  // in arrival order (open), per client (closed), topological (graph)
  std::vector<Phase> phases;
  std::vector<std::uint32_t> successors;
  std::vector<std::string> lock_names;   // "stock", "rows#17", ...
  std::vector<std::string> class_names;  // "class0", ... or graph node ids' classes
  std::vector<std::string> node_ids;     // graph: the node id of each task
  // closed arrivals
  std::uint32_t clients = 0;
  std::uint32_t per_client = 0;
  Duration closed_duration{};
  // analysis: for graphs the longest dependency path; without edges the
  // longest single task. Every phase's duration counts on the path.
  Duration total_work{};  // sum of CPU time (cpu + lock hold) over all tasks
  Duration critical_path{};

  std::span<const Phase> phases_of(const Task& t) const {
    return {phases.data() + t.first_phase, t.phase_count};
  }
  std::span<const std::uint32_t> successors_of(const Task& t) const {
    return {successors.data() + t.first_succ, t.succ_count};
  }
  bool streamed() const { return stream != nullptr; }
  // Tasks in the workload (streamed: drawn so far).
  std::size_t task_count() const;
  // Streamed: copies the stream's totals (total_work, critical_path) in.
  void sync_stream();
  // Sum of the CPU phases (cpu + lock hold) of a task.
  Duration cpu_of(const Task& t) const { return cpu_of(phases_of(t)); }
  static Duration cpu_of(std::span<const Phase> phases);
  // Sum of every phase of a task (its time alone on an idle machine, no overheads).
  Duration length_of(const Task& t) const { return length_of(phases_of(t)); }
  static Duration length_of(std::span<const Phase> phases);
};

// generate_workload's horizon rule for open arrivals and graphs, task by
// task: the last arrival plus every task's think time and phases so far (in
// 128-bit nanoseconds, no sum overflows) must stay within kMaxDuration. For
// a reader of a TaskStream that keeps no list (the list form checks itself).
class OpenSerialLength {
 public:
  // Adds a task; false once the serial length passed the horizon (at this
  // task or before).
  bool add(const Task& t, std::span<const Phase> phases);
  // Throws the std::invalid_argument generate_workload throws, naming the
  // first task that passed the horizon; nothing when none did.
  void check() const;

 private:
  __extension__ typedef __int128 Wide;
  Wide last_arrival_ = 0, sum_ = 0;
  bool past_ = false;
  std::uint32_t first_past_ = 0;
};

// Throws std::invalid_argument (naming the arrival or graph) when the list
// would exceed kMaxTasks tasks, or when its serial length (the last arrival
// plus every sampled phase and think time; per client for closed loops) passes
// the simulated horizon kMaxDuration. Times cannot overflow below that bound.
struct GenerateOptions {
  // Open arrivals (batch, poisson, periodic) as a TaskStream instead of a
  // list; closed workloads and graphs are always generated whole.
  bool stream = false;
};
Workload generate_workload(const Scenario& s, std::uint64_t seed, GenerateOptions opt = {});
inline Workload generate_workload(const Scenario& s) { return generate_workload(s, s.seed); }

// An open arrival process drawn one task at a time, with the same random
// draws in the same order as the list generate_workload builds (which is
// built from this stream), so the same seed gives the same tasks either way.
// Memory: the scenario's classes and lock table, not the tasks.
class TaskStream {
 public:
  TaskStream(const Scenario& s, std::uint64_t seed, std::vector<std::string> lock_names);
  ~TaskStream();
  TaskStream(const TaskStream&) = delete;
  TaskStream& operator=(const TaskStream&) = delete;
  // The next task in arrival order (id = tasks drawn before it), its phases
  // in `phases` (replaced); false once the process has ended.
  bool next(Task& t, std::vector<Phase>& phases);
  bool done() const { return done_; }
  std::uint64_t drawn() const { return drawn_; }
  // Upper bound on the tasks it will draw (its count, or none: max).
  std::uint64_t limit() const { return limit_; }
  // Arrivals end at this time (Duration::max() when only the count ends them).
  Duration end() const { return end_; }
  Duration total_work() const { return total_work_; }
  Duration longest_task() const { return longest_; }
  // Shows each of the next n tasks drawn, with its phases, to `f` as next()
  // returns it: for a reader of the same tasks besides the simulator.
  using Tap = std::function<void(const Task&, std::span<const Phase>)>;
  void tap(std::uint64_t n, Tap f) {
    tap_ = std::move(f);
    tap_until_ = drawn_ + n;
  }

 private:
  struct State;
  std::unique_ptr<State> st_;
  Tap tap_;
  std::uint64_t tap_until_ = 0;
  std::uint64_t drawn_ = 0, limit_ = 0;
  Duration end_ = Duration::max();
  Duration total_work_{0}, longest_{0};
  bool done_ = false;
};

// Mean length of one task of this shape, in seconds (every phase counts).
double mean_task_seconds(const TaskSpec& t);
// Tasks generated per client of a closed loop whose tasks last `mean_task`
// seconds on average (the sizing rule of the file comment).
std::uint64_t closed_tasks_per_client(const Arrival& a, double mean_task);
// Closed clients' tasks are interleaved: client c's k-th task (k from 0) is
// task k * clients + c, so the first tasks of all clients come first.
inline std::uint64_t closed_task_id(const Workload& w, std::uint32_t client, std::uint64_t k) {
  return k * w.clients + client;
}
// Nodes a fork-join generator emits (forks, joins and leaves), saturating at
// UINT64_MAX.
std::uint64_t fork_join_nodes(int fanout, int depth);

}  // namespace poolsim
