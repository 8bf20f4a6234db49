// scenario_loader.cpp: YAML scenario file -> complete, validated Scenario.
//
// Mechanism, in order:
//   1. Parse the file with yaml-cpp (a ParserException becomes a ScenarioError
//      at its mark).
//   2. Apply LoadOptions::sets in order: each "key.path=value" parses `value`
//      as a YAML node (scalar, flow map or flow list) and stores it at the path,
//      creating missing maps; then --machine and --seed. The Source records
//      each overridden path so later errors inside it name the override.
//   3. Read the tree top-down with MapReader (yaml_reader.hpp): machine first
//      (profile files, `base:` chains), then limits (checked against the
//      machine), run, workload, backend (thread counts resolved with
//      effective_cores() of the final machine and limits), tolerance; then the
//      cross-checks (thread bound vs run.max_threads).
// Invariants: the returned Scenario has every default filled in and every
// thread count resolved to an int; the first problem found is thrown as a
// ScenarioError(where = "file:line:col" or "--set ...", key path, message).
// Source: the user contract docs/scenarios.md (keys, defaults, value
// forms); ThreadPoolExecutor's parameter rules (core <= max, reject
// policies) for `pool`; mechanisms.md for the machine-profile fields.
//
// Machine: without `machine:` the shipped `default` profile is used, so a bare
// scenario predicts the same everywhere. An inline map is named "inline", or
// "BASE+overrides" when it changes fields of `base: BASE`.
//
// Empirical distribution files: a text file with one duration per line, each
// with its unit ("1.5ms"); blank lines and lines starting with '#' are
// skipped; a relative `file:` is resolved against the scenario's directory.
//
// Arrival rules: batch needs `count`; poisson needs `rate` and exactly one of
// `count` or `duration`; periodic needs `interval` and exactly one of `count`
// or `duration`; closed needs `clients` and `duration` (`think` defaults to
// 0ns; an optional `count` caps the total requests, an extension the workload
// generator supports). Exactly one limit keeps open arrivals unambiguous.
//
// Tolerance: `default` and per-metric fractions (70% or 0.7, may exceed 1);
// a metric written as `off` goes to Tolerance::ignored.
//
// Hostile input (docs/scenarios.md, "Limits"): input files are opened
// non-blocking and must be regular files under a size cap (FIFOs, devices,
// directories and link loops are refused by name); YAML nesting is bounded
// before yaml-cpp recurses; every count and size that the generator would
// allocate from (tasks implied by the arrival parameters, fork-join nodes,
// lock shards) is checked against its cap, and the mean serial length of the
// workload against the 100-year horizon, before generate_workload runs.
//
// Left out: YAML anchors/merge keys get no special treatment beyond what
// yaml-cpp does; multi-document files are refused; the thread-per-task bound
// (one thread per concurrently running task) is checked by the runner, which
// knows the concurrency.
#include "models/scenario_loader.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "models/backend_registry.hpp"
#include "models/machine_fields.hpp"
#include "models/metrics.hpp"
#include "models/workload.hpp"
#include "models/yaml_reader.hpp"

namespace poolsim {

namespace fs = std::filesystem;
using yaml::MapReader;
using yaml::Source;
using yaml::Val;

ScenarioError::ScenarioError(std::string where, std::string key, std::string message)
    : std::runtime_error(where + ": " + (key.empty() ? std::string() : key + ": ") + message),
      where_(std::move(where)),
      key_(std::move(key)),
      message_(std::move(message)) {}

std::optional<std::string> did_you_mean(const std::string& word,
                                        const std::vector<std::string>& candidates) {
  // Close enough: at most a third of the word's letters wrong (at least one),
  // and not a complete rewrite. Ties go to the first candidate.
  const std::size_t limit = std::max<std::size_t>(1, (word.size() + 2) / 3);
  std::optional<std::string> best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t d = yaml::edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (best && best_d <= limit && best_d < word.size() && best_d < best->size()) return best;
  // Else a unique candidate the word abbreviates ("switch" -> "switch_cost").
  constexpr std::size_t kMinPrefix = 3;  // shorter prefixes match too much
  std::optional<std::string> prefix;
  if (word.size() < kMinPrefix) return std::nullopt;
  for (const auto& c : candidates)
    if (c.size() > word.size() && yaml::edit_distance(c.substr(0, word.size()), word) == 0) {
      if (prefix) return std::nullopt;
      prefix = c;
    }
  return prefix;
}

fs::path default_config_dir() {
  if (const char* e = std::getenv("POOLSIM_CONFIG_DIR"); e && *e) return e;
  // An installed poolsim (PREFIX/bin/poolsim, `cmake --install`, the .deb)
  // finds its bundled configs at PREFIX/share/poolsim/configs, wherever the
  // prefix was moved; a build tree has no such directory beside it.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "poolsim" / "configs";
    if (fs::is_directory(installed / "machines", ec)) return installed;
  }
  return POOLSIM_BUILD_CONFIG_DIR;
}

