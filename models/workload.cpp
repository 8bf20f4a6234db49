// workload.cpp: scenario + seed -> the task list (see workload.hpp).
//
// Random streams are derived per purpose so that changing one part of a
// scenario does not reshuffle another: stream 1 draws arrival times, stream 2
// draws classes and phase durations of open workloads, each closed client has
// its own stream, each graph node its own. Graph tasks are numbered in a
// topological order (Boost.Graph topological_sort for explicit graphs; the
// fork-join generator emits forks before their subtrees and joins after), so a
// runtime can release them by counting finished predecessors.
#include "models/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "models/assert.hpp"

namespace poolsim {
// The lock names of a workload: not in the anonymous namespace below, since
// TaskStream::State (declared in models/workload.hpp) holds one, and a
// member of internal linkage in a type of external linkage is what GCC's
// -Wsubobject-linkage warns about (in the unity builds, where this file is
// not the main file).
namespace workload_detail {
struct LockTable {
  std::map<std::string, std::pair<std::uint32_t, int>> base;  // name -> (first index, shards)
  std::vector<std::string> names;

  void add(const LockPhase& l) {
    if (base.count(l.name)) {
      if (base[l.name].second != l.shards)
        throw std::invalid_argument("lock '" + l.name +
                                    "' is declared with different shard counts");
      return;
    }
    base[l.name] = {static_cast<std::uint32_t>(names.size()), l.shards};
    if (l.shards <= 1) {
      names.push_back(l.name);
    } else {
      for (int i = 0; i < l.shards; ++i) names.push_back(fmt::format("{}#{}", l.name, i));
    }
  }
  void add_all(const TaskSpec& t) {
    for (const auto& p : t)
      if (auto* l = std::get_if<LockPhase>(&p)) add(*l);
  }
};
}  // namespace workload_detail
using workload_detail::LockTable;

namespace {

// Streams (see the file comment). Fixed numbers so that the same seed always
// gives the same list.
constexpr std::uint64_t kArrivalStream = 1;
constexpr std::uint64_t kShapeStream = 2;
constexpr std::uint64_t kClientStreamBase = 1ULL << 32;
constexpr std::uint64_t kNodeStreamBase = 1ULL << 33;
// Upper bound on generated tasks: kMaxTasks (models/scenario.hpp).

// Samples the phases of one task of shape `spec` from `rng` into `out`
// (appended), and returns its CPU work and its length (every phase).
std::pair<Duration, Duration> sample_phases(const TaskSpec& spec, const LockTable& locks, Rng& rng,
                                            std::vector<Phase>& out) {
  Duration cpu{0}, length{0};
  for (const auto& p : spec) {
    Phase ph;
    std::optional<std::uint16_t> holding;
    if (auto* c = std::get_if<CpuPhase>(&p)) {
      ph.kind = PhaseKind::cpu;
      ph.duration = c->work.sample(rng);
      holding = c->holding;
    } else if (auto* wt = std::get_if<WaitPhase>(&p)) {
      ph.kind = PhaseKind::wait;
      ph.duration = wt->time.sample(rng);
      holding = wt->holding;
    } else {
      const auto& l = std::get<LockPhase>(p);
      holding = l.holding;
      const auto [first, shards] = locks.base.at(l.name);
      ph.kind = PhaseKind::lock;
      ph.lock =
          first + (shards > 1
                       ? static_cast<std::uint32_t>(rng.below(static_cast<std::uint64_t>(shards)))
                       : 0);
      ph.duration = l.hold.sample(rng);
      if (l.wait_inside) ph.wait_inside = l.wait_inside->sample(rng);
    }
    if (holding) ph.resource = *holding;  // no draw: the random streams stay as they were
    // Sums in checked arithmetic: a task whose phases together pass the
    // simulated horizon is refused, never wrapped (docs/scenarios.md, Limits).
    std::int64_t len = 0;
    if (__builtin_add_overflow(length.count(), ph.duration.count(), &len) ||
        __builtin_add_overflow(len, ph.wait_inside.count(), &len) || len > kMaxDuration.count())
      throw std::invalid_argument(
          "a task's sampled phases pass the simulated horizon of 3155760000s (100 years); see "
          "docs/scenarios.md, Limits");
    if (ph.kind != PhaseKind::wait) cpu += ph.duration;
    length = Duration{len};
    out.push_back(ph);
  }
  return {cpu, length};
}

std::uint16_t pick_class(const std::vector<TaskClass>& cl, Rng& rng) {
  if (cl.size() <= 1) return 0;
  const double u = rng.uniform();
  double acc = 0;
  for (std::size_t i = 0; i < cl.size(); ++i) {
    acc += cl[i].weight;
    if (u < acc) return static_cast<std::uint16_t>(i);
  }
  return static_cast<std::uint16_t>(cl.size() - 1);
}

class Builder {
 public:
  Builder(const Scenario& s, Workload& w) : s_(s), w_(w) {}

