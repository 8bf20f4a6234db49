// scenario_paths.hpp: where the loader finds configuration by default.
//
// The bundled configs (machine profiles, scenarios) and the `host` machine
// profile written by `poolsim calibrate`. These read the process environment
// ($POOLSIM_CONFIG_DIR, $POOLSIM_HOST_PROFILE, $XDG_CONFIG_HOME, $HOME, the
// password database, /proc/self/exe); the loader calls them only when
// LoadOptions leaves config_dir or host_profile empty.
#pragma once

#include <filesystem>

namespace poolsim {

// $POOLSIM_CONFIG_DIR, else PREFIX/share/poolsim/configs when this program
// runs as PREFIX/bin/... of an installed poolsim, else the build-time configs/.
std::filesystem::path default_config_dir();
// $POOLSIM_HOST_PROFILE, else $XDG_CONFIG_HOME/poolsim/host.yaml, else
// ~/.config/poolsim/host.yaml.
std::filesystem::path host_profile_path();

}  // namespace poolsim
