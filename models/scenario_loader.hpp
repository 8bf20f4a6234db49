// scenario_loader.hpp: YAML scenario -> Scenario, with errors people can act on.
//
// Every error is a ScenarioError carrying file:line:col (yaml-cpp marks), the
// key path ("backend.threads") and what was expected; unknown keys get a
// did-you-mean suggestion. `--set key.path=value` overrides are applied to the
// YAML tree before validation, so they are checked like the file's own keys
// (their errors point at "--set key.path=value"). The CLI maps ScenarioError to
// exit code 2.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/machine.hpp"
#include "models/scenario.hpp"

namespace poolsim {

class ScenarioError : public std::runtime_error {
 public:
  // `where` is "file:line:col" (or "--set backend.threads=x"); `key` the key
  // path; `message` what was expected. what() is "where: key: message".
  ScenarioError(std::string where, std::string key, std::string message);
  const std::string& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  std::string where_, key_, message_;
};

struct LoadOptions {
  std::vector<std::string> sets;       // "key.path=value", applied in order
  std::optional<std::string> machine;  // --machine NAME|PATH replaces `machine:`
  std::optional<std::uint64_t> seed;   // --seed N replaces `seed:`
  // Directory holding machines/ (profiles) and bundled scenarios. Defaults to
  // default_config_dir().
  std::filesystem::path config_dir;
  // Where the `host` profile lives (default: host_profile_path()).
  std::filesystem::path host_profile;
  // Called when the `host` profile is requested but does not exist yet; it
  // must create the file (the CLI calibrates). Unset: a ScenarioError.
  std::function<void(const std::filesystem::path&)> create_host_profile;
};

// $POOLSIM_CONFIG_DIR, else PREFIX/share/poolsim/configs when this program
// runs as PREFIX/bin/... of an installed poolsim, else the build-time configs/.
std::filesystem::path default_config_dir();
// $POOLSIM_HOST_PROFILE, else $XDG_CONFIG_HOME/poolsim/host.yaml, else
// ~/.config/poolsim/host.yaml.
std::filesystem::path host_profile_path();

Scenario load_scenario(const std::filesystem::path& file, const LoadOptions& opts = {});
Scenario load_scenario_text(const std::string& yaml, const std::string& display_name,
                            const LoadOptions& opts = {});

// Resolve a machine profile by name ("default", "host", a name under
// configs/machines/) or path to a YAML file.
MachineProfile load_machine_profile(const std::string& name_or_path, const LoadOptions& opts = {});
// Write a profile as YAML (used by calibrate).
std::string machine_profile_yaml(const MachineProfile& m, const std::string& comment = {});

// The closest candidate by edit distance, if it is close enough to suggest.
std::optional<std::string> did_you_mean(const std::string& word,
                                        const std::vector<std::string>& candidates);

}  // namespace poolsim