fs::path host_profile_path() {
  if (const char* e = std::getenv("POOLSIM_HOST_PROFILE"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    return fs::path(x) / "poolsim" / "host.yaml";
  fs::path home;
  if (const char* h = std::getenv("HOME"); h && *h) {
    home = h;
  } else if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) {
    home = pw->pw_dir;
  } else {
    home = fs::current_path();
  }
  return home / ".config" / "poolsim" / "host.yaml";
}

namespace {

// ---------------------------------------------------------------------------
// Files and parsing

// Reads an input file (scenario, machine profile, samples) of at most
// `max_bytes`. Refuses, with a message naming the file, what is not a regular
// file: a FIFO or a device would block or never end, a directory has no text.
// The file is opened non-blocking (so a FIFO without a writer cannot hang the
// open) and checked with fstat on the open descriptor, so what is read is what
// was checked. Returns nullopt and sets `error` on failure.
std::optional<std::string> read_input(const fs::path& p, std::int64_t max_bytes,
                                      std::string& error) {
  const std::string name = p.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      error = "no such file " + name;
    else if (err == ELOOP)
      error = name + " is a symbolic link loop (too many levels of symbolic links)";
    else
      error = "cannot open " + name + ": " + std::strerror(err);
    return std::nullopt;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = "cannot read " + name + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    error = name + " is " + kind + ", expected a regular file";
    return std::nullopt;
  }
  if (st.st_size > max_bytes) {
    error = name + " is " + std::to_string(st.st_size) + " bytes, more than the maximum of " +
            std::to_string(max_bytes >> 20) + " MiB for this input";
    return std::nullopt;
  }
  ::fcntl(fd, F_SETFL, 0);  // a regular file: plain blocking reads
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  // Read at most max_bytes even if the file grows while being read.
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = "cannot read " + name + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

std::string location(const std::string& display, int line, int col) {
  return display + ":" + std::to_string(line) + ":" + std::to_string(col);
}

// Refuses nesting deeper than kMaxYamlNesting before yaml-cpp (which parses
// and destroys nodes recursively) sees the text. The depth counted is an upper
// bound of the YAML depth: the open indentation levels of block lines, plus
// the `- ` and `key: ` items opening on the same line, plus open brackets of
// flow collections. Quoted strings and comments are skipped.
void check_nesting(const std::string& text, const std::string& display) {
  std::vector<std::size_t> indents;  // open block indentation levels
  int flow = 0;                      // open [ and { (they may span lines)
  int line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t col = 0;
    while (i < text.size() && text[i] == ' ') ++i, ++col;
    const bool blank = i >= text.size() || text[i] == '\n' || text[i] == '#' || text[i] == '\r';
    int depth = 0;
    if (!blank && flow == 0) {
      while (!indents.empty() && indents.back() > col) indents.pop_back();
      if (indents.empty() || indents.back() < col) indents.push_back(col);
      depth = static_cast<int>(indents.size());
    }
    char quote = 0;
    bool item_start = true;  // at the start of a line's content or after "- "
    for (; i < text.size() && text[i] != '\n'; ++i) {
      const char c = text[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
        while (i < text.size() && text[i] != '\n') ++i;
        break;
      }
      if ((c == '"' || c == '\'') && item_start) {
        quote = c;
        continue;
      }
      if (c == '[' || c == '{') ++flow;
      if ((c == ']' || c == '}') && flow > 0) --flow;
      const bool space_after = i + 1 >= text.size() || text[i + 1] == ' ' || text[i + 1] == '\n';
      if ((c == '-' || c == ':' || c == '?') && space_after) ++depth;
      item_start = c == ' ' || c == '-' || c == '[' || c == '{' || c == ',' || c == ':';
      if (depth + flow > kMaxYamlNesting)
        throw ScenarioError(location(display, line, static_cast<int>(col) + 1), "",
                            "the YAML nests deeper than " + std::to_string(kMaxYamlNesting) +
                                " levels (indentation steps plus brackets); a scenario needs "
                                "fewer than 10");
    }
    ++i;
    ++line;
  }
}

// A tab in a line's indentation: yaml-cpp reports it as some other syntax
// error ("illegal map value"), so the loader names the real mistake.
std::optional<std::string> tab_indent(const std::string& text, const std::string& display) {
  int line = 1;
  bool at_start = true;
  int col = 1;
  for (char c : text) {
    if (c == '\n') {
      ++line;
      col = 1;
      at_start = true;
      continue;
    }
    if (at_start && c == '\t') return location(display, line, col);
    if (c != ' ') at_start = false;
    ++col;
  }
  return std::nullopt;
}

// Counts the documents of a YAML text without building nodes. yaml-cpp 0.7
// loops forever (LoadAll keeps returning empty documents) on a stray ',' at
// the top level, so a document that starts where the previous one started is
// a syntax error at that place, not another document. Found by fuzz_scenario.
struct DocumentCounter : YAML::EventHandler {
  int documents = 0;
  std::optional<YAML::Mark> stuck;  // where the parser stopped making progress
  std::size_t last_start = std::string::npos;
  void OnDocumentStart(const YAML::Mark& m) override {
    if (documents > 0 && static_cast<std::size_t>(m.pos) == last_start) stuck = m;
    last_start = static_cast<std::size_t>(m.pos);
    ++documents;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

YAML::Node parse_yaml(const std::string& text, const std::string& display) {
  check_nesting(text, display);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentCounter counter;
    // Every document consumes text, so this ends; a stuck parser stops it.
    while (!counter.stuck && parser.HandleNextDocument(counter)) {
    }
    if (counter.stuck) {
      const auto pos = static_cast<std::size_t>(counter.stuck->pos);
      const char c = pos < text.size() ? text[pos] : ' ';
      throw ScenarioError(location(display, counter.stuck->line + 1, counter.stuck->column + 1), "",
                          "YAML syntax error: unexpected '" + std::string(1, c) +
                              "' (a ',' belongs inside [...] or {...})");
    }
    if (counter.documents > 1)
      throw ScenarioError(display, "",
                          "expected one YAML document, found " + std::to_string(counter.documents) +
                              " (separated by ---)");
    if (counter.documents == 0) return YAML::Node();
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    if (auto tab = tab_indent(text, display))
      throw ScenarioError(*tab, "",
                          "YAML indents with spaces, not tabs (a tab starts this line; yaml-cpp "
                          "says: " +
                              e.msg + ")");
    const std::string where =
        e.mark.is_null() ? display : location(display, e.mark.line + 1, e.mark.column + 1);
    throw ScenarioError(where, "", "YAML syntax error: " + e.msg);
  }
}

// The top-level keys of a machine profile and of a scenario, to recognise one
// given in place of the other.
bool is_profile_key(const std::string& k) {
  for (const MachineField& f : kMachineFields)
    if (k == f.name) return true;
  return k == "base";
}
bool is_scenario_key(const std::string& k) {
  for (const char* f :
       {"description", "seed", "machine", "limits", "workload", "backend", "run", "tolerance"})
    if (k == f) return true;
  return false;
}

fs::path config_dir_of(const LoadOptions& opts) {
  return opts.config_dir.empty() ? default_config_dir() : opts.config_dir;
}

bool looks_like_path(const std::string& s) {
  auto ends = [&](std::string_view suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
  };
  return s.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

std::vector<std::string> available_profiles(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "machines", ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  names.push_back("host");
  return names;
}

// ---------------------------------------------------------------------------
// Machine profiles

struct ProfileRequest {
  fs::path file;     // resolved profile file
  std::string name;  // the name it was asked for ("default", "host", file stem)
};

// Resolves NAME / PATH / host to a file. Errors are returned, not thrown, so
// the caller can place them at the key that asked for the profile.
std::optional<ProfileRequest> resolve_profile(const std::string& name, const fs::path& base_dir,
                                              const LoadOptions& opts, std::string& error) {
  if (name.empty()) {
    error = "expected a machine profile name (default, host, a name under machines/) or a path";
    return std::nullopt;
  }
  if (name == "host") {
    const fs::path p = opts.host_profile.empty() ? host_profile_path() : opts.host_profile;
    if (!fs::exists(p) && opts.create_host_profile) opts.create_host_profile(p);
    if (!fs::exists(p)) {
      error =
          "no host profile at " + p.string() + ": run `poolsim calibrate` to measure this machine";
      return std::nullopt;
    }
    return ProfileRequest{p, "host"};
  }
  if (looks_like_path(name)) {
    fs::path p = name;
    if (p.is_relative() && !base_dir.empty()) p = base_dir / p;
    if (!fs::exists(p)) {
      error = "machine profile file " + p.string() + " does not exist";
      return std::nullopt;
    }
    return ProfileRequest{p, fs::path(name).stem().string()};
  }
  const fs::path dir = config_dir_of(opts);
  const fs::path p = dir / "machines" / (name + ".yaml");
  if (!fs::exists(p)) {
    error = yaml::unknown_message("machine profile", name, available_profiles(dir)) +
            " (looked for " + p.string() + ")";
    return std::nullopt;
  }
  return ProfileRequest{p, name};
}

struct ProfileLoader {
  const LoadOptions& opts;
  std::vector<std::string> chain;  // files being loaded, for base: cycles

  MachineProfile load_file(const ProfileRequest& req, const YAML::Mark& at, const Source& at_src,
                           const std::string& at_path) {
    std::error_code ec;
    const std::string canon = fs::weakly_canonical(req.file, ec).string();
    if (std::find(chain.begin(), chain.end(), canon) != chain.end()) {
      std::vector<std::string> cycle(chain.begin(), chain.end());
      cycle.push_back(canon);
      at_src.fail(
          at, at_path,
          "machine profiles inherit from each other in a cycle: " + yaml::join(cycle, " -> "));
    }
    std::string error;
    const auto text = read_input(req.file, kMaxScenarioFileBytes, error);
    if (!text) at_src.fail(at, at_path, "cannot read machine profile: " + error);
    const YAML::Node root = parse_yaml(*text, req.file.string());
    Source src(req.file.string(), req.file.parent_path());
    chain.push_back(canon);
    MachineProfile m = read_map(yaml::root_val(src, root), /*is_file=*/true);
    chain.pop_back();
    if (m.name.empty()) m.name = req.name;
    m.source = req.file.string();
    return m;
  }

  // The shipped `default` profile (the loader's config directory, else the
  // build's), or nothing when it is itself being loaded or cannot be found.
  std::optional<MachineProfile> default_profile() {
    std::string err;
    std::optional<ProfileRequest> req = resolve_profile("default", {}, opts, err);
    if (!req) {
      const fs::path p = fs::path(default_config_dir()) / "machines" / "default.yaml";
      if (!fs::exists(p)) return std::nullopt;
      req = ProfileRequest{p, "default"};
    }
    std::error_code ec;
    const std::string canon = fs::weakly_canonical(req->file, ec).string();
    if (std::find(chain.begin(), chain.end(), canon) != chain.end()) return std::nullopt;
    Source src(req->file.string(), req->file.parent_path());
    return load_file(*req, YAML::Mark::null_mark(), src, "machine");
  }

  MachineProfile load_named(const Val& v) {
    const std::string name = yaml::scalar(v, "a machine profile name or path");
    std::string err;
    auto req = resolve_profile(name, v.src->base_dir(), opts, err);
    if (!req) v.fail(err);
    return load_file(*req, v.mark, *v.src, v.path);
  }

  // One field's value, read by the field's kind (machine_fields.hpp).
  static void read_machine_field(const MachineField& f, const Val& v, MachineProfile& m) {
    switch (f.kind()) {
      case FieldKind::count:
        m.*std::get<int MachineProfile::*>(f.member) =
            static_cast<int>(yaml::integer(v, static_cast<std::int64_t>(f.range.min),
                                           static_cast<std::int64_t>(f.range.max), f.name));
        break;
      case FieldKind::duration: {
        const Duration d = yaml::duration(v);
        if (d < Duration{0}) v.fail(std::string(f.name) + " must not be negative");
        m.*std::get<Duration MachineProfile::*>(f.member) = d;
        break;
      }
      case FieldKind::size:
        m.*std::get<Bytes MachineProfile::*>(f.member) = yaml::size(v);
        break;
      case FieldKind::fraction:
        m.*std::get<double MachineProfile::*>(f.member) = yaml::fraction(v);
        break;
    }
    if (const std::string e = machine_field_range_error(f, m); !e.empty()) v.fail(e);
  }

  // A profile map: optional `name:` and `base:`, then fields. Without `base:`
  // every required field must be given; a missing from_default field takes
  // the shipped `default` profile's value (machine_fields.hpp).
  MachineProfile read_map(const Val& v, bool is_file) {
    std::vector<std::string> allowed = {"name", "base"};
    for (const MachineField& f : kMachineFields) allowed.emplace_back(f.name);
    MapReader r(v, allowed, "a machine profile", [](const std::string& key) -> std::string {
      if (!is_scenario_key(key)) return {};
      return "'" + key + "' is a scenario key: this looks like a scenario, not a machine profile";
    });
    MachineProfile m;
    m.name.clear();
    std::array<bool, kMachineFieldCount> have{};
    std::string base_name;
    if (auto b = r.get("base")) {
      m = load_named(*b);
      base_name = m.name;
      have.fill(true);
    }
    bool overridden = false;
    for (std::size_t i = 0; i < kMachineFieldCount; ++i) {
      const MachineField& f = kMachineFields[i];
      auto fv = r.get(f.name);
      if (!fv) continue;
      have[i] = true;
      overridden = true;
      read_machine_field(f, *fv, m);
    }
    for (std::size_t i = 0; i < kMachineFieldCount; ++i)
      if (!have[i] && kMachineFields[i].presence == FieldPresence::required)
        r.require(kMachineFields[i].name,
                  "a machine profile needs every field, or `base:` naming a profile to start from");
    // Fields added later (a runtime's per-task costs...): a profile written
    // before them takes the shipped `default` profile's values.
    std::optional<MachineProfile> d;
    for (std::size_t i = 0; i < kMachineFieldCount; ++i) {
      if (have[i]) continue;
      if (!d) d = default_profile();
      if (!d)
        r.require(kMachineFields[i].name,
                  "the `default` profile, which supplies missing runtime costs, is being "
                  "loaded or does not exist, so this profile needs every field");
      copy_machine_field(kMachineFields[i], m, *d);
    }
    // Every profile duration is a per-event cost or period of the kernel or a
    // runtime (microseconds to milliseconds); above 1s it is a typo, and it
    // would let the simulator's clock run past int64 nanoseconds.
    for (const MachineField& f : kMachineFields) {
      if (f.kind() != FieldKind::duration) continue;
      if (auto fv = r.get(f.name); fv && yaml::duration(*fv) > std::chrono::seconds(1))
        fv->fail(std::string(f.name) +
                 " must be at most 1s (a machine-profile cost or period), got " +
                 fv->node.Scalar());
    }
    if (m.slice <= Duration{0})
      r.require("slice").fail("the scheduler slice must be greater than 0ns");
    if (m.cfs_bandwidth_slice <= Duration{0})
      r.require("cfs_bandwidth_slice").fail("the CFS bandwidth slice must be greater than 0ns");
    if (m.stack_reserve <= 0)
      (r.get("stack_reserve") ? *r.get("stack_reserve") : v)
          .fail("stack_reserve must be greater than 0B");
    if (m.stack_touch > m.stack_reserve)
      (r.get("stack_touch") ? *r.get("stack_touch") : v)
          .fail("stack_touch (" + format_bytes(static_cast<double>(m.stack_touch)) +
                ") cannot exceed stack_reserve (" +
                format_bytes(static_cast<double>(m.stack_reserve)) + ")");
    if (auto n = r.get("name")) {
      m.name = yaml::scalar(*n, "a profile name");
    } else if (is_file) {
      m.name.clear();  // load_file names it after the name it was asked for
    } else {
      m.name = base_name.empty() ? "inline" : (overridden ? base_name + "+overrides" : base_name);
    }
    if (!is_file) m.source = "inline";
    return m;
  }
};

// ---------------------------------------------------------------------------
// Overrides

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

// ---------------------------------------------------------------------------
// Values

Distribution read_distribution(const Val& v) {
  if (v.node.IsScalar()) return Distribution::fixed(yaml::duration(v));
  if (!v.node.IsMap())
    v.fail(
        "expected a duration (e.g. 2ms) or a distribution map such as {dist: exponential, mean: "
        "2ms}, got " +
        yaml::describe_node(v.node));
  static const std::vector<std::string> kKinds = {"exponential", "uniform", "lognormal", "normal",
                                                  "empirical"};
  // Find the kind first, so the allowed keys can follow it.
  std::string kind;
  for (auto it = v.node.begin(); it != v.node.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == "dist") {
      Val kv{v.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
             v.path + ".dist"};
      kind = yaml::scalar(kv, "a distribution kind (" + yaml::join(kKinds) + ")");
      if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end())
        kv.fail(yaml::unknown_message("distribution", kind, kKinds));
    }
  std::vector<std::string> keys = {"dist"};
  if (kind == "exponential")
    keys.insert(keys.end(), {"mean"});
  else if (kind == "uniform")
    keys.insert(keys.end(), {"min", "max"});
  else if (kind == "lognormal")
    keys.insert(keys.end(), {"median", "p99"});
  else if (kind == "normal")
    keys.insert(keys.end(), {"mean", "sd"});
  else if (kind == "empirical")
    keys.insert(keys.end(), {"file"});
  else
    keys.insert(keys.end(),
                {"mean", "min", "max", "median", "p99", "sd", "file"});  // report the missing dist
  MapReader r(v, keys, "a distribution");
  r.require("dist", "one of " + yaml::join(kKinds));
  if (kind == "exponential") {
    const auto mv = r.require("mean");
    const Duration mean = yaml::duration(mv);
    if (mean <= Duration{0})
      mv.fail("the mean of an exponential distribution must be greater than 0ns");
    return Distribution::exponential(mean);
  }
  if (kind == "uniform") {
    const Duration lo = yaml::duration(r.require("min"));
    const auto hv = r.require("max");
    const Duration hi = yaml::duration(hv);
    if (hi < lo)
      hv.fail("uniform needs min <= max (min " + format_duration(lo) + ", max " +
              format_duration(hi) + ")");
    return Distribution::uniform(lo, hi);
  }
  if (kind == "lognormal") {
    const auto mv = r.require("median");
    const Duration median = yaml::duration(mv);
    if (median <= Duration{0})
      mv.fail("the median of a lognormal distribution must be greater than 0ns");
    const auto pv = r.require("p99");
    const Duration p99 = yaml::duration(pv);
    if (p99 <= median)
      pv.fail("lognormal needs median < p99 (median " + format_duration(median) + ", p99 " +
              format_duration(p99) + ")");
    return Distribution::lognormal(median, p99);
  }
  if (kind == "normal") {
    const Duration mean = yaml::duration(r.require("mean"));
    const Duration sd = yaml::duration(r.require("sd"));
    return Distribution::normal(mean, sd);
  }
  // empirical
  const auto fv = r.require("file");
  const std::string file = yaml::scalar(fv, "a file name");
  fs::path p = file;
  if (p.is_relative()) p = v.src->base_dir() / p;
  std::string error;
  const auto text_read = read_input(p, kMaxSamplesFileBytes, error);
  if (!text_read) fv.fail("cannot read empirical samples file: " + error);
  const std::string& text = *text_read;
  EmpiricalDist e;
  e.file = file;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string cell = line.substr(first, last - first + 1);
    try {
      e.samples.push_back(parse_duration(cell));
    } catch (const UnitError& ex) {
      throw ScenarioError(
          p.string() + ":" + std::to_string(lineno) + ":" + std::to_string(first + 1), fv.path,
          ex.what());
    }
  }
  if (e.samples.empty())
    fv.fail("empirical samples file " + p.string() +
            " holds no durations (one per line, e.g. 1.5ms)");
  return Distribution(EmpiricalDist{std::move(e)});
}

// "4", "cores", "2*cores", "cores*2", "cores/2" (at least 1); host_cpus in
// place of cores: every CPU of the machine, what a runtime that ignores the
// container sees (docs/containers.md).
int thread_count(const Val& v, int cores, int host_cpus) {
  std::string s = yaml::scalar(v, "a thread count (4, cores, 2*cores, cores/2, host_cpus)");
  s.erase(std::remove_if(s.begin(), s.end(),
                         [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
          s.end());
  const std::string expected =
      "expected a thread count: a whole number, cores, N*cores, cores*N or cores/N (got '" +
      v.node.Scalar() + "'); host_cpus may stand for cores";
  if (const auto h = s.find("host_cpus"); h != std::string::npos) {
    s.replace(h, 9, "cores");
    cores = host_cpus;
  }
  auto number = [&](const std::string& t) -> long long {
    if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        }))
      v.fail(expected);
    // More than 9 digits cannot be an int thread count.
    if (t.size() > 9)
      v.fail("a thread count must be at most 2147483647 (and at most run.max_threads), got " + t);
    return std::stoll(t);
  };
  long long n = 0;
  if (s == "cores") {
    n = cores;
  } else if (s.size() > 6 && s.compare(s.size() - 6, 6, "*cores") == 0) {
    n = number(s.substr(0, s.size() - 6)) * cores;
  } else if (s.rfind("cores*", 0) == 0) {
    n = number(s.substr(6)) * cores;
  } else if (s.rfind("cores/", 0) == 0) {
    const long long d = number(s.substr(6));
    if (d == 0) v.fail("cannot divide cores by 0");
    n = std::max<long long>(1, cores / d);
  } else {
    n = number(s);
  }
  if (n < 1) v.fail("a thread count must be at least 1 (got " + std::to_string(n) + ")");
  if (n > std::numeric_limits<int>::max())
    v.fail("a thread count must be at most 2147483647 (and at most run.max_threads), got " +
           std::to_string(n));
  return static_cast<int>(n);
}

