// calibrate's profile from its measurements: every field of the field table
// comes from the measurement of that name, and a field nothing measured is an
// error that names it (not a silent 0). The experiments themselves are timed
// on this machine and are not run here.
#include <gnu/libc-version.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "models/machine_fields.hpp"
#include "real/backend.hpp"
#include "real/calibrate.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/cpu_busy.hpp"
#include "real/os_noise.hpp"

using namespace poolsim;

namespace {

std::vector<real::Measurement> one_per_field() {
  std::vector<real::Measurement> ms;
  double v = 1;
  for (const MachineField& f : kMachineFields) {
    real::Measurement m;
    m.field = std::string(f.name);
    switch (f.kind()) {
      case FieldKind::count:  // a switch (range 0 to 1) takes 1
        m.median = std::min(2.0, f.range.max);
        break;
      case FieldKind::duration:  // above the field's least value (the periods: 100 us)
        m.median = f.range.min + v * 1e-6;
        break;
      case FieldKind::size:  // a part of a page (arena_header) stays below a page
        m.median = f.range.max < 8192 ? f.range.max - v : v * 8192 + 100;
        break;
      case FieldKind::fraction:
        m.median = 0.5;
        break;
    }
    v += 1;
    ms.push_back(m);
  }
  return ms;
}

// One block of an experiment that measures several fields: a measurement
// per (field, value), method "x".
std::vector<real::Measurement> fields_block(
    std::initializer_list<std::pair<const char*, double>> values) {
  std::vector<real::Measurement> b;
  for (auto [f, v] : values) {
    real::Measurement m;
    m.field = f;
    m.median = m.mean = v;
    m.method = "x";
    b.push_back(m);
  }
  return b;
}

}  // namespace

TEST_CASE("calibrate: the profile takes every field from the measurement of that name",
          "[real][calibrate]") {
  const auto ms = one_per_field();
  const MachineProfile p = real::profile_from_measurements(ms);
  CHECK(p.name == "host");
  for (std::size_t i = 0; i < kMachineFieldCount; ++i) {
    const MachineField& f = kMachineFields[i];
    CAPTURE(f.name);
    if (f.name == "stack_touch" || f.name == "malloc_arena")  // rounded to whole pages
      CHECK(machine_field_si(f, p) == 4096 * std::llround(ms[i].median / 4096));
    else if (f.kind() == FieldKind::size)
      CHECK(machine_field_si(f, p) == std::floor(ms[i].median));
    else
      CHECK(machine_field_si(f, p) == Approx(ms[i].median));
  }
}

TEST_CASE("calibrate: noise flooding the benchmark is a disturbed machine, refused as such",
          "[real][calibrate][hostile]") {
  auto ms = one_per_field();
  const auto set_interval = [&](double s) {
    for (real::Measurement& m : ms)
      if (m.field == "noise_interval") m.median = s;
  };
  // CI, right after its builds: an interruption every 89.8 us.
  set_interval(89.8e-6);
  CHECK_THROWS_AS(real::refuse_flooded_noise(ms), real::MachineRefused);
  CHECK_THROWS_WITH(real::refuse_flooded_noise(ms),
                    Catch::Contains("the machine was disturbed during the measurement") &&
                        Catch::Contains("every 89.8 us"));
  // A quiet machine (every 1.7 ms) and no noise at all pass.
  set_interval(1.7e-3);
  CHECK_NOTHROW(real::refuse_flooded_noise(ms));
  set_interval(0);
  CHECK_NOTHROW(real::refuse_flooded_noise(ms));
}

TEST_CASE("calibrate: a field without a measurement is an error naming it", "[real][calibrate]") {
  for (std::size_t i = 0; i < kMachineFieldCount; ++i) {
    auto ms = one_per_field();
    ms.erase(ms.begin() + static_cast<std::ptrdiff_t>(i));
    CAPTURE(kMachineFields[i].name);
    CHECK_THROWS_WITH(real::profile_from_measurements(ms),
                      Catch::Contains(std::string(kMachineFields[i].name)));
  }
}

