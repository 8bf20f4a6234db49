// The poolsim binary end to end: every subcommand's --help, exit codes for
// bad input, and the JSON structure of simulate, run and validate on a small
// scenario (structure and exit codes only: no absolute time is asserted).
#include <sys/stat.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.hpp"

namespace {

using poolsim::test::bounded;
using poolsim::test::error_line;
using poolsim::test::first_line;
using poolsim::test::kPoissonBase;
using poolsim::test::Result;
using poolsim::test::run;
using poolsim::test::run_shell;

struct TempDir : poolsim::test::TempDir {
  TempDir() : poolsim::test::TempDir("poolsim-cli") {}
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
  const auto bad =
      dir.file("bad.yaml", std::string(kSmall) + "tolerance: {default: 10%, latency_p95: 20%}\n");
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

namespace {
// The rows of a --records CSV, each split at its commas (no field is quoted
// in these scenarios: class names are class0, ...).
std::vector<std::vector<std::string>> csv_rows(const std::string& path, std::string& header) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::getline(f, header);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(f, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}
}  // namespace

TEST_CASE("cli: --records writes one row per task and run, in order in time", "[cli]") {
  TempDir dir;
  const auto file = dir.file("s.yaml", kSmall);
  const auto sim = dir.file("sim.csv");
  const auto real = dir.file("real.csv");
  REQUIRE(run("simulate " + file + " -q --records " + sim).exit_code == 0);
  REQUIRE(run("run " + file + " -q --records " + real).exit_code == 0);
  for (const auto& [path, reps] : {std::pair{sim, 1}, std::pair{real, 2}}) {
    INFO(path);
    std::string header;
    const auto rows = csv_rows(path, header);
    CHECK(header == "rep,task,class,outcome,worker,intended_us,submit_us,start_us,end_us,cpu_us");
    REQUIRE(rows.size() == static_cast<std::size_t>(40 * reps));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      REQUIRE(r.size() == 10);
      CHECK(r[0] == std::to_string(i / 40 + 1));
      CHECK(r[1] == std::to_string(i % 40));
      CHECK(r[2] == "class0");
      CHECK(r[3] == "completed");
      const double intended = std::stod(r[5]), submit = std::stod(r[6]), start = std::stod(r[7]),
                   end = std::stod(r[8]);
      CHECK(intended == 0);  // a batch: every task meant to arrive at the origin
      CHECK(submit >= intended);
      CHECK(start >= submit);
      CHECK(end - start >= 1200);  // 200 us of CPU and a 1 ms wait
    }
  }
  // A file that cannot be written is the user's mistake, located by flag.
  const auto r = bounded("simulate " + file + " -q --records " + dir.path().string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("--records"));
}

TEST_CASE("cli: validate runs both halves and reports per metric", "[cli]") {
  TempDir dir;
  const auto file = dir.file("s.yaml", kSmall);
  const auto out = dir.file("v.json");
  const auto html = dir.file("v.html");
  const auto recs = dir.file("recs");
  const auto r = run("validate " + file + " --json " + out + " --html " + html + " --records-dir " +
                     recs + " -q");
  INFO(r.out);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  // One row per task: draw 0 of the prediction, and each measured repetition.
  std::string header;
  CHECK(csv_rows(recs + "/simulated.csv", header).size() == 40);
  CHECK(csv_rows(recs + "/measured.csv", header).size() == 80);
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
  const auto r = run("run " + dir.file("s.yaml", kSmall) +
                     " --set run.max_threads=2 --set backend.threads=4 -q");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("max_threads"));
}

TEST_CASE("cli: the machine refusing exits 3", "[cli]") {
  TempDir dir;
  const auto file = dir.file("s.yaml", kSmall);
  // A thread per task, 40 at once, under a cap of 5 OS threads.
  const auto r =
      run("run " + file + " --set 'backend={kind: thread-per-task}' --set run.max_threads=5 -q");
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.out, Catch::Contains("max_threads"));
}