  LockTable locks;

  // Appends a task with phases sampled from `spec` using `rng`.
  std::uint32_t add_task(const TaskSpec& spec, std::uint16_t cls, Duration arrival, Rng& rng) {
    check_room();
    Task t;
    t.id = static_cast<std::uint32_t>(w_.tasks.size());
    t.cls = cls;
    t.arrival = arrival;
    t.first_phase = static_cast<std::uint32_t>(w_.phases.size());
    sample_phases(spec, locks, rng, w_.phases);
    t.phase_count = static_cast<std::uint32_t>(w_.phases.size()) - t.first_phase;
    w_.tasks.push_back(t);
    return t.id;
  }

  // Appends a task drawn by a TaskStream (its id is already the next one).
  void append(Task t, const std::vector<Phase>& phases) {
    check_room();
    t.first_phase = static_cast<std::uint32_t>(w_.phases.size());
    t.phase_count = static_cast<std::uint32_t>(phases.size());
    w_.phases.insert(w_.phases.end(), phases.begin(), phases.end());
    w_.tasks.push_back(t);
  }

  std::uint16_t pick_class(Rng& rng) const { return poolsim::pick_class(s_.workload.classes, rng); }

 private:
  void check_room() const {
    if (w_.tasks.size() >= kMaxTasks)
      throw std::invalid_argument(
          fmt::format("the workload would have more than {} tasks", kMaxTasks));
  }
  const Scenario& s_;
  Workload& w_;
};

}  // namespace

double mean_task_seconds(const TaskSpec& t) {
  double sum = 0;
  for (const auto& p : t) {
    if (auto* c = std::get_if<CpuPhase>(&p))
      sum += c->work.mean_seconds();
    else if (auto* w = std::get_if<WaitPhase>(&p))
      sum += w->time.mean_seconds();
    else {
      const auto& l = std::get<LockPhase>(p);
      sum += l.hold.mean_seconds() + (l.wait_inside ? l.wait_inside->mean_seconds() : 0.0);
    }
  }
  return sum;
}

std::uint64_t closed_tasks_per_client(const Arrival& a, double mean_task) {
  // A cycle is think + service; with no contention a client completes at
  // most duration / cycle tasks. 2x margin plus 16 covers the variance of
  // short runs; a client that still runs out stops (Workload::per_client).
  const double cycle = std::max(1e-6, mean_task + a.think.mean_seconds());
  const double duration = to_seconds(a.duration.value_or(Duration{0}));
  // duration <= kMaxDuration and cycle >= 1us: at most ~6.3e15, exact in uint64.
  std::uint64_t per_client = static_cast<std::uint64_t>(std::ceil(duration / cycle)) * 2 + 16;
  if (a.count)
    per_client =
        std::min<std::uint64_t>(per_client, static_cast<std::uint64_t>(std::max<std::int64_t>(
                                                1, (*a.count + a.clients - 1) / a.clients)));
  return per_client;
}

std::uint64_t fork_join_nodes(int fanout, int depth) {
  // depth levels of forks: 1 + f + ... + f^(depth-1) forks, as many joins,
  // f^depth leaves.
  constexpr std::uint64_t kSat = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t level = 1, internal = 0;
  for (int i = 0; i < depth; ++i) {
    internal = internal > kSat - level ? kSat : internal + level;
    level = level > kSat / static_cast<std::uint64_t>(fanout)
                ? kSat
                : level * static_cast<std::uint64_t>(fanout);
  }
  if (internal > kSat / 2 || level > kSat - 2 * internal) return kSat;
  return level + 2 * internal;
}

namespace {

[[noreturn]] void past_horizon(const std::string& what) {
  throw std::invalid_argument(what +
                              " passes the simulated horizon of 3155760000s (100 years); see "
                              "docs/scenarios.md, Limits");
}

// The list form of an open arrival process: its stream, collected.
void generate_open(const Scenario& s, std::uint64_t seed, Builder& b, Workload& w) {
  TaskStream stream(s, seed, b.locks.names);
  // A known count sizes the list at once (no regrowth copying it, no pages
  // touched twice); capped, as a duration or the horizon may end it sooner.
  constexpr std::uint64_t kReserveCap = std::uint64_t{1} << 21;
  if (stream.limit() != std::numeric_limits<std::uint64_t>::max()) {
    std::size_t per_task = 1;
    for (const auto& c : s.workload.classes) per_task = std::max(per_task, c.task.size());
    const auto n = static_cast<std::size_t>(std::min(stream.limit(), kReserveCap));
    w.tasks.reserve(n);
    w.phases.reserve(n * per_task);
  }
  Task t;
  std::vector<Phase> phases;
  while (stream.next(t, phases)) b.append(t, phases);
  w.per_client = 0;
}

void generate_closed(const Scenario& s, std::uint64_t seed, Builder& b, Workload& w) {
  const Arrival& a = *s.workload.arrival;
  const auto& classes = s.workload.classes;
  double mean_task = 0;
  for (const auto& c : classes) mean_task += c.weight * mean_task_seconds(c.task);
  const std::uint64_t per_client = closed_tasks_per_client(a, mean_task);
  if (per_client * static_cast<std::uint64_t>(a.clients) > static_cast<std::uint64_t>(kMaxTasks))
    throw std::invalid_argument(fmt::format(
        "closed workload: {} clients x {} tasks each exceeds {} tasks; shorten the duration",
        a.clients, per_client, kMaxTasks));
  w.clients = static_cast<std::uint32_t>(a.clients);
  w.per_client = static_cast<std::uint32_t>(per_client);
  w.closed_duration = a.duration.value_or(Duration::max());
  // Client c's k-th task is task k * clients + c (closed_task_id): the
  // tasks in flight at any moment, one per client, lie side by side, as a
  // load generator keeps its clients' state, and not one client's block
  // apart (the real runner's records and the descriptors it reads at each
  // hand-over stay within a few pages: docs/real-backends.md). Each client
  // draws from its own stream, in its own order, whatever the layout.
  std::vector<Rng> rngs;
  rngs.reserve(static_cast<std::size_t>(a.clients));
  for (int c = 0; c < a.clients; ++c)
    rngs.push_back(Rng::derive(seed, kClientStreamBase + static_cast<std::uint64_t>(c)));
  for (std::uint64_t k = 0; k < per_client; ++k) {
    for (int c = 0; c < a.clients; ++c) {
      Rng& rng = rngs[static_cast<std::size_t>(c)];
      const Duration think = a.think.sample(rng);
      const auto cls = b.pick_class(rng);
      const auto id = b.add_task(classes[cls].task, cls, Duration{0}, rng);
      POOLSIM_ASSERT(id == closed_task_id(w, static_cast<std::uint32_t>(c), k),
                     "a closed client's task is out of place");
      w.tasks[id].think = think;
      w.tasks[id].client = static_cast<std::uint32_t>(c);
    }
  }
}

// Explicit graph: number nodes topologically, then link successors.
void generate_explicit_graph(const GraphSpec& g, std::uint64_t seed, Builder& b, Workload& w) {
  const auto n = g.nodes.size();
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[g.nodes[i].id] = i;
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  G graph(n);
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& p : g.nodes[i].after) {
      auto it = index.find(p);
      if (it == index.end())
        throw std::invalid_argument("graph node '" + g.nodes[i].id + "' waits for unknown node '" +
                                    p + "'");
      boost::add_edge(it->second, i, graph);
    }
  std::vector<std::size_t> reverse_order;
  try {
    boost::topological_sort(graph, std::back_inserter(reverse_order));
  } catch (const boost::not_a_dag&) {
    throw std::invalid_argument("the task graph has a cycle");
  }
  std::vector<std::uint32_t> task_of(n);
  for (auto it = reverse_order.rbegin(); it != reverse_order.rend(); ++it) {
    const auto i = *it;
    Rng rng = Rng::derive(seed, kNodeStreamBase + i);
    task_of[i] = b.add_task(g.nodes[i].task, 0, Duration{0}, rng);
    w.node_ids.push_back(g.nodes[i].id);
  }
  std::vector<std::vector<std::uint32_t>> succ(n);
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& p : g.nodes[i].after) succ[task_of[index[p]]].push_back(task_of[i]);
  for (auto& t : w.tasks) {
    auto& s = succ[t.id];
    std::sort(s.begin(), s.end());
    t.first_succ = static_cast<std::uint32_t>(w.successors.size());
    t.succ_count = static_cast<std::uint32_t>(s.size());
    for (auto x : s) {
      w.successors.push_back(x);
      ++w.tasks[x].pred_count;
    }
  }
}

