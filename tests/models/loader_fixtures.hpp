// loader_fixtures.hpp: load options for the models tests.
#pragma once

#include <filesystem>

#include "models/scenario_loader.hpp"

namespace poolsim::test {

// The shipped configs/ (machine profiles by name) and no host profile (a
// path that does not exist), so nothing depends on this machine's
// ~/.config/poolsim.
inline LoadOptions shipped() {
  LoadOptions o;
  o.config_dir = std::filesystem::path(POOLSIM_SOURCE_DIR) / "configs";
  o.host_profile = std::filesystem::path(POOLSIM_TEST_DATA) / "loader" / "no-such-host.yaml";
  return o;
}

}  // namespace poolsim::test
