#include <catch2/catch.hpp>

#include "models/units.hpp"

using namespace poolsim;
using namespace std::chrono_literals;

TEST_CASE("units: durations parse with every unit", "[units]") {
  CHECK(parse_duration("250ns") == 250ns);
  CHECK(parse_duration("10us") == 10us);
  CHECK(parse_duration("1.5ms") == 1500us);
  CHECK(parse_duration("2s") == 2s);
  CHECK(parse_duration(" 0ms ") == 0ns);
  CHECK(parse_duration("1e3us") == 1ms);
}

TEST_CASE("units: duration errors say what was expected", "[units]") {
  CHECK_THROWS_WITH(parse_duration("5"), Catch::Contains("duration needs a unit: ns, us, ms, s"));
  CHECK_THROWS_WITH(parse_duration("5 hours"), Catch::Contains("unknown duration unit 'hours'"));
  CHECK_THROWS_WITH(parse_duration("fast"), Catch::Contains("expected a duration"));
  CHECK_THROWS_WITH(parse_duration("-1ms"), Catch::Contains("cannot be negative"));
}

TEST_CASE("units: rates, sizes and fractions parse", "[units]") {
  CHECK(parse_rate("5000/s") == Approx(5000));
  CHECK(parse_rate("20/ms") == Approx(20000));
  CHECK_THROWS_WITH(parse_rate("5000"), Catch::Contains("rate needs a unit"));
  CHECK_THROWS_WITH(parse_rate("0/s"), Catch::Contains("positive"));
  CHECK(parse_size("64KiB") == 65536);
  CHECK(parse_size("8MiB") == 8 * 1024 * 1024);
  CHECK(parse_size("4096B") == 4096);
  CHECK_THROWS_WITH(parse_size("64"), Catch::Contains("size needs a unit"));
  CHECK(parse_fraction("70%") == Approx(0.7));
  CHECK(parse_fraction("0.25") == Approx(0.25));
  CHECK_THROWS_WITH(parse_fraction("120%"), Catch::Contains("between 0 and 1"));
  CHECK(parse_fraction("120%", true) == Approx(1.2));
}

TEST_CASE("units: human formats", "[units]") {
  CHECK(format_seconds(0.0015) == "1.5 ms");
  CHECK(format_seconds(2.5) == "2.5 s");
  CHECK(format_bytes(8 * 1024 * 1024) == "8 MiB");
  CHECK(format_duration(250ns) == "250 ns");
}