// fork_join{depth, fanout}: fork -> fanout subtrees -> join, recursively;
// leaves at depth. Emitted in topological order.
void generate_fork_join(const ForkJoin& fj, std::uint64_t seed, Builder& b, Workload& w) {
  const std::uint64_t nodes = fork_join_nodes(fj.fanout, fj.depth);
  if (nodes > static_cast<std::uint64_t>(kMaxTasks))
    throw std::invalid_argument(
        fmt::format("fork_join with fanout {} and depth {} has {} nodes, more than the {}-task cap",
                    fj.fanout, fj.depth, nodes, kMaxTasks));
  std::vector<std::vector<std::uint32_t>> succ;
  std::uint64_t node = 0;
  auto add = [&](const TaskSpec& spec, const std::string& id) {
    Rng rng = Rng::derive(seed, kNodeStreamBase + node++);
    const auto t = b.add_task(spec, 0, Duration{0}, rng);
    w.node_ids.push_back(id);
    succ.emplace_back();
    return t;
  };
  // Returns (entry, exit) of the subtree.
  auto build = [&](auto&& self, int level,
                   const std::string& path) -> std::pair<std::uint32_t, std::uint32_t> {
    if (level == fj.depth) {
      const auto leaf = add(fj.leaf, "leaf" + path);
      return {leaf, leaf};
    }
    const auto fork = add(fj.fork, "fork" + path);
    std::vector<std::uint32_t> exits;
    for (int i = 0; i < fj.fanout; ++i) {
      const auto [entry, exit] = self(self, level + 1, path + "." + std::to_string(i));
      succ[fork].push_back(entry);
      exits.push_back(exit);
    }
    const auto join = add(fj.join, "join" + path);
    for (auto e : exits) succ[e].push_back(join);
    return {fork, join};
  };
  build(build, 0, "");
  for (auto& t : w.tasks) {
    t.first_succ = static_cast<std::uint32_t>(w.successors.size());
    t.succ_count = static_cast<std::uint32_t>(succ[t.id].size());
    for (auto x : succ[t.id]) {
      w.successors.push_back(x);
      ++w.tasks[x].pred_count;
    }
  }
}

