// test_scenario_loader.cpp: the scenario loader against the spec
// (docs/scenarios.md): every key read into the typed structs, the
// defaults, `cores` expressions, --set overrides, machine profiles, and one
// test per distinct malformed input checking where (file:line:col), the key
// path and the message.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "loader_fixtures.hpp"
#include "models/scenario_loader.hpp"
#include "models/workload.hpp"

using namespace poolsim;
using poolsim::test::shipped;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(POOLSIM_TEST_DATA) / "loader";

// The shipped configs/ directory.
// tests/data/loader as config dir (machines/small.yaml, tiny.yaml, ...).
LoadOptions test_configs() {
  LoadOptions o;
  o.config_dir = kData;
  o.host_profile = kData / "no-such-host.yaml";
  return o;
}

std::optional<ScenarioError> error_of(const std::string& yaml, const LoadOptions& o = shipped(),
                                      const std::string& display = "t.yaml") {
  try {
    load_scenario_text(yaml, display, o);
  } catch (const ScenarioError& e) {
    return e;
  }
  return std::nullopt;
}

// The minimal valid scenario's workload and backend lines.
const std::string kWorkload =
    "workload:\n"
    "  arrival: {kind: batch, count: 10}\n"
    "  task: [{cpu: 1ms}]\n";
const std::string kBackend = "backend: {kind: pool, threads: 2}\n";

}  // namespace

#define CHECK_SCENARIO_ERROR(err, where_, key_, msg_)             \
  do {                                                            \
    const auto& e_ = (err);                                       \
    REQUIRE(e_.has_value());                                      \
    INFO(e_->what());                                             \
    if (std::string(where_) != "*") CHECK(e_->where() == where_); \
    if (std::string(key_) != "*") CHECK(e_->key() == key_);       \
    CHECK_THAT(e_->message(), Catch::Contains(msg_));             \
  } while (0)

// ---------------------------------------------------------------------------
// Positive: complete scenarios

TEST_CASE("loader: minimal scenario gets every default", "[loader]") {
  const Scenario s =
      load_scenario_text("name: t\n" + kWorkload + "backend: {kind: pool}\n", "t.yaml", shipped());
  CHECK(s.name == "t");
  CHECK(s.description.empty());
  CHECK(s.seed == 1);
  CHECK(s.source_file == "t.yaml");
  CHECK(s.machine.name == "default");
  CHECK(s.machine.cores == 4);
  CHECK(s.limits.cpuset.empty());
  CHECK_FALSE(s.limits.cpus);
  CHECK(s.limits.period == 100ms);
  CHECK(s.run.reps == 5);
  CHECK(s.run.warmup == 1);
  CHECK(s.run.timeout == 60s);
  CHECK(s.run.max_threads == 20000);
  CHECK(s.tolerance.default_tolerance == Approx(0.10));
  CHECK(s.tolerance.per_metric.empty());
  CHECK(s.backend.kind == BackendKind::pool);
  CHECK(s.backend.threads == 4);  // cores of the default profile
  CHECK(s.backend.max_threads == 4);
  CHECK_FALSE(s.backend.queue);
  CHECK(s.backend.reject == RejectPolicy::abort);
  CHECK(s.backend.keep_alive == 60s);
  CHECK(s.backend.stack == 8 * 1024 * 1024);
  REQUIRE(s.workload.arrival);
  CHECK(s.workload.arrival->kind == ArrivalKind::batch);
  CHECK(s.workload.arrival->count == 10);
  REQUIRE(s.workload.classes.size() == 1);
  CHECK(s.workload.classes[0].weight == 1.0);
  REQUIRE(s.workload.classes[0].task.size() == 1);
  const auto& cpu = std::get<CpuPhase>(s.workload.classes[0].task[0]);
  CHECK(cpu.work.is_fixed());
  CHECK(cpu.work.mean_seconds() == Approx(1e-3));
}

TEST_CASE("loader: a scenario with every key reads into the expected structs", "[loader]") {
  const Scenario s = load_scenario(kData / "full.yaml", test_configs());
  CHECK(s.name == "full-example");
  CHECK(s.description == "every key of the scenario format");
  CHECK(s.seed == 42);
  CHECK(s.source_file == (kData / "full.yaml").string());
  // machine: base small (2 cores, 1ms tick) with cores and tick overridden
  CHECK(s.machine.name == "small+overrides");
  CHECK(s.machine.source == "inline");
  CHECK(s.machine.cores == 4);
  CHECK(s.machine.tick == 4ms);
  CHECK(s.machine.slice == 1400us);
  CHECK(s.machine.switch_cost == 2us);
  CHECK(s.machine.cache_refill == 0ns);
  CHECK(s.machine.migration_cost == 3us);
  CHECK(s.machine.wakeup_latency == 6us);
  CHECK(s.machine.idle_exit == 40us);
  CHECK(s.machine.timer_slack == 50us);
  CHECK(s.machine.thread_create == 12us);
  CHECK(s.machine.thread_exit == 3us);
  CHECK(s.machine.stack_reserve == 8 * 1024 * 1024);
  CHECK(s.machine.stack_touch == 12 * 1024);
  // limits: cpuset 0-2 (3 CPUs) and a 1.5-CPU quota -> cores = 2
  REQUIRE(s.limits.cpus);
  CHECK(*s.limits.cpus == 1.5);
  CHECK(s.limits.period == 50ms);
  CHECK(s.limits.cpuset == std::vector<int>{0, 1, 2});
  CHECK(s.limits.cpuset_text == "0-2");
  CHECK(s.cores() == 2);
  CHECK(s.capacity() == 1.5);
  // workload
  REQUIRE(s.workload.arrival);
  const Arrival& a = *s.workload.arrival;
  CHECK(a.kind == ArrivalKind::poisson);
  CHECK(a.rate == 5000.0);
  CHECK_FALSE(a.count);
  REQUIRE(a.duration);
  CHECK(*a.duration == 10s);
  REQUIRE(s.workload.classes.size() == 2);
  CHECK(s.workload.classes[0].weight == Approx(0.75));
  CHECK(s.workload.classes[1].weight == Approx(0.25));
  const TaskSpec& t0 = s.workload.classes[0].task;
  REQUIRE(t0.size() == 3);
  const auto& c0 = std::get<CpuPhase>(t0[0]);
  CHECK(std::holds_alternative<ExponentialDist>(c0.work.variant()));
  CHECK(c0.work.mean_seconds() == Approx(2e-3));
  CHECK(std::get<WaitPhase>(t0[1]).time.mean_seconds() == Approx(10e-3));
  const auto& l0 = std::get<LockPhase>(t0[2]);
  CHECK(l0.name == "stock");
  CHECK(l0.shards == 1);
  CHECK(l0.hold.mean_seconds() == Approx(50e-6));
  CHECK_FALSE(l0.wait_inside);
  const TaskSpec& t1 = s.workload.classes[1].task;
  REQUIRE(t1.size() == 3);
  const auto& l1 = std::get<LockPhase>(t1[0]);
  CHECK(l1.name == "db");
  CHECK(l1.shards == 1000);
  const auto& u = std::get<UniformDist>(l1.hold.variant());
  CHECK(u.min == 10us);
  CHECK(u.max == 30us);
  REQUIRE(l1.wait_inside);
  const auto& ln = std::get<LognormalDist>(l1.wait_inside->variant());
  CHECK(ln.median == 2ms);
  CHECK(ln.p99 == 20ms);
  CHECK(l1.wait_inside->quantile_seconds(0.99) == Approx(0.020).epsilon(1e-6));
  const auto& nd = std::get<NormalDist>(std::get<CpuPhase>(t1[1]).work.variant());
  CHECK(nd.mean == 1ms);
  CHECK(nd.sd == 250us);
  const auto& emp = std::get<EmpiricalDist>(std::get<WaitPhase>(t1[2]).time.variant());
  CHECK(emp.file == "samples.csv");
  CHECK(emp.samples == std::vector<Duration>{1ms, 2ms, 3500us});
  // backend: cores = 2
  CHECK(s.backend.kind == BackendKind::pool);
  CHECK(s.backend.threads == 4);
  CHECK(s.backend.max_threads == 8);
  REQUIRE(s.backend.queue);
  CHECK(*s.backend.queue == 100);
  CHECK(s.backend.reject == RejectPolicy::discard_oldest);
  CHECK(s.backend.keep_alive == 30s);
  CHECK(s.backend.stack == 256 * 1024);
  // run, tolerance
  CHECK(s.run.reps == 3);
  CHECK(s.run.warmup == 0);
  CHECK(s.run.timeout == 120s);
  CHECK(s.run.max_threads == 64);
  CHECK(s.tolerance.default_tolerance == Approx(0.15));
  CHECK(s.tolerance.for_metric("latency_p99") == Approx(0.30));
  CHECK(s.tolerance.for_metric("makespan") == Approx(0.15));
}

TEST_CASE("loader: arrival kinds and their keys", "[loader]") {
  auto arrival = [](const std::string& a) {
    return *load_scenario_text(
                "name: t\nworkload:\n  arrival: " + a + "\n  task: [{cpu: 1ms}]\n" + kBackend,
                "t.yaml", shipped())
                .workload.arrival;
  };
  const Arrival p = arrival("{kind: poisson, rate: 20/ms, count: 500}");
  CHECK(p.kind == ArrivalKind::poisson);
  CHECK(p.rate == 20000.0);
  CHECK(p.count == 500);
  const Arrival per = arrival("{kind: periodic, interval: 1ms, duration: 2s}");
  CHECK(per.kind == ArrivalKind::periodic);
  CHECK(per.interval == 1ms);
  CHECK(per.duration == Duration{2s});
  const Arrival c = arrival("{kind: closed, clients: 1000, duration: 5s}");
  CHECK(c.kind == ArrivalKind::closed);
  CHECK(c.clients == 1000);
  CHECK(c.think.is_zero());
  CHECK(c.duration == Duration{5s});
  const Arrival c2 =
      arrival("{kind: closed, clients: 3, think: {dist: exponential, mean: 5ms}, duration: 1s}");
  CHECK(c2.think.mean_seconds() == Approx(5e-3));
  CHECK_FALSE(c2.count);
  const Arrival c3 = arrival("{kind: closed, clients: 4, duration: 1s, count: 100}");
  CHECK(c3.count == 100);
}

