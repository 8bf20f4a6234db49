// cgroup.cpp: v2/v1 CPU-quota groups (design comment in cgroup.hpp).
#include "real/cgroup.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "models/scenario.hpp"
#include "real/backend.hpp"

namespace poolsim::real {
namespace fs = std::filesystem;
namespace {

struct Mount {
  std::string point;
  std::string fstype;
  std::string super_options;
};

std::vector<Mount> read_mounts() {
  std::vector<Mount> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // "... mount_point ... - fstype source super_options"
    std::istringstream ls(line);
    std::string id, parent, dev, root, point;
    ls >> id >> parent >> dev >> root >> point;
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream rest(line.substr(dash + 3));
    Mount m;
    std::string source;
    m.point = point;
    rest >> m.fstype >> source >> m.super_options;
    out.push_back(std::move(m));
  }
  return out;
}

bool has_token(const std::string& list, const std::string& token, char sep) {
  std::istringstream ss(list);
  std::string t;
  while (std::getline(ss, t, sep))
    if (t == token) return true;
  return false;
}

// The calling process's cgroup path in the hierarchy that has `controller`
// (v1), or in the unified hierarchy (controller empty).
std::string own_cgroup_path(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string ctrls = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controller.empty() ? (line.compare(0, a, "0") == 0 && ctrls.empty())
                           : has_token(ctrls, controller, ','))
      return path;
  }
  return "/";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Returns an error text, empty on success.
std::string write_file(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  if (!out) return path + ": " + std::strerror(errno);
  out << value;
  out.flush();
  if (!out) return "writing '" + value + "' to " + path + ": " + std::strerror(errno);
  return {};
}

std::string join_dir(const std::string& mount, const std::string& rel) {
  std::string dir = mount;
  if (!rel.empty() && rel != "/") dir += rel;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) dir = mount;  // our path is not visible here
  return dir;
}

std::optional<std::string> v2_parent() {
  for (const Mount& m : read_mounts())
    if (m.fstype == "cgroup2") return join_dir(m.point, own_cgroup_path(""));
  return std::nullopt;
}

std::optional<std::string> v1_parent() {
  for (const Mount& m : read_mounts())
    if (m.fstype == "cgroup" && has_token(m.super_options, "cpu", ','))
      return join_dir(m.point, own_cgroup_path("cpu"));
  return std::nullopt;
}

std::string group_name(int rep) {
  return "poolsim-" + std::to_string(getpid()) + "-" + std::to_string(rep);
}

}  // namespace

std::vector<std::string> cgroup_parent_dirs() {
  std::vector<std::string> out;
  if (auto d = v2_parent()) out.push_back(*d);
  if (auto d = v1_parent()) out.push_back(*d);
  return out;
}

CpuCgroup CpuCgroup::create(double cpus, Duration period, int rep, Duration burst) {
  return create_under(v2_parent(), v1_parent(), cpus, period, rep, burst);
}

namespace {
// Writes the burst (us) to `file` in dir; refuses where the kernel has no
// such file (no CFS burst) or rejects the value.
void write_burst(const std::string& dir, const char* file, Duration burst) {
  if (burst <= Duration{0}) return;
  const std::string path = dir + "/" + file;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw MachineRefused("cannot apply limits.burst: this kernel has no " + std::string(file) +
                         " (CFS burst needs Linux 5.14 or later); drop limits.burst");
  const std::string err = write_file(path, std::to_string(burst.count() / 1000));
  if (!err.empty()) throw MachineRefused("cannot apply limits.burst: " + err);
}
}  // namespace

CpuCgroup CpuCgroup::create_under(const std::optional<std::string>& v2,
                                  const std::optional<std::string>& v1, double cpus,
                                  Duration period, int rep, Duration burst) {
  const auto period_us = static_cast<std::int64_t>(period.count() / 1000);
  // sched-bwc.rst: quota at least 1 ms, period 1 ms .. 1 s.
  const auto quota_us =
      std::max<std::int64_t>(1000, std::llround(cpus * static_cast<double>(period_us)));
  if (period_us < 1000 || period_us > 1000000)
    throw MachineRefused("limits.period must be between 1ms and 1s for a CFS quota (got " +
                         format_duration(period) + ")");
  const auto configure = [&](const CpuCgroup& g) {
    if (g.version_ == 2) {
      const std::string err = write_file(
          g.path_ + "/cpu.max", std::to_string(quota_us) + " " + std::to_string(period_us));
      if (err.empty()) write_burst(g.path_, "cpu.max.burst", burst);
      return err;
    }
    std::string err = write_file(g.path_ + "/cpu.cfs_period_us", std::to_string(period_us));
    if (err.empty()) err = write_file(g.path_ + "/cpu.cfs_quota_us", std::to_string(quota_us));
    if (err.empty()) write_burst(g.path_, "cpu.cfs_burst_us", burst);
    return err;
  };
  return create_group(v2, v1, group_name(rep), configure, "limits.cpus", "limits.cpus");
}

CpuCgroup CpuCgroup::create_weighted(int shares, int rep, const std::string& tag) {
  return create_weighted_under(v2_parent(), v1_parent(), shares, rep, tag);
}