// ---------------------------------------------------------------------------
// Sections

Limits read_limits(const Val& v, const MachineProfile& m) {
  MapReader r(v, {"cpus", "period", "cpuset", "burst"}, "limits");
  Limits l;
  if (auto c = r.get("cpus")) {
    // Kubernetes millicores ("1500m" = 1.5) or a number of CPUs.
    const std::string text = yaml::scalar(*c, "a CPU quota such as 1.5 or 1500m");
    double cpus = 0;
    if (!text.empty() && text.back() == 'm') {
      const std::string digits = text.substr(0, text.size() - 1);
      if (digits.empty() || digits.size() > 9 ||
          !std::all_of(digits.begin(), digits.end(),
                       [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
        c->fail("expected Kubernetes millicores such as 1500m (a whole number then m), got '" +
                text + "'");
      cpus = static_cast<double>(std::stoll(digits)) / 1000.0;
    } else {
      cpus = yaml::real_number(*c, "a CPU quota such as 1.5 or 1500m");
    }
    // cgroup cpu.max takes a quota of at least 1ms per period (sched-bwc.rst),
    // and the period is at most 1s: 0.001 CPUs is the smallest quota; a quota
    // of more CPUs than a machine profile may have (65536) is a typo.
    if (cpus < 0.001 || cpus > 65536)
      c->fail(
          "limits.cpus must be between 0.001 (1ms of CPU per 1s period, the smallest cgroup "
          "quota) and 65536 (the most cores a machine profile may have), got " +
          text);
    l.cpus = cpus;
  }
  if (auto p = r.get("period")) {
    // cgroup cpu.cfs_period_us accepts 1 ms .. 1 s (sched-bwc.rst).
    l.period = yaml::duration(*p);
    if (l.period < std::chrono::milliseconds(1) || l.period > std::chrono::seconds(1))
      p->fail("the quota period must be between 1ms and 1s (cgroup cpu.max limits), got " +
              format_duration(l.period));
  }
  if (auto b = r.get("burst")) {
    // tg_set_cfs_bandwidth: 0 <= burst <= quota.
    l.burst = yaml::duration(*b);
    if (!l.cpus) b->fail("limits.burst needs limits.cpus (a burst of unused quota)");
    const Duration quota{std::llround(*l.cpus * static_cast<double>(l.period.count()))};
    if (l.burst < Duration{0} || l.burst > quota)
      b->fail("limits.burst must be between 0ns and the quota (cpus * period = " +
              format_duration(quota) + "), got " + format_duration(l.burst));
  }
  if (auto cs = r.get("cpuset")) {
    std::set<int> cpus;
    auto add = [&](long long cpu, const Val& at) {
      if (cpu < 0 || cpu >= m.cores)
        at.fail("CPU " + std::to_string(cpu) + " is not on machine '" + m.name + "' (CPUs 0-" +
                std::to_string(m.cores - 1) + ")");
      cpus.insert(static_cast<int>(cpu));
    };
    if (cs->is_seq()) {
      if (cs->size() == 0) cs->fail("a cpuset needs at least one CPU");
      std::vector<std::string> parts;
      for (std::size_t i = 0; i < cs->size(); ++i) {
        const Val e = cs->at(i);
        const auto cpu = yaml::integer(e, 0, std::numeric_limits<int>::max(), "a CPU number");
        add(cpu, e);
        parts.push_back(std::to_string(cpu));
      }
      l.cpuset_text = yaml::join(parts, ",");
    } else {
      const std::string text =
          yaml::scalar(*cs, "a cpuset such as \"0-1\" or \"0,2,4-5\", or a list of CPUs");
      const std::string expected =
          "expected a cpuset such as \"0-1\" or \"0,2,4-5\", got '" + text + "'";
      std::string t;
      for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c))) t += c;
      if (t.empty()) cs->fail(expected);
      std::size_t i = 0;
      auto num = [&]() -> long long {
        std::size_t j = i;
        while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
        if (j == i || j - i > 6) cs->fail(expected);
        const long long x = std::stoll(t.substr(i, j - i));
        i = j;
        return x;
      };
      while (i < t.size()) {
        const long long a = num();
        long long b = a;
        if (i < t.size() && t[i] == '-') {
          ++i;
          b = num();
          if (b < a)
            cs->fail("cpuset range " + std::to_string(a) + "-" + std::to_string(b) +
                     " runs backwards");
        }
        for (long long c = a; c <= b; ++c) add(c, *cs);
        if (i < t.size()) {
          if (t[i] != ',' || i + 1 == t.size()) cs->fail(expected);
          ++i;
        }
      }
      l.cpuset_text = text;
    }
    l.cpuset.assign(cpus.begin(), cpus.end());
  }
  return l;
}