TEST_CASE("loader: classes with percentage weights that add up to 100% are kept", "[loader]") {
  const Scenario s = load_scenario_text(
      "name: t\n"
      "workload:\n"
      "  arrival: {kind: batch, count: 10}\n"
      "  classes:\n"
      "    - {weight: 70%, task: [{cpu: 1ms}]}\n"
      "    - {weight: 30%, task: [{cpu: 200us}, {wait: 20ms}]}\n" +
          kBackend,
      "t.yaml", shipped());
  REQUIRE(s.workload.classes.size() == 2);
  CHECK(s.workload.classes[0].weight == Approx(0.7));
  CHECK(s.workload.classes[1].weight == Approx(0.3));
  CHECK(s.workload.classes[1].task.size() == 2);
}

TEST_CASE("loader: plain-number class weights are relative", "[loader]") {
  const Scenario s = load_scenario_text(
      "name: t\n"
      "workload:\n"
      "  arrival: {kind: batch, count: 10}\n"
      "  classes:\n"
      "    - {weight: 7, task: [{cpu: 1ms}]}\n"
      "    - {weight: 7, task: [{cpu: 200us}]}\n" +
          kBackend,
      "t.yaml", shipped());
  CHECK(s.workload.classes[0].weight == Approx(0.5));
  CHECK(s.workload.classes[1].weight == Approx(0.5));
}

TEST_CASE("loader: explicit task graph", "[loader]") {
  const Scenario s = load_scenario_text(
      "name: t\n"
      "workload:\n"
      "  graph:\n"
      "    nodes:\n"
      "      - {id: split, task: [{cpu: 1ms}]}\n"
      "      - {id: a, task: [{cpu: 20ms}], after: [split]}\n"
      "      - {id: b, task: [{cpu: 20ms}], after: split}\n"
      "      - {id: merge, task: [{cpu: 1ms}], after: [a, b]}\n" +
          kBackend,
      "t.yaml", shipped());
  REQUIRE(s.workload.is_graph());
  CHECK_FALSE(s.workload.arrival);
  const auto& n = s.workload.graph->nodes;
  REQUIRE(n.size() == 4);
  CHECK(n[0].after.empty());
  CHECK(n[2].after == std::vector<std::string>{"split"});
  CHECK(n[3].id == "merge");
  CHECK(n[3].after == std::vector<std::string>{"a", "b"});
}

TEST_CASE("loader: fork-join generator", "[loader]") {
  const Scenario s = load_scenario_text(
      "name: t\n"
      "workload:\n"
      "  graph: {fork_join: {depth: 10, fanout: 2, leaf: [{cpu: 50us}], join: [{cpu: 1us}]}}\n" +
          std::string("backend: {kind: work-stealing}\n"),
      "t.yaml", shipped());
  REQUIRE(s.workload.graph);
  REQUIRE(s.workload.graph->fork_join);
  const ForkJoin& f = *s.workload.graph->fork_join;
  CHECK(f.depth == 10);
  CHECK(f.fanout == 2);
  CHECK(f.leaf.size() == 1);
  CHECK(f.fork.empty());
  CHECK(f.join.size() == 1);
  CHECK(s.backend.kind == BackendKind::work_stealing);
  CHECK(s.backend.threads == 4);
}

TEST_CASE("loader: every backend kind gets the spec's defaults", "[loader]") {
  auto backend = [](const std::string& b) {
    return load_scenario_text("name: t\n" + kWorkload + "backend: " + b + "\n", "t.yaml", shipped())
        .backend;
  };
  CHECK(backend("{kind: thread-per-task}").stack == 8 * 1024 * 1024);
  CHECK(backend("{kind: thread-per-task, stack: 64KiB}").stack == 64 * 1024);
  const BackendSpec inj = backend("{kind: injecting-pool}");
  CHECK(inj.min_threads == 4);
  CHECK(inj.max_threads == 512);
  CHECK(inj.injection_delay == 500ms);
  const BackendSpec inj2 =
      backend("{kind: injecting-pool, min_threads: 2, max_threads: 16, injection_delay: 100ms}");
  CHECK(inj2.min_threads == 2);
  CHECK(inj2.max_threads == 16);
  CHECK(inj2.injection_delay == 100ms);
  CHECK(backend("{kind: virtual-threads}").carriers == 4);
  CHECK(backend("{kind: virtual-threads, carriers: 1}").carriers == 1);
  CHECK(backend("{kind: event-loop}").loops == 4);
  CHECK(backend("{kind: event-loop, loops: cores/2}").loops == 2);
  CHECK(backend("{kind: tbb}").threads == 4);
  CHECK(backend("{kind: asio-pool, threads: 3}").threads == 3);
  const BackendSpec pool =
      backend("{kind: pool, threads: 2, max_threads: 10, queue: 0, reject: caller-runs}");
  CHECK(pool.max_threads == 10);
  CHECK(pool.queue == 0);
  CHECK(pool.reject == RejectPolicy::caller_runs);
  CHECK_FALSE(backend("{kind: pool, queue: unbounded}").queue);
  CHECK(backend("{kind: pool, reject: discard}").reject == RejectPolicy::discard);
}

TEST_CASE("loader: units in every value kind", "[loader][units]") {
  const Scenario s = load_scenario_text(
      "name: t\n"
      "workload:\n"
      "  arrival: {kind: poisson, rate: 3/us, count: 5}\n"
      "  task: [{cpu: 250ns}, {wait: 10us}, {cpu: 1.5ms}, {wait: 2s}]\n"
      "backend: {kind: thread-per-task, stack: 1MiB}\n"
      "tolerance: {default: 0.2, makespan: 5%}\n",
      "t.yaml", shipped());
  CHECK(s.workload.arrival->rate == 3e6);
  const auto& t = s.workload.classes[0].task;
  CHECK(std::get<CpuPhase>(t[0]).work.mean_seconds() == Approx(250e-9));
  CHECK(std::get<WaitPhase>(t[1]).time.mean_seconds() == Approx(10e-6));
  CHECK(std::get<CpuPhase>(t[2]).work.mean_seconds() == Approx(1.5e-3));
  CHECK(std::get<WaitPhase>(t[3]).time.mean_seconds() == Approx(2.0));
  CHECK(s.backend.stack == 1024 * 1024);
  CHECK(s.tolerance.default_tolerance == Approx(0.2));
  CHECK(s.tolerance.for_metric("makespan") == Approx(0.05));
  CHECK(s.tolerance.ignored.empty());
}

TEST_CASE("loader: tolerance off ignores a metric", "[loader]") {
  const Scenario s = load_scenario_text(
      "name: t\n" + kWorkload + kBackend +
          "tolerance: {default: 20%, switches_voluntary: off, latency_max: 150%}\n",
      "t.yaml", shipped());
  CHECK(s.tolerance.ignored == std::set<std::string, std::less<>>{"switches_voluntary"});
  CHECK_FALSE(s.tolerance.per_metric.count("switches_voluntary"));
  CHECK(s.tolerance.for_metric("latency_max") == Approx(1.5));
  CHECK(s.tolerance.default_tolerance == Approx(0.2));
}

TEST_CASE("loader: `cores` expressions follow cpuset and quota", "[loader][cores]") {
  auto threads = [](const std::string& limits, const std::string& expr) {
    const Scenario s =
        load_scenario_text("name: t\n" + limits + kWorkload + "backend: {kind: pool, threads: '" +
                               expr + "', max_threads: 1000}\n",
                           "t.yaml", shipped());
    return s.backend.threads;
  };
  CHECK(threads("", "cores") == 4);
  CHECK(threads("", "2*cores") == 8);
  CHECK(threads("", "cores*3") == 12);
  CHECK(threads("", "2 * cores") == 8);
  CHECK(threads("", "cores/2") == 2);
  CHECK(threads("", "cores/8") == 1);  // at least 1
  CHECK(threads("", "7") == 7);
  // cpuset "0-1" + quota 1.5 -> 2 cores
  CHECK(threads("limits: {cpuset: \"0-1\", cpus: 1.5}\n", "cores") == 2);
  CHECK(threads("limits: {cpuset: \"0-1\", cpus: 1.5}\n", "2*cores") == 4);
  // quota 0.5 -> 1 core
  CHECK(threads("limits: {cpus: 0.5}\n", "cores") == 1);
  CHECK(threads("limits: {cpus: 0.5}\n", "cores/2") == 1);
  // a quota above the cpuset does not raise it
  CHECK(threads("limits: {cpuset: [1, 3], cpus: 3}\n", "cores") == 2);
  CHECK(threads("limits: {cpuset: \"0,2-3\"}\n", "cores") == 3);
}

TEST_CASE("loader: cpuset forms", "[loader][cores]") {
  auto limits = [](const std::string& l) {
    return load_scenario_text("name: t\nlimits: " + l + "\n" + kWorkload + kBackend, "t.yaml",
                              shipped())
        .limits;
  };
  CHECK(limits("{cpuset: \"0,2-3\"}").cpuset == std::vector<int>{0, 2, 3});
  CHECK(limits("{cpuset: [3, 1]}").cpuset == std::vector<int>{1, 3});
  CHECK(limits("{cpuset: 2}").cpuset == std::vector<int>{2});
  CHECK(limits("{cpuset: \"0-1,1\"}").cpuset == std::vector<int>{0, 1});
  CHECK(limits("{period: 1ms}").period == 1ms);
  CHECK(limits("{period: 1s}").period == 1s);
}

// ---------------------------------------------------------------------------
// Overrides

