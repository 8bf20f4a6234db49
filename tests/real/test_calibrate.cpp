// calibrate's profile from its measurements: every field of the field table
// comes from the measurement of that name, and a field nothing measured is an
// error that names it (not a silent 0). The experiments themselves are timed
// on this machine and are not run here.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/machine_fields.hpp"
#include "real/calibrate.hpp"

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