// ---------------------------------------------------------------------------
// Hostile input (issue 20): exit 2 or 3 with a located message, never a
// crash, a hang or exit 0 with a wrong number. Each command runs under a
// 1 GiB address-space cap and a 5 s timeout (`timeout` exits 124 when it
// fires), so an input that allocates without bound or blocks fails the test
// (bounded(), first_line(), error_line() and kPoissonBase: cli_util.hpp).

TEST_CASE("cli_hostile: devices, FIFOs, directories and link loops are refused as inputs",
          "[cli][hostile]") {
  TempDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  const auto fifo = dir.file("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto r = bounded("simulate /dev/zero -q");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) ==
        "poolsim: /dev/zero: cannot read the scenario: /dev/zero is a character device, "
        "expected a regular file");
  r = bounded("simulate " + base + " --machine /dev/zero -q");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) ==
        "poolsim: --machine /dev/zero: machine: cannot read machine profile: /dev/zero is a "
        "character device, expected a regular file");
  r = bounded("simulate " + fifo + " -q");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == "poolsim: " + fifo + ": cannot read the scenario: " + fifo +
                                 " is a FIFO (named pipe), expected a regular file");
  r = bounded("simulate " + base + " --machine " + fifo + " -q");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains(fifo + " is a FIFO (named pipe), expected a regular file"));
  const auto emp = dir.file("emp.yaml",
                            "name: e\nworkload:\n  arrival: {kind: batch, count: 4}\n"
                            "  task: [{cpu: {dist: empirical, file: /dev/urandom}}]\n"
                            "backend: {kind: pool, threads: 4}\n");
  r = bounded("simulate " + emp + " -q");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == "poolsim: " + emp +
                                 ":4:40: workload.task[0].cpu.file: cannot read empirical samples "
                                 "file: /dev/urandom is a character device, expected a regular "
                                 "file");
  const auto loop = dir.file("loop-a");
  std::filesystem::create_symlink(dir.file("loop-b"), loop);
  std::filesystem::create_symlink(loop, dir.file("loop-b"));
  r = bounded("simulate " + loop + " -q");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == "poolsim: " + loop + ": cannot read the scenario: " + loop +
                                 " is a symbolic link loop (too many levels of symbolic links)");
}

