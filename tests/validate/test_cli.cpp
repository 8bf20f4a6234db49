// The poolsim binary end to end: every subcommand's --help, exit codes for
// bad input, and the JSON structure of simulate, run and validate on a small
// scenario (structure and exit codes only: no absolute time is asserted).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

struct Result {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Result run(const std::string& args) {
  const std::string cmd = std::string(POOLSIM_BINARY) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/poolsim-cli-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text = {}) const {
    const auto p = (path_ / name).string();
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

const char* kSmall =
    "name: cli-small\n"
    "seed: 3\n"
    "machine: default\n"
    "workload:\n"
    "  arrival: {kind: batch, count: 40}\n"
    "  task: [{cpu: 200us}, {wait: 1ms}]\n"
    "backend: {kind: pool, threads: 2}\n"
    "run: {reps: 2, warmup: 0, timeout: 20s}\n";

}  // namespace

TEST_CASE("cli: every subcommand has --help", "[cli]") {
  for (const char* cmd : {"simulate", "run", "validate", "compare", "calibrate", "size", "sweep"}) {
    INFO(cmd);
    const auto r = run(std::string(cmd) + " --help");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Usage"));
  }
  CHECK(run("--help").exit_code == 0);
}

TEST_CASE("cli: usage errors and bad scenarios exit 2 with a located message", "[cli]") {
  TempDir dir;
  CHECK(run("").exit_code == 2);
  CHECK(run("frobnicate").exit_code == 2);
  const auto missing = run("simulate /nonexistent/scenario.yaml");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.out, Catch::Contains("/nonexistent/scenario.yaml"));
  const auto bad = dir.file("bad.yaml", std::string(kSmall) + "tolerance: {default: 10%, latency_p95: 20%}\n");
  const auto r = run("simulate " + bad);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("bad.yaml:9:27:"));
  CHECK_THAT(r.out, Catch::Contains("latency_p95"));
  const auto set = run("simulate " + dir.file("ok.yaml", kSmall) + " --set backend.threads=many");
  CHECK(set.exit_code == 2);
  CHECK_THAT(set.out, Catch::Contains("--set backend.threads=many"));
}

TEST_CASE("cli: simulate writes the spec's JSON shape", "[cli]") {
  TempDir dir;
  const auto file = dir.file("s.yaml", kSmall);
  const auto out = dir.file("out.json");
  const auto trace = dir.file("trace.json");
  const auto r = run("simulate " + file + " --json " + out + " --trace " + trace + " -q");
  REQUIRE(r.exit_code == 0);
  const auto j = read_json(out);
  CHECK(j["scenario"] == "cli-small");
  CHECK(j["mode"] == "simulated");
  CHECK(j["backend"]["kind"] == "pool");
  CHECK(j["machine"]["cores"] == 4);
  CHECK(j["metrics"]["completed"] == 40);
  for (const char* m : {"makespan", "throughput", "latency_p99", "threads_peak", "memory_peak"})
    CHECK(j["metrics"].contains(m));
  const auto t = read_json(trace);
  CHECK(t["traceEvents"].size() > 40);
}

TEST_CASE("cli: validate runs both halves and reports per metric", "[cli]") {
  TempDir dir;
  const auto file = dir.file("s.yaml", kSmall);
  const auto out = dir.file("v.json");
  const auto html = dir.file("v.html");
  const auto r = run("validate " + file + " --json " + out + " --html " + html + " -q");
  INFO(r.out);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  const auto j = read_json(out);
  CHECK(j["scenario"] == "cli-small");
  CHECK((j["verdict"] == "match" || j["verdict"] == "diverge"));
  CHECK((r.exit_code == 1) == (j["verdict"] == "diverge"));
  const auto& mk = j["metrics"]["makespan"];
  CHECK(mk.contains("predicted"));
  CHECK(mk["measured"]["n"] == 2);
  CHECK(mk.contains("error"));
  CHECK(mk.contains("tolerance"));
  CHECK(j["metrics"]["completed"]["measured"]["mean"] == 40);
  CHECK(j["metrics"]["completed"]["verdict"] == "match");
  std::ifstream h(html);
  std::stringstream ss;
  ss << h.rdbuf();
  CHECK_THAT(ss.str(), Catch::Contains("<svg"));
}

TEST_CASE("cli: an inconsistent thread budget is bad input (exit 2)", "[cli]") {
  TempDir dir;
  const auto r = run("run " + dir.file("s.yaml", kSmall) + " --set run.max_threads=2 --set backend.threads=4 -q");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("max_threads"));
}

TEST_CASE("cli: the machine refusing exits 3", "[cli]") {
  TempDir dir;
  const auto file = dir.file("s.yaml", kSmall);
  // A thread per task, 40 at once, under a cap of 5 OS threads.
  const auto r = run("run " + file + " --set 'backend={kind: thread-per-task}' --set run.max_threads=5 -q");
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("max_threads"));
}