RunOptions read_run(const Val& v) {
  MapReader r(
      v, {"reps", "warmup", "timeout", "max_threads", "speed_band", "speed_retries", "speed_wait"},
      "run options");
  RunOptions o;
  constexpr auto kIntMax = std::numeric_limits<int>::max();
  if (auto x = r.get("reps")) o.reps = static_cast<int>(yaml::integer(*x, 1, kIntMax, "run.reps"));
  if (auto x = r.get("warmup"))
    o.warmup = static_cast<int>(yaml::integer(*x, 0, kIntMax, "run.warmup"));
  if (auto x = r.get("timeout")) {
    o.timeout = yaml::duration(*x);
    if (o.timeout <= Duration{0}) x->fail("run.timeout must be greater than 0s");
  }
  if (auto x = r.get("max_threads"))
    o.max_threads = static_cast<int>(yaml::integer(*x, 1, kIntMax, "run.max_threads"));
  if (auto x = r.get("speed_band")) {
    o.speed_band = yaml::fraction(*x);
    if (o.speed_band <= 0 || o.speed_band >= 1)
      x->fail("run.speed_band must be between 0% and 100%");
  }
  if (auto x = r.get("speed_retries"))
    o.speed_retries = static_cast<int>(yaml::integer(*x, 0, 10, "run.speed_retries"));
  if (auto x = r.get("speed_wait")) {
    o.speed_wait = yaml::duration(*x);
    if (o.speed_wait < Duration{0}) x->fail("run.speed_wait must be 0s or more");
  }
  return o;
}

