// program_model.hpp: from a program's scheduler transitions to a model of
// its work: thread groups, units of work, hand-offs, the arrival process and
// the pool that serves it.
//
// Mechanism. A thread's time is a sequence of run intervals and off-CPU
// intervals. An off-CPU interval is either runnable-but-waiting (preempted, or
// woken and not yet running: the machine's doing, kept apart as run-queue
// delay) or a block that a wake-up ends. A wake-up by another thread of the
// program is a hand-off: it starts a unit of work in the woken thread, and the
// thread's previous unit ended when it blocked before that wake. Wake-ups by
// an interrupt (a timer, I/O), by threads outside the program or by nobody
// the trace names are waits inside the unit. So a unit is: CPU burst, wait,
// CPU burst, ..., CPU burst; its CPU bursts and waits are the samples of the
// group's empirical distributions.
// Groups: threads are grouped by name with the numeric suffix stripped
// ("worker-3" -> "worker"), split by role: the process leader apart, and by
// the shape of the wake graph (how many threads a thread hands work to and
// takes work from: 0, 1, many), refined once by the groups of those partners
// (one round of colour refinement), so an unnamed program's generator,
// workers and main thread separate although they share a comm. Where the
// wake graph is symmetric (an unnamed request/reply program over one shared
// pipe: clients and workers both hand work to many and take work from many)
// the threads of one name that hand work to each other are split by CPU at
// a gap of kRoleCpuGap or more, and keep that role: the workers run the
// requests. Idle threads
// of the pool's name (no hand-offs either way) join the pool, and so do all
// threads of a named pool's pattern (one not the process's own name).
// The backend is the group with the most units (ties: more threads); the
// groups that hand it work are its submitters; the loop is closed when the
// pool's completions wake the submitters back (replies) for at least
// kClosedReplyShare of its units. Open: inter-arrival times of units give a
// rate (periodic when their coefficient of variation is under
// kPeriodicMaxCv, else Poisson). Closed: clients = round(X * (R + Z)) by
// Little's law, X the request rate, R the mean unit duration, Z the mean
// time from a reply waking the submitter to its next block (by then it has
// sent the next request; its next hand-off may be later, when a worker frees)
// less its CPU in between (already in each task).
// Two passes: while streaming, each program thread keeps one compact Block
// per block (when, woken by whom, CPU and run-queue time of the run before
// it) and one Mark per wake-up it gives another program thread; after the
// stream the groups are known and the blocks of the backend's threads are cut
// into units: a wake-up by another group of the program is a hand-off, a
// wake-up by a thread of the same group (a lock released by a fellow worker)
// is lock contention (the blocked time is reported, the CPU before and after
// it is one burst), anything else is a wait of the unit; a reply (a Mark on a
// submitter) ends the unit there, and what the worker runs next, without a
// hand-off, is the next unit (closed loops: the submitter queues the next
// request while the worker is still running, so no hand-off is seen).
// Saturation: a hand-off to a worker that is already running is invisible (no
// wake-up), so a worker that takes queued work without blocking runs it in
// its current unit. Units whose wait count is r >= 2 times the most common
// count w* (w* >= 1) are split into r requests of w* waits (the burst at each
// cut halved), so the request count and CPU per request survive a saturated
// recording; with w* = 0 (requests without waits) they cannot be told apart.
// Invariants: memory is O(threads + blocks of the program's threads), never
// O(events); a unit still open at the end of the trace is dropped and
// counted. The submitters' CPU is folded into each request as a first CPU
// phase.
// Left out: a lock released by a submitter to a worker looks like a hand-off.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trace/perf_text.hpp"
#include "trace/sched_events.hpp"

