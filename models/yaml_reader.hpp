// yaml_reader.hpp: typed, located reading of a yaml-cpp tree (loader internals).
//
// Mechanism: every value the loader reads is a Val, a YAML node together with
// its key path ("workload.task[1].lock.hold") and the mark to blame for it
// (the value's own mark, or its key's mark when the value is empty, because
// yaml-cpp marks an empty value at the start of the next line). A Source turns
// a mark into "file:line:col" (yaml-cpp marks are 0-based; we print 1-based)
// and knows which key paths were replaced by `--set` overrides, so an error in
// an overridden value names "--set key.path=value" instead of a file position.
// MapReader checks a map eagerly: keys must be scalars, unique, and among the
// allowed ones (else "unknown key 'x'; did you mean 'y'?").
//
// Invariants: every function here either returns a value of the requested
// type or throws ScenarioError; nothing is silently defaulted or ignored.
// Source: yaml-cpp 0.7 (include/yaml-cpp/mark.h, node/node.h).
// Left out: YAML tags and anchors get no special meaning (yaml-cpp resolves
// aliases itself); scalars are always read from their text, never via as<T>,
// so "8" and '8' are the same value.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/units.hpp"

namespace poolsim::yaml {

// Where errors point: the display name of the file, the directory relative
// files are resolved against, and the key paths replaced by overrides.
class Source {
 public:
  Source(std::string display, std::filesystem::path base_dir);
  // Key path `path` (or anything under it) came from `label` ("--set a.b=1").
  void add_override(std::string path, std::string label);
  // "file:line:col", the override label, or the bare file name for nodes
  // without a mark.
  std::string where(const YAML::Mark& mark, const std::string& path) const;
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& path,
                         const std::string& message) const;
  // For a check over a whole section (the workload's size, the thread
  // budget): the latest override inside or around `path` if any, since it is
  // the likely cause, else where(mark, path).
  std::string where_any(const YAML::Mark& mark, const std::string& path) const;
  const std::string& display() const { return display_; }
  const std::filesystem::path& base_dir() const { return base_dir_; }

 private:
  struct Override {
    std::string path, label;
  };
  std::string display_;
  std::filesystem::path base_dir_;
  std::vector<Override> overrides_;
};

// A located value.
struct Val {
  const Source* src = nullptr;
  YAML::Node node;
  YAML::Mark mark;
  std::string path;

  [[noreturn]] void fail(const std::string& message) const { src->fail(mark, path, message); }
  // fail(), located by Source::where_any (a check over this whole section).
  [[noreturn]] void fail_section(const std::string& message) const;
  bool is_map() const { return node.IsMap(); }
  bool is_seq() const { return node.IsSequence(); }
  bool is_scalar() const { return node.IsScalar(); }
  // The i-th element of a sequence, located.
  Val at(std::size_t i) const;
  std::size_t size() const { return node.size(); }
};

Val root_val(const Source& src, const YAML::Node& node, std::string path = {});
std::string join_path(const std::string& parent, std::string_view key);
// "a map", "a sequence", "a scalar 'x'", "nothing": for "expected X, got Y".
std::string describe_node(const YAML::Node& n);

// Unknown-key message hook: returns the full message for key `k`, or an
// empty string to use the default did-you-mean message.
using UnknownKeyMessage = std::function<std::string(const std::string& key)>;

class MapReader {
 public:
  // Fails unless v is a map whose keys are unique scalars among `allowed`.
  MapReader(const Val& v, std::vector<std::string> allowed, std::string_view what,
            const UnknownKeyMessage& unknown = {});
  std::optional<Val> get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key).has_value(); }
  // Missing: fails at the map's own location, naming the missing key path.
  Val require(std::string_view key, std::string_view why = {}) const;
  const Val& self() const { return v_; }
  // Keys in document order (for maps with open key sets such as tolerance).
  std::vector<std::string> keys() const;

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node, value;
  };
  Val v_;
  std::vector<Entry> entries_;
};

// Scalars. `what` describes the expected value for messages.
std::string scalar(const Val& v, std::string_view what);
std::int64_t integer(const Val& v, std::int64_t min, std::int64_t max, std::string_view what);
std::uint64_t unsigned_integer(const Val& v, std::string_view what);
double real_number(const Val& v, std::string_view what);
Duration duration(const Val& v);
double rate(const Val& v);
Bytes size(const Val& v);
double fraction(const Val& v, bool allow_above_one = false);

// Levenshtein distance (insert, delete, substitute; case-insensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);
// "unknown <what> 'x'; did you mean 'y'?" or "...; expected one of a, b, c".
std::string unknown_message(std::string_view what, const std::string& word,
                            const std::vector<std::string>& candidates);
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace poolsim::yaml
