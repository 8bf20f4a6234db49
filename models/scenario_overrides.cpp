// scenario_overrides.cpp: the key-path grammar and apply_overrides (see the
// header).
#include "models/scenario_overrides.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "models/profile_loader.hpp"
#include "models/scenario.hpp"

namespace poolsim::loader {

namespace fs = std::filesystem;
using yaml::Source;
using yaml::Val;

namespace {

struct PathStep {
  std::string key;  // map key, or empty for an index
  std::optional<std::size_t> index;
};

std::vector<PathStep> parse_key_path(const std::string& path, const std::string& label) {
  std::vector<PathStep> steps;
  std::size_t i = 0;
  auto bad = [&](const std::string& why) -> void { throw ScenarioError(label, path, why); };
  if (path.empty()) bad("empty key path: expected --set key.path=value");
  while (i < path.size()) {
    std::size_t j = i;
    while (j < path.size() &&
           (std::isalnum(static_cast<unsigned char>(path[j])) || path[j] == '_' || path[j] == '-'))
      ++j;
    if (j == i) bad("malformed key path: expected a key name at position " + std::to_string(i + 1));
    steps.push_back({path.substr(i, j - i), std::nullopt});
    i = j;
    while (i < path.size() && path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string::npos) bad("malformed key path: '[' without ']'");
      const std::string num = path.substr(i + 1, close - i - 1);
      if (num.empty() || !std::all_of(num.begin(), num.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          }))
        bad("malformed key path: an index must be a whole number, got '[" + num + "]'");
      // No scenario list is longer than the task cap; a longer index is a typo.
      std::size_t index = 0;
      const auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), index);
      if (ec != std::errc() || ptr != num.data() + num.size() ||
          index > static_cast<std::size_t>(kMaxTasks))
        bad("malformed key path: an index must be at most " + std::to_string(kMaxTasks) +
            ", got '[" + num + "]'");
      steps.push_back({"", index});
      i = close + 1;
    }
    if (i < path.size()) {
      if (path[i] != '.' || i + 1 == path.size())
        bad("malformed key path: expected '.' between keys");
      ++i;
    }
  }
  return steps;
}

std::string format_key_path(const std::vector<PathStep>& steps) {
  std::string out;
  for (const auto& s : steps) {
    if (s.index)
      out += "[" + std::to_string(*s.index) + "]";
    else
      out += (out.empty() ? "" : ".") + s.key;
  }
  return out;
}

// Stores `value` at `steps` under `root`, creating maps along the way.
void set_at(YAML::Node& root, const std::vector<PathStep>& steps, const YAML::Node& value,
            const std::string& label) {
  YAML::Node cur;
  cur.reset(root);
  bool created = false;  // `cur` did not exist in the scenario: the override makes it
  std::vector<std::string> parent_keys;  // keys of the map `cur` was found in
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    const bool last = i + 1 == steps.size();
    const std::string so_far =
        format_key_path({steps.begin(), steps.begin() + static_cast<long>(i) + 1});
    YAML::Node next;
    if (s.index) {
      if (!cur.IsSequence())
        throw ScenarioError(label, so_far,
                            "cannot index into " + yaml::describe_node(cur) + ": not a list");
      if (*s.index > cur.size() && created)
        throw ScenarioError(
            label, so_far,
            "'" + format_key_path({steps.begin(), steps.begin() + static_cast<long>(i)}) +
                "' is not in the scenario" +
                (parent_keys.empty() ? std::string()
                                     : " (its map has " + yaml::join(parent_keys) + ")") +
                ", so there is no element " + std::to_string(*s.index) +
                " to set; an override can add a new list with element [0] only");
      if (*s.index > cur.size())
        throw ScenarioError(label, so_far,
                            "index " + std::to_string(*s.index) +
                                " is out of range (the list has " + std::to_string(cur.size()) +
                                " elements)");
      if (*s.index == cur.size()) cur.push_back(YAML::Node());
      next.reset(cur[*s.index]);
    } else {
      if (!cur.IsDefined() || cur.IsNull()) cur = YAML::Node(YAML::NodeType::Map);
      if (!cur.IsMap())
        throw ScenarioError(label, so_far,
                            "cannot set a key inside " + yaml::describe_node(cur) + ": not a map");
      parent_keys.clear();
      for (auto it = cur.begin(); it != cur.end(); ++it)
        if (it->first.IsScalar()) parent_keys.push_back(it->first.Scalar());
      next.reset(cur[s.key]);
    }
    if (last) {
      next = value;
    } else {
      created = !next.IsDefined() || next.IsNull();
      if (created)
        next = YAML::Node(steps[i + 1].index ? YAML::NodeType::Sequence : YAML::NodeType::Map);
      cur.reset(next);
    }
  }
}

}  // namespace

void apply_overrides(YAML::Node& root, Source& src, const LoadOptions& opts) {
  // --machine first, so that --set machine.FIELD applies on top of it.
  if (opts.machine) {
    std::string m = *opts.machine;
    // A --machine path is relative to the working directory, not the scenario.
    if (looks_like_path(m) && fs::path(m).is_relative()) m = fs::absolute(m).string();
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    if (root.IsMap()) root["machine"] = m;
    src.add_override("machine", "--machine " + *opts.machine);
  }
  for (const auto& set : opts.sets) {
    const std::string label = "--set " + set;
    const auto eq = set.find('=');
    if (eq == std::string::npos)
      throw ScenarioError(label, "", "expected --set key.path=value (no '=' found)");
    const auto steps = parse_key_path(set.substr(0, eq), label);
    const std::string path = format_key_path(steps);
    YAML::Node value;
    try {
      value = YAML::Load(set.substr(eq + 1));
    } catch (const YAML::ParserException& e) {
      throw ScenarioError(label, path, "the value is not valid YAML: " + e.msg);
    }
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap())
      throw ScenarioError(label, path, "the scenario is not a map, cannot override keys");
    // machine.FIELD over a named profile (or none: `default`): {base: NAME, FIELD: ...}.
    if (steps.size() > 1 && steps[0].key == "machine" && !root["machine"].IsMap()) {
      YAML::Node m(YAML::NodeType::Map);
      m["base"] = root["machine"].IsScalar() ? YAML::Clone(root["machine"]) : YAML::Node("default");
      root["machine"] = m;
    }
    set_at(root, steps, value, label);
    src.add_override(path, label);
  }
  if (opts.seed) {
    if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    if (root.IsMap()) root["seed"] = std::to_string(*opts.seed);
    src.add_override("seed", "--seed " + std::to_string(*opts.seed));
  }
}

}  // namespace poolsim::loader
