// sweep beyond one process, end to end through the binary: shards plus merge
// give the single sweep's bytes, merge refuses parts that do not belong
// together, and the hostile sweep inputs of issue 20 end with exit 2 or 3 and
// a plain message (never an abort, never a 49 KB echo).
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_util.hpp"
#include "validate/sweep_part.hpp"

namespace {

using poolsim::test::Result;
using poolsim::test::run;
using poolsim::test::shell;

struct TempDir : poolsim::test::TempDir {
  TempDir() : poolsim::test::TempDir("poolsim-dist") {}
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The base.yaml: a small Poisson scenario on a 4-thread pool.
const char* kBase =
    "name: base\n"
    "seed: 5\n"
    "machine: default\n"
    "workload:\n"
    "  arrival: {kind: poisson, rate: 400/s, count: 300}\n"
    "  task: [{cpu: {dist: exponential, mean: 2ms}}, {wait: 5ms}]\n"
    "backend: {kind: pool, threads: 4}\n";

const std::string kVary = "--vary backend.threads=1..5 --vary 'workload.task[1].wait=2ms,5ms'";

}  // namespace

TEST_CASE("sweep.shard: 3 shards merged write the single sweep's CSV, JSON, HTML and SVG bytes",
          "[sweep][dist]") {
  TempDir d;
  const auto base = d.file("base.yaml", kBase);
  const std::string flags = base + " -q " + kVary + " --usl";
  REQUIRE(run("sweep " + flags + " --csv " + d.file("one.csv") + " --json " + d.file("one.json") +
              " --plot " + d.file("one.html"))
              .exit_code == 0);
  REQUIRE(run("sweep " + flags + " --plot " + d.file("one.svg")).exit_code == 0);
  for (int k = 1; k <= 3; ++k) {
    const auto r = run("sweep " + flags + " --shard " + std::to_string(k) + "/3 --json " +
                       d.file("part" + std::to_string(k) + ".json"));
    REQUIRE(r.exit_code == 0);
  }
  // Any order of the parts.
  const std::string parts =
      d.file("part2.json") + " " + d.file("part3.json") + " " + d.file("part1.json");
  const auto m = run("merge -q " + parts + " --csv " + d.file("m.csv") + " --json " +
                     d.file("m.json") + " --plot " + d.file("m.html"));
  INFO(m.out);
  REQUIRE(m.exit_code == 0);
  REQUIRE(run("merge -q " + parts + " --plot " + d.file("m.svg")).exit_code == 0);
  CHECK(slurp(d.file("m.csv")) == slurp(d.file("one.csv")));
  CHECK(slurp(d.file("m.json")) == slurp(d.file("one.json")));
  CHECK(slurp(d.file("m.html")) == slurp(d.file("one.html")));
  CHECK(slurp(d.file("m.svg")) == slurp(d.file("one.svg")));
  CHECK(slurp(d.file("one.csv")).size() > 100);
  // The shards are strided: shard 2 of 3 holds grid points 1, 4, 7.
  const auto p2 = poolsim::validate::read_part(slurp(d.file("part2.json")), "part2.json");
  REQUIRE(p2.result.points.size() == 3);
  CHECK(p2.result.points[1].index == 4);
}

TEST_CASE(
    "sweep.shard: with --replications the merged parts carry the CIs and overload marks, byte "
    "for byte",
    "[sweep][dist][replications]") {
  TempDir d;
  const auto base = d.file("base.yaml", kBase);
  const std::string flags = base + " -q " + kVary + " --replications 3";
  REQUIRE(run("sweep " + flags + " --csv " + d.file("one.csv") + " --json " + d.file("one.json") +
              " --plot " + d.file("one.html"))
              .exit_code == 0);
  REQUIRE(run("sweep " + flags + " --plot " + d.file("one.svg")).exit_code == 0);
  for (int k = 1; k <= 2; ++k)
    REQUIRE(run("sweep " + flags + " --shard " + std::to_string(k) + "/2 --json " +
                d.file("part" + std::to_string(k) + ".json"))
                .exit_code == 0);
  const std::string parts = d.file("part2.json") + " " + d.file("part1.json");
  REQUIRE(run("merge -q " + parts + " --csv " + d.file("m.csv") + " --json " + d.file("m.json") +
              " --plot " + d.file("m.html"))
              .exit_code == 0);
  REQUIRE(run("merge -q " + parts + " --plot " + d.file("m.svg")).exit_code == 0);
  CHECK(slurp(d.file("m.csv")) == slurp(d.file("one.csv")));
  CHECK(slurp(d.file("m.json")) == slurp(d.file("one.json")));
  CHECK(slurp(d.file("m.html")) == slurp(d.file("one.html")));
  CHECK(slurp(d.file("m.svg")) == slurp(d.file("one.svg")));
  // 400/s of 2 ms CPU + 2 or 5 ms wait: 1 thread is overloaded at both waits and 2 threads at
  // 5 ms (2.8 threads busy); 5 threads are not.
  const std::string csv = slurp(d.file("one.csv"));
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(header.find(",latency_p99_ci95_low,") != std::string::npos);
  CHECK(header.find(",latency_p99_ci95_high,") != std::string::npos);
  CHECK(header.ends_with(",overload"));
  const auto j = nlohmann::json::parse(slurp(d.file("one.json")));
  CHECK(j["replications"] == 3);
  const auto& first = j["points"][0];
  CHECK(first["values"]["backend.threads"] == 1);
  CHECK(first["warnings"][0]["kind"] == "overload");
  CHECK(first["replications"]["n"] == 3);
  const auto ci = first["replications"]["metrics"]["latency_p99"]["ci95"];
  CHECK(ci[0].get<double>() <= first["metrics"]["latency_p99"].get<double>());
  CHECK(ci[1].get<double>() >= first["metrics"]["latency_p99"].get<double>());
  const auto& last = j["points"][j["points"].size() - 1];
  CHECK(last["values"]["backend.threads"] == 5);
  CHECK(last["warnings"].empty());
  CHECK(slurp(d.file("one.html")).find("overloaded (arrivals outpace completions)") !=
        std::string::npos);
  CHECK(slurp(d.file("one.svg")).find("triangles: saturated (overloaded) runs") !=
        std::string::npos);
  // The table marks the rows and says how many replications.
  const auto table = run("sweep " + base + " " + kVary + " --replications 3", false);
  CHECK(table.out.find("simulated 3 times each (seeds seed..seed+2; mean [95% CI])") !=
        std::string::npos);
  CHECK(table.out.find("OVERLOAD") != std::string::npos);
  CHECK(table.out.find("warning: 3 of 10 points are overloaded") != std::string::npos);
  const auto measured = run("sweep " + base + " " + kVary + " --replications 3 --measure -q");
  CHECK(measured.exit_code == 2);
  CHECK(measured.out ==
        "poolsim: --replications 3 with --measure: replications repeat simulations with other "
        "seeds; a measured point repeats run.reps times (set it with --set run.reps=N)\n");
  const auto drawn = run("sweep " + base + " " + kVary + " --replications 3 --draws 4 -q");
  CHECK(drawn.exit_code == 2);
  CHECK(drawn.out ==
        "poolsim: --draws 4 with --replications 3: replications already average other seeds "
        "(other workloads and other noise); use one or the other\n");
}

TEST_CASE("sweep.shard: merge refuses missing, duplicated and foreign parts with exit 2",
          "[sweep][dist]") {
  TempDir d;
  const auto base = d.file("base.yaml", kBase);
  const std::string flags = base + " -q " + kVary;
  for (int k = 1; k <= 3; ++k)
    REQUIRE(run("sweep " + flags + " --shard " + std::to_string(k) + "/3 --json " +
                d.file("p" + std::to_string(k) + ".json"))
                .exit_code == 0);
  REQUIRE(
      run("sweep " + flags + " --seed 9 --shard 2/3 --json " + d.file("seed9.json")).exit_code ==
      0);
  REQUIRE(run("sweep " + flags + " --shard 1/2 --json " + d.file("half.json")).exit_code == 0);
  const auto p = [&](const char* n) { return d.file(n); };

  auto r = run("merge " + p("p1.json") + " " + p("p3.json"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("missing shard 2/3 (given 2 of 3)"));
  r = run("merge " + p("p1.json") + " " + p("p2.json") + " " + p("p2.json") + " " + p("p3.json"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("are both shard 2/3"));
  r = run("merge " + p("p1.json") + " " + p("seed9.json") + " " + p("p3.json"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("parts of different sweeps"));
  CHECK_THAT(r.out, Catch::Contains("seed: null vs 9"));
  r = run("merge " + p("p1.json") + " " + p("half.json"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("the same sweep split in different numbers of shards"));
  r = run("merge " + base);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("not a sweep part"));
  // --shard needs a part file, and leaves --csv/--plot to merge.
  r = run("sweep " + flags + " --shard 1/3");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("--json PATH"));
  r = run("sweep " + flags + " --shard 4/3 --json " + p("x.json"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("expected K/N with 1 <= K <= N"));
}

TEST_CASE("sweep.shard: the grid cap is per process, so N shards may share N x 10000 points",
          "[sweep][dist]") {
  TempDir d;
  const auto base = d.file("base.yaml", kBase);
  auto r = run("sweep " + base + " -q --vary backend.threads=1..150 --vary seed=1..100");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("more than 10000 points"));
  // 15,000 points in 2 shards: accepted (shard 2/2 is refused only for lack
  // of --json, after the cap check passed).
  r = run("sweep " + base + " -q --vary backend.threads=1..150 --vary seed=1..100 --shard 2/2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("--json PATH"));
}

TEST_CASE("sweep.hostile: workers that cannot be created reduce the parallelism, never abort",
          "[sweep][hostile]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer reserves terabytes of shadow memory at start: under `ulimit
  // -v` the instrumented binary cannot start at all.
  WARN("skipped: a sanitizer build cannot run under ulimit -v");
  return;
#endif
  TempDir d;
  const auto base = d.file("base.yaml", kBase);
  // Issue 20 #1: 200 workers under a 1 GB address-space cap.
  const auto r = shell("(ulimit -v 1000000; " + std::string(POOLSIM_BINARY) + " sweep " + base +
                       " -j 200 --vary backend.threads=1..200 --csv " + d.file("out.csv") +
                       " >/dev/null) 2>&1");
  INFO(r.out);
  CHECK((r.exit_code == 0 || r.exit_code == 3));
  CHECK_THAT(r.out, !Catch::Contains("terminate called"));
  if (r.exit_code == 0) {
    CHECK_THAT(r.out, Catch::Contains("poolsim: note: could start only"));
    const std::string csv = slurp(d.file("out.csv"));
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 201);
  }
}

TEST_CASE("sweep.hostile: --vary errors are short, plain and name --vary and the real key",
          "[sweep][hostile]") {
  TempDir d;
  const auto base = d.file("base.yaml", kBase);
  // A 10,001-value list is not echoed whole (it was 49 KB).
  std::string list;
  for (int i = 1; i <= 10001; ++i) list += (i > 1 ? "," : "") + std::to_string(i);
  auto r = run("sweep " + base + " -q --vary backend.threads=" + list);
  CHECK(r.exit_code == 2);
  CHECK(r.out.size() < 400);
  CHECK_THAT(r.out, Catch::Contains("--vary backend.threads=1,2,3,"));
  CHECK_THAT(r.out, Catch::Contains("characters): the list has 10001 values; a sweep runs at most "
                                    "10000 points per process"));
  // An exponent is a number, and the size is stated before anything is built.
  r = run("sweep " + base + " -q --vary backend.threads=1..1e9");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out,
             Catch::Contains("poolsim: --vary backend.threads=1..1e9: the range '1..1e9' has "
                             "1000000000 values; a sweep runs at most 10000 points"));
  CHECK_THAT(r.out, !Catch::Contains("same unit"));
  // A key given by its last part only: the flag is --vary, the suggestion the full path.
  r = run("sweep " + base + " -q --vary rate=100/s,200/s");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("poolsim: --vary rate=100/s: rate: unknown key 'rate'"));
  CHECK_THAT(r.out, Catch::Contains("did you mean 'workload.arrival.rate'?"));
  CHECK_THAT(r.out, !Catch::Contains("--set"));
  // A point over the task cap says which point (a closed workload's cap is
  // checked before generating, so this fails at once).
  r = run("sweep " + base +
          " -q --vary 'workload.arrival={kind: poisson, rate: 400/s, count: 300},{kind: closed, "
          "clients: 1000, think: 0ms, duration: 100000s}'");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("--vary workload.arrival={kind: closed, clients: 1000"));
  CHECK_THAT(r.out, Catch::Contains("50000000-task cap"));
}

TEST_CASE("sweep.shard: merge has --help and needs at least one part", "[sweep][dist]") {
  auto r = run("merge --help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("--csv"));
  r = run("merge");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("PART is required"));
}