TEST_CASE("loader: --set overrides existing keys, creates new ones, and applies in order",
          "[loader][set]") {
  LoadOptions o = shipped();
  o.sets = {"backend.threads=8", "workload.task[0].cpu=2ms",  "limits.cpus=1.5",
            "run.reps=2",        "tolerance.latency_p99=40%", "workload.task[1]={wait: 3ms}",
            "run.reps=7"};
  const Scenario s = load_scenario_text("name: t\n" + kWorkload + kBackend, "t.yaml", o);
  CHECK(s.backend.threads == 8);
  const auto& t = s.workload.classes[0].task;
  REQUIRE(t.size() == 2);
  CHECK(std::get<CpuPhase>(t[0]).work.mean_seconds() == Approx(2e-3));
  CHECK(std::get<WaitPhase>(t[1]).time.mean_seconds() == Approx(3e-3));
  REQUIRE(s.limits.cpus);
  CHECK(*s.limits.cpus == 1.5);
  CHECK(s.run.reps == 7);  // the later --set wins
  CHECK(s.tolerance.for_metric("latency_p99") == Approx(0.4));
}

TEST_CASE("loader: --set can replace the machine with an inline map", "[loader][set]") {
  LoadOptions o = shipped();
  o.sets = {"machine={base: default, cores: 2}"};
  const Scenario s =
      load_scenario_text("name: t\n" + kWorkload + "backend: {kind: pool}\n", "t.yaml", o);
  CHECK(s.machine.cores == 2);
  CHECK(s.machine.name == "default+overrides");
  CHECK(s.backend.threads == 2);
}

TEST_CASE("loader: --machine and --seed replace machine: and seed:", "[loader][set]") {
  LoadOptions o = test_configs();
  o.machine = "tiny";
  o.seed = 99;
  const Scenario s = load_scenario_text(
      "name: t\nseed: 5\nmachine: small\n" + kWorkload + "backend: {kind: pool}\n", "t.yaml", o);
  CHECK(s.seed == 99);
  CHECK(s.machine.name == "tiny");
  CHECK(s.machine.cores == 1);
  CHECK(s.backend.threads == 1);
}

// ---------------------------------------------------------------------------
// Machine profiles

TEST_CASE("loader: a machine name the OS refuses to look up is an unknown profile, not a crash",
          "[loader][machine]") {
  // Found by fuzz_scenario (CI, 2026-12-04): a 300-character name made the
  // profile lookup's std::filesystem::exists throw (File name too long).
  const std::string name = "h" + std::string(300, 'O');
  CHECK_SCENARIO_ERROR(
      error_of("name: t\nmachine: " + name + "\n" + kWorkload + "backend: {kind: pool}\n"),
      "t.yaml:2:10", "machine", "File name too long");
  CHECK_SCENARIO_ERROR(
      error_of("name: t\nmachine: " + name + ".yaml\n" + kWorkload + "backend: {kind: pool}\n"),
      "t.yaml:2:10", "machine", "does not exist (File name too long)");
}

TEST_CASE("loader: the shipped default profile is complete and documented", "[loader][machine]") {
  const MachineProfile m = load_machine_profile("default", shipped());
  CHECK(m.name == "default");
  CHECK(m.cores == 4);
  CHECK(m.slice == 2100us);
  CHECK(m.tick == 4ms);
  CHECK(m.timer_slack == 50us);
  CHECK(m.stack_reserve == 8 * 1024 * 1024);
  CHECK(m.stack_touch > 0);
  CHECK(m.stack_touch < m.stack_reserve);
  CHECK(m.idle_exit > m.wakeup_latency);
  CHECK(m.switch_cost > Duration{0});
  CHECK(fs::path(m.source).filename() == "default.yaml");
}

TEST_CASE("loader: machine base: inheritance in files and inline", "[loader][machine]") {
  const MachineProfile tiny = load_machine_profile("tiny", test_configs());
  CHECK(tiny.name == "tiny");
  CHECK(tiny.cores == 1);
  CHECK(tiny.tick == 4ms);
  CHECK(tiny.slice == 1400us);  // from small
  CHECK(tiny.thread_create == 12us);
  const MachineProfile by_path =
      load_machine_profile((kData / "machines" / "tiny.yaml").string(), test_configs());
  CHECK(by_path.cores == 1);
  CHECK(by_path.source == (kData / "machines" / "tiny.yaml").string());
  const Scenario s = load_scenario_text(
      "name: t\nmachine:\n  base: tiny\n  idle_exit: 1ms\n  stack_touch: 4KiB\n" + kWorkload +
          kBackend,
      "t.yaml", test_configs());
  CHECK(s.machine.cores == 1);
  CHECK(s.machine.tick == 4ms);
  CHECK(s.machine.idle_exit == 1ms);
  CHECK(s.machine.stack_touch == 4096);
  CHECK(s.machine.wakeup_latency == 6us);
}