TEST_CASE("calibrate.busy: the busy share of the CPUs from two /proc/stat lines",
          "[real][calibrate]") {
  // user nice system idle iowait irq softirq steal
  const std::string a = "cpu  100 0 50 800 50 0 0 0 0 0";
  const std::string b = "cpu  160 0 70 900 70 0 0 0 0 0";  // +80 busy, +120 idle/iowait
  REQUIRE(real::busy_fraction(a, b).has_value());
  CHECK(*real::busy_fraction(a, b) == Approx(0.4));
  CHECK_FALSE(real::busy_fraction(a, a).has_value());                 // no time passed
  CHECK_FALSE(real::busy_fraction("cpu0 1 2 3 4 5", b).has_value());  // not the aggregate line
  CHECK_FALSE(real::busy_fraction("cpu 1 2", b).has_value());         // too few fields
}

TEST_CASE("calibrate.busy: calibrate refuses to measure while other work keeps the CPUs busy",
          "[real][calibrate]") {
  // One spinner per CPU for the second calibrate samples before measuring.
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i)
    spinners.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  real::CalibrateOptions o;
  o.quiet = true;
  std::string message;
  try {
    (void)real::calibrate(o);
  } catch (const real::MachineRefused& e) {
    message = e.what();
  }
  stop = true;
  for (auto& t : spinners) t.join();
  CHECK_THAT(message, Catch::Contains("calibrate: the machine is busy before the measurement"));
  CHECK_THAT(message, Catch::Contains("--allow-busy"));
}

TEST_CASE("calibrate: a measurement outside a field's range is refused, naming the field",
          "[real][calibrate][hostile]") {
  auto ms = one_per_field();
  for (auto& m : ms)
    if (m.field == "slice") m.median = 20e-6;
  CHECK_THROWS_WITH(real::profile_from_measurements(ms),
                    Catch::Contains("slice must be 100us to 1s, got 20us") &&
                        Catch::Contains("no profile written"));
  for (auto& m : ms)
    if (m.field == "slice") m.median = std::nan("");
  CHECK_THROWS_WITH(real::profile_from_measurements(ms),
                    Catch::Contains("measurement of slice failed"));
}

namespace {

// A directory under /tmp, removed with its contents at the end of scope.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string t = "/tmp/poolsim-calib-XXXXXX";
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path),
                                                  std::filesystem::directory_iterator()));
  }
};

real::CalibrationReport some_report() {
  real::CalibrationReport r;
  r.measurements = one_per_field();
  r.profile = real::profile_from_measurements(r.measurements);
  r.kernel = "test";
  r.cpu_model = "test";
  return r;
}