// The serial length of the workload, in 128-bit nanoseconds so that no sum
// can overflow: open arrivals and graphs run at most one task after another
// from the last arrival; a closed client runs its own tasks one after
// another. Refused beyond kMaxDuration, which keeps every later Duration sum
// (analyse_graph, the simulator's clock) inside int64.
void check_horizon(const Workload& w) {
  __extension__ typedef __int128 Wide;
  const Wide horizon = kMaxDuration.count();
  auto length = [&](const Task& t) {
    Wide sum = t.think.count();
    for (const auto& p : w.phases_of(t)) sum += Wide{p.duration.count()} + p.wait_inside.count();
    return sum;
  };
  if (w.arrival == ArrivalKind::closed && !w.graph) {
    std::vector<Wide> per_client(w.clients);
    for (const auto& t : w.tasks) {
      per_client[t.client] += length(t);
      if (per_client[t.client] > horizon)
        past_horizon("closed client " + std::to_string(t.client) + "'s tasks (up to task " +
                     std::to_string(t.id) + ", run one after another)");
    }
    return;
  }
  OpenSerialLength serial;
  for (const auto& t : w.tasks)
    if (!serial.add(t, w.phases_of(t))) serial.check();
}

// Work and critical path of a graph (tasks are in topological order).
void analyse_graph(Workload& w) {
  std::vector<Duration> finish(w.tasks.size());
  Duration work{0}, longest{0};
  // A task starts when its last predecessor ends; process in order, pushing
  // each task's end to its successors' earliest starts.
  std::vector<Duration> earliest(w.tasks.size());
  for (const auto& t : w.tasks) {
    work += w.cpu_of(t);
    finish[t.id] = earliest[t.id] + w.length_of(t);
    longest = std::max(longest, finish[t.id]);
    for (auto s : w.successors_of(t)) earliest[s] = std::max(earliest[s], finish[t.id]);
  }
  w.total_work = work;
  w.critical_path = longest;
}

}  // namespace

