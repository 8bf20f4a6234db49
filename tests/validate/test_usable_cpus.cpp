// usable_cpus: the worker count follows the affinity mask and the cgroup CPU
// quota (v2 cpu.max, v1 cfs_quota_us/cfs_period_us), read from fake trees.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "validate/usable_cpus.hpp"

using namespace poolsim::validate;
namespace fs = std::filesystem;

namespace {

// A fake /proc/self/cgroup and /sys/fs/cgroup under a temporary directory,
// removed at the end of the test.
struct FakeCgroups {
  fs::path root = fs::temp_directory_path() / ("poolsim-cpus-" + std::to_string(getpid()));
  FakeCgroups() {
    fs::remove_all(root);
    fs::create_directories(root / "sys");
  }
  ~FakeCgroups() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void file(const fs::path& rel, const std::string& text) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
  CpuLimitSources sources() const { return {root / "self-cgroup", root / "sys"}; }
};

}  // namespace

TEST_CASE("usable_cpus: a v2 cpu.max of 1.5 CPUs gives 2 workers on 64 CPUs", "[cpus]") {
  FakeCgroups f;
  f.file("self-cgroup", "0::/app.slice/job\n");
  f.file("sys/app.slice/job/cpu.max", "150000 100000\n");
  f.file("sys/app.slice/cpu.max", "max 100000\n");
  CHECK(cgroup_cpu_quota(f.sources()).value() == Approx(1.5));
  CHECK(usable_cpus(64, f.sources()) == 2);
  // The affinity mask wins when it is smaller.
  CHECK(usable_cpus(1, f.sources()) == 1);
}

TEST_CASE("usable_cpus: an ancestor's smaller v2 quota limits the leaf", "[cpus]") {
  FakeCgroups f;
  f.file("self-cgroup", "0::/a/b\n");
  f.file("sys/a/b/cpu.max", "800000 100000\n");
  f.file("sys/a/cpu.max", "300000 100000\n");
  CHECK(usable_cpus(64, f.sources()) == 3);
}

TEST_CASE("usable_cpus: no quota (max, or no files) leaves the affinity count", "[cpus]") {
  FakeCgroups f;
  f.file("self-cgroup", "0::/x\n");
  f.file("sys/x/cpu.max", "max 100000\n");
  CHECK_FALSE(cgroup_cpu_quota(f.sources()));
  CHECK(usable_cpus(6, f.sources()) == 6);
  FakeCgroups none;
  CHECK(usable_cpus(5, none.sources()) == 5);
}

TEST_CASE("usable_cpus: a container's own root cgroup is read when the host path is absent",
          "[cpus]") {
  FakeCgroups f;
  f.file("self-cgroup", "0::/docker/abc123\n");
  f.file("sys/cpu.max", "200000 100000\n");
  CHECK(usable_cpus(64, f.sources()) == 2);
}

TEST_CASE("usable_cpus: cgroup v1 cfs_quota_us over cfs_period_us, -1 is no limit", "[cpus]") {
  FakeCgroups f;
  f.file("self-cgroup", "12:memory:/x\n4:cpu,cpuacct:/job\n");
  f.file("sys/cpu,cpuacct/job/cpu.cfs_quota_us", "250000\n");
  f.file("sys/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  f.file("sys/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  f.file("sys/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  CHECK(cgroup_cpu_quota(f.sources()).value() == Approx(2.5));
  CHECK(usable_cpus(64, f.sources()) == 3);
}

TEST_CASE("usable_cpus: this process gets at least 1 and at most its affinity mask", "[cpus]") {
  const unsigned n = usable_cpus();
  CHECK(n >= 1);
  CHECK(n <= affinity_cpus());
}
