// graph_reader.cpp: the `workload.graph:` section: explicit nodes or a fork-join generator.
//
// Node ids are unique, every `after:` names a node, and the graph is acyclic
// (a cycle is reported at the `after:` entry that closes it, with the nodes
// on it). A fork-join generator's node count is checked against the task cap
// before the generator allocates.
#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/section_readers.hpp"
#include "models/workload.hpp"

namespace poolsim::loader {

using yaml::MapReader;
using yaml::Val;

namespace {

// Cycle detection over `after:` edges with Boost.Graph: a DFS back edge
// (u -> v with v still on the DFS stack) closes a cycle v -> ... -> u -> v.
struct CycleFound {
  std::vector<std::size_t> cycle;
};
struct CycleVisitor : boost::default_dfs_visitor {
  std::vector<std::size_t>* stack;
  template <class V, class G>
  void discover_vertex(V u, const G&) {
    stack->push_back(u);
  }
  template <class V, class G>
  void finish_vertex(V, const G&) {
    stack->pop_back();
  }
  template <class E, class G>
  void back_edge(E e, const G& g) {
    const std::size_t from = boost::source(e, g), to = boost::target(e, g);
    auto it = std::find(stack->begin(), stack->end(), to);
    std::vector<std::size_t> cyc(it, stack->end());
    if (cyc.empty() || cyc.back() != from) cyc.push_back(from);
    cyc.push_back(to);
    throw CycleFound{cyc};
  }
};

// workload.graph.fork_join: the generator's shape and tasks; its node count
// is checked against the task cap before the generator allocates.
ForkJoin read_fork_join(const Val& fj) {
  MapReader fr(fj, {"depth", "fanout", "leaf", "fork", "join"}, "a fork-join generator");
  ForkJoin f;
  constexpr auto kIntMax = std::numeric_limits<int>::max();
  const auto dv = fr.require("depth", "levels of forking");
  f.depth = static_cast<int>(yaml::integer(dv, 1, 64, "depth"));
  const auto fv = fr.require("fanout", "children per fork");
  f.fanout = static_cast<int>(yaml::integer(fv, 1, kIntMax, "fanout"));
  // Checked before the generator allocates: forks + joins + leaves.
  const std::uint64_t nodes = fork_join_nodes(f.fanout, f.depth);
  if (nodes > static_cast<std::uint64_t>(kMaxTasks))
    fv.fail("fanout " + std::to_string(f.fanout) + " and depth " + std::to_string(f.depth) +
            " make " +
            (nodes == std::numeric_limits<std::uint64_t>::max() ? std::string("more than 2^64")
                                                                : std::to_string(nodes)) +
            " nodes (fanout^depth leaves plus a fork and a join per inner node), more than the " +
            std::to_string(kMaxTasks) + "-task cap");
  f.leaf = read_task(fr.require("leaf", "the work of each leaf, e.g. [{cpu: 50us}]"));
  if (auto x = fr.get("fork")) f.fork = read_task(*x);
  if (auto x = fr.get("join")) f.join = read_task(*x);
  return f;
}

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// Fails at the `after:` entry that closes a cycle of `graph`, if there is one;
// `edge_at` maps each edge to the entry that made it.
void check_acyclic(const Graph& graph, const GraphSpec& g,
                   const std::map<std::pair<std::size_t, std::size_t>, Val>& edge_at) {
  std::vector<std::size_t> stack;
  CycleVisitor vis;
  vis.stack = &stack;
  try {
    boost::depth_first_search(graph, boost::visitor(vis));
  } catch (const CycleFound& c) {
    // A long cycle is shown by its first and last few nodes.
    constexpr std::size_t kShown = 8;
    std::vector<std::string> names;
    for (std::size_t k = 0; k < c.cycle.size(); ++k) {
      if (c.cycle.size() > 2 * kShown && k == kShown) {
        names.push_back("... (" + std::to_string(c.cycle.size() - 2 * kShown) + " more) ...");
        k = c.cycle.size() - kShown;
      }
      names.push_back(g.nodes[c.cycle[k]].id);
    }
    // Blame the `after:` entry that closes the cycle.
    const std::size_t from = c.cycle[c.cycle.size() - 2], to = c.cycle.back();
    const Val& at = edge_at.at({from, to});
    at.fail("the graph has a cycle through node '" + g.nodes[to].id +
            "': " + yaml::join(names, " -> ") + " (each arrow: runs before)");
  }
}

}  // namespace

GraphSpec read_graph(const Val& v) {
  MapReader r(v, {"nodes", "fork_join"}, "a task graph");
  GraphSpec g;
  if (r.has("nodes") == r.has("fork_join"))
    v.fail(r.has("nodes")
               ? "give either graph.nodes or graph.fork_join, not both"
               : "a graph needs `nodes:` (explicit nodes) or `fork_join:` (a generator)");
  if (auto fj = r.get("fork_join")) {
    g.fork_join = read_fork_join(*fj);
    return g;
  }
  const Val nv = *r.get("nodes");
  if (!nv.is_seq())
    nv.fail("expected a list of nodes {id, task, after}, got " + yaml::describe_node(nv.node));
  if (nv.size() == 0) nv.fail("a graph needs at least one node");
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<Val>> after_items(nv.size());
  for (std::size_t i = 0; i < nv.size(); ++i) {
    const Val n = nv.at(i);
    MapReader nr(n, {"id", "task", "after"}, "a graph node");
    GraphNode node;
    const auto idv = nr.require("id", "a unique node name");
    node.id = yaml::scalar(idv, "a node id");
    if (node.id.empty()) idv.fail("a node id cannot be empty");
    if (auto [it, fresh] = index.emplace(node.id, i); !fresh)
      idv.fail("duplicate node id '" + node.id + "' (also " + nv.path + "[" +
               std::to_string(it->second) + "])");
    node.task = read_task(nr.require("task", "the node's phases, e.g. [{cpu: 1ms}]"));
    if (auto av = nr.get("after")) {
      if (av->is_scalar()) {
        after_items[i].push_back(*av);
      } else if (av->is_seq()) {
        for (std::size_t k = 0; k < av->size(); ++k) after_items[i].push_back(av->at(k));
      } else {
        av->fail("expected a list of node ids, got " + yaml::describe_node(av->node));
      }
    }
    g.nodes.push_back(std::move(node));
  }
  std::vector<std::string> ids;
  for (const auto& n : g.nodes) ids.push_back(n.id);
  Graph graph(g.nodes.size());
  std::map<std::pair<std::size_t, std::size_t>, Val> edge_at;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& a : after_items[i]) {
      const std::string dep = yaml::scalar(a, "a node id");
      auto it = index.find(dep);
      if (it == index.end()) a.fail(yaml::unknown_message("node", dep, ids) + " in after:");
      g.nodes[i].after.push_back(dep);
      boost::add_edge(it->second, i, graph);
      edge_at.emplace(std::make_pair(it->second, i), a);
    }
  check_acyclic(graph, g, edge_at);
  return g;
}

}  // namespace poolsim::loader