TaskSpec read_task(const Val& v) {
  if (!v.is_seq())
    v.fail("expected a task: a list of phases such as [{cpu: 1ms}, {wait: 10ms}], got " +
           yaml::describe_node(v.node));
  if (v.size() == 0) v.fail("a task needs at least one phase (cpu, wait or lock)");
  TaskSpec task;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Val pv = v.at(i);
    MapReader pr(pv, {"cpu", "wait", "lock"}, "a phase");
    const auto keys = pr.keys();
    if (keys.size() != 1)
      pv.fail("a phase has exactly one of cpu, wait, lock; got " +
              (keys.empty() ? std::string("none") : yaml::join(keys)) +
              " (write them as separate list items)");
    if (auto c = pr.get("cpu")) {
      task.push_back(CpuPhase{read_distribution(*c)});
    } else if (auto w = pr.get("wait")) {
      task.push_back(WaitPhase{read_distribution(*w)});
    } else {
      const Val lv = *pr.get("lock");
      MapReader lr(lv, {"name", "shards", "hold", "wait_inside"}, "a lock phase");
      LockPhase lp;
      lp.name =
          yaml::scalar(lr.require("name", "the mutex's name; phases with the same name share it"),
                       "a lock name");
      if (lp.name.empty()) lr.require("name").fail("a lock name cannot be empty");
      if (auto s = lr.get("shards"))
        lp.shards = static_cast<int>(yaml::integer(*s, 1, kMaxLockShards, "shards"));
      lp.hold = read_distribution(lr.require("hold", "CPU work done while holding the lock"));
      if (auto wi = lr.get("wait_inside")) lp.wait_inside = read_distribution(*wi);
      task.push_back(std::move(lp));
    }
  }
  return task;
}

