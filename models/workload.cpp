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
#include <stdexcept>

namespace poolsim {
namespace {

// Streams (see the file comment). Fixed numbers so that the same seed always
// gives the same list.
constexpr std::uint64_t kArrivalStream = 1;
constexpr std::uint64_t kShapeStream = 2;
constexpr std::uint64_t kClientStreamBase = 1ULL << 32;
constexpr std::uint64_t kNodeStreamBase = 1ULL << 33;
// Upper bound on generated tasks: kMaxTasks (models/scenario.hpp).

struct LockTable {
  std::map<std::string, std::pair<std::uint32_t, int>> base;  // name -> (first index, shards)
  std::vector<std::string> names;

  void add(const LockPhase& l) {
    if (base.count(l.name)) {
      if (base[l.name].second != l.shards)
        throw std::invalid_argument("lock '" + l.name + "' is declared with different shard counts");
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

class Builder {
 public:
  Builder(const Scenario& s, Workload& w) : s_(s), w_(w) {}

  LockTable locks;

  // Appends a task with phases sampled from `spec` using `rng`.
  std::uint32_t add_task(const TaskSpec& spec, std::uint16_t cls, Duration arrival, Rng& rng) {
    if (w_.tasks.size() >= static_cast<std::size_t>(kMaxTasks))
      throw std::invalid_argument(fmt::format("the workload would have more than {} tasks", kMaxTasks));
    Task t;
    t.id = static_cast<std::uint32_t>(w_.tasks.size());
    t.cls = cls;
    t.arrival = arrival;
    t.first_phase = static_cast<std::uint32_t>(w_.phases.size());
    for (const auto& p : spec) {
      Phase ph;
      if (auto* c = std::get_if<CpuPhase>(&p)) {
        ph.kind = PhaseKind::cpu;
        ph.duration = c->work.sample(rng);
      } else if (auto* wt = std::get_if<WaitPhase>(&p)) {
        ph.kind = PhaseKind::wait;
        ph.duration = wt->time.sample(rng);
      } else {
        const auto& l = std::get<LockPhase>(p);
        const auto [first, shards] = locks.base.at(l.name);
        ph.kind = PhaseKind::lock;
        ph.lock = first + (shards > 1 ? static_cast<std::uint32_t>(rng.below(static_cast<std::uint64_t>(shards))) : 0);
        ph.duration = l.hold.sample(rng);
        if (l.wait_inside) ph.wait_inside = l.wait_inside->sample(rng);
      }
      w_.phases.push_back(ph);
    }
    t.phase_count = static_cast<std::uint32_t>(w_.phases.size()) - t.first_phase;
    w_.tasks.push_back(t);
    return t.id;
  }

  std::uint16_t pick_class(Rng& rng) const {
    const auto& cl = s_.workload.classes;
    if (cl.size() <= 1) return 0;
    const double u = rng.uniform();
    double acc = 0;
    for (std::size_t i = 0; i < cl.size(); ++i) {
      acc += cl[i].weight;
      if (u < acc) return static_cast<std::uint16_t>(i);
    }
    return static_cast<std::uint16_t>(cl.size() - 1);
  }

 private:
  const Scenario& s_;
  Workload& w_;
};

}  // namespace

double mean_task_seconds(const TaskSpec& t) {
  double sum = 0;
  for (const auto& p : t) {
    if (auto* c = std::get_if<CpuPhase>(&p)) sum += c->work.mean_seconds();
    else if (auto* w = std::get_if<WaitPhase>(&p)) sum += w->time.mean_seconds();
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

void generate_open(const Scenario& s, std::uint64_t seed, Builder& b, Workload& w) {
  const Arrival& a = *s.workload.arrival;
  Rng arrivals = Rng::derive(seed, kArrivalStream);
  Rng shapes = Rng::derive(seed, kShapeStream);
  const auto& classes = s.workload.classes;
  auto emit = [&](Duration at) {
    const auto cls = b.pick_class(shapes);
    b.add_task(classes[cls].task, cls, at, shapes);
  };
  const std::int64_t limit = a.count ? *a.count : std::numeric_limits<std::int64_t>::max();
  const Duration end = a.duration ? *a.duration : Duration::max();
  switch (a.kind) {
    case ArrivalKind::batch:
      for (std::int64_t i = 0; i < limit; ++i) emit(Duration{0});
      break;
    case ArrivalKind::poisson: {
      const double mean_gap_ns = 1e9 / a.rate;
      double t = 0;
      for (std::int64_t i = 0; i < limit; ++i) {
        t += -mean_gap_ns * std::log(arrivals.uniform_open0());
        // Compared as a double before rounding: llround of a time beyond
        // int64 would be undefined.
        if (!(t < static_cast<double>(kMaxDuration.count()))) {
          if (a.duration) break;  // the duration ends first
          past_horizon("the poisson arrivals (task " + std::to_string(i) + ")");
        }
        const Duration at{static_cast<std::int64_t>(std::llround(t))};
        if (at >= end) break;
        emit(at);
      }
      break;
    }
    case ArrivalKind::periodic:
      for (std::int64_t i = 0; i < limit; ++i) {
        if (i > kMaxDuration / a.interval) {
          if (a.duration) break;
          past_horizon("the periodic arrivals (task " + std::to_string(i) + ")");
        }
        const Duration at = a.interval * i;
        if (at >= end) break;
        emit(at);
      }
      break;
    case ArrivalKind::closed:
      break;
  }
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
        "closed workload: {} clients x {} tasks each exceeds {} tasks; shorten the duration", a.clients,
        per_client, kMaxTasks));
  w.clients = static_cast<std::uint32_t>(a.clients);
  w.per_client = static_cast<std::uint32_t>(per_client);
  w.closed_duration = a.duration.value_or(Duration::max());
  for (int c = 0; c < a.clients; ++c) {
    Rng rng = Rng::derive(seed, kClientStreamBase + static_cast<std::uint64_t>(c));
    for (std::uint64_t k = 0; k < per_client; ++k) {
      const Duration think = a.think.sample(rng);
      const auto cls = b.pick_class(rng);
      const auto id = b.add_task(classes[cls].task, cls, Duration{0}, rng);
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
      if (it == index.end()) throw std::invalid_argument("graph node '" + g.nodes[i].id + "' waits for unknown node '" + p + "'");
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
  auto build = [&](auto&& self, int level, const std::string& path) -> std::pair<std::uint32_t, std::uint32_t> {
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
  Wide last_arrival = 0, sum = 0;
  for (const auto& t : w.tasks) {
    last_arrival = std::max<Wide>(last_arrival, t.arrival.count());
    sum += length(t);
    if (last_arrival + sum > horizon)
      past_horizon(
          "the workload's serial length (the last arrival plus every task's phases, up "
          "to task " +
          std::to_string(t.id) + ")");
  }
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

Duration Workload::cpu_of(const Task& t) const {
  Duration sum{0};
  for (const auto& p : phases_of(t))
    if (p.kind != PhaseKind::wait) sum += p.duration;
  return sum;
}

Duration Workload::length_of(const Task& t) const {
  Duration sum{0};
  for (const auto& p : phases_of(t)) sum += p.duration + p.wait_inside;
  return sum;
}

Workload generate_workload(const Scenario& s, std::uint64_t seed) {
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
  for (std::size_t i = 0; i < s.workload.classes.size(); ++i) w.class_names.push_back(fmt::format("class{}", i));

  if (s.workload.graph) {
    w.graph = true;
    w.arrival = ArrivalKind::batch;
    if (s.workload.graph->fork_join) generate_fork_join(*s.workload.graph->fork_join, seed, b, w);
    else generate_explicit_graph(*s.workload.graph, seed, b, w);
    check_horizon(w);
    analyse_graph(w);
    return w;
  }
  if (!s.workload.arrival) throw std::invalid_argument("workload has neither an arrival process nor a graph");
  if (s.workload.classes.empty()) throw std::invalid_argument("workload has no task shape");
  w.arrival = s.workload.arrival->kind;
  if (w.arrival == ArrivalKind::closed) generate_closed(s, seed, b, w);
  else generate_open(s, seed, b, w);
  check_horizon(w);
  analyse_graph(w);  // without edges: total work and the longest single task
  return w;
}

}  // namespace poolsim
