// svg charts for decisions: automatic log scale, the target line, point
// markers, axis suffixes and saturated points, checked on the SVG text.
#include <catch2/catch.hpp>
#include <string>

#include "validate/svg_chart.hpp"

using namespace poolsim::validate::svg;

namespace {

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// Two p99 series against the rate: one fine (10-40 ms), one saturated (up to 50 s).
LineChart p99_chart() {
  LineChart c;
  c.title = "p99";
  c.x = {"workload.arrival.rate", Unit::plain, false, {}, {}};
  c.y = {"latency_p99", Unit::seconds, false, {}, {}};
  Series ok;
  ok.name = "threads=16";
  ok.points = {{100, 0.010}, {200, 0.020}, {300, 0.040}};
  Series bad;
  bad.name = "threads=2";
  bad.points = {{100, 0.012}, {200, 20.0}, {300, 50.0}};
  bad.saturated_x = {200, 300};
  c.series = {ok, bad};
  return c;
}

}  // namespace

TEST_CASE("svg: auto_log turns the y axis log beyond 20x, with decade ticks", "[svg]") {
  LineChart c = p99_chart();
  c.auto_log = true;
  const std::string svg = render_line_chart(c).svg;
  CHECK(svg.find("latency_p99 (log scale)") != std::string::npos);
  for (const char* tick : {">10 ms<", ">100 ms<", ">1 s<", ">10 s<", ">100 s<"})
    CHECK(svg.find(tick) != std::string::npos);
  // On a log axis the saturated points are in range: marked, none above.
  CHECK(count(svg, "class=\"saturated\"") == 2);
  CHECK(svg.find("triangles: saturated (overloaded) runs<") != std::string::npos);
}

TEST_CASE("svg: auto_log keeps a linear axis under 20x, with a zero, or when off", "[svg]") {
  LineChart narrow = p99_chart();
  narrow.series.pop_back();
  narrow.auto_log = true;
  CHECK(render_line_chart(narrow).svg.find("(log scale)") == std::string::npos);
  LineChart zero = p99_chart();
  zero.series[0].points[0].y = 0;
  zero.auto_log = true;
  CHECK(render_line_chart(zero).svg.find("(log scale)") == std::string::npos);
  LineChart forced = narrow;
  forced.auto_log = false;
  forced.y.log = true;
  CHECK(render_line_chart(forced).svg.find("latency_p99 (log scale)") != std::string::npos);
}

TEST_CASE("svg: on a linear axis saturated points do not flatten the others", "[svg]") {
  const std::string svg = render_line_chart(p99_chart()).svg;
  // The range is set by the unsaturated points (12..40 ms): ticks in ms, no seconds tick.
  CHECK(svg.find(">40 ms<") != std::string::npos);
  CHECK(svg.find(">10 s<") == std::string::npos);
  CHECK(count(svg, "class=\"saturated\"") == 2);
  CHECK(svg.find("triangles: saturated (overloaded) runs; 2 above the axis, up to 50 s") !=
        std::string::npos);
}

TEST_CASE("svg: the target is a labelled dashed line at its value", "[svg]") {
  LineChart c = p99_chart();
  c.series.pop_back();
  c.target = 0.100;
  c.target_label = "target 100 ms";
  const std::string svg = render_line_chart(c).svg;
  REQUIRE(count(svg, "class=\"target\"") == 1);
  CHECK(svg.find(">target 100 ms<") != std::string::npos);
  // The range grows to include the target: the top tick is at or above 100 ms.
  CHECK(svg.find(">100 ms<") != std::string::npos);
  // The line is drawn at the 100-ms tick's height.
  const auto line = svg.find("class=\"target\"");
  const auto y1 = svg.find("y1=\"", line) + 4;
  const std::string y = svg.substr(y1, svg.find('"', y1) - y1);
  const auto tick = svg.find(">100 ms<");
  const auto tick_y = svg.rfind("y=\"", tick) + 3;
  const double label_y = std::stod(svg.substr(tick_y, svg.find('"', tick_y) - tick_y));
  CHECK(std::stod(y) == Approx(label_y - 4).margin(0.11));  // labels sit 4 px below their line
}

TEST_CASE("svg: markers on every point, measured ones filled squares", "[svg]") {
  LineChart c = p99_chart();
  c.series[0].markers = true;
  c.series[1].markers = true;
  c.series[1].measured = true;
  const std::string svg = render_line_chart(c).svg;
  // Three points per series, plus one in each legend swatch.
  CHECK(count(svg, "class=\"marker predicted\"") == 3 + 1);
  CHECK(count(svg, "class=\"marker measured\"") == 3 + 1);
}

TEST_CASE("svg: tick labels carry the axis suffix", "[svg]") {
  LineChart c = p99_chart();
  c.x_suffix = axis_suffix("workload.arrival.rate", {"100/s", "200/s", "300/s"});
  CHECK(c.x_suffix == "/s");
  const std::string svg = render_line_chart(c).svg;
  CHECK(svg.find(">100/s<") != std::string::npos);
  CHECK(svg.find(">300/s<") != std::string::npos);
  CHECK(axis_suffix("backend.threads", {"1", "2"}) == " threads");
  CHECK(axis_suffix("backend.carriers", {"1", "2"}) == " threads");
  CHECK(axis_suffix("workload.arrival.clients", {"8"}) == " clients");
  CHECK(axis_suffix("backend.kind", {"pool", "tbb"}).empty());
}

TEST_CASE("svg: saturated points within 4x of the others keep the range", "[svg]") {
  // A throughput chart: the saturated point (374/s) is the highest, but not an outlier.
  LineChart c;
  c.x = {"rate", Unit::plain, false, {}, {}};
  c.y = {"throughput", Unit::plain, false, {}, {}};
  Series s;
  s.name = "threads=16";
  s.points = {{100, 103}, {200, 204}, {300, 302}, {400, 374}};
  s.saturated_x = {400};
  c.series = {s};
  c.x_suffix = "/s";  // x ticks read "400/s", so ">400<" below is a y tick
  const std::string svg = render_line_chart(c).svg;
  CHECK(count(svg, "class=\"saturated\"") == 1);
  CHECK(svg.find("triangles: saturated (overloaded) runs<") != std::string::npos);
  CHECK(svg.find("above the axis") == std::string::npos);
  CHECK(svg.find(">400<") != std::string::npos);  // the y axis reaches past 374
}
