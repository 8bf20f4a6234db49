// yaml_reader.cpp: see yaml_reader.hpp for the design.
#include "models/yaml_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "models/scenario_loader.hpp"

namespace poolsim::yaml {

Source::Source(std::string display, std::filesystem::path base_dir)
    : display_(std::move(display)), base_dir_(std::move(base_dir)) {}

void Source::add_override(std::string path, std::string label) {
  overrides_.push_back({std::move(path), std::move(label)});
}

namespace {

// `inner` is `outer` or a key path below it ("a.b" is under "a", "a[0]" too).
bool is_under(const std::string& inner, const std::string& outer) {
  if (outer.empty()) return true;
  if (inner.size() < outer.size() || inner.compare(0, outer.size(), outer) != 0) return false;
  return inner.size() == outer.size() || inner[outer.size()] == '.' || inner[outer.size()] == '[';
}

}  // namespace

std::string Source::where(const YAML::Mark& mark, const std::string& path) const {
  // The latest override wins, as it was applied last.
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
    if (is_under(path, it->path)) return it->label;
  if (!mark.is_null())
    return display_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  // A node created by an override along its path (a map that did not exist).
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
    if (is_under(it->path, path)) return it->label;
  return display_;
}

std::string Source::where_any(const YAML::Mark& mark, const std::string& path) const {
  for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it)
    if (is_under(it->path, path) || is_under(path, it->path)) return it->label;
  return where(mark, path);
}

void Val::fail_section(const std::string& message) const {
  throw ScenarioError(src->where_any(mark, path), path, message);
}

void Source::fail(const YAML::Mark& mark, const std::string& path,
                  const std::string& message) const {
  throw ScenarioError(where(mark, path), path, message);
}

Val Val::at(std::size_t i) const {
  YAML::Node n = node[i];
  // An empty element (`- `) has no useful mark of its own: blame the list.
  const YAML::Mark m = (n.IsNull() || n.Mark().is_null()) ? mark : n.Mark();
  return Val{src, n, m, path + "[" + std::to_string(i) + "]"};
}

Val root_val(const Source& src, const YAML::Node& node, std::string path) {
  return Val{&src, node, node.Mark(), std::move(path)};
}

std::string join_path(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

std::string describe_node(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "'" + n.Scalar() + "'";
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t subst = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string unknown_message(std::string_view what, const std::string& word,
                            const std::vector<std::string>& candidates) {
  std::string msg = "unknown " + std::string(what) + " '" + word + "'";
  if (auto s = did_you_mean(word, candidates)) return msg + "; did you mean '" + *s + "'?";
  return msg + "; expected one of " + join(candidates);
}

MapReader::MapReader(const Val& v, std::vector<std::string> allowed, std::string_view what,
                     const UnknownKeyMessage& unknown)
    : v_(v) {
  if (!v.node.IsMap())
    v.fail("expected " + std::string(what) + " (a map with keys " + join(allowed) + "), got " +
           describe_node(v.node));
  for (auto it = v.node.begin(); it != v.node.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: it-> yields a temporary proxy
    if (!k.IsScalar())
      v_.src->fail(k.Mark(), v_.path, "a key must be a plain name, got " + describe_node(k));
    const std::string key = k.Scalar();
    const std::string path = join_path(v_.path, key);
    for (const auto& e : entries_)
      if (e.key == key)
        v_.src->fail(k.Mark(), path,
                     "duplicate key '" + key + "' (first given at line " +
                         std::to_string(e.key_node.Mark().line + 1) + ")");
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string msg = unknown ? unknown(key) : std::string();
      if (msg.empty()) msg = unknown_message("key", key, allowed);
      v_.src->fail(k.Mark(), path, msg);
    }
    entries_.push_back({key, k, it->second});
  }
}

std::optional<Val> MapReader::get(std::string_view key) const {
  for (const auto& e : entries_) {
    if (e.key != key) continue;
    YAML::Mark m = e.value.Mark();
    if (e.value.IsNull() || m.is_null()) m = e.key_node.Mark();
    return Val{v_.src, e.value, m, join_path(v_.path, key)};
  }
  return std::nullopt;
}

Val MapReader::require(std::string_view key, std::string_view why) const {
  if (auto v = get(key)) return *v;
  std::string msg = "missing required key '" + std::string(key) + "'";
  if (!why.empty()) msg += " (" + std::string(why) + ")";
  v_.src->fail(v_.mark, join_path(v_.path, key), msg);
}

std::vector<std::string> MapReader::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.key);
  return out;
}

std::string scalar(const Val& v, std::string_view what) {
  if (!v.node.IsScalar())
    v.fail("expected " + std::string(what) + ", got " + describe_node(v.node));
  return v.node.Scalar();
}

std::int64_t integer(const Val& v, std::int64_t min, std::int64_t max, std::string_view what) {
  const std::string s = scalar(v, what);
  std::int64_t x = 0;
  const char* first = s.data();
  if (!s.empty() && s[0] == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), x);
  const bool whole = ptr == s.data() + s.size() && !s.empty();
  // Out of range: say the bound on the side it was crossed ("at most 50000000"
  // for 4000000000, "at least 1" for 0), whatever the value's size.
  if (whole && ec == std::errc::result_out_of_range)
    v.fail(std::string(what) + " must be " +
           (s[0] == '-' ? "at least " + std::to_string(min) : "at most " + std::to_string(max)) +
           ", got " + s);
  if (whole && ec == std::errc() && x < min)
    v.fail(std::string(what) + " must be at least " + std::to_string(min) + ", got " + s);
  if (whole && ec == std::errc() && x > max)
    v.fail(std::string(what) + " must be at most " + std::to_string(max) + ", got " + s);
  if (ec != std::errc() || !whole)
    v.fail("expected " + std::string(what) + " (a whole number), got '" + s + "'");
  return x;
}

std::uint64_t unsigned_integer(const Val& v, std::string_view what) {
  const std::string s = scalar(v, what);
  std::uint64_t x = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec == std::errc::result_out_of_range)
    v.fail(std::string(what) + " must be at most 18446744073709551615 (2^64-1), got " + s);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    v.fail("expected " + std::string(what) + " (a whole number from 0 to 2^64-1), got '" + s + "'");
  return x;
}

double real_number(const Val& v, std::string_view what) {
  const std::string s = scalar(v, what);
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(x))
    v.fail("expected " + std::string(what) + " (a number), got '" + s + "'");
  return x;
}

namespace {
template <class F>
auto with_unit(const Val& v, std::string_view what, F parse) {
  const std::string s = scalar(v, what);
  try {
    return parse(s);
  } catch (const UnitError& e) {
    v.fail(e.what());
  }
}
}  // namespace

Duration duration(const Val& v) {
  return with_unit(v, "a duration such as 250ns, 10us, 1.5ms or 2s",
                   [](const std::string& s) { return parse_duration(s); });
}
double rate(const Val& v) {
  return with_unit(v, "a rate such as 5000/s", [](const std::string& s) { return parse_rate(s); });
}
Bytes size(const Val& v) {
  return with_unit(v, "a size such as 64KiB or 8MiB",
                   [](const std::string& s) { return parse_size(s); });
}
double fraction(const Val& v, bool allow_above_one) {
  return with_unit(v, "a fraction such as 70% or 0.7",
                   [&](const std::string& s) { return parse_fraction(s, allow_above_one); });
}

}  // namespace poolsim::yaml
