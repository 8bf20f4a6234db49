// Tests of `poolsim record` and `poolsim import perf-sched` as a user runs
// them: exit codes, the files written, the temporary perf.data removed after
// a signal. The recording tests need root and perf; without them they only
// warn (the exit-code tests run everywhere).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "models/scenario_loader.hpp"
#include "trace/perf_tool.hpp"

namespace fs = std::filesystem;

namespace {
std::string quote(const std::string& s) { return "'" + s + "'"; }

// `cmd` with its standard error to the file `err` (its output dropped).
int run_logged(const std::string& cmd, const std::string& err) {
  const int st = std::system((cmd + " >/dev/null 2>'" + err + "'").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int run(const std::string& cmd) { return run_logged(cmd, "/dev/null"); }

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct TempDir {
  fs::path dir;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "poolsim-record-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    dir = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::set<std::string> record_dirs() {
  std::set<std::string> s;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    if (e.path().filename().string().rfind("poolsim-record-", 0) == 0 &&
        e.path().filename().string().find("test") == std::string::npos)
      s.insert(e.path().string());
  return s;
}

bool can_record() { return ::geteuid() == 0 && !poolsim::trace::perf_binary().empty(); }
}  // namespace

TEST_CASE("record_command: no perf is exit 3, a bad trace exit 2", "[trace]") {
  TempDir tmp;
  const std::string bin = POOLSIM_BINARY;
  CHECK(run("POOLSIM_PERF=/nonexistent " + quote(bin) + " record --out " +
            quote((tmp.dir / "x.yaml").string()) + " -- true") == 3);
  CHECK(run(quote(bin) + " import perf-sched " +
            quote(std::string(POOLSIM_TEST_DATA) + "/trace/lost.txt") + " --out " +
            quote((tmp.dir / "x.yaml").string())) == 2);
  CHECK(run(quote(bin) + " import perf-sched " +
            quote(std::string(POOLSIM_TEST_DATA) + "/trace/synthetic.perf-script.txt") + " --out " +
            quote((tmp.dir / "syn.yaml").string())) == 0);
  CHECK(fs::exists(tmp.dir / "syn.yaml"));
  CHECK(fs::exists(tmp.dir / "syn.worker.cpu.csv"));
  CHECK(fs::exists(tmp.dir / "syn.worker.wait.csv"));
}

TEST_CASE("record_command: records traced-server and writes a loadable scenario", "[trace]") {
  if (!can_record()) {
    WARN("not root or no perf: the recording is not tested here");
    return;
  }
  TempDir tmp;
  const std::string bin = POOLSIM_BINARY;
  const std::string server = (fs::path(bin).parent_path() / "traced-server").string();
  if (!fs::exists(server)) {
    WARN("build the traced-server target to test the recording");
    return;
  }
  const auto before = record_dirs();
  const std::string out = (tmp.dir / "rec.yaml").string();
  // A busy machine's recording must import (the host agent's hidden
  // switches are not lost events, trace/perf_text.hpp): a refusal by the
  // reader ("lost events: N of M switches are missing") fails the test.
  // Only events perf itself reports lost (its buffer overflowed: "lost
  // events (" and perf's line) are the machine's, and earn one more
  // recording. CI's loaded machine once refused a recording here (exit 2,
  // 2026-12-06) with its message unseen: the message is now shown.
  const std::string err = (tmp.dir / "record.stderr").string();
  const std::string cmd = quote(bin) + " record -q --out " + quote(out) + " -- " + quote(server) +
                          " --workers 2 --rate 200 --duration 0.3";
  int rc = run_logged(cmd, err);
  if (rc == 2 && read_text(err).find("lost events (") != std::string::npos) {
    WARN("perf lost events while recording (a loaded machine): recorded again\n" << read_text(err));
    rc = run_logged(cmd, err);
  }
  INFO("poolsim record: exit " << rc << "\n" << read_text(err));
  REQUIRE(rc == 0);
  poolsim::LoadOptions lo;
  lo.machine = "default";
  const auto s = poolsim::load_scenario(out, lo);
  CHECK(s.backend.threads == 2);
  CHECK(s.limits.cpuset.size() >= 1);
  CHECK(record_dirs() == before);  // perf.data removed
}

TEST_CASE("record_command: SIGINT reaches the command, perf.data is removed, the signal re-raised",
          "[trace]") {
  if (!can_record()) {
    WARN("not root or no perf: the recording is not tested here");
    return;
  }
  TempDir tmp;
  const auto before = record_dirs();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string out = (tmp.dir / "int.yaml").string();
    ::execl(POOLSIM_BINARY, POOLSIM_BINARY, "record", "-q", "--out", out.c_str(), "--", "sleep",
            "20", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait for the recording to start (its temporary folder appears).
  for (int i = 0; i < 100 && record_dirs() == before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(WIFSIGNALED(status));
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGINT);
  CHECK(record_dirs() == before);
  CHECK_FALSE(fs::exists(tmp.dir / "int.yaml"));
}
