// profile_loader.hpp: machine profiles by name, path or inline map, with
// `base:` inheritance.
//
// A profile is asked for as `default`, `host` (the calibrated profile of this
// machine, LoadOptions::host_profile; when it does not exist yet,
// LoadOptions::create_host_profile may create it), a name under the config
// directory's machines/, or a path to a YAML file (relative to the file that
// names it). A profile map has optional `name:` and `base:`, then fields
// (models/machine_fields.hpp, one table). Without `base:` every required
// field must be given; a from_default field left out takes the shipped
// `default` profile's value. `base:` chains are followed with cycle detection.
// An inline map is named "inline", or "BASE+overrides" when it changes fields
// of `base: BASE`.
//
// Invariants: every duration of a profile is at most 1s, the slices are
// positive, stack_touch <= stack_reserve; problems are ScenarioErrors at the
// key that asked for the profile or inside the profile file.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/machine.hpp"
#include "models/scenario_loader.hpp"
#include "models/yaml_reader.hpp"

namespace poolsim::loader {

// A profile argument that names a file: it has a '/' or ends in .yaml/.yml.
bool looks_like_path(const std::string& s);

struct ProfileRequest {
  std::filesystem::path file;  // resolved profile file
  std::string name;            // the name it was asked for ("default", "host", file stem)
};

// Resolves NAME / PATH / host to a file. Errors are returned, not thrown, so
// the caller can place them at the key that asked for the profile.
std::optional<ProfileRequest> resolve_profile(const std::string& name,
                                              const std::filesystem::path& base_dir,
                                              const LoadOptions& opts, std::string& error);

struct ProfileLoader {
  const LoadOptions& opts;
  std::vector<std::string> chain;  // files being loaded, for base: cycles

  // Reads the profile file of `req`; errors reading it are placed at `at`.
  MachineProfile load_file(const ProfileRequest& req, const YAML::Mark& at,
                           const yaml::Source& at_src, const std::string& at_path);
  // The shipped `default` profile (the loader's config directory, else the
  // build's), or nothing when it is itself being loaded or cannot be found.
  std::optional<MachineProfile> default_profile();
  // A profile named by the scalar `v` (resolve_profile).
  MachineProfile load_named(const yaml::Val& v);
  // A profile map (a file's root, or an inline `machine:` map).
  MachineProfile read_map(const yaml::Val& v, bool is_file);
};

}  // namespace poolsim::loader