Arrival read_arrival(const Val& v) {
  static const std::vector<std::string> kKinds = {"batch", "poisson", "periodic", "closed"};
  std::string kind;
  if (v.is_map())
    for (auto it = v.node.begin(); it != v.node.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "kind") {
        Val kv{v.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
               v.path + ".kind"};
        kind = yaml::scalar(kv, "an arrival kind (" + yaml::join(kKinds) + ")");
        if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end())
          kv.fail(yaml::unknown_message("arrival kind", kind, kKinds));
      }
  std::vector<std::string> keys = {"kind"};
  if (kind == "batch")
    keys.insert(keys.end(), {"count"});
  else if (kind == "poisson")
    keys.insert(keys.end(), {"rate", "count", "duration"});
  else if (kind == "periodic")
    keys.insert(keys.end(), {"interval", "count", "duration"});
  else if (kind == "closed")
    keys.insert(keys.end(), {"clients", "think", "duration", "count"});
  else
    keys.insert(keys.end(), {"count", "rate", "duration", "interval", "clients",
                             "think"});  // report the missing kind
  MapReader r(v, keys, "an arrival process", [&](const std::string& key) -> std::string {
    static const std::vector<std::string> kAll = {"count",    "rate",    "duration",
                                                  "interval", "clients", "think"};
    if (!kind.empty() && std::find(kAll.begin(), kAll.end(), key) != kAll.end())
      return "'" + key + "' is not a parameter of arrival kind '" + kind + "' (it takes " +
             yaml::join(std::vector<std::string>(keys.begin() + 1, keys.end())) + ")";
    return {};
  });
  r.require("kind", "one of " + yaml::join(kKinds));
  Arrival a;
  auto count = [&]() { return yaml::integer(*r.get("count"), 1, kMaxTasks, "count"); };
  auto limit = [&]() {
    const bool c = r.has("count"), d = r.has("duration");
    if (c && d) r.get("duration")->fail("give either count or duration, not both");
    if (!c && !d) r.require("count", "or duration: when to stop arriving");
    if (c) a.count = count();
    if (d) {
      a.duration = yaml::duration(*r.get("duration"));
      if (*a.duration <= Duration{0}) r.get("duration")->fail("duration must be greater than 0s");
    }
  };
  // The task count an open arrival implies, checked against the cap before
  // the generator allocates anything; `expected` is "rate x duration" etc.
  auto check_tasks = [&](double tasks, const std::string& expected) {
    if (tasks > static_cast<double>(kMaxTasks))
      r.get("duration")
          ->fail(expected + " = " + fmt::format("{:.4g}", tasks) + " tasks, more than the " +
                 std::to_string(kMaxTasks) + "-task cap of one workload");
  };
  // The last arrival, against the simulated horizon.
  auto check_span = [&](double seconds, const Val& at, const std::string& expected) {
    if (seconds > to_seconds(kMaxDuration))
      at.fail(expected + " puts the last arrival " + fmt::format("{:.4g}", seconds) +
              "s after the start, beyond the simulated horizon of 3155760000s (100 years)");
  };
  if (kind == "batch") {
    a.kind = ArrivalKind::batch;
    r.require("count", "how many tasks are submitted at t=0");
    a.count = count();
  } else if (kind == "poisson") {
    a.kind = ArrivalKind::poisson;
    const auto rv = r.require("rate", "mean arrivals per second, e.g. 5000/s");
    a.rate = yaml::rate(rv);
    limit();
    if (a.duration) check_tasks(a.rate * to_seconds(*a.duration), "rate x duration");
    if (a.count)
      check_span(static_cast<double>(*a.count) / a.rate, rv,
                 "count / rate (the mean arrival time)");
  } else if (kind == "periodic") {
    a.kind = ArrivalKind::periodic;
    const auto iv = r.require("interval", "time between arrivals, e.g. 1ms");
    a.interval = yaml::duration(iv);
    if (a.interval <= Duration{0}) iv.fail("interval must be greater than 0ns");
    limit();
    if (a.duration)
      check_tasks(std::ceil(to_seconds(*a.duration) / to_seconds(a.interval)),
                  "duration / interval");
    if (a.count)
      check_span(static_cast<double>(*a.count - 1) * to_seconds(a.interval), iv,
                 "interval x (count - 1)");
  } else {
    a.kind = ArrivalKind::closed;
    a.clients = static_cast<int>(
        yaml::integer(r.require("clients", "how many clients keep one request each in flight"), 1,
                      kMaxTasks, "clients"));
    if (auto t = r.get("think"))
      a.think = read_distribution(*t);
    else
      a.think = Distribution::fixed(Duration{0});
    const auto dv = r.require("duration", "how long the closed loop runs");
    a.duration = yaml::duration(dv);
    if (*a.duration <= Duration{0}) dv.fail("duration must be greater than 0s");
    if (r.has("count")) a.count = count();  // optional cap on total requests
  }
  return a;
}

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

