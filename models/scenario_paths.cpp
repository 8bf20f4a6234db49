// scenario_paths.cpp: default config directory and host-profile path (see the
// header).
#include "models/scenario_paths.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>

namespace poolsim {

namespace fs = std::filesystem;

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

}  // namespace poolsim
