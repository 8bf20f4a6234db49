// Hostile input, second round (issue 20): machine profiles out of range,
// `--set machine.*`, `calibrate --out` paths. Each case states the exit code
// and the message, run under the contract's bounds (1 GiB, 5 s).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "validate/sweep_grid.hpp"

namespace {
using poolsim::test::bounded;
using poolsim::test::first_line;
using poolsim::test::kPoissonBase;
using HostileDir = poolsim::test::TempDir;
}  // namespace

TEST_CASE("cli_hostile.machine: out-of-range profile fields are refused with the range",
          "[cli][hostile]") {
  HostileDir dir;
  const auto base = dir.file("base.yaml", kPoissonBase);
  const auto huge = dir.file("huge.yaml", "base: default\ncores: 1000000000\n");
  const auto nan = dir.file("nan.yaml", "base: default\ntick: .nan\n");
  const auto chained = dir.file("chained.yaml", "base: " + huge + "\n");
  const auto fast_tick = dir.file("fast.yaml", "base: default\ntick: 10us\n");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--machine " + huge,
       "poolsim: " + huge + ":2:8: cores: cores must be at most 65536, got 1000000000"},
      {"--machine " + nan,
       "poolsim: " + nan +
           ":2:7: tick: expected a duration such as 250ns, 10us, 1.5ms or 2s, got '.nan'"},
      {"--machine " + chained,
       "poolsim: " + huge + ":2:8: cores: cores must be at most 65536, got 1000000000"},
      {"--machine " + fast_tick,
       "poolsim: " + fast_tick + ":2:7: tick: tick must be 0 (off) or 100us to 1s, got 10us"},
      {"--set machine.cores=1e9",
       "poolsim: --set machine.cores=1e9: machine.cores: expected cores (a whole number), got "
       "'1e9'"},
      {"--set machine.cores=0",
       "poolsim: --set machine.cores=0: machine.cores: cores must be at least 1, got 0"},
      {"--set machine.slice=50us",
       "poolsim: --set machine.slice=50us: machine.slice: slice must be 100us to 1s, got 50us"},
      {"--set machine.noise_interval=1ns",
       "poolsim: --set machine.noise_interval=1ns: machine.noise_interval: noise_interval must "
       "be 0 (off) or 100us to 1s, got 1ns"},
      {"--set machine.switch_cost=2s",
       "poolsim: --set machine.switch_cost=2s: machine.switch_cost: switch_cost must be 0 to 1s, "
       "got 2s"},
      {"--set machine.stack_reserve=4KiB",
       "poolsim: --set machine.stack_reserve=4KiB: machine.stack_reserve: stack_reserve must be "
       "16KiB to 1024GiB, got 4KiB"},
      {"--set machine.cfs_bandwidth_slice=1us",
       "poolsim: --set machine.cfs_bandwidth_slice=1us: machine.cfs_bandwidth_slice: "
       "cfs_bandwidth_slice must be 100us to 1s, got 1us"},
      {"--set machine.slice=-1ms",
       "poolsim: --set machine.slice=-1ms: machine.slice: a duration cannot be negative (got "
       "'-1ms')"},
      {"--set machine.wake_pack_util=inf",
       "poolsim: --set machine.wake_pack_util=inf: machine.wake_pack_util: expected a fraction "
       "such as 70% or 0.7, got 'inf'"},
      {"--set 'machine={base: default, tick: 1ns}'",
       "poolsim: --set machine={base: default, tick: 1ns}: machine.tick: tick must be 0 (off) or "
       "100us to 1s, got 1ns"},
      // --machine is applied before --set, so the override is not lost.
      {"--machine default --set machine.cores=70000",
       "poolsim: --set machine.cores=70000: machine.cores: cores must be at most 65536, got "
       "70000"},
      {"--machine " + base,
       "poolsim: " + base +
           ":2:1: seed: 'seed' is a scenario key: this looks like a scenario, not a machine "
           "profile"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = bounded("simulate " + base + " -q " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(first_line(r.out) == c.message);
  }
}

