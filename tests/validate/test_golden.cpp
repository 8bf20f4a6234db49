// Golden outputs: for every scenario tests/golden/scenarios/NAME.yaml, the
// metrics JSON and the trace that `poolsim simulate` writes must equal the
// checked-in tests/golden/NAME.json and NAME.trace.json byte for byte. The
// simulator is deterministic (same seed, same bytes), so any difference is a
// change of the model or of an output format: review it, and if it is meant,
// regenerate the files with scripts/regen-golden and commit them with the
// change (CONTRIBUTING.md, "Golden outputs").
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(POOLSIM_SOURCE_DIR) / "tests" / "golden";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The first line on which two texts differ (1-based), with both versions.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "the texts differ only in their final newline";
    if (!more_a || !more_b || la != lb) {
      return "line " + std::to_string(line) + ":\n  golden:  " + (more_a ? la : "<end>") +
             "\n  current: " + (more_b ? lb : "<end>");
    }
  }
}

std::vector<fs::path> golden_scenarios() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kGolden / "scenarios")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE(
    "golden: the golden set has one scenario per backend kind, a quota, a graph, bounded "
    "resources, a pool on a machine with interrupt costs, one with the proportional newidle "
    "balance, one whose wakes find no CPU idle on a packing host, one whose wakes search no "
    "idle CPU above 60% busy (SIS_UTIL), one whose busy CPUs balance "
    "their queues, threads whose exits leave kernel work, a fork-join whose spawns cost and "
    "virtual threads whose "
    "notify is preempted",
    "[golden]") {
  std::vector<std::string> names;
  for (const auto& p : golden_scenarios()) names.push_back(p.stem().string());
  // Sorted as paths: "resources-virtual-threads.yaml" before "resources.yaml".
  CHECK(names == std::vector<std::string>{"asio-pool",
                                          "busy-balance",
                                          "busy-wake",
                                          "event-loop",
                                          "exit-work",
                                          "graph",
                                          "injecting-pool",
                                          "newidle",
                                          "origin",
                                          "pool-io",
                                          "pool",
                                          "quota",
                                          "resources-virtual-threads",
                                          "resources",
                                          "sis-util",
                                          "spawn",
                                          "tbb",
                                          "thread-per-task",
                                          "virtual-threads",
                                          "vt-wake",
                                          "work-stealing"});
}

TEST_CASE(
    "golden: simulate --json and --trace of every golden scenario equal the checked-in files "
    "byte for byte",
    "[golden]") {
  char tmpl[] = "/tmp/poolsim-golden-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  // Removed however the test ends (a failed REQUIRE or an exception skipped
  // a remove_all at the end: a /tmp/poolsim-golden-* directory was left
  // behind on 2026-12-05).
  struct RemoveDir {
    fs::path path;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } const remove_dir{dir};
  for (const auto& scenario : golden_scenarios()) {
    const std::string name = scenario.stem().string();
    const fs::path json = dir / (name + ".json");
    const fs::path trace = dir / (name + ".trace.json");
    const std::string cmd = std::string(POOLSIM_BINARY) + " simulate " + scenario.string() +
                            " --quiet --json " + json.string() + " --trace " + trace.string() +
                            " >/dev/null";
    INFO("command: " << cmd);
    const int status = std::system(cmd.c_str());
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    for (const auto& [got_path, want_path] : {std::pair{json, kGolden / (name + ".json")},
                                              std::pair{trace, kGolden / (name + ".trace.json")}}) {
      const std::string want = slurp(want_path);
      const std::string got = slurp(got_path);
      INFO(want_path.string() << " differs from the current output (if the change is meant, "
                                 "run scripts/regen-golden and commit the new files); first "
                              << first_difference(want, got));
      CHECK(!want.empty());
      CHECK(got == want);
    }
  }
}