TEST_CASE("loader: machine_profile_yaml round-trips exactly", "[loader][machine]") {
  MachineProfile m;
  m.name = "odd-box";
  m.cores = 3;
  m.slice = 2100us;
  m.tick = 0ns;
  m.switch_cost = Duration{1234};  // not a whole microsecond
  m.cache_refill = 0ns;
  m.migration_cost = 7us;
  m.wakeup_latency = Duration{5500};
  m.idle_exit = 120us;
  m.timer_slack = 50us;
  m.thread_create = 9ms;
  m.thread_exit = 1s;  // whole seconds; a profile duration is at most 1s
  m.stack_reserve = 2 * 1024 * 1024;
  m.stack_touch = 12345;
  m.queue_handover = Duration{321};
  m.fiber_create = 1us;
  m.fiber_switch = Duration{0};
  m.timer_arm = Duration{4567};
  m.stack_cache = 3 * 1024 * 1024;
  m.stack_map = Duration{12345};
  m.stack_unmap = 7us;
  m.tlb_shootdown = Duration{0};
  m.wake_pack_util = 0.7;
  m.wake_cost = Duration{4321};
  m.wake_ipi = 12us;
  const fs::path dir = fs::temp_directory_path() / ("poolsim-loader-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "odd.yaml";
  {
    std::ofstream out(file);
    out << machine_profile_yaml(m, "written by a test\nsecond line");
  }
  const MachineProfile r = load_machine_profile(file.string(), shipped());
  fs::remove_all(dir);
  CHECK(r.name == m.name);
  CHECK(r.cores == m.cores);
  CHECK(r.slice == m.slice);
  CHECK(r.tick == m.tick);
  CHECK(r.switch_cost == m.switch_cost);
  CHECK(r.cache_refill == m.cache_refill);
  CHECK(r.migration_cost == m.migration_cost);
  CHECK(r.wakeup_latency == m.wakeup_latency);
  CHECK(r.idle_exit == m.idle_exit);
  CHECK(r.timer_slack == m.timer_slack);
  CHECK(r.thread_create == m.thread_create);
  CHECK(r.thread_exit == m.thread_exit);
  CHECK(r.stack_reserve == m.stack_reserve);
  CHECK(r.stack_touch == m.stack_touch);
  CHECK(r.queue_handover == m.queue_handover);
  CHECK(r.fiber_create == m.fiber_create);
  CHECK(r.fiber_switch == m.fiber_switch);
  CHECK(r.timer_arm == m.timer_arm);
  CHECK(r.stack_cache == m.stack_cache);
  CHECK(r.stack_map == m.stack_map);
  CHECK(r.stack_unmap == m.stack_unmap);
  CHECK(r.tlb_shootdown == m.tlb_shootdown);
  CHECK(r.wake_pack_util == Approx(0.7));
  CHECK(r.wake_cost == m.wake_cost);
  CHECK(r.wake_ipi == m.wake_ipi);
  CHECK(r.source == file.string());
  // The shipped profile survives a write and read too.
  const MachineProfile d = load_machine_profile("default", shipped());
  const std::string text = machine_profile_yaml(d);
  CHECK(text.find("slice: 2100us") != std::string::npos);
  CHECK(text.find("stack_reserve: 8MiB") != std::string::npos);
}

TEST_CASE("loader: a profile without the runtime costs takes the default profile's",
          "[loader][machine]") {
  // small.yaml predates queue_handover, fiber_create, fiber_switch, timer_arm.
  const MachineProfile d = load_machine_profile("default", shipped());
  CHECK(d.queue_handover > Duration{0});
  CHECK(d.fiber_create > Duration{0});
  CHECK(d.fiber_switch > Duration{0});
  CHECK(d.timer_arm > Duration{0});
  const MachineProfile small = load_machine_profile("small", test_configs());
  CHECK(small.thread_create == 12us);  // its own fields stay
  CHECK(small.queue_handover == d.queue_handover);
  CHECK(small.fiber_create == d.fiber_create);
  CHECK(small.fiber_switch == d.fiber_switch);
  CHECK(small.timer_arm == d.timer_arm);
  CHECK(d.stack_cache == 40 * 1024 * 1024);
  CHECK(small.stack_cache == d.stack_cache);
  CHECK(small.stack_map == d.stack_map);
  CHECK(small.stack_unmap == d.stack_unmap);
  CHECK(small.tlb_shootdown == d.tlb_shootdown);
  CHECK(d.wake_pack_util == 0);  // mainline: no packing
  CHECK(small.wake_pack_util == d.wake_pack_util);
  CHECK(small.wake_cost == d.wake_cost);
  CHECK(small.wake_ipi == d.wake_ipi);
  // An inline map without base: the old fields are required, the new ones
  // default; one given is kept.
  const Scenario s = load_scenario_text(
      "name: t\nmachine: {cores: 2, slice: 1ms, tick: 1ms, switch_cost: 1us, cache_refill: 0ns, "
      "migration_cost: 0ns, wakeup_latency: 1us, idle_exit: 0ns, timer_slack: 0ns, "
      "thread_create: 1us, thread_exit: 1us, stack_reserve: 8MiB, stack_touch: 4KiB, "
      "fiber_switch: 42ns}\n" +
          kWorkload + kBackend,
      "t.yaml", shipped());
  CHECK(s.machine.fiber_switch == 42ns);
  CHECK(s.machine.queue_handover == d.queue_handover);
  CHECK(s.machine.timer_arm == d.timer_arm);
}

TEST_CASE("loader: host profile is created on demand by the callback", "[loader][machine]") {
  const fs::path dir = fs::temp_directory_path() / ("poolsim-host-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  LoadOptions o = shipped();
  o.host_profile = dir / "host.yaml";
  int calls = 0;
  o.create_host_profile = [&](const fs::path& p) {
    ++calls;
    MachineProfile m = load_machine_profile("default", shipped());
    m.name = "host";
    m.cores = 2;
    std::ofstream(p) << machine_profile_yaml(m, "calibrated by the test");
  };
  const Scenario s = load_scenario_text(
      "name: t\nmachine: host\n" + kWorkload + "backend: {kind: tbb}\n", "t.yaml", o);
  CHECK(calls == 1);
  CHECK(s.machine.name == "host");
  CHECK(s.machine.cores == 2);
  CHECK(s.backend.threads == 2);
  load_scenario_text("name: t\nmachine: host\n" + kWorkload + kBackend, "t.yaml", o);
  CHECK(calls == 1);  // cached: the file exists now
  fs::remove_all(dir);
}

TEST_CASE("loader: default_config_dir honours POOLSIM_CONFIG_DIR", "[loader]") {
  const char* old = std::getenv("POOLSIM_CONFIG_DIR");
  const std::string saved = old ? old : "";
  ::setenv("POOLSIM_CONFIG_DIR", "/some/where", 1);
  CHECK(default_config_dir() == fs::path("/some/where"));
  ::unsetenv("POOLSIM_CONFIG_DIR");
  CHECK(default_config_dir() == fs::path(POOLSIM_BUILD_CONFIG_DIR));
  if (old) ::setenv("POOLSIM_CONFIG_DIR", saved.c_str(), 1);
}

TEST_CASE("loader: host_profile_path follows the environment", "[loader]") {
  const char* old = std::getenv("POOLSIM_HOST_PROFILE");
  const std::string saved = old ? old : "";
  ::setenv("POOLSIM_HOST_PROFILE", "/x/host.yaml", 1);
  CHECK(host_profile_path() == fs::path("/x/host.yaml"));
  ::unsetenv("POOLSIM_HOST_PROFILE");
  CHECK(host_profile_path().filename() == "host.yaml");
  CHECK(host_profile_path().parent_path().filename() == "poolsim");
  if (old) ::setenv("POOLSIM_HOST_PROFILE", saved.c_str(), 1);
}

TEST_CASE("loader: did_you_mean", "[loader]") {
  const std::vector<std::string> keys = {"threads", "max_threads", "queue",
                                         "reject",  "keep_alive",  "stack"};
  CHECK(did_you_mean("thread", keys) == "threads");
  CHECK(did_you_mean("max_thread", keys) == "max_threads");
  CHECK(did_you_mean("QUEUE", keys) == "queue");
  CHECK(did_you_mean("rejct", keys) == "reject");
  CHECK(did_you_mean("exponentail", {"exponential", "uniform"}) == "exponential");
  CHECK_FALSE(did_you_mean("banana", keys));
  CHECK_FALSE(did_you_mean("x", keys));
  CHECK(did_you_mean("switch", {"switch_cost", "slice"}) ==
        "switch_cost");                                            // a unique abbreviation
  CHECK_FALSE(did_you_mean("thr", {"threads", "thread_create"}));  // ambiguous
  CHECK_FALSE(did_you_mean("threads", {}));
}

// ---------------------------------------------------------------------------
// Malformed inputs: one test per distinct mistake.

TEST_CASE("loader_errors: document level", "[loader][errors]") {
  SECTION("YAML syntax error") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nworkload: [1, 2\nbackend: x\n"), "t.yaml:3:8", "",
                         "YAML syntax error: end of sequence flow not found");
  }
  SECTION("empty document") {
    CHECK_SCENARIO_ERROR(error_of(""), "t.yaml", "", "the scenario is empty");
  }
  SECTION("not a map") {
    CHECK_SCENARIO_ERROR(error_of("- a\n- b\n"), "t.yaml:1:1", "",
                         "expected a scenario (a map with keys name");
  }
  SECTION("two documents") {
    CHECK_SCENARIO_ERROR(error_of("name: a\n---\nname: b\n"), "t.yaml", "",
                         "expected one YAML document, found 2");
  }
  SECTION("unknown top-level key") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nworklaod: {}\n" + kBackend), "t.yaml:2:1", "worklaod",
                         "unknown key 'worklaod'; did you mean 'workload'?");
  }
  SECTION("duplicate key") {
    CHECK_SCENARIO_ERROR(error_of("name: t\n" + kWorkload + kBackend + "name: u\n"), "t.yaml:6:1",
                         "name", "duplicate key 'name' (first given at line 1)");
  }
  SECTION("missing name") {
    CHECK_SCENARIO_ERROR(error_of(kWorkload + kBackend), "t.yaml:1:1", "name",
                         "missing required key 'name'");
  }
  SECTION("bad name") {
    CHECK_SCENARIO_ERROR(error_of("name: Burst_Micro\n" + kWorkload + kBackend), "t.yaml:1:7",
                         "name", "only lower-case letters, digits and '-' (got 'Burst_Micro')");
  }
  SECTION("bad seed") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nseed: -3\n" + kWorkload + kBackend), "t.yaml:2:7",
                         "seed", "expected a seed (a whole number");
  }
  SECTION("missing workload") {
    CHECK_SCENARIO_ERROR(error_of("name: t\n" + kBackend), "t.yaml:1:1", "workload",
                         "missing required key 'workload'");
  }
  SECTION("missing backend") {
    CHECK_SCENARIO_ERROR(error_of("name: t\n" + kWorkload), "t.yaml:1:1", "backend",
                         "missing required key 'backend'");
  }
  SECTION("missing file") {
    std::optional<ScenarioError> e;
    try {
      load_scenario(kData / "nope.yaml", shipped());
    } catch (const ScenarioError& x) {
      e = x;
    }
    CHECK_SCENARIO_ERROR(e, (kData / "nope.yaml").string(), "", "no such scenario file");
  }
}

TEST_CASE("loader_errors: backend", "[loader][errors]") {
  const std::string head = "name: t\n" + kWorkload;  // backend starts on line 5
  SECTION("unknown kind") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: pol}\n"), "t.yaml:5:17", "backend.kind",
                         "unknown backend kind 'pol'; did you mean 'pool'?");
  }
  SECTION("missing kind") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {threads: 4}\n"), "t.yaml:5:10", "backend.kind",
                         "missing required key 'kind'");
  }
  SECTION("misspelt key") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend:\n  kind: pool\n  thread: 4\n"), "t.yaml:7:3",
                         "backend.thread", "unknown key 'thread'; did you mean 'threads'?");
  }
  SECTION("key of another kind") {
    CHECK_SCENARIO_ERROR(
        error_of(head + "backend:\n  kind: pool\n  carriers: 4\n"), "t.yaml:7:3",
        "backend.carriers",
        "'carriers' is not a parameter of backend kind 'pool' (it belongs to virtual-threads)");
  }
  SECTION("key shared by other kinds") {
    CHECK_SCENARIO_ERROR(
        error_of(head + "backend: {kind: virtual-threads, threads: 4}\n"), "t.yaml:5:34",
        "backend.threads",
        "'threads' is not a parameter of backend kind 'virtual-threads' (it belongs to pool, "
        "work-stealing, tbb, asio-pool)");
  }
  SECTION("thread count word") {
    CHECK_SCENARIO_ERROR(
        error_of(head + "backend: {kind: pool, threads: lots}\n"), "t.yaml:5:32", "backend.threads",
        "expected a thread count: a whole number, cores, N*cores, cores*N or cores/N (got 'lots')");
  }
  SECTION("thread count zero") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: tbb, threads: 0}\n"), "t.yaml:5:31",
                         "backend.threads", "a thread count must be at least 1");
  }
  SECTION("thread count too large") {
    CHECK_SCENARIO_ERROR(
        error_of(head + "backend: {kind: tbb, threads: 99999999999}\n"), "t.yaml:5:31",
        "backend.threads",
        "a thread count must be at most 2147483647 (and at most run.max_threads), got 99999999999");
  }
  SECTION("cores divided by zero") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: event-loop, loops: cores/0}\n"),
                         "t.yaml:5:36", "backend.loops", "cannot divide cores by 0");
  }
  SECTION("max_threads below threads") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: pool, threads: 8, max_threads: 4}\n"),
                         "t.yaml:5:48", "backend.max_threads",
                         "max_threads (4) must be at least threads (8)");
  }
  SECTION("negative queue") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: pool, queue: -1}\n"), "t.yaml:5:30",
                         "backend.queue", "must be at least 0, got -1");
  }
  SECTION("unknown reject policy") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: pool, reject: discrad}\n"), "t.yaml:5:31",
                         "backend.reject",
                         "unknown reject policy 'discrad'; did you mean 'discard'?");
  }
  SECTION("injecting-pool min above max") {
    CHECK_SCENARIO_ERROR(
        error_of(head + "backend: {kind: injecting-pool, min_threads: 8, max_threads: 2}\n"),
        "t.yaml:5:62", "backend.max_threads",
        "injecting-pool needs min_threads <= max_threads (min 8, max 2)");
  }
  SECTION("stack too small") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: thread-per-task, stack: 1KiB}\n"),
                         "t.yaml:5:41", "backend.stack", "at least 16KiB");
  }
  SECTION("stack with a unit that does not exist") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: work-stealing, stack: 8M}\n"),
                         "t.yaml:5:39", "backend.stack", "unknown size unit 'M'");
  }
  SECTION("keep_alive without a unit") {
    CHECK_SCENARIO_ERROR(error_of(head + "backend: {kind: pool, keep_alive: 60}\n"), "t.yaml:5:35",
                         "backend.keep_alive", "duration needs a unit: ns, us, ms, s");
  }
  SECTION("more threads than run.max_threads") {
    CHECK_SCENARIO_ERROR(
        error_of(head + "backend: {kind: pool, threads: 100}\nrun: {max_threads: 50}\n"),
        "t.yaml:5:32", "backend.threads",
        "backend pool may run up to 100 threads, more than run.max_threads (50)");
  }
}

