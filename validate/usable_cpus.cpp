// usable_cpus.cpp: affinity mask and cgroup v1/v2 CPU quota (see usable_cpus.hpp).
#include "validate/usable_cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace poolsim::validate {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// "150000 100000" -> 1.5; "max 100000" or garbage -> nullopt.
std::optional<double> v2_quota(const fs::path& dir) {
  const auto line = read_first_line(dir / "cpu.max");
  if (!line) return std::nullopt;
  std::istringstream in(*line);
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || !(period > 0)) return std::nullopt;
  try {
    const double q = std::stod(quota);
    return q > 0 ? std::optional<double>(q / period) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us.
std::optional<double> v1_quota(const fs::path& dir) {
  const auto q = read_first_line(dir / "cpu.cfs_quota_us");
  const auto p = read_first_line(dir / "cpu.cfs_period_us");
  if (!q || !p) return std::nullopt;
  try {
    const double quota = std::stod(*q), period = std::stod(*p);
    if (quota <= 0 || period <= 0) return std::nullopt;
    return quota / period;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The smallest quota from `leaf` up to `mount` (both inclusive).
template <class Reader>
std::optional<double> smallest_along(const fs::path& mount, const std::string& rel, Reader read) {
  fs::path dir = mount / fs::path(rel).relative_path();
  std::error_code ec;
  // The container case: the host's path is not visible; our cgroup is the root.
  if (!fs::is_directory(dir, ec)) dir = mount;
  std::optional<double> best;
  for (;;) {
    if (const auto q = read(dir)) best = best ? std::min(*best, *q) : *q;
    if (dir == mount || !dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return best;
}

}  // namespace

std::optional<double> cgroup_cpu_quota(const CpuLimitSources& src) {
  std::ifstream in(src.proc_self_cgroup);
  std::string line;
  std::optional<double> best;
  auto keep = [&](std::optional<double> q) {
    if (q) best = best ? std::min(*best, *q) : *q;
  };
  while (std::getline(in, line)) {
    // hierarchy-ID:controllers:path
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      keep(smallest_along(src.cgroup_root, path, v2_quota));
      continue;
    }
    std::vector<std::string> names;
    std::istringstream cs(controllers);
    for (std::string c; std::getline(cs, c, ',');) names.push_back(c);
    if (std::find(names.begin(), names.end(), "cpu") == names.end()) continue;
    // v1 mounts the cpu controller as cpu,cpuacct (with a cpu symlink) or cpu.
    for (const char* mount : {"cpu,cpuacct", "cpu"}) {
      const fs::path m = src.cgroup_root / mount;
      std::error_code ec;
      if (fs::is_directory(m, ec)) {
        keep(smallest_along(m, path, v1_quota));
        break;
      }
    }
  }
  return best;
}

unsigned affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

unsigned usable_cpus(unsigned affinity, const CpuLimitSources& src) {
  unsigned n = std::max(1u, affinity);
  if (const auto q = cgroup_cpu_quota(src))
    n = std::min(n, static_cast<unsigned>(std::max(1.0, std::ceil(*q - 1e-9))));
  return n;
}

unsigned usable_cpus(const CpuLimitSources& src) { return usable_cpus(affinity_cpus(), src); }

}  // namespace poolsim::validate