TEST_CASE("cli_hostile: sizes and times are refused before anything is allocated",
          "[cli][hostile]") {
  TempDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--set workload.arrival.count=4000000000",
       "poolsim: --set workload.arrival.count=4000000000: workload.arrival.count: count must be at "
       "most 1000000000, got 4000000000"},
      {"--set 'workload.arrival={kind: poisson, rate: 1e8/s, duration: 1000s}'",
       "poolsim: --set workload.arrival={kind: poisson, rate: 1e8/s, duration: 1000s}: "
       "workload.arrival.duration: rate x duration = 1e+11 tasks, more than the 1000000000-task "
       "cap of one workload"},
      {"--set 'workload.arrival={kind: periodic, interval: 1ns, duration: 1000s}'",
       "poolsim: --set workload.arrival={kind: periodic, interval: 1ns, duration: 1000s}: "
       "workload.arrival.duration: duration / interval = 1e+12 tasks, more than the "
       "1000000000-task cap of one workload"},
      {"--set 'workload.task[0]={lock: {name: a, shards: 2000000000, hold: 1us}}'",
       "poolsim: --set workload.task[0]={lock: {name: a, shards: 2000000000, hold: 1us}}: "
       "workload.task[0].lock.shards: shards must be at most 1000000, got 2000000000"},
      {"--set 'workload.task[0].cpu=1e9s'",
       "poolsim: --set workload.task[0].cpu=1e9s: workload: 200 tasks of on average 1e+09 s each, "
       "after the last arrival at 200 ms, take 2e+11s end to end, beyond the simulated horizon of "
       "3155760000s (100 years)"},
      {"--set 'workload.task[0]={wait: 9e9s}'",
       "poolsim: --set workload.task[0]={wait: 9e9s}: workload.task[0].wait: a duration must be "
       "at most 3155760000s (100 years, the simulated horizon), got '9e9s'"},
      {"--set 'workload.arrival={kind: periodic, interval: 9e9s, count: 100}'",
       "poolsim: --set workload.arrival={kind: periodic, interval: 9e9s, count: 100}: "
       "workload.arrival.interval: a duration must be at most 3155760000s (100 years, the "
       "simulated horizon), got '9e9s'"},
      {"--set workload.arrival.rate=1e-300/s",
       "poolsim: --set workload.arrival.rate=1e-300/s: workload.arrival.rate: a rate must be at "
       "least 3.17e-10/s (one arrival per 100 years, the simulated horizon), got '1e-300/s'"},
      {"--set workload.arrival.rate=1e308/s",
       "poolsim: --set workload.arrival.rate=1e308/s: workload.arrival.rate: a rate must be at "
       "most 1e9/s (one arrival per nanosecond, the simulator's time resolution), got "
       "'1e308/s'"},
      {"--set 'workload.classes[99999999999999999999].weight=1'",
       "poolsim: --set workload.classes[99999999999999999999].weight=1: "
       "workload.classes[99999999999999999999].weight: malformed key path: an index must be at "
       "most 50000000, got '[99999999999999999999]'"},
      {"--set limits.cpus=1e15",
       "poolsim: --set limits.cpus=1e15: limits.cpus: limits.cpus must be between 0.001 (1ms of "
       "CPU per 1s period, the smallest cgroup quota) and 65536 (the most cores a machine profile "
       "may have), got 1e15"},
      {"--set workload.arrival.count=9223372036854775808",
       "poolsim: --set workload.arrival.count=9223372036854775808: workload.arrival.count: count "
       "must be at most 1000000000, got 9223372036854775808"},
      {"--set run.max_threads=4000000000",
       "poolsim: --set run.max_threads=4000000000: run.max_threads: run.max_threads must be at "
       "most 2147483647, got 4000000000"},
      {"--set 'workload={graph: {fork_join: {fanout: 10, depth: 8, leaf: [{cpu: 1us}]}}}'",
       "poolsim: --set workload={graph: {fork_join: {fanout: 10, depth: 8, leaf: [{cpu: 1us}]}}}: "
       "workload.graph.fork_join.fanout: fanout 10 and depth 8 make 122222222 nodes (fanout^depth "
       "leaves plus a fork and a join per inner node), more than the 50000000-task cap"},
      {"--set backend.threads=100000",
       "poolsim: --set backend.threads=100000: backend.threads: backend pool may run up to 100000 "
       "threads, more than run.max_threads (20000)"},
      {"--seed -1",
       "poolsim: --seed: expected a whole number from 0 to 18446744073709551615, got '-1'"},
      {"--seed 99999999999999999999",
       "poolsim: --seed: must be at most 18446744073709551615 (2^64-1), got "
       "99999999999999999999"},
      {"--machine ''",
       "poolsim: --machine: expected a machine profile name or path, got an "
       "empty string"},
      {"--json ''", "poolsim: --json: expected a file path, or - for stdout, got an empty string"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = bounded("simulate " + base + " -q " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(first_line(r.out) == c.message);
  }
}

TEST_CASE("cli_hostile: only a streamed simulation may pass the 50M-task cap", "[cli][hostile]") {
  TempDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  const std::string count = " -q --set workload.arrival.count=100000000";
  const std::string capped =
      "poolsim: --set workload.arrival.count=100000000: workload.arrival.count: count must be at "
      "most 50000000, got 100000000";
  // Replications keep every task's record, so they do not stream.
  auto r = bounded("simulate " + base + count + " --replications 2");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == capped);
  // A real run keeps a record per task.
  r = bounded("run " + base + count);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == capped);
  // A batch is queued whole at t=0, streamed or not.
  r = bounded("simulate " + base + " -q --set 'workload.arrival={kind: batch, count: 100000000}'");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out).ends_with("count must be at most 50000000, got 100000000"));
}