TEST_CASE("loader_errors: arrival", "[loader][errors]") {
  auto with_arrival = [](const std::string& a) {
    return error_of("name: t\nworkload:\n  arrival: " + a + "\n  task: [{cpu: 1ms}]\n" + kBackend);
  };
  SECTION("unknown kind") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: poison, rate: 5/s, count: 3}"), "t.yaml:3:19",
                         "workload.arrival.kind",
                         "unknown arrival kind 'poison'; did you mean 'poisson'?");
  }
  SECTION("batch without count") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: batch}"), "t.yaml:3:12", "workload.arrival.count",
                         "missing required key 'count'");
  }
  SECTION("count zero") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: batch, count: 0}"), "t.yaml:3:33",
                         "workload.arrival.count", "count must be at least 1, got 0");
  }
  SECTION("count not a number") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: batch, count: 1e5}"), "t.yaml:3:33",
                         "workload.arrival.count", "expected count (a whole number), got '1e5'");
  }
  SECTION("rate without a unit") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: poisson, rate: 5000, count: 10}"), "t.yaml:3:34",
                         "workload.arrival.rate", "rate needs a unit: /s, /ms or /us");
  }
  SECTION("both count and duration") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: poisson, rate: 5/s, count: 10, duration: 1s}"),
                         "t.yaml:3:60", "workload.arrival.duration",
                         "give either count or duration, not both");
  }
  SECTION("neither count nor duration") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: periodic, interval: 1ms}"), "t.yaml:3:12",
                         "workload.arrival.count", "missing required key 'count' (or duration");
  }
  SECTION("parameter of another arrival kind") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: batch, count: 5, rate: 5/s}"), "t.yaml:3:36",
                         "workload.arrival.rate",
                         "'rate' is not a parameter of arrival kind 'batch' (it takes count)");
  }
  SECTION("closed without duration") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: closed, clients: 10}"), "t.yaml:3:12",
                         "workload.arrival.duration", "missing required key 'duration'");
  }
  SECTION("zero interval") {
    CHECK_SCENARIO_ERROR(with_arrival("{kind: periodic, interval: 0ms, count: 5}"), "t.yaml:3:39",
                         "workload.arrival.interval", "interval must be greater than 0ns");
  }
}

TEST_CASE("loader_errors: tasks, phases and distributions", "[loader][errors]") {
  auto with_task = [](const std::string& t) {
    return error_of("name: t\nworkload:\n  arrival: {kind: batch, count: 1}\n  task: " + t + "\n" +
                    kBackend);
  };
  // The task list starts at line 4, column 9.
  SECTION("duration without a unit") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: 2}]"), "t.yaml:4:16", "workload.task[0].cpu",
                         "duration needs a unit: ns, us, ms, s");
  }
  SECTION("two kinds in one phase") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: 1ms, wait: 2ms}]"), "t.yaml:4:10", "workload.task[0]",
                         "a phase has exactly one of cpu, wait, lock; got cpu, wait");
  }
  SECTION("misspelt phase") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: 1ms}, {wiat: 2ms}]"), "t.yaml:4:23",
                         "workload.task[1].wiat", "unknown key 'wiat'; did you mean 'wait'?");
  }
  SECTION("empty task") {
    CHECK_SCENARIO_ERROR(with_task("[]"), "t.yaml:4:9", "workload.task",
                         "a task needs at least one phase");
  }
  SECTION("task is not a list") {
    CHECK_SCENARIO_ERROR(with_task("1ms"), "t.yaml:4:9", "workload.task",
                         "expected a task: a list of phases");
  }
  SECTION("lock without hold") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: 1ms}, {lock: {name: db}}]"), "t.yaml:4:29",
                         "workload.task[1].lock.hold", "missing required key 'hold'");
  }
  SECTION("lock with zero shards") {
    CHECK_SCENARIO_ERROR(with_task("[{lock: {name: rows, shards: 0, hold: 1us}}]"), "t.yaml:4:38",
                         "workload.task[0].lock.shards", "shards must be at least 1, got 0");
  }
  SECTION("lock hold as a bare number, deep path") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: 1ms}, {lock: {name: db, hold: 10}}]"), "t.yaml:4:46",
                         "workload.task[1].lock.hold", "duration needs a unit");
  }
  SECTION("unknown distribution") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: {dist: exponentail, mean: 2ms}}]"), "t.yaml:4:23",
                         "workload.task[0].cpu.dist",
                         "unknown distribution 'exponentail'; did you mean 'exponential'?");
  }
  SECTION("distribution without dist") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: {mean: 2ms}}]"), "t.yaml:4:16",
                         "workload.task[0].cpu.dist", "missing required key 'dist'");
  }
  SECTION("exponential without mean") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: {dist: exponential}}]"), "t.yaml:4:16",
                         "workload.task[0].cpu.mean", "missing required key 'mean'");
  }
  SECTION("key of another distribution") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: {dist: exponential, median: 2ms}}]"), "t.yaml:4:36",
                         "workload.task[0].cpu.median",
                         "unknown key 'median'; did you mean 'mean'?");
  }
  SECTION("uniform min above max") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: {dist: uniform, min: 3ms, max: 1ms}}]"), "t.yaml:4:47",
                         "workload.task[0].cpu.max", "uniform needs min <= max");
  }
  SECTION("lognormal median not below p99") {
    CHECK_SCENARIO_ERROR(with_task("[{wait: {dist: lognormal, median: 20ms, p99: 2ms}}]"),
                         "t.yaml:4:54", "workload.task[0].wait.p99",
                         "lognormal needs median < p99");
  }
  SECTION("empirical file missing") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: {dist: empirical, file: no-such.csv}}]"), "t.yaml:4:40",
                         "workload.task[0].cpu.file", "cannot read empirical samples file");
  }
  SECTION("distribution is a list") {
    CHECK_SCENARIO_ERROR(with_task("[{cpu: [1ms]}]"), "t.yaml:4:16", "workload.task[0].cpu",
                         "expected a duration (e.g. 2ms) or a distribution map");
  }
}

TEST_CASE("loader_errors: empirical sample file lines", "[loader][errors]") {
  const std::string display = (kData / "t.yaml").string();
  const auto e = error_of(
      "name: t\nworkload:\n  arrival: {kind: batch, count: 1}\n  task: [{cpu: {dist: empirical, "
      "file: bad_samples.csv}}]\n" +
          kBackend,
      shipped(), display);
  CHECK_SCENARIO_ERROR(e, (kData / "bad_samples.csv").string() + ":4:3",
                       "workload.task[0].cpu.file", "duration needs a unit");
}

TEST_CASE("loader_errors: classes and workload shape", "[loader][errors]") {
  const std::string arrival = "name: t\nworkload:\n  arrival: {kind: batch, count: 1}\n";
  SECTION("task and classes together") {
    CHECK_SCENARIO_ERROR(error_of(arrival + "  task: [{cpu: 1ms}]\n  classes: []\n" + kBackend),
                         "t.yaml:5:12", "workload.classes",
                         "give either task or classes, not both");
  }
  SECTION("neither task nor classes") {
    CHECK_SCENARIO_ERROR(error_of(arrival + kBackend), "t.yaml:3:3", "workload.task",
                         "missing required key 'task' (or classes");
  }
  SECTION("zero weight") {
    CHECK_SCENARIO_ERROR(
        error_of(arrival + "  classes:\n    - {weight: 0, task: [{cpu: 1ms}]}\n" + kBackend),
        "t.yaml:5:16", "workload.classes[0].weight", "a class weight must be greater than 0");
  }
  SECTION("weight not a number") {
    CHECK_SCENARIO_ERROR(
        error_of(arrival + "  classes:\n    - {weight: most, task: [{cpu: 1ms}]}\n" + kBackend),
        "t.yaml:5:16", "workload.classes[0].weight", "expected a fraction such as 70% or 0.7");
  }
  SECTION("missing arrival") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nworkload:\n  task: [{cpu: 1ms}]\n" + kBackend),
                         "t.yaml:3:3", "workload.arrival",
                         "missing required key 'arrival' (or graph)");
  }
}

TEST_CASE("loader_errors: graphs", "[loader][errors]") {
  const std::string head = "name: t\nworkload:\n  graph:\n    nodes:\n";  // nodes from line 5
  SECTION("graph with arrival") {
    CHECK_SCENARIO_ERROR(
        error_of("name: t\nworkload:\n  arrival: {kind: batch, count: 1}\n  graph: {fork_join: "
                 "{depth: 1, fanout: 2, leaf: [{cpu: 1ms}]}}\n" +
                 kBackend),
        "t.yaml:3:12", "workload.arrival", "'arrival' cannot be combined with 'graph'");
  }
  SECTION("duplicate node id") {
    CHECK_SCENARIO_ERROR(
        error_of(head +
                 "      - {id: a, task: [{cpu: 1ms}]}\n      - {id: a, task: [{cpu: 1ms}]}\n" +
                 kBackend),
        "t.yaml:6:14", "workload.graph.nodes[1].id",
        "duplicate node id 'a' (also workload.graph.nodes[0])");
  }
  SECTION("unknown node in after") {
    CHECK_SCENARIO_ERROR(error_of(head +
                                  "      - {id: split, task: [{cpu: 1ms}]}\n      - {id: b, task: "
                                  "[{cpu: 1ms}], after: [splt]}\n" +
                                  kBackend),
                         "t.yaml:6:45", "workload.graph.nodes[1].after[0]",
                         "unknown node 'splt'; did you mean 'split'? in after:");
  }
  SECTION("cycle") {
    CHECK_SCENARIO_ERROR(error_of(head +
                                  "      - {id: a, task: [{cpu: 1ms}], after: [c]}\n"
                                  "      - {id: b, task: [{cpu: 1ms}], after: [a]}\n"
                                  "      - {id: c, task: [{cpu: 1ms}], after: [b]}\n" +
                                  kBackend),
                         "*", "*", "the graph has a cycle through node");
  }
  SECTION("self cycle") {
    CHECK_SCENARIO_ERROR(
        error_of(head + "      - {id: a, task: [{cpu: 1ms}], after: [a]}\n" + kBackend),
        "t.yaml:5:45", "workload.graph.nodes[0].after[0]",
        "the graph has a cycle through node 'a': a -> a");
  }
  SECTION("fork_join without leaf") {
    CHECK_SCENARIO_ERROR(
        error_of("name: t\nworkload:\n  graph: {fork_join: {depth: 2, fanout: 2}}\n" + kBackend),
        "t.yaml:3:22", "workload.graph.fork_join.leaf", "missing required key 'leaf'");
  }
  SECTION("fork_join too large") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nworkload:\n  graph: {fork_join: {depth: 40, fanout: 4, "
                                  "leaf: [{cpu: 1us}]}}\n" +
                                  kBackend),
                         "t.yaml:3:42", "workload.graph.fork_join.fanout",
                         "make more than 2^64 nodes");
  }
  SECTION("graph with neither nodes nor fork_join") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nworkload:\n  graph: {}\n" + kBackend), "t.yaml:3:10",
                         "workload.graph",
                         "a graph needs `nodes:` (explicit nodes) or `fork_join:`");
  }
}

