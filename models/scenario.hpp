// scenario.hpp: one experiment, as typed, immutable data.
//
// The structs mirror docs/scenarios.md key by key. The loader
// (scenario_loader.hpp) is the only producer: it resolves units, defaults,
// `cores` expressions and machine profiles, so every consumer (simulator, real
// runner, validator) reads final values and never re-parses anything.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/distribution.hpp"
#include "models/machine.hpp"
#include "models/units.hpp"

namespace poolsim {

// ---- size limits ----------------------------------------------------------
// Checked by the loader before anything is allocated (docs/scenarios.md,
// "Limits"); the workload generator checks the task count again.
//
// Tasks in one generated workload: a real run preallocates a record per task
// (about 100 bytes), so 50M tasks is ~5 GB; more is a mistake, not a scenario.
inline constexpr std::int64_t kMaxTasks = 50'000'000;
// The cap on a Poisson or periodic arrival's tasks when `poolsim simulate`
// streams them (LoadOptions::open_task_cap): no record is kept per task, so
// memory does not bound it; this keeps a run under ~10 minutes.
inline constexpr std::int64_t kMaxStreamedTasks = 1'000'000'000;
// The simulator's default event budget (RunOptions::max_events): about two
// seconds of simulation for the base, plus far more per finished task than
// any scenario in configs/ or tests needs (they use 4-40 events per task),
// so a run of any length passes as long as its tasks keep finishing.
inline constexpr std::uint64_t kEventBudgetBase = 10'000'000;
inline constexpr std::uint64_t kEventBudgetPerTask = 1'000;
// Mutex shards over all lock names: each is a named mutex in the workload and
// a real mutex in a real run (~64 bytes each).
inline constexpr std::int64_t kMaxLockShards = 1'000'000;
// Bounded resources (`resources:`): names declared, and permits of one. A
// permit is a counter, not an object, so the bound on permits only keeps a
// typo (a missing unit, a stray digit) from reading as "unbounded"; the
// number of names bounds the per-resource tables of both halves.
inline constexpr std::int64_t kMaxResources = 1000;
inline constexpr std::int64_t kMaxPermits = 1'000'000;
// A scenario or machine-profile file, and an empirical samples file. yaml-cpp
// keeps ~450 bytes per node, so a 2 MiB file (~40,000 lines, a graph of
// ~35,000 nodes) can need up to ~500 MB while parsing; a samples file of
// 16 MiB holds up to 4M samples (32 MB).
inline constexpr std::int64_t kMaxScenarioFileBytes = 2LL << 20;
inline constexpr std::int64_t kMaxSamplesFileBytes = 16LL << 20;
// YAML nesting (indentation levels plus brackets): yaml-cpp parses and frees
// nodes recursively, so a deep document would exhaust the stack; the deepest
// real scenario key path has 7 levels.
inline constexpr int kMaxYamlNesting = 64;

// ---- limits ---------------------------------------------------------------
// A noisy neighbour (limits.neighbour): a sibling cgroup of `threads`
// CPU-bound threads that never block, with its own CPU weight.
struct Neighbour {
  int threads = 1;
  int shares = 1024;  // its weight as cgroup v1 cpu.shares (the kernel's tg->shares)
};

// cgroup v2 cpu.weight <-> the kernel's group weight (v1 cpu.shares units):
// sched_weight_from_cgroup / sched_weight_to_cgroup in kernel/sched/sched.h
// (weight * 1024 / 100, rounded to the closest).
int shares_from_weight(int weight);
int weight_from_shares(int shares);

struct Limits {
  std::optional<double> cpus;  // CFS quota in CPUs (quota = cpus * period)
  Duration period = std::chrono::milliseconds(100);
  std::vector<int> cpuset;  // empty: every CPU of the machine
  std::string cpuset_text;  // as written, for reports ("0-1")
  Duration burst{};         // CFS burst: unused quota kept, up to this
  // The scenario group's weight in cgroup v1 cpu.shares units (limits.shares,
  // or limits.weight converted); matters only against a neighbour.
  int shares = 1024;
  std::optional<Neighbour> neighbour;
};

// CPUs the scenario may use: the cpuset size (or the machine's cores), never
// more than the quota rounded up. This is what `cores` means in thread counts.
int effective_cores(const MachineProfile& m, const Limits& l);
// CPU capacity in CPUs: min(cpuset size, quota) as a real number (1.5).
double cpu_capacity(const MachineProfile& m, const Limits& l);

// ---- workload -------------------------------------------------------------
// `holding: NAME` on any phase: the phase runs while its task holds one
// permit of Scenario::resources[*holding] (models/resource_pool.hpp).
struct CpuPhase {
  Distribution work;
  std::optional<std::uint16_t> holding;
};
struct WaitPhase {
  Distribution time;
  std::optional<std::uint16_t> holding;
};
struct LockPhase {
  std::string name;
  int shards = 1;
  Distribution hold;                        // CPU work while holding the lock
  std::optional<Distribution> wait_inside;  // blocking wait while holding it
  std::optional<std::uint16_t> holding;
};
using PhaseSpec = std::variant<CpuPhase, WaitPhase, LockPhase>;
using TaskSpec = std::vector<PhaseSpec>;

struct TaskClass {
  double weight = 1.0;  // normalised by the loader to sum to 1
  TaskSpec task;
};

enum class ArrivalKind { batch, poisson, periodic, closed };
std::string_view to_string(ArrivalKind k);

struct Arrival {
  ArrivalKind kind = ArrivalKind::batch;
  std::optional<std::int64_t> count;  // batch: required; poisson/periodic: count or duration
  std::optional<Duration> duration;   // poisson/periodic/closed
  double rate = 0;                    // poisson: per second
  Duration interval{};                // periodic
  int clients = 0;                    // closed
  Distribution think;                 // closed
};

struct GraphNode {
  std::string id;
  TaskSpec task;
  std::vector<std::string> after;
};

struct ForkJoin {
  int depth = 1;
  int fanout = 2;
  TaskSpec leaf;
  TaskSpec fork;  // empty: no work
  TaskSpec join;  // empty: no work
};

struct GraphSpec {
  std::vector<GraphNode> nodes;       // explicit graph
  std::optional<ForkJoin> fork_join;  // or a generator
};

struct WorkloadSpec {
  std::optional<Arrival> arrival;  // set unless graph
  std::vector<TaskClass> classes;  // one class (weight 1) for `task:`
  std::optional<GraphSpec> graph;
  bool is_graph() const { return graph.has_value(); }
};

// ---- resources ------------------------------------------------------------
// A bounded resource that is not a thread: a connection pool, a semaphore
// (docs/scenarios.md, "Resources"). Indexes into Scenario::resources are the
// phases' `holding`.
struct ResourceSpec {
  std::string name;
  int permits = 1;
};

// ---- backend --------------------------------------------------------------
enum class BackendKind {
  thread_per_task,
  pool,
  work_stealing,
  injecting_pool,
  virtual_threads,
  event_loop,
  tbb,
  asio_pool
};
inline constexpr BackendKind kAllBackends[] = {BackendKind::thread_per_task,
                                               BackendKind::pool,
                                               BackendKind::work_stealing,
                                               BackendKind::injecting_pool,
                                               BackendKind::virtual_threads,
                                               BackendKind::event_loop,
                                               BackendKind::tbb,
                                               BackendKind::asio_pool};
std::string_view to_string(BackendKind k);
std::optional<BackendKind> backend_kind_from(std::string_view name);

enum class RejectPolicy { abort, caller_runs, discard, discard_oldest };
std::string_view to_string(RejectPolicy p);

// One struct for every kind; the loader accepts for each kind only the keys
// of its row in the backend registry (backend_registry.hpp) and fills the
// rest with the defaults given below (docs/scenarios.md, "Backends").
struct BackendSpec {
  BackendKind kind = BackendKind::pool;
  int threads = 0;                    // pool, work-stealing, tbb, asio-pool (default cores)
  int max_threads = 0;                // pool (= threads), injecting-pool (512)
  std::optional<std::int64_t> queue;  // pool: bounded queue capacity; unset = unbounded
  RejectPolicy reject = RejectPolicy::abort;
  Duration keep_alive = std::chrono::seconds(60);
  Bytes stack = 8 * 1024 * 1024;  // thread stack size (reserve)
  int min_threads = 0;            // injecting-pool (default cores)
  Duration injection_delay = std::chrono::milliseconds(500);
  int carriers = 0;  // virtual-threads (default cores)
  int loops = 0;     // event-loop (default cores)

