// limits.burst through the cgroup files (real/cgroup.hpp), on fake v2 and v1
// hierarchies in a temporary directory: the kernel's files are plain files
// there, so a group directory made beforehand with (or without) the burst
// file stands for a kernel with (or without) CFS burst.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "real/backend.hpp"
#include "real/cgroup.hpp"

using namespace poolsim;
using namespace poolsim::real;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct FakeTree {
  fs::path root;
  explicit FakeTree(const std::string& name) {
    root =
        fs::temp_directory_path() / ("poolsim-test-burst-" + std::to_string(getpid()) + "-" + name);
    fs::create_directories(root);
  }
  ~FakeTree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;
  // The group create_under will make for repetition `rep`, made now with
  // the given (empty) files, as the kernel shows them.
  fs::path group(int rep, std::initializer_list<const char*> files) const {
    const fs::path g = root / ("poolsim-" + std::to_string(getpid()) + "-" + std::to_string(rep));
    fs::create_directories(g);
    for (const char* f : files) std::ofstream(g / f) << "";
    return g;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void empty(const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir)) fs::remove(e);
  }
};

}  // namespace

TEST_CASE(
    "real.cgroup_burst: v2 writes cpu.max.burst in us after cpu.max and reads "
    "nr_bursts/burst_usec",
    "[real][cgroup]") {
  FakeTree v2("v2");
  std::ofstream(v2.root / "cgroup.controllers") << "cpu memory\n";
  std::ofstream(v2.root / "cgroup.subtree_control") << "cpu\n";
  const fs::path dir = v2.group(4, {"cpu.max", "cpu.max.burst"});
  CpuCgroup g = CpuCgroup::create_under(v2.root.string(), std::nullopt, 1.0, 100ms, 4, 40ms);
  REQUIRE(g.version() == 2);
  CHECK(FakeTree::read(dir / "cpu.max") == "100000 100000");
  CHECK(FakeTree::read(dir / "cpu.max.burst") == "40000");
  std::ofstream(dir / "cpu.stat") << "usage_usec 1\nnr_periods 30\nnr_throttled 4\n"
                                     "throttled_usec 52000\nnr_bursts 3\nburst_usec 61500\n";
  const CpuStat st = g.read_stat();
  CHECK(st.nr_bursts == 3);
  CHECK(st.burst_time == 61500us);
  CHECK(st.throttled_time == 52ms);
  FakeTree::empty(dir);
  CHECK(g.remove());
}

TEST_CASE("real.cgroup_burst: v1 writes cpu.cfs_burst_us and reads nr_bursts/burst_time (ns)",
          "[real][cgroup]") {
  FakeTree v1("v1");
  const fs::path dir = v1.group(2, {"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.cfs_burst_us"});
  CpuCgroup g = CpuCgroup::create_under(std::nullopt, v1.root.string(), 0.5, 100ms, 2, 25ms);
  REQUIRE(g.version() == 1);
  CHECK(FakeTree::read(dir / "cpu.cfs_quota_us") == "50000");
  CHECK(FakeTree::read(dir / "cpu.cfs_burst_us") == "25000");
  std::ofstream(dir / "cpu.stat") << "nr_periods 10\nnr_throttled 2\nthrottled_time 7000000\n"
                                     "nr_bursts 1\nburst_time 12345678\n";
  const CpuStat st = g.read_stat();
  CHECK(st.nr_bursts == 1);
  CHECK(st.burst_time == 12345678ns);
  FakeTree::empty(dir);
  CHECK(g.remove());
}

TEST_CASE(
    "real.cgroup_burst: a kernel without the burst file is refused, the group removed, "
    "and burst 0 never touches the file",
    "[real][cgroup]") {
  FakeTree v1("v1-old");
  const fs::path dir = v1.group(5, {"cpu.cfs_period_us", "cpu.cfs_quota_us"});
  try {
    CpuCgroup::create_under(std::nullopt, v1.root.string(), 1.0, 100ms, 5, 10ms);
    FAIL("expected MachineRefused");
  } catch (const MachineRefused& e) {
    const std::string what = e.what();
    CHECK(what.find("cpu.cfs_burst_us") != std::string::npos);
    CHECK(what.find("5.14") != std::string::npos);
  }
  // Without a burst the same kernel is fine and no burst file appears.
  const fs::path again = v1.group(6, {"cpu.cfs_period_us", "cpu.cfs_quota_us"});
  CpuCgroup g = CpuCgroup::create_under(std::nullopt, v1.root.string(), 1.0, 100ms, 6);
  CHECK_FALSE(fs::exists(again / "cpu.cfs_burst_us"));
  FakeTree::empty(again);
  CHECK(g.remove());
  (void)dir;
}

TEST_CASE(
    "real.cgroup_burst: on v1 the harness's sampler leaves the quota group through the "
    "parent's tasks file, v2 keeps a process's threads together",
    "[real][cgroup]") {
  FakeTree v1("v1-harness");
  const fs::path dir = v1.group(8, {"cpu.cfs_period_us", "cpu.cfs_quota_us"});
  CpuCgroup g1 = CpuCgroup::create_under(std::nullopt, v1.root.string(), 1.0, 100ms, 8);
  CHECK(g1.harness_exit_file() == (v1.root / "tasks").string());
  FakeTree::empty(dir);
  CHECK(g1.remove());
  FakeTree v2("v2-harness");
  std::ofstream(v2.root / "cgroup.controllers") << "cpu\n";
  std::ofstream(v2.root / "cgroup.subtree_control") << "cpu\n";
  const fs::path dir2 = v2.group(9, {"cpu.max"});
  CpuCgroup g2 = CpuCgroup::create_under(v2.root.string(), std::nullopt, 1.0, 100ms, 9);
  CHECK(g2.harness_exit_file().empty());
  FakeTree::empty(dir2);
  CHECK(g2.remove());
}

TEST_CASE("real.cgroup_weight: v1 writes cpu.shares, v2 cpu.weight in the kernel's own mapping",
          "[real][cgroup]") {
  FakeTree v1("w1");
  const fs::path d1 = v1.root / ("poolsim-" + std::to_string(getpid()) + "-2-neighbour");
  fs::create_directories(d1);
  std::ofstream(d1 / "cpu.shares") << "";
  CpuCgroup g1 =
      CpuCgroup::create_weighted_under(std::nullopt, v1.root.string(), 4096, 2, "-neighbour");
  REQUIRE(g1.version() == 1);
  CHECK(g1.path() == d1.string());
  CHECK(FakeTree::read(d1 / "cpu.shares") == "4096");
  FakeTree::empty(d1);
  CHECK(g1.remove());

  FakeTree v2("w2");
  std::ofstream(v2.root / "cgroup.controllers") << "cpu memory\n";
  std::ofstream(v2.root / "cgroup.subtree_control") << "cpu\n";
  const fs::path d2 = v2.group(3, {"cpu.max", "cpu.weight"});
  CpuCgroup g2 = CpuCgroup::create_under(v2.root.string(), std::nullopt, 1.0, 100ms, 3);
  g2.set_shares(512);
  CHECK(FakeTree::read(d2 / "cpu.weight") == "50");
  g2.set_shares(2);  // cpu.weight has no 0: the smallest shares map to 1
  CHECK(FakeTree::read(d2 / "cpu.weight") == "1");
  FakeTree::empty(d2);
  CHECK(g2.remove());
}