TEST_CASE("loader_errors: cycle names a node on the cycle", "[loader][errors]") {
  const auto e = error_of(
      "name: t\nworkload:\n  graph:\n    nodes:\n"
      "      - {id: a, task: [{cpu: 1ms}], after: [c]}\n"
      "      - {id: b, task: [{cpu: 1ms}], after: [a]}\n"
      "      - {id: c, task: [{cpu: 1ms}], after: [b]}\n"
      "      - {id: d, task: [{cpu: 1ms}], after: [c]}\n" +
      kBackend);
  REQUIRE(e);
  INFO(e->what());
  // DFS from node a: a -> b -> c, and c -> a closes the cycle at a's `after: [c]`.
  CHECK(e->where() == "t.yaml:5:45");
  CHECK(e->key() == "workload.graph.nodes[0].after[0]");
  CHECK(e->message() ==
        "the graph has a cycle through node 'a': a -> b -> c -> a (each arrow: runs before)");
}

TEST_CASE("loader_errors: limits", "[loader][errors]") {
  auto with_limits = [](const std::string& l) {
    return error_of("name: t\nlimits: " + l + "\n" + kWorkload + kBackend);
  };
  SECTION("zero cpus") {
    CHECK_SCENARIO_ERROR(with_limits("{cpus: 0}"), "t.yaml:2:16", "limits.cpus",
                         "limits.cpus must be between 0.001 (1ms of CPU per 1s period, the "
                         "smallest cgroup quota) and 65536 (the most cores a machine profile may "
                         "have), got 0");
  }
  SECTION("1e15 cpus: located, not overflowing") {
    CHECK_SCENARIO_ERROR(with_limits("{cpus: 1e15}"), "t.yaml:2:16", "limits.cpus",
                         "and 65536 (the most cores a machine profile may have), got 1e15");
  }
  SECTION("cpus not a number") {
    CHECK_SCENARIO_ERROR(with_limits("{cpus: half}"), "t.yaml:2:16", "limits.cpus",
                         "expected a CPU quota");
  }
  SECTION("period too long") {
    CHECK_SCENARIO_ERROR(with_limits("{period: 2s}"), "t.yaml:2:18", "limits.period",
                         "the quota period must be between 1ms and 1s");
  }
  SECTION("period too short") {
    CHECK_SCENARIO_ERROR(with_limits("{period: 500us}"), "t.yaml:2:18", "limits.period",
                         "between 1ms and 1s");
  }
  SECTION("cpuset CPU not on the machine") {
    CHECK_SCENARIO_ERROR(with_limits("{cpuset: \"0-7\"}"), "t.yaml:2:18", "limits.cpuset",
                         "CPU 4 is not on machine 'default' (CPUs 0-3)");
  }
  SECTION("cpuset range backwards") {
    CHECK_SCENARIO_ERROR(with_limits("{cpuset: \"3-1\"}"), "t.yaml:2:18", "limits.cpuset",
                         "cpuset range 3-1 runs backwards");
  }
  SECTION("cpuset garbage") {
    CHECK_SCENARIO_ERROR(with_limits("{cpuset: \"0,,2\"}"), "t.yaml:2:18", "limits.cpuset",
                         "expected a cpuset such as \"0-1\" or \"0,2,4-5\", got '0,,2'");
  }
  SECTION("cpuset list with a non-number") {
    CHECK_SCENARIO_ERROR(with_limits("{cpuset: [0, x]}"), "t.yaml:2:22", "limits.cpuset[1]",
                         "expected a CPU number (a whole number), got 'x'");
  }
  SECTION("unknown limits key") {
    CHECK_SCENARIO_ERROR(with_limits("{cpu: 2}"), "t.yaml:2:10", "limits.cpu",
                         "did you mean 'cpus'?");
  }
}

TEST_CASE("loader_errors: run and tolerance", "[loader][errors]") {
  const std::string base = "name: t\n" + kWorkload + kBackend;  // run/tolerance on line 6
  SECTION("zero reps") {
    CHECK_SCENARIO_ERROR(error_of(base + "run: {reps: 0}\n"), "t.yaml:6:13", "run.reps",
                         "run.reps must be at least 1");
  }
  SECTION("zero timeout") {
    CHECK_SCENARIO_ERROR(error_of(base + "run: {timeout: 0s}\n"), "t.yaml:6:16", "run.timeout",
                         "run.timeout must be greater than 0s");
  }
  SECTION("unknown metric") {
    CHECK_SCENARIO_ERROR(error_of(base + "tolerance: {latency_p999: 30%}\n"), "t.yaml:6:13",
                         "tolerance.latency_p999",
                         "unknown metric 'latency_p999'; did you mean 'latency_p99'?");
  }
  SECTION("tolerance not a fraction") {
    CHECK_SCENARIO_ERROR(error_of(base + "tolerance: {default: ten}\n"), "t.yaml:6:22",
                         "tolerance.default", "expected a fraction such as 70% or 0.7");
  }
  SECTION("default tolerance off") {
    CHECK_SCENARIO_ERROR(error_of(base + "tolerance: {default: off}\n"), "t.yaml:6:22",
                         "tolerance.default", "the default tolerance cannot be off");
  }
  SECTION("run is a scalar") {
    CHECK_SCENARIO_ERROR(
        error_of(base + "run: fast\n"), "t.yaml:6:6", "run",
        "expected run options (a map with keys reps, warmup, timeout, "
        "max_threads, max_events, speed_band, speed_drift, speed_retries, speed_wait), got "
        "'fast'");
  }
}

TEST_CASE("loader_errors: machine profiles", "[loader][errors]") {
  const std::string rest = kWorkload + kBackend;
  SECTION("unknown profile name") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: defualt\n" + rest), "t.yaml:2:10", "machine",
                         "unknown machine profile 'defualt'; did you mean 'default'?");
  }
  SECTION("inline without base misses fields") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: {cores: 2}\n" + rest), "t.yaml:2:10",
                         "machine.slice",
                         "missing required key 'slice' (a machine profile needs every field");
  }
  SECTION("inline zero cores") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: {base: default, cores: 0}\n" + rest),
                         "t.yaml:2:33", "machine.cores", "cores must be at least 1, got 0");
  }
  SECTION("inline unknown field") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: {base: default, switch: 1us}\n" + rest),
                         "t.yaml:2:26", "machine.switch",
                         "unknown key 'switch'; did you mean 'switch_cost'?");
  }
  SECTION("stack_touch above stack_reserve") {
    CHECK_SCENARIO_ERROR(
        error_of("name: t\nmachine: {base: default, stack_reserve: 16KiB, stack_touch: 20KiB}\n" +
                 rest),
        "t.yaml:2:61", "machine.stack_touch",
        "stack_touch (20 KiB) cannot exceed stack_reserve (16 KiB)");
  }
  SECTION("host profile missing, no calibrator") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: host\n" + rest), "t.yaml:2:10", "machine",
                         "run `poolsim calibrate`");
  }
  SECTION("runtime cost not a duration") {
    CHECK_SCENARIO_ERROR(
        error_of("name: t\nmachine: {base: default, queue_handover: fast}\n" + rest), "t.yaml:2:42",
        "machine.queue_handover", "a duration");
  }
  SECTION("runtime cost negative") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: {base: default, timer_arm: -1us}\n" + rest),
                         "t.yaml:2:37", "machine.timer_arm", "");
  }
  SECTION("wake packing not a fraction") {
    CHECK_SCENARIO_ERROR(
        error_of("name: t\nmachine: {base: default, wake_pack_util: lots}\n" + rest), "t.yaml:2:42",
        "machine.wake_pack_util", "a fraction");
  }
  SECTION("wake packing above 100%") {
    CHECK_SCENARIO_ERROR(
        error_of("name: t\nmachine: {base: default, wake_pack_util: 150%}\n" + rest), "t.yaml:2:42",
        "machine.wake_pack_util", "");
  }
  SECTION("stack cache not a size") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: {base: default, stack_cache: 40}\n" + rest),
                         "t.yaml:2:39", "machine.stack_cache", "size needs a unit");
  }
  SECTION("profile file misses a field") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: partial\n" + rest, test_configs()),
                         (kData / "machines" / "partial.yaml").string() + ":1:1", "timer_slack",
                         "missing required key 'timer_slack'");
  }
  SECTION("profiles inheriting in a cycle") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: loop-a\n" + rest, test_configs()), "*", "base",
                         "machine profiles inherit from each other in a cycle");
  }
  SECTION("profile path that does not exist") {
    CHECK_SCENARIO_ERROR(error_of("name: t\nmachine: ./gone.yaml\n" + rest), "t.yaml:2:10",
                         "machine", "gone.yaml does not exist");
  }
  SECTION("load_machine_profile with an unknown name") {
    std::optional<ScenarioError> e;
    try {
      load_machine_profile("smal", test_configs());
    } catch (const ScenarioError& x) {
      e = x;
    }
    CHECK_SCENARIO_ERROR(e, "smal", "machine", "did you mean 'small'?");
  }
}