  // OS threads the runtime starts with (before any growth).
  int initial_threads() const;
  // Upper bound of OS worker threads it may ever have, or 0 for "one per task".
  int thread_bound() const;
};

// ---- run and tolerance ----------------------------------------------------
struct RunOptions {
  int reps = 5;
  int warmup = 1;
  Duration timeout = std::chrono::seconds(60);
  int max_threads = 20000;
  // The simulator's event budget (sim/simulate.cpp): 0 = the default,
  // kEventBudgetBase + kEventBudgetPerTask x tasks finished so far; else at
  // most this many events. A run that passes it stops with exit 3 instead of
  // running for hours (threads sharing a CPU for years of CPU time cost an
  // event per slice).
  std::uint64_t max_events = 0;
  // The machine-speed check of every measured repetition (real/speed_check):
  // a repetition whose work loop ran outside 1 +- speed_band of its
  // calibrated speed is run again, up to speed_retries more times, after
  // waiting up to speed_wait for the machine to come back within the band.
  // Its phases are sized at the speed measured right before it, so one
  // whose canaries before and after differ by more than speed_drift (the
  // machine's speed moved during it) is run again too.
  double speed_band = 0.25;
  double speed_drift = 0.10;
  int speed_retries = 2;
  // 40 s: the kernel's paths of this project's VMs stay up to 2x slow for
  // about 20 s, starting a few seconds after a process freed much memory
  // (java-mixed's 5,000 fibers: 03:38 UTC 2026-12-04), so 20 s ended
  // inside that window.
  Duration speed_wait = std::chrono::seconds(40);
};

struct Tolerance {
  double default_tolerance = 0.10;
  std::map<std::string, double, std::less<>> per_metric;
  std::set<std::string, std::less<>> ignored;  // metrics written as `off`: not compared
  double for_metric(std::string_view metric) const;
};

// ---- the scenario ---------------------------------------------------------
struct Scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  MachineProfile machine;
  Limits limits;
  std::vector<ResourceSpec> resources;  // in the order declared
  WorkloadSpec workload;
  BackendSpec backend;
  RunOptions run;
  Tolerance tolerance;
  std::string source_file;  // where it was loaded from

  int cores() const { return effective_cores(machine, limits); }
  double capacity() const { return cpu_capacity(machine, limits); }
};

}  // namespace poolsim