TEST_CASE("cli_hostile: within the horizon a long interval is simulated exactly",
          "[cli][hostile]") {
  TempDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  const auto out = dir.file("out.json");
  const auto r = bounded("simulate " + base +
                         " -q --set 'workload.arrival={kind: periodic, interval: 9e6s, count: "
                         "100}' --json " +
                         out);
  REQUIRE(r.exit_code == 0);
  const auto j = read_json(out);
  // The last of 100 arrivals 9e6 s apart, plus its 1 ms of CPU.
  CHECK(j["metrics"]["makespan"].get<double>() == Approx(99 * 9e6 + 1e-3).epsilon(1e-12));
  CHECK(j["metrics"]["completed"] == 100);
}

TEST_CASE("cli_hostile: threads sharing a CPU for years stop at the event budget, exit 3",
          "[cli][hostile]") {
  TempDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  // 4 workers on 2 CPUs and 1e5 s of CPU per task: billions of slice ends.
  // Within the horizon, so the loader accepts it; the simulator stops at
  // its budget (10M events plus 1,000 per finished task) in about 2 s.
  auto r = bounded(
      "simulate " + base + " -q --set machine.cores=2 --set 'workload.task[0]={cpu: 1e5s}'", 30);
  CHECK(r.exit_code == 3);
  CHECK(first_line(r.out).starts_with("poolsim: the simulation of 'base' stopped after 1.0"));
  CHECK(r.out.find("tasks finished of 200: the event budget is 1e+07 + 1000 per finished task") !=
        std::string::npos);
  CHECK(r.out.find("--set run.max_events=N") != std::string::npos);
  // An explicit run.max_events is the budget, whatever the task count.
  r = bounded("simulate " + base +
              " -q --set machine.cores=2 --set 'workload.task[0]={cpu: 1s}' --set "
              "run.max_events=1000");
  CHECK(r.exit_code == 3);
  CHECK(r.out.find(": run.max_events is 1000 (") != std::string::npos);
  // The same from replications on worker threads: the error, not an abort.
  r = bounded("simulate " + base +
              " -q --replications 4 --set machine.cores=2 --set 'workload.task[0]={cpu: 1s}' "
              "--set run.max_events=1000");
  CHECK(r.exit_code == 3);
  CHECK(r.out.find(": run.max_events is 1000 (") != std::string::npos);
  // The same run with room passes, and a budget of 0 is refused at load.
  r = bounded("simulate " + base +
              " -q --set machine.cores=2 --set 'workload.task[0]={cpu: 1s}' --set "
              "run.max_events=10000000");
  CHECK(r.exit_code == 0);
  // The real runner refuses up front what cannot end within run.timeout.
  r = bounded("run " + base + " -q --set 'workload.task[0]={cpu: 1e5s}'");
  CHECK(r.exit_code == 3);
  CHECK(first_line(r.out) ==
        "poolsim: the machine refused: a repetition of 'base' needs at least 5e+06 s (its 2e+07 s "
        "of CPU work over 4 CPUs), more than run.timeout = 60 s: raise run.timeout (--set "
        "run.timeout=...) or shorten the workload");
  r = bounded("simulate " + base + " -q --set run.max_events=0");
  CHECK(r.exit_code == 2);
  CHECK(
      first_line(r.out) ==
      "poolsim: --set run.max_events=0: run.max_events: run.max_events must be at least 1, got 0");
}