GraphSpec read_graph(const Val& v) {
  MapReader r(v, {"nodes", "fork_join"}, "a task graph");
  GraphSpec g;
  if (r.has("nodes") == r.has("fork_join"))
    v.fail(r.has("nodes")
               ? "give either graph.nodes or graph.fork_join, not both"
               : "a graph needs `nodes:` (explicit nodes) or `fork_join:` (a generator)");
  if (auto fj = r.get("fork_join")) {
    MapReader fr(*fj, {"depth", "fanout", "leaf", "fork", "join"}, "a fork-join generator");
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
    g.fork_join = std::move(f);
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
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
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
  return g;
}

WorkloadSpec read_workload_spec(const Val& v) {
  MapReader r(v, {"arrival", "task", "classes", "graph"}, "a workload");
  WorkloadSpec w;
  if (auto g = r.get("graph")) {
    for (const char* k : {"arrival", "task", "classes"})
      if (auto x = r.get(k))
        x->fail(std::string("'") + k +
                "' cannot be combined with 'graph' (a graph replaces arrival and task)");
    w.graph = read_graph(*g);
    return w;
  }
  w.arrival = read_arrival(r.require("arrival", "or graph"));
  const bool t = r.has("task"), c = r.has("classes");
  if (t && c) r.get("classes")->fail("give either task or classes, not both");
  if (!t && !c) r.require("task", "or classes: what each task does");
  if (t) {
    w.classes.push_back(TaskClass{1.0, read_task(*r.get("task"))});
    return w;
  }
  const Val cv = *r.get("classes");
  if (!cv.is_seq())
    cv.fail("expected a list of {weight, task}, got " + yaml::describe_node(cv.node));
  if (cv.size() == 0) cv.fail("classes needs at least one class");
  if (cv.size() > std::numeric_limits<std::uint16_t>::max())
    cv.fail("at most 65535 task classes, got " + std::to_string(cv.size()));
  // Weights are either all percentages (70%, 30%), which must add up to 100%,
  // or all plain numbers (3, 1), which are relative: 3 and 1 mean 75% and 25%.
  constexpr double kPercentSlack = 1e-6;  // 33.3333333% x 3 is 100%
  double sum = 0;
  std::optional<bool> percent;  // the form of the first weight
  for (std::size_t i = 0; i < cv.size(); ++i) {
    const Val e = cv.at(i);
    MapReader er(e, {"weight", "task"}, "a task class");
    const auto wv = er.require("weight", "a percentage such as 70%, or a relative number");
    TaskClass tc;
    tc.weight = yaml::fraction(wv, /*allow_above_one=*/true);
    if (tc.weight <= 0) wv.fail("a class weight must be greater than 0");
    std::string text = wv.node.Scalar();
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    const bool is_percent = !text.empty() && text.back() == '%';
    if (!percent) percent = is_percent;
    if (*percent != is_percent)
      wv.fail(
          "class weights are either all percentages (70%, 30%: they add up to 100%) or all "
          "relative numbers (7, 3), not a mix");
    if (is_percent && tc.weight > 1 + kPercentSlack)
      wv.fail("a class weight in percent must be at most 100%, got " + text);
    tc.task = read_task(er.require("task"));
    sum += tc.weight;
    w.classes.push_back(std::move(tc));
  }
  if (*percent && std::fabs(sum - 1) > kPercentSlack)
    cv.fail("class weights in percent must add up to 100%, they add up to " +
            fmt::format("{:.6g}", sum * 100) +
            "% (write plain numbers such as 7 and 3 for relative weights)");
  if (!std::isfinite(sum)) cv.fail("the class weights add up to more than a number can hold");
  for (auto& tc : w.classes) tc.weight /= sum;
  return w;
}

// The sizes a workload implies, checked before the generator allocates:
// distinct lock shards against kMaxLockShards, the tasks of a closed loop
// against kMaxTasks, and the mean serial length (last arrival plus every
// task's mean length) against the simulated horizon. The generator checks
// the sampled lengths exactly.
void check_workload_size(const WorkloadSpec& w, const Val& at, double quota) {
  std::map<std::string, int> shards;
  auto add_locks = [&](const TaskSpec& t) {
    for (const auto& p : t)
      if (const auto* l = std::get_if<LockPhase>(&p)) shards.emplace(l->name, l->shards);
  };
  for (const auto& c : w.classes) add_locks(c.task);
  if (w.graph) {
    for (const auto& n : w.graph->nodes) add_locks(n.task);
    if (w.graph->fork_join)
      for (const auto* t :
           {&w.graph->fork_join->leaf, &w.graph->fork_join->fork, &w.graph->fork_join->join})
        add_locks(*t);
  }
  std::int64_t total_shards = 0;
  for (const auto& [name, n] : shards) total_shards += n;
  if (total_shards > kMaxLockShards)
    at.fail_section("the lock phases declare " + std::to_string(total_shards) +
                    " mutex shards in all, more than the maximum of " +
                    std::to_string(kMaxLockShards));
  if (!w.arrival) return;
  const Arrival& a = *w.arrival;
  double mean_task = 0;
  for (const auto& c : w.classes) mean_task += c.weight * mean_task_seconds(c.task);
  const double horizon = to_seconds(kMaxDuration);
  if (a.kind == ArrivalKind::closed) {
    const std::uint64_t per_client = closed_tasks_per_client(a, mean_task);
    if (per_client * static_cast<std::uint64_t>(a.clients) > static_cast<std::uint64_t>(kMaxTasks))
      at.fail_section("closed loop: " + std::to_string(a.clients) + " clients x " +
                      std::to_string(per_client) +
                      " tasks each (duration / mean cycle, x2 + 16) is more "
                      "than the " +
                      std::to_string(kMaxTasks) + "-task cap; shorten the duration");
    if (static_cast<double>(per_client) * (mean_task + a.think.mean_seconds()) > horizon)
      at.fail_section(
          "closed loop: one client's " + std::to_string(per_client) +
          " tasks run for longer than the simulated horizon of 3155760000s (100 years)");
    return;
  }
  double tasks = 0, span = 0;
  if (a.count) tasks = static_cast<double>(*a.count);
  if (a.kind == ArrivalKind::poisson) {
    if (!a.count) tasks = a.rate * to_seconds(*a.duration);
    span = a.duration ? to_seconds(*a.duration) : tasks / a.rate;
  } else if (a.kind == ArrivalKind::periodic) {
    if (!a.count) tasks = std::ceil(to_seconds(*a.duration) / to_seconds(a.interval));
    span = std::max(0.0, tasks - 1) * to_seconds(a.interval);
  }
  // A quota below one CPU stretches the work: at most `quota` CPUs run it.
  const double serial = span + tasks * mean_task / std::min(1.0, quota);
  if (serial > horizon)
    at.fail_section(
        fmt::format("{:.4g}", tasks) + " tasks of on average " + format_seconds(mean_task) +
        " each, after the last arrival at " + format_seconds(span) +
        (quota < 1 ? ", under a quota of " + fmt::format("{:g}", quota) + " CPUs" : "") +
        ", take " + fmt::format("{:.4g}", serial) +
        "s end to end, beyond the simulated horizon of 3155760000s (100 years)");
}

WorkloadSpec read_workload(const Val& v, const Limits& limits) {
  WorkloadSpec w = read_workload_spec(v);
  check_workload_size(w, v, limits.cpus.value_or(1.0));
  return w;
}

BackendSpec read_backend(const Val& v, int cores, int host_cpus) {
  std::vector<std::string> kinds;
  for (auto k : kAllBackends) kinds.emplace_back(to_string(k));
  std::optional<BackendKind> kind;
  if (v.is_map())
    for (auto it = v.node.begin(); it != v.node.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "kind") {
        Val kv{v.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
               v.path + ".kind"};
        const std::string name = yaml::scalar(kv, "a backend kind (" + yaml::join(kinds) + ")");
        kind = backend_kind_from(name);
        if (!kind) kv.fail(yaml::unknown_message("backend kind", name, kinds));
      }
  // The parameters of the backend registry (models/backend_registry.hpp).
  std::vector<std::string> allowed = {"kind"};
  for (const BackendInfo& b : kBackends)
    if (!kind || b.kind == *kind)  // without a kind, accept all so the missing kind is reported
      for (const BackendParam& p : b.params)
        if (std::find(allowed.begin(), allowed.end(), p.key) == allowed.end())
          allowed.emplace_back(p.key);
  MapReader r(v, allowed, "a backend", [&](const std::string& key) -> std::string {
    if (!kind) return {};
    const std::vector<std::string> owners = backend_kinds_with_param(key);
    if (owners.empty()) return {};
    return "'" + key + "' is not a parameter of backend kind '" + std::string(to_string(*kind)) +
           "' (it belongs to " + yaml::join(owners) + ")";
  });
  r.require("kind", "one of " + yaml::join(kinds));
  BackendSpec b;
  b.kind = *kind;
  if (auto s = r.get("stack")) {
    b.stack = yaml::size(*s);
    // glibc refuses stacks below PTHREAD_STACK_MIN (16 KiB on x86-64 Linux).
    if (b.stack < 16 * 1024) s->fail("a thread stack must be at least 16KiB (PTHREAD_STACK_MIN)");
  }
  auto count_or = [&](const char* key, int dflt) {
    if (auto x = r.get(key)) return thread_count(*x, cores, host_cpus);
    return dflt;
  };
  switch (b.kind) {
    case BackendKind::thread_per_task:
      break;
    case BackendKind::pool: {
      b.threads = count_or("threads", cores);
      b.max_threads = count_or("max_threads", b.threads);
      if (b.max_threads < b.threads)
        r.get("max_threads")
            ->fail("max_threads (" + std::to_string(b.max_threads) +
                   ") must be at least threads (" + std::to_string(b.threads) + ")");
      if (auto q = r.get("queue")) {
        if (q->is_scalar() && q->node.Scalar() == "unbounded")
          b.queue.reset();
        else
          b.queue = yaml::integer(*q, 0, std::numeric_limits<std::int64_t>::max(),
                                  "queue (a capacity, or unbounded)");
      }
      if (auto rj = r.get("reject")) {
        static const std::vector<std::string> kPolicies = {"abort", "caller-runs", "discard",
                                                           "discard-oldest"};
        const std::string p = yaml::scalar(*rj, "a reject policy (" + yaml::join(kPolicies) + ")");
        if (p == "abort")
          b.reject = RejectPolicy::abort;
        else if (p == "caller-runs")
          b.reject = RejectPolicy::caller_runs;
        else if (p == "discard")
          b.reject = RejectPolicy::discard;
        else if (p == "discard-oldest")
          b.reject = RejectPolicy::discard_oldest;
        else
          rj->fail(yaml::unknown_message("reject policy", p, kPolicies));
      }
      if (auto k = r.get("keep_alive")) b.keep_alive = yaml::duration(*k);
      break;
    }
    case BackendKind::injecting_pool: {
      b.min_threads = count_or("min_threads", cores);
      // The spec's default max_threads for injecting-pool (after the Win32 default
      // pool's maximum, which mechanisms.md lists as 500 or 512, unconfirmed).
      constexpr int kDefaultInjectingMax = 512;
      b.max_threads = count_or("max_threads", std::max(kDefaultInjectingMax, b.min_threads));
      if (b.min_threads > b.max_threads)
        (r.get("max_threads") ? *r.get("max_threads") : *r.get("min_threads"))
            .fail("injecting-pool needs min_threads <= max_threads (min " +
                  std::to_string(b.min_threads) + ", max " + std::to_string(b.max_threads) + ")");
      if (auto d = r.get("injection_delay")) {
        b.injection_delay = yaml::duration(*d);
        if (b.injection_delay <= Duration{0}) d->fail("injection_delay must be greater than 0ns");
      }
      break;
    }
    case BackendKind::virtual_threads:
      b.carriers = count_or("carriers", cores);
      break;
    case BackendKind::event_loop:
      b.loops = count_or("loops", cores);
      break;
    case BackendKind::work_stealing:
    case BackendKind::tbb:
    case BackendKind::asio_pool:
      b.threads = count_or("threads", cores);
      break;
  }
  return b;
}

Tolerance read_tolerance(const Val& v) {
  std::vector<std::string> allowed = {"default"};
  for (auto n : kMetricNames) allowed.emplace_back(n);
  MapReader r(v, allowed, "tolerances", [&](const std::string& key) {
    return yaml::unknown_message("metric", key, allowed) +
           " (tolerance keys are default or a metric name)";
  });
  Tolerance t;
  for (const auto& k : r.keys()) {
    const Val fv = *r.get(k);
    // `off`: the metric is not compared at all (Tolerance::ignored).
    if (fv.is_scalar() && fv.node.Scalar() == "off") {
      if (k == "default")
        fv.fail("the default tolerance cannot be off; turn metrics off one by one");
      t.ignored.insert(k);
      continue;
    }
    const double f = yaml::fraction(fv, /*allow_above_one=*/true);
    if (k == "default")
      t.default_tolerance = f;
    else
      t.per_metric[k] = f;
  }
  return t;
}

// The backend key that sets the thread bound (so an error about it names that
// key, or the `--set` that gave it), else the backend map itself.
Val thread_bound_key(const Val& bv) {
  if (!bv.is_map()) return bv;
  for (const char* k : {"max_threads", "threads", "min_threads", "carriers", "loops"})
    for (auto it = bv.node.begin(); it != bv.node.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == k)
        return Val{bv.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
                   yaml::join_path(bv.path, k)};
  return bv;
}

Scenario read_scenario(YAML::Node root, Source& src, const LoadOptions& opts) {
  apply_overrides(root, src, opts);
  const Val rv = yaml::root_val(src, root);
  if (!root.IsDefined() || root.IsNull())
    rv.fail("the scenario is empty: expected a map with name, workload and backend");
  MapReader top(rv,
                {"name", "description", "seed", "machine", "limits", "workload", "backend", "run",
                 "tolerance"},
                "a scenario", [](const std::string& key) -> std::string {
                  if (!is_profile_key(key)) return {};
                  return "'" + key +
                         "' is a machine-profile field: this looks like a machine "
                         "profile, not a scenario (give it with --machine FILE or `machine:`)";
                });
  Scenario s;
  s.source_file = src.display();
  const auto nv = top.require("name", "lower-case letters, digits and '-'");
  s.name = yaml::scalar(nv, "a scenario name");
  if (s.name.empty() || !std::all_of(s.name.begin(), s.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      }))
    nv.fail("a scenario name uses only lower-case letters, digits and '-' (got '" + s.name + "')");
  if (auto d = top.get("description"))
    s.description = d->node.IsNull() ? "" : yaml::scalar(*d, "a description");
  if (auto sd = top.get("seed")) s.seed = yaml::unsigned_integer(*sd, "a seed");

  ProfileLoader pl{opts, {}};
  if (auto m = top.get("machine")) {
    s.machine = m->is_map() ? pl.read_map(*m, /*is_file=*/false) : pl.load_named(*m);
  } else {
    // No machine: the shipped generic profile, so a bare scenario is reproducible.
    s.machine = pl.load_named(Val{&src, YAML::Node("default"), rv.mark, "machine"});
  }
  if (auto l = top.get("limits")) s.limits = read_limits(*l, s.machine);
  if (auto r = top.get("run")) s.run = read_run(*r);
  s.workload = read_workload(top.require("workload", "arrival + task, or graph"), s.limits);
  const auto bv = top.require("backend", "kind and its parameters");
  s.backend = read_backend(bv, effective_cores(s.machine, s.limits), s.machine.cores);
  if (auto t = top.get("tolerance")) s.tolerance = read_tolerance(*t);

  if (const int bound = s.backend.thread_bound(); bound > s.run.max_threads)
    thread_bound_key(bv).fail_section("backend " + std::string(to_string(s.backend.kind)) +
                                      " may run up to " + std::to_string(bound) +
                                      " threads, more than run.max_threads (" +
                                      std::to_string(s.run.max_threads) + ")");
  return s;
}

}  // namespace