TEST_CASE("loader_errors: --set", "[loader][errors][set]") {
  const std::string yaml = "name: t\n" + kWorkload + kBackend;
  auto with_sets = [&](std::vector<std::string> sets) {
    LoadOptions o = shipped();
    o.sets = std::move(sets);
    return error_of(yaml, o);
  };
  SECTION("no '='") {
    CHECK_SCENARIO_ERROR(with_sets({"backend.threads"}), "--set backend.threads", "",
                         "no '=' found");
  }
  SECTION("empty path") {
    CHECK_SCENARIO_ERROR(with_sets({"=4"}), "--set =4", "", "empty key path");
  }
  SECTION("malformed path") {
    CHECK_SCENARIO_ERROR(with_sets({"backend..threads=4"}), "--set backend..threads=4",
                         "backend..threads", "malformed key path");
  }
  SECTION("indexing a non-sequence") {
    CHECK_SCENARIO_ERROR(with_sets({"backend[0]=4"}), "--set backend[0]=4", "backend[0]",
                         "cannot index into a map: not a list");
  }
  SECTION("index out of range") {
    CHECK_SCENARIO_ERROR(with_sets({"workload.task[5].cpu=1ms"}), "--set workload.task[5].cpu=1ms",
                         "workload.task[5]", "index 5 is out of range (the list has 1 elements)");
  }
  SECTION("key inside a scalar") {
    CHECK_SCENARIO_ERROR(with_sets({"name.first=x"}), "--set name.first=x", "name.first",
                         "cannot set a key inside 't': not a map");
  }
  SECTION("bad value is reported at the override") {
    CHECK_SCENARIO_ERROR(with_sets({"backend.threads=lots"}), "--set backend.threads=lots",
                         "backend.threads", "expected a thread count");
  }
  SECTION("bad value inside an overridden map") {
    CHECK_SCENARIO_ERROR(with_sets({"machine={base: default, cores: 0}"}),
                         "--set machine={base: default, cores: 0}", "machine.cores",
                         "cores must be at least 1, got 0");
  }
  SECTION("created key with a bad value") {
    CHECK_SCENARIO_ERROR(with_sets({"run.timeout=10"}), "--set run.timeout=10", "run.timeout",
                         "duration needs a unit");
  }
  SECTION("unknown key created by an override") {
    CHECK_SCENARIO_ERROR(with_sets({"backend.thread=4"}), "--set backend.thread=4",
                         "backend.thread", "did you mean 'threads'?");
  }
  SECTION("value that is not YAML") {
    CHECK_SCENARIO_ERROR(with_sets({"backend={kind: pool"}), "--set backend={kind: pool", "backend",
                         "the value is not valid YAML");
  }
  SECTION("errors elsewhere still point into the file") {
    LoadOptions o = shipped();
    o.sets = {"backend.threads=2"};
    CHECK_SCENARIO_ERROR(
        error_of("name: t\n" + kWorkload + "backend: {kind: pool, queue: -1}\n", o), "t.yaml:5:30",
        "backend.queue", "must be at least 0");
  }
}

TEST_CASE("loader: what() joins where, key and message", "[loader]") {
  const ScenarioError e("f.yaml:3:5", "backend.threads", "expected a thread count");
  CHECK(std::string(e.what()) == "f.yaml:3:5: backend.threads: expected a thread count");
  const ScenarioError f("f.yaml", "", "no such scenario file");
  CHECK(std::string(f.what()) == "f.yaml: no such scenario file");
}

// ---------------------------------------------------------------------------
// Hostile input (issue 20): every size is checked before allocation, every
// time against the horizon, every file's type before it is read.

namespace {

const std::string kPoisson =
    "name: t\n"
    "workload:\n"
    "  arrival: {kind: poisson, rate: 1000/s, count: 200}\n"
    "  task: [{cpu: 1ms}]\n"
    "backend: {kind: pool, threads: 4}\n";

std::optional<ScenarioError> set_error(const std::vector<std::string>& sets,
                                       const std::string& yaml = kPoisson) {
  LoadOptions o = shipped();
  o.sets = sets;
  return error_of(yaml, o);
}

// A scratch directory, removed with its contents.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    char tmpl[] = "/tmp/poolsim-loader-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~ScratchDir() { fs::remove_all(path); }
};