namespace poolsim::trace {

// A hand-off share above which the loop counts as closed (replies wake the
// submitter back); between open loops (0 replies) and closed ones (one reply
// per unit, fewer when the submitter is already awake), chosen in between.
inline constexpr double kClosedReplyShare = 0.2;
// Inter-arrival coefficient of variation under which arrivals are periodic
// (a fixed-rate generator shows ~0.1 here; Poisson shows 1).
inline constexpr double kPeriodicMaxCv = 0.5;
// A wake edge counts for a thread's role when it carries at least this many
// wake-ups and this share of the thread's wake-up traffic (a join at exit,
// one wake-up, does not; a worker that replied twice in a short trace does).
inline constexpr std::int64_t kEdgeMinCount = 2;
// The CPU ratio between the busiest "light" and the least busy "heavy"
// thread of one wake-graph shape above which they are told apart as clients
// and workers (ProgramImporter::role_base): clients of a request/reply
// program spend a few microseconds per request, workers its whole CPU.
inline constexpr double kRoleCpuGap = 8.0;
inline constexpr double kEdgeMinShare = 0.05;

// Which threads are the program.
struct ProgramSelector {
  int pid = -1;      // this process (or thread) and its descendants
  std::string comm;  // or the threads first seen with this name, and descendants
  // Neither: the task perf forked for the command ("perf-exec") and its descendants.
};

// One block of a thread, and the run segment that it ended.
struct Block {
  std::int64_t off_at = 0, wake_at = 0;
  std::int64_t cpu = 0;   // CPU of the segment (since the previous wake-up)
  std::int64_t runq = 0;  // runnable-but-waiting time in the segment
  int waker = kWakerUnknown;
};

// A wake-up a thread gave another thread of the program, placed in its own
// run: during segment `segment` (= the number of blocks before it), after
// `cpu` of that segment's CPU. A backend thread's wake-up of a submitter is
// a reply: the end of a request, even when the worker then takes the next
// request without blocking.
struct Mark {
  std::int64_t time = 0;
  std::int64_t cpu = 0;
  std::size_t segment = 0;
  int wakee = 0;
};

// One unit of a backend thread: bursts b0..bk and the k waits between them.
struct Unit {
  std::int64_t start = 0, end = 0, runq = 0;
  std::vector<std::int64_t> bursts, waits;
  bool by_reply = false;       // started by a reply, not a hand-off
  bool ends_by_reply = false;  // ended by a reply, not by blocking
  std::int64_t cpu() const;
};

// A unit without waits, with less CPU than this share of the median unit's,
// is the fragment of a double wake-up (a hand-off or a reply, then the lock
// the woken thread waits for: the queue's mutex, Python's GIL): it is folded
// into the next unit of its thread; in a closed loop whose replied units
// have waits, so is every unit without waits. A
// workload whose requests include some without waits and under a tenth of
// the median CPU loses those (they join the next request).
inline constexpr double kReplyFragmentShare = 0.1;

struct ThreadSummary {
  int tid = 0;
  int pid = -1;
  std::string comm;
  std::string group;  // empty: not mapped to the backend or its submitters
  std::int64_t cpu = 0, runq = 0;
  std::int64_t units = 0;
  std::int64_t handoffs_in = 0, handoffs_out = 0;
  bool leader = false;
};

struct GroupModel {
  std::string name;
  std::vector<int> tids;
  std::vector<std::int64_t> bursts;  // CPU bursts of the requests, ns
  std::vector<int> burst_pos;        // each burst's place in its request (0: the first)
  std::vector<std::int64_t> waits;   // waits inside the requests, ns
  std::map<int, std::int64_t> requests_by_waits;
  std::int64_t cpu = 0;
  std::int64_t handoffs_in = 0, handoffs_out = 0;
};

// Kernel events inside a group's recorded run intervals: dispatches (a
// switch in), migrations (a switch in on another CPU than the last), and the
// wake-ups it gave the other modelled roles (hand-offs, replies), of which
// `remote_wakes` went to another CPU (an IPI).
struct KernelEvents {
  std::int64_t dispatches = 0, migrations = 0, wakes = 0, remote_wakes = 0;
};

struct ProgramModel {
  ReadStats read;
  std::string root;  // "comm[tid]" of the program's first task
  std::int64_t program_threads = 0;
  std::int64_t transitions = 0, program_transitions = 0;
  std::vector<GroupModel> groups;  // backend first, then submitters
  int backend = 0;
  std::vector<int> submitters;  // indices into groups
  std::vector<ThreadSummary> threads;
  std::vector<ThreadSummary> unmapped;
  // Units and requests of the backend.
  std::int64_t units = 0, requests = 0, open_units_dropped = 0;
  int modal_waits = 0;  // w*: the most common wait count of a unit
  std::int64_t unit_cpu = 0, unit_runq = 0, unit_time = 0;  // sums over units, ns
  std::int64_t lock_waits = 0, lock_wait_time = 0;          // intra-group wake-ups
  std::int64_t reply_fragments = 0;                         // folded units (kReplyFragmentShare)
  // Arrival process.
  bool closed = false;
  std::int64_t span = 0;         // first unit start to last unit end, ns
  double rate = 0;               // requests per second
  double interarrival_mean = 0;  // s, between hand-offs
  double interarrival_cv = 0;
  std::int64_t replies = 0;           // pool -> submitter wake-ups
  double think = 0;                   // s, closed: reply to next hand-off
  double unit_duration = 0;           // s, mean start-to-end of a unit
  int clients = 0;                    // closed
  double submit_cpu_per_request = 0;  // s, the submitters' CPU folded into each request
  // What the kernel did inside the recorded run intervals, which the
  // simulator models again (net_kernel_costs): the backend's and the
  // submitters' totals.
  KernelEvents backend_kernel, submit_kernel;
  // Set by net_kernel_costs: the CPU per request taken out of the bursts
  // and out of the submitters' CPU (s), and the profile it came from.
  double netted_backend = 0, netted_submit = 0, netted_wait = 0;
  std::string netted_profile;
};

// The kernel costs of a machine profile that a recorded run interval
// already contains and the simulator charges again (docs/simulator.md):
// per dispatch switch_cost + cache_refill, per migration migration_cost,
// per wake-up the waker's wake_cost plus wake_ipi when the woken thread goes
// to another CPU, and OS noise, noise_share of a busy CPU's time.
struct KernelCosts {
  std::string profile;
  std::int64_t dispatch = 0, migration = 0, wake = 0, ipi = 0;  // ns
  // A wait phase is a timed sleep in the simulator: it ends timer_slack
  // after its duration. A recorded wait already holds the real slack.
  std::int64_t timer_slack = 0;  // ns
  double noise_share = 0;        // stolen time per unit of busy time
};

// Takes out of the backend's bursts and the submitters' CPU per request
// what the simulator will add back for the condition it simulates: a burst b
// becomes b / (1 + noise_share) less its share of the group's kernel events
// per request at `c`'s costs, and each wait less timer_slack (never below
// 0). Records the amounts in `m`.
void net_kernel_costs(ProgramModel& m, const KernelCosts& c);

class ProgramImporter {
 public:
  explicit ProgramImporter(ProgramSelector sel);
  void on(const Transition& t);
  // Builds the model; throws TraceError(source: ...) when the trace holds no
  // program or no hand-off.
  ProgramModel finish(const ReadStats& stats, const std::string& source);

