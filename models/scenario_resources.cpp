// scenario_resources.cpp: `resources:` and `holding:` (design in
// scenario_resources.hpp; the syntax in docs/scenarios.md, "Resources").
#include "models/scenario_resources.hpp"

#include <algorithm>
#include <variant>

namespace poolsim::loader {
namespace {

// The table of the scenario being read on this thread (HoldingScope).
thread_local const std::vector<ResourceSpec>* tl_resources = nullptr;

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

}  // namespace

std::vector<ResourceSpec> read_resources(const yaml::Val& v) {
  if (!v.is_map())
    v.fail("expected a map of resources such as {db: {permits: 10}}, got " +
           yaml::describe_node(v.node));
  std::vector<ResourceSpec> out;
  // Keys are free (the names), so the reader gets them as its allowed set.
  std::vector<std::string> names;
  for (auto it = v.node.begin(); it != v.node.end(); ++it)
    if (it->first.IsScalar()) names.push_back(it->first.Scalar());
  const yaml::MapReader r(v, names, "resources");
  const std::vector<std::string> keys = r.keys();
  if (static_cast<std::int64_t>(keys.size()) > kMaxResources)
    v.fail("at most " + std::to_string(kMaxResources) + " resources, got " +
           std::to_string(keys.size()));
  for (const std::string& name : keys) {
    const yaml::Val rv = *r.get(name);
    if (!valid_name(name))
      rv.fail("a resource name uses only lower-case letters, digits, '-' and '_' (got '" + name +
              "')");
    if (!rv.is_map())
      rv.fail("expected {permits: N} (how many tasks may hold it at once), got " +
              yaml::describe_node(rv.node));
    const yaml::MapReader pr(rv, {"permits"}, "a resource");
    ResourceSpec spec;
    spec.name = name;
    spec.permits = static_cast<int>(yaml::integer(
        pr.require("permits",
                   "how many tasks may hold it at once (connections, semaphore permits)"),
        1, kMaxPermits, "permits"));
    out.push_back(std::move(spec));
  }
  return out;
}

HoldingScope::HoldingScope(const std::vector<ResourceSpec>& specs) { tl_resources = &specs; }
HoldingScope::~HoldingScope() { tl_resources = nullptr; }

std::optional<std::uint16_t> read_holding(const yaml::MapReader& phase) {
  const auto h = phase.get("holding");
  if (!h) return std::nullopt;
  const std::string name = yaml::scalar(*h, "a resource name");
  const std::vector<ResourceSpec> none;
  const std::vector<ResourceSpec>& table = tl_resources ? *tl_resources : none;
  if (table.empty())
    h->fail("unknown resource '" + name +
            "': the scenario declares no resources (add `resources: {" +
            (valid_name(name) ? name : std::string("db")) + ": {permits: N}}` at the top level)");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].name == name) return static_cast<std::uint16_t>(i);
    names.push_back(table[i].name);
  }
  h->fail(yaml::unknown_message("resource", name, names) + " (declared under `resources:`)");
}

std::vector<std::string> phase_kind_keys(const yaml::MapReader& phase) {
  std::vector<std::string> keys = phase.keys();
  keys.erase(std::remove(keys.begin(), keys.end(), "holding"), keys.end());
  return keys;
}

void set_holding(PhaseSpec& p, std::optional<std::uint16_t> holding) {
  std::visit([&](auto& ph) { ph.holding = holding; }, p);
}

}  // namespace poolsim::loader