Scenario load_scenario_text(const std::string& text, const std::string& display_name,
                            const LoadOptions& opts) {
  fs::path base = fs::path(display_name).parent_path();
  if (base.empty()) base = fs::current_path();
  Source src(display_name, base);
  YAML::Node root = parse_yaml(text, display_name);
  return read_scenario(root, src, opts);
}

Scenario load_scenario(const fs::path& file, const LoadOptions& opts) {
  std::string error;
  const auto text = read_input(file, kMaxScenarioFileBytes, error);
  if (!text)
    throw ScenarioError(file.string(), "",
                        error.rfind("no such file", 0) == 0 ? "no such scenario file"
                                                            : "cannot read the scenario: " + error);
  return load_scenario_text(*text, file.string(), opts);
}

MachineProfile load_machine_profile(const std::string& name_or_path, const LoadOptions& opts) {
  std::string err;
  auto req = resolve_profile(name_or_path, fs::current_path(), opts, err);
  if (!req) throw ScenarioError(name_or_path, "machine", err);
  ProfileLoader pl{opts, {}};
  Source src(name_or_path, fs::current_path());
  return pl.load_file(*req, YAML::Mark::null_mark(), src, "machine");
}

std::string machine_profile_yaml(const MachineProfile& m, const std::string& comment) {
  std::string out;
  std::istringstream lines(comment);
  std::string line;
  while (std::getline(lines, line)) out += line.empty() ? "#\n" : "# " + line + "\n";
  YAML::Emitter name;
  name << m.name;
  out += "name: " + std::string(name.c_str()) + "\n";
  for (const MachineField& f : kMachineFields)
    out += std::string(f.name) + ": " + machine_field_yaml(f, m) + "\n";
  return out;
}

}  // namespace poolsim