std::optional<ScenarioError> file_error(const fs::path& p, const LoadOptions& o = shipped()) {
  try {
    load_scenario(p, o);
  } catch (const ScenarioError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("loader_hostile: task counts are checked from the arrival parameters",
          "[loader][hostile]") {
  CHECK_SCENARIO_ERROR(set_error({"workload.arrival.count=4000000000"}),
                       "--set workload.arrival.count=4000000000", "workload.arrival.count",
                       "count must be at most 50000000, got 4000000000");
  CHECK_SCENARIO_ERROR(set_error({"workload.arrival.count=9223372036854775808"}),
                       "--set workload.arrival.count=9223372036854775808", "workload.arrival.count",
                       "count must be at most 50000000, got 9223372036854775808");
  CHECK_SCENARIO_ERROR(
      set_error({"workload.arrival={kind: poisson, rate: 1e8/s, duration: 1000s}"}), "*",
      "workload.arrival.duration",
      "rate x duration = 1e+11 tasks, more than the 50000000-task cap of one workload");
  CHECK_SCENARIO_ERROR(
      set_error({"workload.arrival={kind: periodic, interval: 1ns, duration: 1000s}"}), "*",
      "workload.arrival.duration",
      "duration / interval = 1e+12 tasks, more than the 50000000-task cap of one workload");
  CHECK_SCENARIO_ERROR(
      set_error({"workload={graph: {fork_join: {fanout: 10, depth: 8, leaf: [{cpu: 1us}]}}}"}), "*",
      "workload.graph.fork_join.fanout",
      "fanout 10 and depth 8 make 122222222 nodes (fanout^depth leaves plus a fork and a join per "
      "inner node), more than the 50000000-task cap");
  CHECK_SCENARIO_ERROR(
      set_error({"workload={graph: {fork_join: {fanout: 1000, depth: 10, leaf: [{cpu: 1us}]}}}"}),
      "*", "workload.graph.fork_join.fanout", "make more than 2^64 nodes");
  CHECK(fork_join_nodes(10, 7) == 12'222'222);
  CHECK(fork_join_nodes(2, 10) == 1024 + 2 * 1023);
  CHECK(fork_join_nodes(1, 64) == 1 + 2 * 64);
}

TEST_CASE("loader_hostile: lock shards are capped", "[loader][hostile]") {
  CHECK_SCENARIO_ERROR(
      set_error({"workload.task[0]={lock: {name: a, shards: 2000000000, hold: 1us}}"}), "*",
      "workload.task[0].lock.shards", "shards must be at most 1000000, got 2000000000");
  CHECK_SCENARIO_ERROR(set_error({"workload.task[0]={lock: {name: a, shards: 1e8, hold: 1us}}"}),
                       "*", "workload.task[0].lock.shards",
                       "expected shards (a whole number), got '1e8'");
  CHECK_SCENARIO_ERROR(
      set_error({"workload.task=[{lock: {name: a, shards: 600000, hold: 1us}}, {lock: {name: b, "
                 "shards: 600000, hold: 1us}}]"}),
      "*", "workload",
      "the lock phases declare 1200000 mutex shards in all, more than the maximum of 1000000");
}

TEST_CASE("loader_hostile: times stay inside the 100-year horizon", "[loader][hostile]") {
  CHECK_SCENARIO_ERROR(set_error({"workload.task[0]={wait: 9e9s}"}),
                       "--set workload.task[0]={wait: 9e9s}", "workload.task[0].wait",
                       "a duration must be at most 3155760000s (100 years, the simulated "
                       "horizon), got '9e9s'");
  CHECK_SCENARIO_ERROR(set_error({"workload.arrival={kind: periodic, interval: 9e9s, count: 100}"}),
                       "*", "workload.arrival.interval", "a duration must be at most 3155760000s");
  CHECK_SCENARIO_ERROR(
      set_error({"workload.arrival={kind: periodic, interval: 9e7s, count: 100}"}), "*",
      "workload.arrival.interval",
      "interval x (count - 1) puts the last arrival 8.91e+09s after the start, beyond the "
      "simulated horizon of 3155760000s (100 years)");
  CHECK_SCENARIO_ERROR(set_error({"workload.task[0].cpu=1e9s"}), "--set workload.task[0].cpu=1e9s",
                       "workload",
                       "200 tasks of on average 1e+09 s each, after the last arrival at 200 ms, "
                       "take 2e+11s end to end, beyond the simulated horizon of 3155760000s (100 "
                       "years)");
  CHECK_SCENARIO_ERROR(set_error({"limits.cpus=0.001", "workload.task[0].cpu=1e7s"}),
                       "--set workload.task[0].cpu=1e7s", "workload",
                       "200 tasks of on average 1e+07 s each, after the last arrival at 200 ms, "
                       "under a quota of 0.001 CPUs, take 2e+12s end to end, beyond the simulated "
                       "horizon");
  CHECK_SCENARIO_ERROR(set_error({"workload.arrival.rate=1e-9/s"}),
                       "--set workload.arrival.rate=1e-9/s", "workload.arrival.rate",
                       "count / rate (the mean arrival time) puts the last arrival 2e+11s after "
                       "the start, beyond the simulated horizon");
  CHECK_SCENARIO_ERROR(set_error({"workload.arrival.rate=1e-300/s"}), "*", "workload.arrival.rate",
                       "a rate must be at least 3.17e-10/s (one arrival per 100 years, the "
                       "simulated horizon), got '1e-300/s'");
  CHECK_SCENARIO_ERROR(set_error({"workload.arrival.rate=1e308/s"}), "*", "workload.arrival.rate",
                       "a rate must be at most 1e9/s (one arrival per nanosecond, the "
                       "simulator's time resolution), got '1e308/s'");
  // Within the horizon the answer is exact: 100 arrivals 9e6 s apart.
  LoadOptions o = shipped();
  o.sets = {"workload.arrival={kind: periodic, interval: 9e6s, count: 100}"};
  const Scenario s = load_scenario_text(kPoisson, "t.yaml", o);
  CHECK(s.workload.arrival->interval == std::chrono::seconds(9'000'000));
}

TEST_CASE("loader_hostile: machine-profile durations are at most 1s", "[loader][hostile]") {
  CHECK_SCENARIO_ERROR(set_error({"machine={base: default, switch_cost: 3e9s}"}),
                       "--set machine={base: default, switch_cost: 3e9s}", "machine.switch_cost",
                       "switch_cost must be 0 to 1s, got 3000000000s");
}

TEST_CASE("loader_hostile: bounds are stated on the side they were crossed", "[loader][hostile]") {
  CHECK_SCENARIO_ERROR(set_error({"run.max_threads=4000000000"}),
                       "--set run.max_threads=4000000000", "run.max_threads",
                       "run.max_threads must be at most 2147483647, got 4000000000");
  CHECK_SCENARIO_ERROR(set_error({"seed=99999999999999999999"}), "--set seed=99999999999999999999",
                       "seed", "a seed must be at most 18446744073709551615 (2^64-1)");
  CHECK_SCENARIO_ERROR(set_error({"seed=-1"}), "--set seed=-1", "seed",
                       "expected a seed (a whole number from 0 to 2^64-1), got '-1'");
}

TEST_CASE("loader_hostile: --set errors name the override", "[loader][hostile]") {
  CHECK_SCENARIO_ERROR(
      set_error({"workload.classes[99999999999999999999].weight=1"}),
      "--set workload.classes[99999999999999999999].weight=1",
      "workload.classes[99999999999999999999].weight",
      "malformed key path: an index must be at most 50000000, got '[99999999999999999999]'");
  CHECK_SCENARIO_ERROR(set_error({"backend.threads=100000"}), "--set backend.threads=100000",
                       "backend.threads",
                       "backend pool may run up to 100000 threads, more than run.max_threads "
                       "(20000)");
  const std::string classes =
      "name: t\n"
      "workload:\n"
      "  arrival: {kind: batch, count: 10}\n"
      "  classes:\n"
      "    - {weight: 70%, task: [{cpu: 1ms}]}\n"
      "    - {weight: 30%, task: [{cpu: 2ms}]}\n" +
      kBackend;
  CHECK_SCENARIO_ERROR(set_error({"workload.task[99]={cpu: 1ms}"}, classes),
                       "--set workload.task[99]={cpu: 1ms}", "workload.task[99]",
                       "'workload.task' is not in the scenario (its map has arrival, classes), so "
                       "there is no element 99 to set; an override can add a new list with "
                       "element [0] only");
}

TEST_CASE("loader_hostile: class weights are percentages adding up to 100% or relative numbers",
          "[loader][hostile]") {
  auto classes = [](const std::string& a, const std::string& b) {
    return error_of(
        "name: t\nworkload:\n  arrival: {kind: batch, count: 10}\n  classes:\n"
        "    - {weight: " +
        a +
        ", task: [{cpu: 1ms}]}\n"
        "    - {weight: " +
        b + ", task: [{cpu: 2ms}]}\n" + kBackend);
  };
  CHECK_SCENARIO_ERROR(classes("150%", "50%"), "t.yaml:5:16", "workload.classes[0].weight",
                       "a class weight in percent must be at most 100%, got 150%");
  CHECK_SCENARIO_ERROR(classes("70%", "20%"), "t.yaml:5:5", "workload.classes",
                       "class weights in percent must add up to 100%, they add up to 90% (write "
                       "plain numbers such as 7 and 3 for relative weights)");
  CHECK_SCENARIO_ERROR(classes("70%", "3"), "t.yaml:6:16", "workload.classes[1].weight",
                       "class weights are either all percentages (70%, 30%: they add up to 100%) "
                       "or all relative numbers (7, 3), not a mix");
  CHECK_FALSE(classes("33.3333333%", "66.6666667%").has_value());
}

TEST_CASE("loader_hostile: input files must be small regular files", "[loader][hostile]") {
  ScratchDir dir;
  const fs::path fifo = dir.path / "fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_SCENARIO_ERROR(file_error(fifo), fifo.string(), "",
                       "cannot read the scenario: " + fifo.string() +
                           " is a FIFO (named pipe), expected a regular file");
  CHECK_SCENARIO_ERROR(file_error("/dev/zero"), "/dev/zero", "",
                       "cannot read the scenario: /dev/zero is a character device, expected a "
                       "regular file");
  CHECK_SCENARIO_ERROR(file_error(dir.path), dir.path.string(), "",
                       "is a directory, expected a regular file");
  fs::create_symlink(dir.path / "loop-b", dir.path / "loop-a");
  fs::create_symlink(dir.path / "loop-a", dir.path / "loop-b");
  CHECK_SCENARIO_ERROR(file_error(dir.path / "loop-a"), (dir.path / "loop-a").string(), "",
                       "is a symbolic link loop (too many levels of symbolic links)");
  const fs::path big = dir.path / "big.yaml";
  {
    std::ofstream f(big);
    f << "name: t\n";
    f.seekp((2 << 20) + 1);
    f << "\n";
  }
  CHECK_SCENARIO_ERROR(file_error(big), big.string(), "",
                       "bytes, more than the maximum of 2 MiB for this input");
  // A FIFO as the empirical samples file or the machine profile.
  LoadOptions o = shipped();
  o.machine = fifo.string();
  CHECK_SCENARIO_ERROR(error_of(kPoisson, o), "--machine " + fifo.string(), "machine",
                       "cannot read machine profile: " + fifo.string() +
                           " is a FIFO (named pipe), expected a regular file");
  CHECK_SCENARIO_ERROR(error_of("name: t\nworkload:\n  arrival: {kind: batch, count: 4}\n"
                                "  task: [{cpu: {dist: empirical, file: " +
                                fifo.string() + "}}]\n" + kBackend),
                       "*", "workload.task[0].cpu.file",
                       "is a FIFO (named pipe), expected a regular file");
}

TEST_CASE("loader_hostile: YAML mistakes get plain words", "[loader][hostile]") {
  CHECK_SCENARIO_ERROR(error_of("name: x\nworkload:\n\tarrival: {kind: batch, count: 1}\n"),
                       "t.yaml:3:1", "",
                       "YAML indents with spaces, not tabs (a tab starts this line; yaml-cpp "
                       "says: illegal map value)");
  CHECK_SCENARIO_ERROR(
      error_of("name: x\nworkload: " + std::string(10000, '[') + std::string(10000, ']') + "\n"),
      "t.yaml:2:1", "",
      "the YAML nests deeper than 64 levels (indentation steps plus brackets); a scenario needs "
      "fewer than 10");
  // Found by fuzz_scenario: yaml-cpp 0.7's LoadAll loops forever on this.
  CHECK_SCENARIO_ERROR(error_of(",asrea"), "t.yaml:1:1", "",
                       "YAML syntax error: unexpected ',' (a ',' belongs inside [...] or {...})");
  std::string deep = "name: x\nworkload:\n";
  for (int i = 1; i < 200; ++i) deep += std::string(2 * static_cast<std::size_t>(i), ' ') + "a:\n";
  CHECK_SCENARIO_ERROR(error_of(deep), "*", "", "the YAML nests deeper than 64 levels");
  // Every shipped scenario stays far below the limit (they all load).
  LoadOptions o = shipped();
  o.machine = "default";
  for (const auto& e :
       fs::directory_iterator(fs::path(POOLSIM_SOURCE_DIR) / "configs" / "scenarios"))
    CHECK_NOTHROW(load_scenario(e.path(), o));
}

TEST_CASE("loader_hostile: a scenario and a machine profile are told apart", "[loader][hostile]") {
  LoadOptions o = shipped();
  const fs::path scenario =
      fs::path(POOLSIM_SOURCE_DIR) / "configs" / "scenarios" / "quickstart.yaml";
  o.machine = scenario.string();
  const auto e = error_of(kPoisson, o);
  CHECK_SCENARIO_ERROR(e, "*", "description",
                       "'description' is a scenario key: this looks like a scenario, not a "
                       "machine profile");
  const fs::path profile = fs::path(POOLSIM_SOURCE_DIR) / "configs" / "machines" / "default.yaml";
  CHECK_SCENARIO_ERROR(file_error(profile), "*", "cores",
                       "'cores' is a machine-profile field: this looks like a machine profile, "
                       "not a scenario (give it with --machine FILE or `machine:`)");
}

TEST_CASE("loader_hostile: a long cycle is shown by its ends", "[loader][hostile]") {
  std::string yaml = "name: t\nworkload:\n  graph:\n    nodes:\n";
  constexpr int kN = 2000;
  for (int i = 0; i < kN; ++i)
    yaml += "      - {id: n" + std::to_string(i) + ", task: [{cpu: 1us}], after: [n" +
            std::to_string((i + kN - 1) % kN) + "]}\n";
  const auto e = error_of(yaml + kBackend);
  CHECK_SCENARIO_ERROR(e, "t.yaml:5:46", "workload.graph.nodes[0].after[0]",
                       "the graph has a cycle through node 'n0': n0 -> n1 -> n2 -> n3 -> n4 -> n5 "
                       "-> n6 -> n7 -> ... (1985 more) ... -> n1993 -> n1994 -> n1995 -> n1996 -> "
                       "n1997 -> n1998 -> n1999 -> n0 (each arrow: runs before)");
  CHECK(e->message().size() < 400);
}