// ---- TaskStream --------------------------------------------------------------

struct TaskStream::State {
  ArrivalKind kind = ArrivalKind::batch;
  std::vector<TaskClass> classes;
  LockTable locks;
  Rng arrivals, shapes;
  double mean_gap_ns = 0;  // poisson
  double t = 0;            // poisson: the last arrival, unrounded
  Duration interval{};     // periodic
};

TaskStream::TaskStream(const Scenario& s, std::uint64_t seed, std::vector<std::string> lock_names)
    : st_(std::make_unique<State>(State{ArrivalKind::batch,
                                        s.workload.classes,
                                        {},
                                        Rng::derive(seed, kArrivalStream),
                                        Rng::derive(seed, kShapeStream)})) {
  if (!s.workload.arrival) throw std::invalid_argument("workload has no arrival process");
  const Arrival& a = *s.workload.arrival;
  if (a.kind == ArrivalKind::closed)
    throw std::invalid_argument("closed arrivals are not a stream");
  if (st_->classes.empty()) throw std::invalid_argument("workload has no task shape");
  for (const auto& c : st_->classes) st_->locks.add_all(c.task);
  if (st_->locks.names != lock_names)
    throw std::logic_error("TaskStream: lock table differs from the workload's");
  st_->kind = a.kind;
  if (a.kind == ArrivalKind::poisson) st_->mean_gap_ns = 1e9 / a.rate;
  st_->interval = a.interval;
  limit_ = a.count ? static_cast<std::uint64_t>(std::max<std::int64_t>(0, *a.count))
                   : std::numeric_limits<std::uint64_t>::max();
  end_ = a.duration ? *a.duration : Duration::max();
}

TaskStream::~TaskStream() = default;

bool TaskStream::next(Task& t, std::vector<Phase>& phases) {
  if (done_ || drawn_ >= limit_) {
    done_ = true;
    return false;
  }
  State& st = *st_;
  Duration at{0};
  switch (st.kind) {
    case ArrivalKind::batch:
      break;
    case ArrivalKind::poisson:
      st.t += -st.mean_gap_ns * std::log(st.arrivals.uniform_open0());
      // Compared as a double before rounding: llround of a time beyond int64
      // would be undefined.
      if (!(st.t < static_cast<double>(kMaxDuration.count()))) {
        if (end_ != Duration::max()) {  // the duration ends first
          done_ = true;
          return false;
        }
        past_horizon("the poisson arrivals (task " + std::to_string(drawn_) + ")");
      }
      at = Duration{static_cast<std::int64_t>(std::llround(st.t))};
      break;
    case ArrivalKind::periodic:
      if (drawn_ > static_cast<std::uint64_t>(kMaxDuration / st.interval)) {
        if (end_ != Duration::max()) {
          done_ = true;
          return false;
        }
        past_horizon("the periodic arrivals (task " + std::to_string(drawn_) + ")");
      }
      at = st.interval * static_cast<std::int64_t>(drawn_);
      break;
    case ArrivalKind::closed:
      break;
  }
  if (at >= end_) {
    done_ = true;
    return false;
  }
  // Task ids are 32-bit, one value kept as "no task" (TraceSpan::kNoTask).
  if (drawn_ >= std::numeric_limits<std::uint32_t>::max() - 1)
    throw std::invalid_argument(fmt::format("the workload would have more than {} tasks",
                                            std::numeric_limits<std::uint32_t>::max() - 1));
  t = Task{};
  t.id = static_cast<std::uint32_t>(drawn_);
  t.cls = pick_class(st.classes, st.shapes);
  t.arrival = at;
  phases.clear();
  const auto [cpu, length] = sample_phases(st.classes[t.cls].task, st.locks, st.shapes, phases);
  t.phase_count = static_cast<std::uint32_t>(phases.size());
  // Checked like the list's serial length (check_horizon): the total work of
  // the tasks drawn so far stays within the simulated horizon.
  if (cpu > kMaxDuration - total_work_)
    past_horizon("the workload's total work (up to task " + std::to_string(drawn_) + ")");
  total_work_ += cpu;
  longest_ = std::max(longest_, length);
  ++drawn_;
  if (drawn_ <= tap_until_ && tap_) tap_(t, phases);
  return true;
}