TEST_CASE("cli_hostile: size names the flag and states the bound", "[cli][hostile]") {
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--rate 0/s --cpu 1ms --cores 4",
       "poolsim: --rate 0/s: a rate must be positive (got '0/s')"},
      {"--rate 100/s --cpu 1ms --wait -1ms --cores 4",
       "poolsim: --wait -1ms: a duration cannot be negative (got '-1ms')"},
      {"--rate 1e308/s --cpu 1ms --cores 4",
       "poolsim: --rate 1e308/s: a rate must be at most 1e9/s (one arrival per nanosecond, the "
       "simulator's time resolution), got '1e308/s'"},
      {"--rate 100/s --cpu 1ms --cores 4 --queue 4000000000 --no-simulate",
       "poolsim: --queue 4000000000: must be at most 50000000 (the task cap)"},
      {"--rate 100/s --cpu 1ms --cores 4 --requests 2000000000",
       "poolsim: --requests 2000000000: must be at most 50000000 (the task cap of one "
       "simulation)"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = bounded("size " + c.args + " -q");
    CHECK(r.exit_code == 2);
    CHECK(first_line(r.out) == c.message);
  }
}

TEST_CASE("cli_hostile: output errors are errors", "[cli][hostile]") {
  TempDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  auto r = bounded("simulate " + base + " -q --trace /dev/full");
  CHECK(r.exit_code == 3);
  CHECK(error_line(r.out) ==
        "poolsim: --trace /dev/full: writing the trace failed: No space left on device");
  r = bounded("simulate " + base + " -q --json /dev/full");
  CHECK(r.exit_code == 3);
  CHECK(error_line(r.out) ==
        "poolsim: error: --json /dev/full: writing failed: No space left on device");
  const auto table = run_shell(std::string(POOLSIM_BINARY) + " simulate " + base + " >/dev/full");
  CHECK(table.exit_code == 3);
  CHECK(first_line(table.out) ==
        "poolsim: cannot write to standard output: No space left on device");
  // A sweep's CSV: the write fails only when the stream is flushed.
  r = bounded("sweep " + base + " -q --vary backend.threads=1..2 --csv /dev/full");
  CHECK(r.exit_code == 3);
  CHECK(error_line(r.out) ==
        "poolsim: --csv /dev/full: writing the CSV failed: No space left on device");
  // The same mistake, the same exit code.
  const auto d = dir.file("adir");
  std::filesystem::create_directory(d);
  r = bounded("simulate " + base + " -q --json " + d);
  CHECK(r.exit_code == 2);
  CHECK(error_line(r.out) == "poolsim: --json " + d + ": is a directory, expected a file path");
  r = bounded("simulate " + base + " -q --trace " + d);
  CHECK(r.exit_code == 2);
  CHECK(error_line(r.out) == "poolsim: --trace " + d + ": is a directory, expected a file path");
  r = bounded("sweep " + base + " -q --vary backend.threads=1..2 --csv " + d);
  CHECK(r.exit_code == 2);
  CHECK(error_line(r.out) == "poolsim: --csv " + d + ": is a directory, expected a file path");
  // Output directories are made before anything runs: a file in the way is
  // the user's mistake, found before the measurement (it was exit 3 after
  // the whole validation).
  const auto f = dir.file("plain-file", "x");
  for (const char* flag : {"--trace-dir", "--records-dir"}) {
    r = bounded("validate " + base + " -q " + flag + " " + f);
    CHECK(r.exit_code == 2);
    CHECK_THAT(error_line(r.out), Catch::StartsWith(std::string("poolsim: ") + flag + " " + f +
                                                    ": cannot create the directory"));
    CHECK(r.out.find("metric") == std::string::npos);  // nothing was measured or printed
  }
}