TEST_CASE("cli_hostile.machine: --set machine.FIELD applies over the named profile",
          "[cli][hostile]") {
  HostileDir dir;
  const auto base = dir.file("base.yaml", std::string(kPoissonBase) + "machine: default\n");
  // 200 tasks of 1 ms at 10000/s: one core serialises them (200 ms), four
  // run them four at a time.
  const auto one =
      bounded("simulate " + base +
              " -q --set workload.arrival.rate=10000/s --set machine.cores=1 --json -");
  CHECK(one.exit_code == 0);
  CHECK_THAT(one.out, Catch::Contains("\"name\": \"default+overrides\"") &&
                          Catch::Contains("\"cores\": 1,"));
  const auto via_flag =
      bounded("simulate " + base + " -q --machine default --set machine.cores=1 --json -");
  CHECK(via_flag.exit_code == 0);
  CHECK_THAT(via_flag.out, Catch::Contains("\"cores\": 1,"));
}

TEST_CASE("cli_hostile.calibrate: an --out path that cannot take the profile is refused at once",
          "[cli][hostile]") {
  HostileDir dir;
  const std::string missing = (dir.path() / "no" / "host.yaml").string();
  struct Case {
    std::string out, message;
  };
  const Case cases[] = {
      {dir.path().string(), "poolsim: calibrate --out: cannot write the machine profile " +
                                dir.path().string() + ": it is a directory, expected a file path"},
      {"/dev/full",
       "poolsim: calibrate --out: cannot write the machine profile /dev/full: it is not a regular "
       "file (a device, FIFO or socket)"},
      {missing, "poolsim: calibrate --out: cannot write the machine profile " + missing +
                    ": its directory " + (dir.path() / "no").string() + " does not exist"},
      {"/sys/poolsim-host.yaml",
       "poolsim: calibrate --out: cannot write the machine profile /sys/poolsim-host.yaml: cannot "
       "create a file in its directory: Permission denied"},
      {"''", "poolsim: calibrate --out: cannot write the machine profile: the path is empty"},
  };
  for (const auto& c : cases) {
    INFO(c.out);
    // Refused before the measurements start: well inside the 5 s bound a
    // calibration would exceed.
    const auto r = bounded("calibrate -q --out " + c.out);
    CHECK(r.exit_code == 3);
    CHECK(first_line(r.out) == c.message);
  }
  CHECK_FALSE(std::filesystem::exists(dir.path() / "no"));
}

TEST_CASE("cli_hostile.vary: ranges the fuzzer found are refused or expanded exactly",
          "[cli][hostile][sweep]") {
  using poolsim::validate::parse_vary;
  // A subnormal end: std::stod threw out_of_range while formatting it.
  const auto tiny = parse_vary("k=1e-320..1e-319+1e-321");
  CHECK(tiny.values.front() == "1e-320");
  CHECK(tiny.values.size() == 91);
  // A step far below the ends' precision crawled through the end's slack
  // for 1e8 steps, one string each.
  CHECK(parse_vary("k=1e5..1e5+1e-12").values == std::vector<std::string>{"1e+05"});
  // Steps finer than the 12 digits values are written with: the same point twice.
  CHECK_THROWS_WITH(parse_vary("k=1..1.0000000000001+0.00000000000001"),
                    "--vary k=1..1.0000000000001+0.00000000000001: the range "
                    "'1..1.0000000000001+0.00000000000001' steps below 12 significant digits: two "
                    "of its values both read 1");
  CHECK_THROWS_WITH(parse_vary("k=9007199254740990..9007199254740993"),
                    Catch::Contains("two of its values both read 9.00719925474e+15"));
  // A huge count in three digits, not 300.
  CHECK_THROWS_WITH(parse_vary("k=1..2+1e-300"),
                    "--vary k=1..2+1e-300: the range '1..2+1e-300' has 1e+300 values; a sweep runs "
                    "at most 10000 points per process (see docs/sweeps.md)");
  CHECK(parse_vary("k=0.1..0.3+0.1").values == std::vector<std::string>{"0.1", "0.2", "0.3"});
}
