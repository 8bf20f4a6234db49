// calibrate's profile from its measurements: every field of the field table
// comes from the measurement of that name, and a field nothing measured is an
// error that names it (not a silent 0). The experiments themselves are timed
// on this machine and are not run here.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "models/machine_fields.hpp"
#include "real/backend.hpp"
#include "real/calibrate.hpp"
#include "real/cpu_busy.hpp"

using namespace poolsim;

namespace {

std::vector<real::Measurement> one_per_field() {
  std::vector<real::Measurement> ms;
  double v = 1;
  for (const MachineField& f : kMachineFields) {
    real::Measurement m;
    m.field = std::string(f.name);
    switch (f.kind()) {
      case FieldKind::count:
        m.median = 2;
        break;
      case FieldKind::duration:
        m.median = v * 1e-6;
        break;
      case FieldKind::size:
        m.median = v * 8192 + 100;
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

}  // namespace

TEST_CASE("calibrate: the profile takes every field from the measurement of that name",
          "[real][calibrate]") {
  const auto ms = one_per_field();
  const MachineProfile p = real::profile_from_measurements(ms);
  CHECK(p.name == "host");
  for (std::size_t i = 0; i < kMachineFieldCount; ++i) {
    const MachineField& f = kMachineFields[i];
    CAPTURE(f.name);
    if (f.name == "stack_touch")  // rounded to whole pages
      CHECK(machine_field_si(f, p) == 4096 * std::llround(ms[i].median / 4096));
    else if (f.kind() == FieldKind::size)
      CHECK(machine_field_si(f, p) == std::floor(ms[i].median));
    else
      CHECK(machine_field_si(f, p) == Approx(ms[i].median));
  }
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