TEST_CASE("cli_hostile: unhelpful messages get plain words", "[cli][hostile]") {
  TempDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  auto r = bounded("simulat " + base);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == "poolsim: unknown command 'simulat'; did you mean 'simulate'?");
  const auto tab = dir.file("tab.yaml", "name: x\nworkload:\n\tarrival: {kind: batch, count: 1}\n");
  r = bounded("simulate " + tab + " -q");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == "poolsim: " + tab +
                                 ":3:1: YAML indents with spaces, not tabs (a tab starts this "
                                 "line; yaml-cpp says: illegal map value)");
  const auto deep = dir.file("deep.yaml", "name: x\nworkload: " + std::string(10000, '[') +
                                              std::string(10000, ']') + "\n");
  r = bounded("simulate " + deep + " -q");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == "poolsim: " + deep +
                                 ":2:1: the YAML nests deeper than 64 levels (indentation steps "
                                 "plus brackets); a scenario needs fewer than 10");
  r = bounded("simulate " + base + " -q --machine " + base);
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) == "poolsim: " + base +
                                 ":2:1: seed: 'seed' is a scenario key: this looks like a "
                                 "scenario, not a machine profile");
  r = bounded("compare " + base + " -q --backends pool,pool");
  CHECK(r.exit_code == 2);
  CHECK(first_line(r.out) ==
        "poolsim: --backends lists 'pool' twice (entries 1 and 2): each backend is compared once");
  // Invalid UTF-8 and control characters are escaped, never sent raw.
  r = bounded("simulate " + base + " -q --set $'backend.kind=pool\\xc3\\x28\\x1b'");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Catch::Contains("--set backend.kind=pool\\xc3(\\x1b: backend.kind:"));
  CHECK(r.out.find('\x1b') == std::string::npos);
  // A profile name with a raw 0xff byte and an escape sequence: escaped in the
  // table header, replaced (U+FFFD) in the JSON instead of failing the dump.
  const auto named = dir.file("named.yaml",
                              "name: t\nmachine: {base: default, name: \"a\xff\x1b[31mb\"}\n"
                              "workload:\n  arrival: {kind: batch, count: 4}\n"
                              "  task: [{cpu: 1ms}]\nbackend: {kind: pool, threads: 2}\n");
  r = bounded("simulate " + named);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("on machine 'a\\xff\\x1b[31mb'"));
  CHECK(r.out.find('\x1b') == std::string::npos);
  const auto out = dir.file("named.json");
  r = bounded("simulate " + named + " -q --json " + out);
  CHECK(r.exit_code == 0);
  CHECK(read_json(out)["machine"]["name"] == "a\xef\xbf\xbd\x1b[31mb");
}

// calibrate end to end (about 10 s): the profile it writes loads, drives a
// simulation, and the JSON names every field. No test ran it whole before a
// hang in its runtime-memory step (real/tbb.cpp) reached users. Skipped in
// sanitizer builds (their real backends run the experiments many times
// slower); on a machine whose speed changes mid-measurement, or whose noise
// benchmark is flooded with interruptions, calibrate refuses, as it must,
// and the test says so instead of failing.
TEST_CASE("cli: calibrate --out writes a profile a scenario loads and simulates", "[cli]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  SUCCEED("not in sanitizer builds");
#else
  TempDir d;
  const std::string prof = d.file("host.yaml"), js = d.file("cal.json");
  const Result r = run_shell("timeout 180 " + std::string(POOLSIM_BINARY) +
                             " calibrate -q --quick --allow-busy --out " + prof + " --json " + js +
                             " >/dev/null");
  if (r.exit_code == 3 &&
      (r.out.find("the machine's speed changed during the measurement") != std::string::npos ||
       r.out.find("the machine was disturbed during the measurement") != std::string::npos)) {
    WARN("calibrate refused a disturbed machine: " << r.out);
    return;
  }
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto j = read_json(js);
  for (const char* f : {"switch_cost", "wakeup_latency", "timer_slack", "thread_create",
                        "noise_interval", "cfs_bandwidth_slice", "tbb_task"})
    CHECK(j.dump().find(std::string("\"") + f + "\"") != std::string::npos);
  const Result s = run("simulate --machine " + prof + " " + d.file("s.yaml", std::string(kSmall)) +
                       " --json " + d.file("s.json"));
  INFO(s.out);
  CHECK(s.exit_code == 0);
  CHECK(read_json(d.file("s.json"))["metrics"]["completed"] == 40);
#endif
}