CpuCgroup CpuCgroup::create_weighted_under(const std::optional<std::string>& v2,
                                           const std::optional<std::string>& v1, int shares,
                                           int rep, const std::string& tag) {
  // set_shares throws when the kernel refuses the weight.
  const auto configure = [&](const CpuCgroup& g) {
    g.set_shares(shares);
    return std::string();
  };
  return create_group(v2, v1, group_name(rep) + tag, configure,
                      "a CPU weight (limits.shares, limits.weight or limits.neighbour)",
                      "those keys");
}

CpuCgroup CpuCgroup::create_group(const std::optional<std::string>& v2,
                                  const std::optional<std::string>& v1, const std::string& name,
                                  const std::function<std::string(const CpuCgroup&)>& configure,
                                  const std::string& what, const std::string& drop) {
  std::string tried;
  if (const auto& parent = v2) {
    const std::string controllers = read_file(*parent + "/cgroup.controllers");
    if (has_token(controllers.substr(0, controllers.find('\n')), "cpu", ' ')) {
      std::string sub = read_file(*parent + "/cgroup.subtree_control");
      if (!has_token(sub.substr(0, sub.find('\n')), "cpu", ' '))
        (void)write_file(*parent + "/cgroup.subtree_control", "+cpu");
      const std::string dir = *parent + "/" + name;
      if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
        CpuCgroup g(dir, 2);
        const std::string err = configure(g);
        if (err.empty()) return g;
        tried += "cgroup v2 (" + err + "); ";
      } else {
        tried += "cgroup v2 (mkdir " + dir + ": " + std::strerror(errno) + "); ";
      }
    } else {
      tried += "cgroup v2 (no cpu controller in " + *parent + "/cgroup.controllers); ";
    }
  } else {
    tried += "cgroup v2 (not mounted); ";
  }
  if (const auto& parent = v1) {
    const std::string dir = *parent + "/" + name;
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
      CpuCgroup g(dir, 1);
      const std::string err = configure(g);
      if (err.empty()) return g;
      tried += "cgroup v1 (" + err + ")";
    } else {
      tried += "cgroup v1 (mkdir " + dir + ": " + std::strerror(errno) + ")";
    }
  } else {
    tried += "cgroup v1 (no cpu controller mounted)";
  }
  throw MachineRefused("cannot apply " + what + ": no writable cgroup CPU controller: " + tried +
                       ". Run as root or with a delegated cgroup, or drop " + drop);
}

void CpuCgroup::set_shares(int shares) const {
  const std::string err =
      version_ == 2 ? write_file(path_ + "/cpu.weight", std::to_string(weight_from_shares(shares)))
                    : write_file(path_ + "/cpu.shares", std::to_string(shares));
  if (!err.empty()) throw MachineRefused("cannot apply a CPU weight: " + err);
}

CpuCgroup::CpuCgroup(CpuCgroup&& o) noexcept : path_(std::move(o.path_)), version_(o.version_) {
  o.path_.clear();
}

CpuCgroup::~CpuCgroup() { remove(); }

std::string CpuCgroup::join_self() const {
  return write_file(path_ + "/cgroup.procs", std::to_string(getpid()));
}

std::string CpuCgroup::harness_exit_file() const {
  if (version_ != 1 || path_.empty()) return {};
  return fs::path(path_).parent_path().string() + "/tasks";
}

CpuStat CpuCgroup::read_stat() const {
  CpuStat st;
  std::istringstream in(read_file(path_ + "/cpu.stat"));
  std::string key;
  std::int64_t value = 0;
  while (in >> key >> value) {
    if (key == "nr_periods")
      st.nr_periods = value;
    else if (key == "nr_throttled")
      st.nr_throttled = value;
    else if (key == "throttled_time")
      st.throttled_time = Duration{value};  // v1: ns
    else if (key == "throttled_usec")
      st.throttled_time = Duration{value * 1000};  // v2: us
    else if (key == "nr_bursts")
      st.nr_bursts = value;
    else if (key == "burst_time")
      st.burst_time = Duration{value};  // v1: ns
    else if (key == "burst_usec")
      st.burst_time = Duration{value * 1000};  // v2: us
  }
  return st;
}

bool CpuCgroup::remove() {
  if (path_.empty()) return true;
  // The kernel may still be detaching the exited child: retry for up to
  // 50 x 2 ms (the exit path takes well under a millisecond).
  for (int i = 0; i < 50; ++i) {
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) {
      path_.clear();
      return true;
    }
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

std::vector<std::string> list_poolsim_cgroups() {
  std::vector<std::string> out;
  for (const std::string& dir : cgroup_parent_dirs()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("poolsim-", 0) == 0 && e.is_directory(ec)) out.push_back(e.path().string());
    }
  }
  return out;
}

int remove_stale_cgroups() {
  int removed = 0;
  for (const std::string& path : list_poolsim_cgroups()) {
    const std::string name = fs::path(path).filename().string();
    const auto dash = name.find('-', 8);
    const std::string pid_text =
        name.substr(8, dash == std::string::npos ? std::string::npos : dash - 8);
    char* end = nullptr;
    const long pid = std::strtol(pid_text.c_str(), &end, 10);
    if (pid_text.empty() || *end != '\0' || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // owner alive
    if (::rmdir(path.c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace poolsim::real