std::size_t Workload::task_count() const {
  return streamed() ? static_cast<std::size_t>(stream->drawn()) : tasks.size();
}

void Workload::sync_stream() {
  if (!streamed()) return;
  total_work = stream->total_work();
  critical_path = stream->longest_task();
}

Duration Workload::cpu_of(std::span<const Phase> phases) {
  Duration sum{0};
  for (const auto& p : phases)
    if (p.kind != PhaseKind::wait) sum += p.duration;
  return sum;
}

Duration Workload::length_of(std::span<const Phase> phases) {
  Duration sum{0};
  for (const auto& p : phases) sum += p.duration + p.wait_inside;
  return sum;
}

bool OpenSerialLength::add(const Task& t, std::span<const Phase> phases) {
  if (past_) return false;
  Wide length = t.think.count();
  for (const auto& p : phases) length += Wide{p.duration.count()} + p.wait_inside.count();
  last_arrival_ = std::max<Wide>(last_arrival_, t.arrival.count());
  sum_ += length;
  if (last_arrival_ + sum_ <= Wide{kMaxDuration.count()}) return true;
  past_ = true;
  first_past_ = t.id;
  return false;
}

void OpenSerialLength::check() const {
  if (!past_) return;
  past_horizon(
      "the workload's serial length (the last arrival plus every task's phases, up "
      "to task " +
      std::to_string(first_past_) + ")");
}

Workload generate_workload(const Scenario& s, std::uint64_t seed, GenerateOptions opt) {
  Workload w;
  Builder b(s, w);
  for (const auto& c : s.workload.classes) b.locks.add_all(c.task);
  if (s.workload.graph) {
    const auto& g = *s.workload.graph;
    for (const auto& n : g.nodes) b.locks.add_all(n.task);
    if (g.fork_join) {
      b.locks.add_all(g.fork_join->leaf);
      b.locks.add_all(g.fork_join->fork);
      b.locks.add_all(g.fork_join->join);
    }
  }
  w.lock_names = b.locks.names;
  for (std::size_t i = 0; i < s.workload.classes.size(); ++i)
    w.class_names.push_back(fmt::format("class{}", i));

  if (s.workload.graph) {
    w.graph = true;
    w.arrival = ArrivalKind::batch;
    if (s.workload.graph->fork_join)
      generate_fork_join(*s.workload.graph->fork_join, seed, b, w);
    else
      generate_explicit_graph(*s.workload.graph, seed, b, w);
    check_horizon(w);
    analyse_graph(w);
    return w;
  }
  if (!s.workload.arrival)
    throw std::invalid_argument("workload has neither an arrival process nor a graph");
  if (s.workload.classes.empty()) throw std::invalid_argument("workload has no task shape");
  w.arrival = s.workload.arrival->kind;
  if (w.arrival != ArrivalKind::closed && opt.stream) {
    w.stream = std::make_shared<TaskStream>(s, seed, w.lock_names);
    return w;
  }
  if (w.arrival == ArrivalKind::closed)
    generate_closed(s, seed, b, w);
  else
    generate_open(s, seed, b, w);
  check_horizon(w);
  analyse_graph(w);  // without edges: total work and the longest single task
  return w;
}

}  // namespace poolsim