std::string text_of(const std::filesystem::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("calibrate.out: paths that cannot take a profile are refused before measuring",
          "[real][calibrate][hostile]") {
  ScratchDir dir;
  using Catch::Contains;
  CHECK_THROWS_WITH(real::check_profile_path(dir.path, false),
                    Contains(dir.path.string()) && Contains("is a directory"));
  CHECK_THROWS_WITH(real::check_profile_path("/dev/full", false),
                    Contains("/dev/full") && Contains("not a regular file"));
  const auto missing = dir.path / "no" / "such" / "host.yaml";
  CHECK_THROWS_WITH(real::check_profile_path(missing, false),
                    Contains(missing.string()) && Contains("does not exist"));
  // sysfs refuses to create files, even for root, for whom permission bits
  // do not apply: it stands for any read-only directory.
  CHECK_THROWS_WITH(real::check_profile_path("/sys/poolsim-host.yaml", false),
                    Contains("/sys/poolsim-host.yaml") && Contains("cannot create a file"));
  CHECK_THROWS_WITH(real::check_profile_path("", false), Contains("the path is empty"));
  CHECK(dir.entries() == 0);  // the checks leave nothing behind
  // The default host profile's directory is created.
  CHECK_NOTHROW(real::check_profile_path(missing, true));
  CHECK(std::filesystem::is_directory(missing.parent_path()));
  CHECK_FALSE(std::filesystem::exists(missing));
}

TEST_CASE("calibrate.out: the profile is written whole or not at all",
          "[real][calibrate][hostile]") {
  ScratchDir dir;
  const auto out = dir.path / "host.yaml";
  const real::CalibrationReport r = some_report();
  real::write_profile(r, out, false);
  const std::string first = text_of(out);
  CHECK(first.find("slice: ") != std::string::npos);
  CHECK(dir.entries() == 1);  // no temporary file left beside it
  // A write that fails half-way (here: a file size limit, as a full disk
  // would) leaves the old profile as it was and no temporary file.
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  struct rlimit small = old;
  small.rlim_cur = 100;  // bytes: less than a profile
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  real::CalibrationReport changed = r;
  changed.kernel = "changed";
  std::string error;
  try {
    real::write_profile(changed, out, false);
  } catch (const real::ProfileWriteError& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  CHECK_THAT(error, Catch::Contains(out.string()) && Catch::Contains("writing failed"));
  CHECK(text_of(out) == first);
  CHECK(dir.entries() == 1);
}

TEST_CASE("calibrate.fork_pack: the utilization below which packing misplaces the fewest",
          "[real][calibrate]") {
  using poolsim::real::calib::fork_pack_threshold;
  using poolsim::real::calib::PackSample;
  // A clean edge: packed up to 0.64, not from 0.76 (probe of 2026-12-05:
  // 0.61 packed 10 of 10, 0.71 2 of 10, 0.74 0 of 20).
  CHECK(
      fork_pack_threshold({{0.05, true}, {0.3, true}, {0.64, true}, {0.76, false}, {0.8, false}}) ==
      Approx(0.70));
  // Unsorted, with one stray each way: the edge still wins (one misplaced
  // on either side of it).
  CHECK(fork_pack_threshold({{0.8, false},
                             {0.1, true},
                             {0.2, false},
                             {0.5, true},
                             {0.6, true},
                             {0.72, false},
                             {0.9, true},
                             {0.95, false}}) == Approx(0.66));
  // Equally good edges (0.2 and 0.6: one misplaced each): their middle.
  CHECK(fork_pack_threshold({{0.1, true}, {0.3, false}, {0.5, true}, {0.7, false}}) == Approx(0.4));
  // Mainline: nothing packed; a host that always packs: everything.
  CHECK(fork_pack_threshold({{0.1, false}, {0.5, false}, {0.9, false}}) == 0.0);
  CHECK(fork_pack_threshold({{0.1, true}, {0.5, true}, {0.9, true}}) == 1.0);
  CHECK(fork_pack_threshold({}) == 0.0);
}

TEST_CASE("calibrate.pelt_after: PELT's halving every 32 ms", "[real][calibrate]") {
  using poolsim::real::calib::pelt_after;
  CHECK(pelt_after(0.0, 32'000'000, 0) == Approx(0.5));
  CHECK(pelt_after(0.5, 0, 32'000'000) == Approx(0.25));
  CHECK(pelt_after(1.0, 10'000'000, 0) == Approx(1.0));
  // 6 ms on, 1 ms off, from rest: the ramp's first steps.
  CHECK(pelt_after(0.0, 6'000'000, 1'000'000) ==
        Approx((1 - std::exp2(-6.0 / 32)) * std::exp2(-1.0 / 32)));
}

TEST_CASE("calibrate.wake_pack: the threshold is read from the loaded end of the levels",
          "[real][calibrate]") {
  using poolsim::real::calib::wake_pack_threshold;
  const std::vector<double> levels{0.0, 0.2, 0.4, 0.6, 0.8, 0.9};
  // 2026-12-02: the idle level under half alone used to give 0.
  CHECK(wake_pack_threshold(levels, std::vector<double>{0.49, 0.90, 0.86, 0.63, 0.10, 0.05}) ==
        Approx(0.6 + 0.2 * 0.13 / 0.53));
  CHECK(wake_pack_threshold(levels, std::vector<double>{1.0, 0.93, 0.78, 0.61, 0.12, 0.0}) ==
        Approx(0.6 + 0.2 * 0.11 / 0.49));
  // Mainline: no level packs most wakes.
  CHECK(wake_pack_threshold(levels, std::vector<double>{0.02, 0.0, 0.0, 0.0, 0.0, 0.0}) == 0.0);
  // Packed even at the top level.
  CHECK(wake_pack_threshold(levels, std::vector<double>{1.0, 1.0, 1.0, 0.9, 0.8, 0.7}) == 1.0);
  CHECK(wake_pack_threshold(levels, std::vector<double>{0.9, 0.4, 0.2, 0.0, 0.0, 0.0}) ==
        Approx(0.2 * 0.4 / 0.5));
}

TEST_CASE("calibrate.woken: the wake delays end where the model's switch-in charges begin",
          "[real][calibrate]") {
  using poolsim::real::Measurement;
  const auto m = [](const char* field, double v) {
    return Measurement{field, v, v, v * 0.9, v * 1.1, 100, "s", "probe"};
  };
  std::vector<Measurement> ms{m("timer_slack", 70e-6), m("timer_idle_exit", 5e-6),
                              m("idle_exit", 36e-6), m("hrtimer_slack", 51e-6),
                              m("wakeup_latency", 12e-6)};
  poolsim::real::calib::net_woken_charges(ms, {.dispatch = 6.5e-6, .timer_idle_run = 6e-6});
  // The awake sleep's overshoot less the switch-in the model charges after it.
  CHECK(ms[0].median == Approx(63.5e-6));
  CHECK(ms[0].p10 == Approx(63e-6 - 6.5e-6));
  CHECK(ms[0].method.find("switch_cost and cache_refill") != std::string::npos);
  // The idle extra less the idle path's CPU, never below 0.
  CHECK(ms[1].median == 0.0);
  CHECK(ms[2].median == Approx(36e-6 - 6.5e-6));
  CHECK(ms[2].method.find("switch_cost and cache_refill") != std::string::npos);
  // Differences of two inclusive overshoots, and wakeup_latency, stay.
  CHECK(ms[3].median == 51e-6);
  CHECK(ms[4].median == 12e-6);
  CHECK(ms[3].method == "probe");
}

TEST_CASE("calibrate.idle_refill: the fit recovers the curve's two parameters",
          "[real][calibrate]") {
  using poolsim::real::calib::fit_idle_refill;
  // Points on 40 us x (min(1, idle / 20 ms) - 1 ms / 20 ms), as calibrate
  // takes them: 1, 2, 5, 10, 20 and 50 ms.
  const auto curve = [](double refill, double evict) {
    std::vector<std::pair<double, double>> points;
    for (const double idle : {1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3})
      points.emplace_back(idle,
                          refill * (std::min(1.0, idle / evict) - std::min(1.0, 1e-3 / evict)));
    return points;
  };
  const auto fit = fit_idle_refill(curve(40e-6, 20e-3));
  CHECK(fit.refill == Approx(40e-6).epsilon(0.01));
  CHECK(fit.evict_time == Approx(20e-3).epsilon(0.01));
  // Eviction over long before the shortest sleep beyond 1 ms: a step.
  const auto step = fit_idle_refill(curve(30e-6, 1.5e-3));
  CHECK(step.refill * (1 - 1e-3 / step.evict_time) ==
        Approx(30e-6 * (1 - 1e-3 / 1.5e-3)).epsilon(0.05));
  // Noise about a flat line: nothing to charge.
  const auto flat = fit_idle_refill({{1e-3, 0.0}, {2e-3, -1e-6}, {5e-3, -0.5e-6}, {50e-3, -2e-6}});
  CHECK(flat.refill == 0.0);
  CHECK(flat.evict_time == 0.0);
}

TEST_CASE("calibrate.idle_exit_late: the wakes' growth with idle, less idle_refill's share, fitted",
          "[real][calibrate]") {
  using poolsim::real::calib::idle_exit_late_fields;
  using poolsim::real::calib::kIdleWakeGapsMs;
  using poolsim::real::calib::WakeLatencies;
  // The woken thread refills 20 us x (min(1, idle / 10 ms) - 0.1); the
  // exit itself grows by 60 us x (min(1, idle / 20 ms) - 0.05).
  MachineProfile refill;
  refill.idle_refill = std::chrono::microseconds(20);
  refill.idle_evict_time = std::chrono::milliseconds(10);
  WakeLatencies w;
  for (const int ms : kIdleWakeGapsMs) {
    const double idle = ms * 1e-3;
    w.idle_median.push_back(30e-6 + 60e-6 * (std::min(1.0, idle / 20e-3) - 0.05) +
                            20e-6 * (std::min(1.0, idle / 10e-3) - 0.1));
  }
  const auto [late, late_time] = idle_exit_late_fields(w, refill, 2);
  CHECK(late.field == "idle_exit_late");
  CHECK(late.median == Approx(60e-6).epsilon(0.02));
  CHECK(late_time.median == Approx(20e-3).epsilon(0.02));
  // One CPU: nothing to wake.
  const auto [none, none_time] = idle_exit_late_fields(w, refill, 1);
  CHECK(none.median == 0.0);
  CHECK(none_time.median == 0.0);
}

TEST_CASE(
    "calibrate.fresh: thread_create_fresh is the later creations' mean less the model's other "
    "parts (the run's first is thread_create_first's)",
    "[real][calibrate]") {
  using real::calib::FreshCreation;
  // Parts: thread_create 10 us, stack_map 20, kstack_alloc 5 from the third
  // creation of a child on, wake_ipi 8 for a start on the other CPU.
  const std::vector<FreshCreation> samples{
      {90e-6, 2, false},  // a child's first measured creation: left out
      {73e-6, 3, true},   // 73 - 10 - 20 - 5 - 8 = 30
      {50e-6, 4, false},  // 50 - 35 = 15
  };
  const real::Measurement m = real::calib::fresh_creation_field(samples, 10e-6, 20e-6, 5e-6, 8e-6);
  CHECK(m.field == "thread_create_fresh");
  CHECK(m.median == Approx(22.5e-6));
  // Creations the parts already cover give 0, never a negative cost.
  CHECK(real::calib::fresh_creation_field({{20e-6, 3, false}}, 10e-6, 20e-6, 5e-6, 8e-6).median ==
        0.0);
  CHECK(real::calib::fresh_creation_field({{90e-6, 2, false}}, 10e-6, 20e-6, 5e-6, 8e-6).median ==
        0.0);
}

TEST_CASE("calibrate.fork_activate: a remote creation's median less a local one's, less wake_ipi",
          "[real][calibrate]") {
  const std::vector<double> local{5e-6, 6e-6, 7e-6, 6e-6, 6e-6};
  const std::vector<double> remote{30e-6, 28e-6, 31e-6, 29e-6, 35e-6};
  const real::Measurement m = real::calib::fork_activate_field({local, remote}, 13e-6);
  CHECK(m.field == "fork_activate");
  CHECK(m.median == Approx(11e-6));  // 30 - 6 - 13
  // Never negative; too few of a kind: not measured (0).
  CHECK(real::calib::fork_activate_field({local, remote}, 40e-6).median == 0.0);
  CHECK(real::calib::fork_activate_field({{5e-6}, remote}, 13e-6).median == 0.0);
}

TEST_CASE(
    "calibrate.fork_activate: the fork-packing step's creations at both ends of its loads give a "
    "figure that is not negative",
    "[real][calibrate]") {
  const int cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  real::calib::ForkCosts costs;
  const real::Measurement pack = real::calib::measure_fork_packing(std::min(cpus, 2), 1, &costs);
  CHECK(pack.field == "fork_pack_util");
  CHECK(pack.median >= 0.0);
  CHECK(pack.median <= 1.0);
  const real::Measurement m = real::calib::fork_activate_field(costs, 0.0);
  CHECK(m.field == "fork_activate");
  CHECK(m.median >= 0.0);
  CHECK(m.median < 5e-3);
  if (cpus >= 2)
    CHECK((m.method.find("creations of the fork_pack_util step") != std::string::npos ||
           m.method.find("too few") != std::string::npos));
}

TEST_CASE(
    "calibrate.first_creation: the runner's first hand-over of a 2-worker pool on one CPU waits "
    "for a creation and the second for another: the field is their difference and not negative",
    "[real][calibrate]") {
  const real::Measurement m = real::calib::measure_first_creation(3, 256 << 10);
  CHECK(m.field == "thread_create_first");
  CHECK(m.median >= 0.0);
  CHECK(m.median < 5e-3);  // a creation, not a scheduling delay
  CHECK(m.method.find("the first hand-over's creation") != std::string::npos);
}

TEST_CASE("calibrate.fresh: forked children report each creation after the first",
          "[real][calibrate]") {
  const int cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const auto samples = real::calib::measure_fresh_creations(2, std::min(cpus, 2), 256 << 10);
  REQUIRE(samples.size() == 12);  // six measured creations per child
  for (std::size_t i = 0; i < samples.size(); ++i) {
    CHECK(samples[i].index == 2 + static_cast<int>(i % 6));
    CHECK(samples[i].cost > 0);
  }
}

TEST_CASE("calibrate.exits: /proc/<pid>/stat lines name kernel threads by their PF_KTHREAD flag",
          "[real][calibrate]") {
  using real::calib::KthreadClass;
  std::string comm;
  // flags 0x208040 (PF_KTHREAD | PF_WQ_WORKER | ...), a name with a '/'.
  CHECK(real::calib::parse_kthread_stat(
      "35 (kworker/u8:1-kvfree_rcu_reclaim) I 2 0 0 0 -1 2129984 0 0 0 0 0 1 0 0", comm));
  CHECK(comm == "kworker/u8:1-kvfree_rcu_reclaim");
  CHECK(real::calib::kthread_class(comm) == KthreadClass::kworker);
  CHECK(real::calib::parse_kthread_stat("15 (rcu_preempt) I 2 0 0 0 -1 2129984 0 0", comm));
  CHECK(real::calib::kthread_class(comm) == KthreadClass::rcu_gp);
  // A process whose name holds a parenthesis and a space: the last ')' ends
  // it; flags 4194560 without PF_KTHREAD.
  CHECK_FALSE(real::calib::parse_kthread_stat("812 (a) b (c) S 1 812 812 0 -1 4194560 0 0", comm));
  CHECK(comm == "a) b (c");
  CHECK(real::calib::kthread_class("ksoftirqd/0") == KthreadClass::other);
  CHECK(real::calib::kthread_class("rcu_sched") == KthreadClass::rcu_gp);
  CHECK_FALSE(real::calib::parse_kthread_stat("garbage", comm));
}

TEST_CASE(
    "calibrate.exits: the grace period's runs, interval and run cost beyond the rates without "
    "exits",
    "[real][calibrate]") {
  real::calib::ExitWorkPhases p;
  p.base = {5, 50'000, 4, 0};  // 0.5 s: 10 kthread runs a second of 10 us
  p.base_s = 0.5;
  p.sparse = {33, 0, 0, 0};  // 0.9 s: 9 of its own, 6 exits x 4
  p.sparse_s = 0.9;
  p.sparse_exits = 6;
  p.batch = {96, 780'000, 0, 0};  // 0.6 s: 6 of its own, 90 more of 8 us
  p.batch_s = 0.6;
  p.batches = 120;
  p.batch_size = 4;
  const std::vector<real::Measurement> ms = real::calib::exit_work_fields(p);
  REQUIRE(ms.size() == 3);
  CHECK(ms[0].field == "rcu_gp_length");
  CHECK(ms[0].median == Approx(4 * 0.6 / 90));
  CHECK(ms[1].field == "rcu_gp_interval");
  CHECK(ms[1].median == Approx(0.6 / 90));
  CHECK(ms[2].field == "kthread_run");
  CHECK(ms[2].median == Approx(8e-6));
  // No extra runs in the batches: no interval, no length (the mechanism off).
  p.batch = {6, 60'000, 0, 0};
  for (const real::Measurement& m : real::calib::exit_work_fields(p)) CHECK(m.median == 0.0);
}

TEST_CASE("calibrate.exits: the kernel's RCU grace-period thread is found and has run",
          "[real][calibrate]") {
  // Inside a container that hides the host's kernel threads, /proc has none.
  std::ifstream kthreadd("/proc/2/stat");
  std::string line, comm;
  if (!std::getline(kthreadd, line) || !real::calib::parse_kthread_stat(line, comm)) {
    WARN("no kernel threads visible in /proc: not checked");
    return;
  }
  const real::calib::KthreadRuns k = real::calib::read_kthread_runs();
  CHECK(k.gp_runs > 0);
  CHECK(k.gp_ns > 0);
}

namespace {
// A spinner's record: `n` quanta of `fast` ns, the ones from `slow_from` on
// `slow` ns (the vCPU running slower), `hit` more at every `every`-th.
real::FwqSeries fwq_series(std::size_t n, std::int64_t fast, std::int64_t slow,
                           std::size_t slow_from, std::int64_t hit, std::size_t every) {
  real::FwqSeries s;
  for (std::size_t i = 0; i < n; ++i)
    s.quanta_ns.push_back((i >= slow_from ? slow : fast) + (i % every == every / 2 ? hit : 0));
  for (std::int64_t d : s.quanta_ns) s.wall_ns += d;
  s.cpu_ns = s.wall_ns;
  return s;
}
}  // namespace

TEST_CASE(
    "calibrate.noise: a vCPU that runs 12% slower for half the window is not read as "
    "interruptions, the interruptions still are",
    "[real][calibrate]") {
  using namespace std::chrono_literals;
  // 20,480 quanta of 20 us, from the 10,240th on 22.4 us (the excess, 2.4
  // us, is above the 2 us and 10% threshold); a 50 us interruption every
  // 1,000th quantum.
  const real::FwqSeries drift = fwq_series(20480, 20000, 22400, 10240, 50000, 1000);
  const real::OsNoise n = real::summarize_fwq({drift}, 400ms);
  CHECK(n.events == 20);  // quanta 500, 1,500, ..., 19,500: the drift adds none
  CHECK(n.median == Duration(50000));
  // Without the drift the same interruptions, and the same quantum.
  const real::OsNoise still =
      real::summarize_fwq({fwq_series(20480, 20000, 20000, 0, 50000, 1000)}, 400ms);
  CHECK(still.events == 20);
  CHECK(still.quantum == Duration(20000));
  CHECK(still.mean == Duration(50000));
  CHECK(still.interval == Duration((20480 * 20000 + 20 * 50000) / 20));
}

TEST_CASE("calibrate.noise: the profile takes every noise field from the median block",
          "[real][calibrate]") {
  const auto block = [](double interval, double mean, double preempt) {
    return fields_block(
        {{"noise_interval", interval}, {"noise_mean", mean}, {"noise_preempt", preempt}});
  };
  // Lost shares 1%, 5% (a disturbed minute) and 2%: the third block.
  const auto out = real::calib::noise_block_fields(
      {block(1e-3, 1e-5, 0.01), block(4e-4, 2e-5, 0.09), block(1e-3, 2e-5, 0.02)});
  REQUIRE(out.size() == 3);
  CHECK(out[0].median == 1e-3);
  CHECK(out[1].median == 2e-5);
  CHECK(out[2].median == 0.02);
  CHECK(out[2].method.find("block 3 of 3") != std::string::npos);
  CHECK(out[2].method.find("1.00%, 5.00%, 2.00%") != std::string::npos);
}

TEST_CASE("calibrate.timer_stalls: the three fields come from the block with the median share",
          "[real][calibrate]") {
  const auto block = [](double share, double mean, double median) {
    return fields_block(
        {{"timer_stall_share", share}, {"timer_stall_mean", mean}, {"timer_stall_median", median}});
  };
  // Shares 0.2%, 1.4% (a bad minute, long stalls) and 0.1%: the first
  // block, its own mean and median with it.
  const auto out = real::calib::timer_stall_fields(
      {block(0.002, 1.4e-3, 1.2e-3), block(0.014, 5e-3, 3.3e-3), block(0.001, 2e-3, 2e-3)});
  REQUIRE(out.size() == 3);
  CHECK(out[0].field == "timer_stall_share");
  CHECK(out[0].median == 0.002);
  CHECK(out[1].median == 1.4e-3);
  CHECK(out[2].median == 1.2e-3);
  CHECK(out[0].method.find("block 1 of 3") != std::string::npos);
  CHECK(out[0].method.find("0.2%, 1.4%, 0.1%") != std::string::npos);
  // One block (no spread): its fields unchanged.
  const auto one = real::calib::timer_stall_fields({block(0.003, 1e-3, 5e-4)});
  REQUIRE(one.size() == 3);
  CHECK(one[0].median == 0.003);
  CHECK(one[0].method == "x");
}

TEST_CASE("calibrate.tbb_first_spawn: the first gap of a release less the median of the later ones",
          "[real][calibrate]") {
  using namespace std::chrono_literals;
  const auto rec = [](Duration intended, Duration submit) {
    TaskRecord r;
    r.intended = intended;
    r.submit = submit;
    r.outcome = TaskOutcome::completed;
    return r;
  };
  // The root at 0 (no release), then four successors released at 1 ms: the
  // first spawn took 50 us, the others 100, 120 and 100 ns.
  const std::vector<TaskRecord> fork{rec(0ns, 0ns),           rec(1ms, 1ms),
                                     rec(1ms, 1ms + 50us),    rec(1ms, 1ms + 50100ns),
                                     rec(1ms, 1ms + 50220ns), rec(1ms, 1ms + 50320ns)};
  CHECK(real::calib::first_spawn_extra(fork) == Approx(50e-6 - 100e-9));
  // A release of two (a join's one, a chain) is not a fork: nothing to read.
  const std::vector<TaskRecord> chain{rec(0ns, 0ns), rec(1ms, 1ms + 1us), rec(1ms, 1ms + 3us)};
  CHECK(real::calib::first_spawn_extra(chain) == -1);
}

TEST_CASE(
    "calibrate.cv_quiesce: a signal waits for a woken waiter to run exactly where the C "
    "library's version says it does",
    "[real][calibrate]") {
  // The experiment (real/calibrate_condvar.cpp) is not timed against the
  // machine: a wait lasts until the stopped waiter is continued, 20 ms, and
  // no wait is microseconds. glibc 2.25-2.40 waits
  // (__condvar_quiesce_and_switch_g1), 2.41 on does not.
  const real::Measurement m = real::calib::measure_cv_quiesce();
  int major = 0, minor = 0;
  REQUIRE(std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2);
  const bool waits = major == 2 && minor >= 25 && minor < 41;
  CHECK(m.median == (waits ? 1.0 : 0.0));
  CHECK(m.field == "cv_quiesce");
}

TEST_CASE(
    "calibrate.slice: sysctl_sched_base_slice from debugfs sched/debug, as the kernel scaled it",
    "[real][calibrate]") {
  // The head of /sys/kernel/debug/sched/debug on this 2-CPU VM (Linux
  // 6.18.44, 2026-12-07): 0.7 ms x (1 + ilog2 2), already scaled.
  const std::string text =
      "Sched Debug Version: v0.11, 6.18.44-fc-v1300 #1\n"
      "ktime                                   : 20847181.626652\n"
      "\n"
      "sysctl_sched\n"
      "  .sysctl_sched_base_slice                 : 1.400000\n"
      "  .sysctl_sched_features                   : 99674079\n"
      "  .sysctl_sched_tunable_scaling            : 1 (logarithmic)\n"
      "\n"
      "cpu#0, 2596.122 MHz\n"
      "  .nr_running                    : 0\n";
  const auto slice = real::calib::sched_debug_sysctl(text, "sysctl_sched_base_slice");
  REQUIRE(slice.has_value());
  CHECK(*slice == Approx(1.4));
  CHECK(real::calib::sched_debug_sysctl(text, "sysctl_sched_tunable_scaling") == Approx(1.0));
  // Only the whole name: a prefix of a longer one is not it.
  CHECK_FALSE(real::calib::sched_debug_sysctl(text, "sysctl_sched_base").has_value());
  CHECK_FALSE(real::calib::sched_debug_sysctl(text, "sysctl_sched_migration_cost").has_value());
  CHECK_FALSE(real::calib::sched_debug_sysctl("", "sysctl_sched_base_slice").has_value());
  CHECK_FALSE(real::calib::sched_debug_sysctl("  .sysctl_sched_base_slice : n/a\n",
                                              "sysctl_sched_base_slice")
                  .has_value());
}
