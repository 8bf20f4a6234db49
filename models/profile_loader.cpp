// profile_loader.cpp: resolve_profile and ProfileLoader (see the header), and
// load_machine_profile.
#include "models/profile_loader.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <system_error>

#include "models/input_file.hpp"
#include "models/machine_fields.hpp"
#include "models/scenario_paths.hpp"
#include "models/yaml_document.hpp"

namespace poolsim::loader {

namespace fs = std::filesystem;
using yaml::MapReader;
using yaml::Source;
using yaml::Val;

namespace {

bool is_scenario_key(const std::string& k) {
  for (const char* f : {"description", "seed", "machine", "limits", "resources", "workload",
                        "backend", "run", "tolerance"})
    if (k == f) return true;
  return false;
}

fs::path config_dir_of(const LoadOptions& opts) {
  return opts.config_dir.empty() ? default_config_dir() : opts.config_dir;
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

// One field's value, read by the field's kind (machine_fields.hpp).
void read_machine_field(const MachineField& f, const Val& v, MachineProfile& m) {
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

// fs::exists without its throw: a path the OS refuses to look up (a name
// too long, a component that is not a directory, no permission) counts as
// absent, and `why` gets the OS's reason (" (File name too long)").
bool present(const fs::path& p, std::string& why) {
  std::error_code ec;
  const bool there = fs::exists(p, ec);
  if (ec) why = " (" + ec.message() + ")";
  return there && !ec;
}

}  // namespace

bool looks_like_path(const std::string& s) {
  auto ends = [&](std::string_view suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
  };
  return s.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

// Resolves NAME / PATH / host to a file. Errors are returned, not thrown, so
// the caller can place them at the key that asked for the profile.
std::optional<ProfileRequest> resolve_profile(const std::string& name, const fs::path& base_dir,
                                              const LoadOptions& opts, std::string& error) {
  if (name.empty()) {
    error = "expected a machine profile name (default, host, a name under machines/) or a path";
    return std::nullopt;
  }
  std::string why;
  if (name == "host") {
    const fs::path p = opts.host_profile.empty() ? host_profile_path() : opts.host_profile;
    if (!present(p, why) && opts.create_host_profile) opts.create_host_profile(p);
    if (!present(p, why)) {
      error = "no host profile at " + p.string() + why +
              ": run `poolsim calibrate` to measure this machine";
      return std::nullopt;
    }
    return ProfileRequest{p, "host"};
  }
  if (looks_like_path(name)) {
    fs::path p = name;
    if (p.is_relative() && !base_dir.empty()) p = base_dir / p;
    if (!present(p, why)) {
      error = "machine profile file " + p.string() + " does not exist" + why;
      return std::nullopt;
    }
    return ProfileRequest{p, fs::path(name).stem().string()};
  }
  const fs::path dir = config_dir_of(opts);
  const fs::path p = dir / "machines" / (name + ".yaml");
  if (!present(p, why)) {
    error = yaml::unknown_message("machine profile", name, available_profiles(dir)) +
            " (looked for " + p.string() + why + ")";
    return std::nullopt;
  }
  return ProfileRequest{p, name};
}

MachineProfile ProfileLoader::load_file(const ProfileRequest& req, const YAML::Mark& at,
                                        const Source& at_src, const std::string& at_path) {
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
std::optional<MachineProfile> ProfileLoader::default_profile() {
  std::string err;
  std::optional<ProfileRequest> req = resolve_profile("default", {}, opts, err);
  if (!req) {
    const fs::path p = fs::path(default_config_dir()) / "machines" / "default.yaml";
    if (std::string why; !present(p, why)) return std::nullopt;
    req = ProfileRequest{p, "default"};
  }
  std::error_code ec;
  const std::string canon = fs::weakly_canonical(req->file, ec).string();
  if (std::find(chain.begin(), chain.end(), canon) != chain.end()) return std::nullopt;
  Source src(req->file.string(), req->file.parent_path());
  return load_file(*req, YAML::Mark::null_mark(), src, "machine");
}

MachineProfile ProfileLoader::load_named(const Val& v) {
  const std::string name = yaml::scalar(v, "a machine profile name or path");
  std::string err;
  auto req = resolve_profile(name, v.src->base_dir(), opts, err);
  if (!req) v.fail(err);
  return load_file(*req, v.mark, *v.src, v.path);
}

// A profile map: optional `name:` and `base:`, then fields. Without `base:`
// every required field must be given; a missing from_default field takes
// the shipped `default` profile's value (machine_fields.hpp).
MachineProfile ProfileLoader::read_map(const Val& v, bool is_file) {
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
               " must be at most 1s (a machine-profile cost or period), got " + fv->node.Scalar());
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

}  // namespace poolsim::loader

namespace poolsim {

MachineProfile load_machine_profile(const std::string& name_or_path, const LoadOptions& opts) {
  std::string err;
  auto req = loader::resolve_profile(name_or_path, std::filesystem::current_path(), opts, err);
  if (!req) throw ScenarioError(name_or_path, "machine", err);
  loader::ProfileLoader pl{opts, {}};
  yaml::Source src(name_or_path, std::filesystem::current_path());
  return pl.load_file(*req, YAML::Mark::null_mark(), src, "machine");
}

}  // namespace poolsim