 private:
  // Per-thread state machine (one per thread of the program).
  struct Thread {
    int tid = 0;
    int pid = -1;
    std::string comm;
    bool running = false;
    std::int64_t on_since = 0;
    bool off_valid = false;  // off CPU since off_at, in off_state
    std::int64_t off_at = 0;
    OffState off_state = OffState::unknown;
    bool woken = false;
    std::int64_t woken_at = 0;
    std::int64_t seg_cpu = 0, seg_runq = 0;  // the run segment since the last wake-up
    std::int64_t cpu = 0, runq = 0;
    // Kernel work inside its run intervals (KernelEvents).
    std::int64_t dispatches = 0, migrations = 0;
    int last_cpu = -1;
    std::vector<Block> blocks;
    std::vector<Mark> marks;  // wake-ups this thread gave other program threads
  };
  Thread* program_thread(const Transition& t);
  bool is_program(int tid) const;
  void block_ends(Thread& th, std::int64_t wake_at, int waker);
  std::vector<Unit> units_of(const std::set<int>& backend, const std::set<int>& submitters,
                             ProgramModel& m);
  // Base names for colour refinement, with clients and workers of one
  // wake-graph shape told apart by their CPU (see program_model.cpp).
  // The program's first process exec'd: its launcher's processes leave.
  void launcher_done(const Transition& t);
  KernelEvents kernel_events(const std::set<int>& tids, const std::set<int>& pool,
                             const std::map<std::pair<int, int>, std::int64_t>& edges);
  // Wake-ups between program threads that went to another CPU, per (waker, wakee).
  std::map<std::pair<int, int>, std::int64_t> remote_edges_;
  std::map<int, std::string> role_base(const std::vector<int>& tids,
                                       const std::map<int, std::set<int>>& wakees,
                                       const std::map<int, std::string>& base,
                                       const std::map<int, bool>& leader);
  void think_times(ProgramModel& m, const std::vector<int>& subs,
                   const std::vector<std::vector<int>>& groups, const std::set<int>& backend);
  void name_groups(ProgramModel& m, std::vector<std::vector<int>>& groups, int backend,
                   const std::vector<int>& subs, GroupModel bg,
                   const std::map<int, std::string>& base, const std::set<int>& backend_tids);

  ProgramSelector sel_;
  std::map<int, Thread> threads_;
  std::map<int, bool> program_;  // tid -> in the program
  int root_ = -1;
  std::int64_t transitions_ = 0, program_transitions_ = 0;
};

// The group name of a comm: the numeric suffix and its separators stripped.
std::string base_name(const std::string& comm);

// `s` lower-cased with every run of other characters as one '-' (scenario
// and group names: [a-z0-9-]); `fallback` when nothing is left.
std::string name_slug(const std::string& s, const std::string& fallback);

}  // namespace poolsim::trace
