// sweep: grid expansion and its errors, the CSV/JSON/chart outputs, the USL
// fit through the sweep path, parallel == sequential, and the progress text.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <sstream>

#include "models/scenario_loader.hpp"
#include "validate/output.hpp"
#include "validate/progress.hpp"
#include "validate/sweep.hpp"
#include "validate/sweep_part.hpp"
#include "validate/worker_pool.hpp"

using namespace poolsim;
using namespace poolsim::validate;

namespace {

using Strings = std::vector<std::string>;

// 200 CPU tasks of 1 ms at once on the 4-core default machine: makespan
// ~ 200 ms / min(threads, 4).
const char* kBatch = R"(name: sweep-batch
machine: default
workload:
  arrival: {kind: batch, count: 200}
  task: [{cpu: 1ms}]
backend: {kind: pool, threads: 1}
)";

// An open load with waits: every thread count sees the same arrivals.
const char* kPoisson = R"(name: sweep-poisson
seed: 3
machine: default
workload:
  arrival: {kind: poisson, rate: 400/s, count: 600}
  task: [{cpu: {dist: exponential, mean: 2ms}}, {wait: 5ms}]
backend: {kind: pool, threads: 2}
)";

// A contended batch: every task holds one global lock for a quarter of its
// CPU time, so throughput stops scaling (USL sigma, kappa > 0).
const char* kContended = R"(name: sweep-usl
machine: default
workload:
  arrival: {kind: batch, count: 400}
  task: [{cpu: 600us}, {lock: {name: global, hold: 200us}}]
backend: {kind: pool, threads: 1}
)";

SweepResult sweep(const char* yaml, std::vector<VaryAxis> axes, int jobs = 2) {
  SweepOptions o;
  o.text = yaml;
  o.axes = std::move(axes);
  o.jobs = jobs;
  return run_sweep(o);
}

Strings split_line(const std::string& line) {
  Strings out;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

TEST_CASE("sweep.grid: lists ranges geometric", "[sweep]") {
  CHECK(expand_values("1,2,4,8") == Strings{"1", "2", "4", "8"});
  CHECK(expand_values(" 1 , 2 ") == Strings{"1", "2"});
  CHECK(expand_values("1..5") == Strings{"1", "2", "3", "4", "5"});
  CHECK(expand_values("0..64+16") == Strings{"0", "16", "32", "48", "64"});
  CHECK(expand_values("1..64*2") == Strings{"1", "2", "4", "8", "16", "32", "64"});
  CHECK(expand_values("1..100*2") == Strings{"1", "2", "4", "8", "16", "32", "64"});
  // An integer range with a fractional factor rounds and drops repeats.
  CHECK(expand_values("1..8*1.5") == Strings{"1", "2", "3", "5", "8"});
  CHECK(expand_values("1ms..8ms*2") == Strings{"1ms", "2ms", "4ms", "8ms"});
  CHECK(expand_values("0.5ms..2ms*2") == Strings{"0.5ms", "1ms", "2ms"});
  CHECK(expand_values("0.1..0.3+0.1") == Strings{"0.1", "0.2", "0.3"});
  CHECK(expand_values("500/s..2000/s*2") == Strings{"500/s", "1000/s", "2000/s"});
  CHECK(expand_values("1ms,2ms") == Strings{"1ms", "2ms"});
  // Flow maps keep their commas.
  CHECK(expand_values("{kind: pool, threads: 2},{kind: tbb}") ==
        Strings{"{kind: pool, threads: 2}", "{kind: tbb}"});
  CHECK(expand_values("7") == Strings{"7"});

  const auto a = parse_vary("backend.threads=1..4");
  CHECK(a.key == "backend.threads");
  CHECK(a.values == Strings{"1", "2", "3", "4"});
  CHECK(parse_vary("workload.task[0].cpu=1ms,2ms").key == "workload.task[0].cpu");
}

TEST_CASE("sweep.grid: cartesian first axis slowest", "[sweep]") {
  const auto g = expand_grid({{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}});
  REQUIRE(g.size() == 6);
  CHECK(g[0] == Strings{"1", "x"});
  CHECK(g[1] == Strings{"1", "y"});
  CHECK(g[2] == Strings{"1", "z"});
  CHECK(g[3] == Strings{"2", "x"});
  CHECK(g[5] == Strings{"2", "z"});
}

TEST_CASE("sweep.grid: bad vary is an input error", "[sweep]") {
  // std::invalid_argument: the CLI's exit 2.
  CHECK_THROWS_AS(parse_vary("backend.threads"), std::invalid_argument);
  CHECK_THROWS_WITH(parse_vary("backend.threads"), Catch::Contains("expected KEY=VALUES"));
  CHECK_THROWS_WITH(parse_vary("=1,2"), Catch::Contains("key before '=' is empty"));
  CHECK_THROWS_WITH(parse_vary("backend.threads="), Catch::Contains("no values"));
  CHECK_THROWS_WITH(parse_vary("backend.threads=1,,2"), Catch::Contains("empty value"));
  CHECK_THROWS_WITH(parse_vary("backend.threads=8..1"), Catch::Contains("below its start"));
  CHECK_THROWS_WITH(parse_vary("backend.threads=1..8*1"), Catch::Contains("greater than 1"));
  CHECK_THROWS_WITH(parse_vary("backend.threads=0..8*2"), Catch::Contains("start above 0"));
  CHECK_THROWS_WITH(parse_vary("backend.threads=1..8+0"), Catch::Contains("greater than 0"));
  CHECK_THROWS_WITH(parse_vary("x=1ms..8us"), Catch::Contains("same unit"));
  CHECK_THROWS_WITH(parse_vary("x=a..b"), Catch::Contains("a range is START..END"));
  CHECK_THROWS_WITH(parse_vary("x=1..100000"),
                    Catch::Contains("has 100000 values; a sweep runs at most 10000 points"));
  CHECK_THROWS_WITH(expand_grid({{"a", {"1"}}, {"a", {"2"}}}), Catch::Contains("given twice"));
  CHECK_THROWS_WITH(expand_grid({{"a", Strings(200, "1")}, {"b", Strings(200, "1")}}),
                    Catch::Contains("more than 10000 points"));
}

TEST_CASE("sweep.run: bad value fails before any run", "[sweep]") {
  SweepOptions o;
  o.text = kBatch;
  o.axes = {parse_vary("backend.threads=1,2,many")};
  std::atomic<int> ran{0};
  o.on_point = [&](const std::string&) { ++ran; };
  CHECK_THROWS_AS(run_sweep(o), ScenarioError);
  CHECK_THROWS_WITH(run_sweep(o), Catch::Contains("--vary backend.threads=many"));
  CHECK(ran.load() == 0);
}

TEST_CASE("sweep.run: threads shorten a batch", "[sweep]") {
  const auto r = sweep(kBatch, {parse_vary("backend.threads=1,2,4")});
  REQUIRE(r.points.size() == 3);
  CHECK(r.scenario == "sweep-batch");
  CHECK(r.points[0].backend.threads == 1);
  CHECK(r.points[2].backend.threads == 4);
  const double m1 = r.points[0].predicted[Metric::makespan];
  const double m4 = r.points[2].predicted[Metric::makespan];
  CHECK(m1 == Approx(0.200).epsilon(0.05));
  CHECK(m4 == Approx(0.050).epsilon(0.15));
  for (const auto& p : r.points) CHECK(p.predicted[Metric::completed] == 200);
}

TEST_CASE("sweep.run: parallel equals sequential", "[sweep]") {
  const std::vector<VaryAxis> axes = {parse_vary("backend.threads=1..7+2"),
                                      parse_vary("workload.task[1].wait=2ms,5ms")};
  const auto seq = sweep(kPoisson, axes, 1);
  const auto par = sweep(kPoisson, axes, 4);
  REQUIRE(seq.points.size() == 8);
  REQUIRE(par.points.size() == seq.points.size());
  for (std::size_t i = 0; i < seq.points.size(); ++i) {
    CHECK(par.points[i].values == seq.points[i].values);
    for (std::size_t m = 0; m < kMetricCount; ++m)
      CHECK(par.points[i].predicted.values[m] == seq.points[i].predicted.values[m]);
  }
  CHECK(sweep_csv(par) == sweep_csv(seq));
  CHECK(sweep_json(par).dump() == sweep_json(seq).dump());
}

TEST_CASE("sweep.output: csv shape", "[sweep]") {
  const auto r = sweep(
      kPoisson, {parse_vary("backend.threads=1,2"), parse_vary("workload.task[0]={cpu: 1ms}")});
  const std::string csv = sweep_csv(r);
  std::istringstream in(csv);
  std::string line;
  std::vector<Strings> rows;
  while (std::getline(in, line)) rows.push_back(split_line(line));
  REQUIRE(rows.size() == 3);  // header + 2 points
  const auto& h = rows[0];
  CHECK(h[0] == "backend.threads");
  CHECK(h[1] == "workload.task[0]");
  // The keys, every metric, then the overload mark (0 or 1).
  REQUIRE(h.size() == 2 + kMetricCount + 1);
  for (std::size_t m = 0; m < kMetricCount; ++m) CHECK(h[2 + m] == kMetricNames[m]);
  CHECK(h.back() == "overload");
  CHECK((rows[1].back() == "0" || rows[1].back() == "1"));
  // The flow-map value holds no comma here; the threads column is as written.
  CHECK(rows[1][0] == "1");
  CHECK(rows[2][0] == "2");
  CHECK(rows[1].size() == h.size());
  CHECK(std::stod(rows[1][2 + static_cast<std::size_t>(Metric::completed)]) == 600);

  const auto j = sweep_json(r);
  CHECK(j["mode"] == "simulated");
  CHECK(j["vary"][0]["key"] == "backend.threads");
  CHECK(j["points"][1]["values"]["backend.threads"] == 2);
  CHECK(j["points"][1]["metrics"].contains("latency_p99"));
  CHECK(j["points"][1]["backend"]["threads"] == 2);
}

TEST_CASE("sweep.output: csv quotes commas", "[sweep]") {
  SweepResult r;
  r.axes = {{"backend", {"{kind: pool, threads: 2}"}}};
  r.points.resize(1);
  r.points[0].values = {"{kind: pool, threads: 2}"};
  const std::string csv = sweep_csv(r);
  CHECK(csv.find("\n\"{kind: pool, threads: 2}\",") != std::string::npos);
}

TEST_CASE("sweep.output: chart one series per second axis value", "[sweep]") {
  const auto r = sweep(
      kPoisson, {parse_vary("backend.threads=1..4"), parse_vary("workload.task[1].wait=2ms,5ms")});
  const auto c = sweep_chart(r, Metric::latency_p99);
  REQUIRE(c.series.size() == 2);
  CHECK(c.series[0].name == "workload.task[1].wait=2ms");
  CHECK(c.series[0].points.size() == 4);
  CHECK(c.series[0].points.front().x == 1);
  CHECK(c.x.label == "backend.threads");
  CHECK(c.y.unit == svg::Unit::seconds);
  const std::string s = sweep_svg(r, {Metric::latency_p99, Metric::throughput});
  CHECK(s.rfind("<svg xmlns", 0) == 0);
  CHECK(s.find("<svg x=\"0\" y=\"0\"") != std::string::npos);
  CHECK(s.find("<svg x=\"0\" y=\"") != s.rfind("<svg x=\"0\" y=\""));  // two nested charts
  const std::string h = sweep_html(r, {Metric::latency_p99}, nullptr);
  CHECK(h.find("<!DOCTYPE html>") == 0);
  CHECK(h.find("<script") == std::string::npos);
  CHECK(h.find("workload.task[1].wait") != std::string::npos);
  // Non-numeric first axis: placed at indices, the label says which is which.
  const auto k =
      sweep(kBatch, {parse_vary("backend={kind: pool, threads: 2},{kind: thread-per-task}")}, 1);
  const auto kc = sweep_chart(k, Metric::makespan);
  CHECK(kc.x.label.find("index: 0={kind: pool, threads: 2}") != std::string::npos);
}

TEST_CASE("sweep.usl: fit through the sweep path", "[sweep][usl]") {
  const auto r = sweep(kContended, {parse_vary("backend.threads=1..8")});
  const auto fits = sweep_usl(r, "backend.threads");
  REQUIRE(fits.size() == 1);
  const auto& f = fits[0].fit;
  CHECK(fits[0].points.size() == 8);
  // One thread does 1 task per 0.8 ms; the lock serialises a quarter of that.
  CHECK(f.params.lambda == Approx(1250).epsilon(0.15));
  CHECK(f.r_squared > 0.9);
  // The lock stops the scaling at about 3 threads: the fit finds a peak there,
  // far below the 8 threads of the sweep (no contention would fit sigma = kappa = 0).
  CHECK(f.params.sigma + f.params.kappa > 0.01);
  REQUIRE(f.peak_concurrency);
  CHECK(*f.peak_concurrency > 3);
  CHECK(*f.peak_concurrency < 8);
  // Throughput is capped by the lock at 1 / 200 us = 5000/s.
  const double x8 = r.points.back().predicted[Metric::throughput];
  CHECK(x8 < 5000);
  CHECK(usl_caveat(r).empty());
  const auto j = usl_json(fits);
  CHECK(j[0].contains("sigma"));
  CHECK(j[0].contains("r_squared"));
  CHECK_THROWS_WITH(sweep_usl(r, "backend.queue"), Catch::Contains("not a varied key"));
  const auto open = sweep(kPoisson, {parse_vary("backend.threads=1..3")});
  CHECK_FALSE(usl_caveat(open).empty());
}

TEST_CASE("sweep.numeric: units to SI", "[sweep]") {
  CHECK(numeric_value("8") == 8.0);
  CHECK(numeric_value("2ms") == Approx(0.002));
  CHECK(numeric_value("500/s") == 500.0);
  CHECK(numeric_value("1KiB") == 1024.0);
  CHECK_FALSE(numeric_value("pool").has_value());
}

TEST_CASE("progress.lines: plain with eta", "[progress]") {
  using namespace std::chrono;
  steady_clock::time_point now{};
  std::ostringstream out;
  Progress p("sweep", 4, out, Progress::Style::lines, [&] { return now; });
  now += seconds(1);
  p.step("backend.threads=1");
  now += seconds(1);
  p.step("backend.threads=2");
  CHECK(out.str() ==
        "sweep: 1/4 (25%) backend.threads=1, ETA 3.0 s\n"
        "sweep: 2/4 (50%) backend.threads=2, ETA 2.0 s\n");
  p.step("x");
  p.step("y");
  CHECK(out.str().find("sweep: 4/4 (100%) y, done\n") != std::string::npos);
  CHECK(p.done() == 4);
}

TEST_CASE("progress.bar: redraws in place and throttles", "[progress]") {
  using namespace std::chrono;
  steady_clock::time_point now{};
  std::ostringstream out;
  {
    Progress p("size", 3, out, Progress::Style::bar, [&] { return now; });
    p.bar_width = 10;
    now += milliseconds(500);
    p.step("a");
    now += milliseconds(10);  // inside the redraw interval: not drawn
    p.step("b");
    now += milliseconds(10);
    p.step("c");  // the last step is always drawn
  }
  const std::string s = out.str();
  CHECK(s.find("\rsize [###.......] 1/3  33%  0.5 s elapsed, ETA 1.0 s  a") == 0);
  CHECK(s.find(" b") == std::string::npos);
  CHECK(s.find("\rsize [##########] 3/3 100%") != std::string::npos);
  CHECK(s.back() == '\n');
  std::ostringstream quiet;
  Progress q("x", 2, quiet, Progress::Style::quiet);
  q.step("a");
  q.finish();
  CHECK(quiet.str().empty());
  CHECK(format_eta(75) == "1 min 15 s");
  CHECK(format_eta(7380) == "2 h 03 min");
}

TEST_CASE("sweep.shard: K/N parses strictly and shards partition the grid by stride", "[sweep]") {
  CHECK(parse_shard("2/3") == Shard{2, 3});
  CHECK(parse_shard("1/1") == Shard{1, 1});
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "1/3x", "/3", "-1/3"})
    CHECK_THROWS_WITH(parse_shard(bad), Catch::Contains("expected K/N with 1 <= K <= N"));
  CHECK(shard_indices(10, {1, 3}) == std::vector<std::size_t>{0, 3, 6, 9});
  CHECK(shard_indices(10, {3, 3}) == std::vector<std::size_t>{2, 5, 8});
  CHECK(shard_indices(2, {3, 3}).empty());
  // Every point in exactly one shard.
  std::vector<int> seen(23, 0);
  for (std::size_t k = 1; k <= 4; ++k)
    for (auto i : shard_indices(23, {k, 4})) ++seen[i];
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("sweep.grid: grid_point(i) is row i of the expanded grid, and the cap grows per process",
          "[sweep]") {
  const std::vector<VaryAxis> axes = {{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}, {"c", {"p", "q"}}};
  const auto g = expand_grid(axes);
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(grid_point(axes, i) == g[i]);
  CHECK(grid_cap(1) == 10'000);
  CHECK(grid_cap(3) == 30'000);
  CHECK(grid_cap(1'000'000) == kMaxDistributedPoints);
  CHECK(grid_size({{"a", Strings(200, "1")}, {"b", Strings(100, "1")}}, grid_cap(2)) == 20'000);
  CHECK_THROWS_WITH(grid_size({{"a", Strings(200, "1")}, {"b", Strings(100, "1")}}),
                    Catch::Contains("more than 10000 points"));
}

TEST_CASE("sweep.grid: range sizes are known before expanding, exponents are numbers", "[sweep]") {
  CHECK(expand_values("1..1e1+3") == Strings{"1", "4", "7", "10"});
  CHECK(expand_values("0.1..0.3+0.1") == Strings{"0.1", "0.2", "0.3"});
  CHECK(expand_values("1..64*2").size() == 7);
  CHECK_THROWS_WITH(expand_values("1..1e9"), Catch::Contains("has 1000000000 values"));
  // Beyond 2^53 values are not exact integers: written as numbers, never wrapped.
  const auto huge = expand_values("1..1e300*2");
  REQUIRE(huge.size() == 997);
  CHECK(huge[53] == "9.00719925474e+15");
  CHECK_THROWS_WITH(expand_values("1..1e300*1.001"), Catch::Contains("has 691121 values"));
  CHECK(abbreviate(std::string(50, 'x')) == std::string(50, 'x'));
  CHECK(abbreviate(std::string(500, 'x')) == std::string(60, 'x') + "... (500 characters)");
}

TEST_CASE("sweep.part: a point round-trips exactly, non-finite values included", "[sweep]") {
  SweepPoint p;
  p.index = 7;
  p.values = {"8", "2ms"};
  p.backend.threads = 8;
  for (std::size_t m = 0; m < kMetricCount; ++m) p.predicted.values[m] = 1.0 / (3.0 + m);
  p.predicted.values[0] = std::nan("");
  p.predicted.values[1] = HUGE_VAL;
  std::array<MetricStats, kMetricCount> st{};
  st[2] = {0.1 + 0.2, 1e-300, -0.0, 5e300, 4};
  p.measured = st;
  const SweepPoint q = point_from_json(nlohmann::ordered_json::parse(point_json(p).dump()));
  CHECK(q.index == 7);
  CHECK(q.values == p.values);
  CHECK(std::isnan(q.predicted.values[0]));
  CHECK(q.predicted.values[1] == HUGE_VAL);
  for (std::size_t m = 2; m < kMetricCount; ++m)
    CHECK(q.predicted.values[m] == p.predicted.values[m]);
  REQUIRE(q.measured);
  CHECK((*q.measured)[2].mean == 0.1 + 0.2);
  CHECK((*q.measured)[2].sd == 1e-300);
  CHECK((*q.measured)[2].max == 5e300);
  CHECK((*q.measured)[2].n == 4);
  CHECK(q.backend_json == backend_json(p.backend));
}

TEST_CASE("sweep.part: shards of a run merge into the run's CSV and JSON, and bad sets are refused",
          "[sweep]") {
  const std::vector<VaryAxis> axes = {parse_vary("backend.threads=1..5"),
                                      parse_vary("workload.task[1].wait=2ms,5ms")};
  const auto whole = sweep(kPoisson, axes, 2);
  const nlohmann::ordered_json id = {{"test", "merge"}};
  std::vector<SweepPart> parts;
  for (std::size_t k = 1; k <= 4; ++k) {
    SweepOptions o;
    o.text = kPoisson;
    o.axes = axes;
    o.jobs = 1;
    o.shard = Shard{k, 4};
    const auto r = run_sweep(o);
    parts.push_back(read_part(part_json(r, {k, 4}, id).dump(2), "part" + std::to_string(k)));
  }
  std::reverse(parts.begin(), parts.end());
  const auto merged = merge_parts(parts);
  CHECK(sweep_csv(merged) == sweep_csv(whole));
  CHECK(sweep_json(merged).dump() == sweep_json(whole).dump());
  auto missing = parts;
  missing.pop_back();
  CHECK_THROWS_WITH(merge_parts(missing), Catch::Contains("missing shard 1/4"));
  auto twice = parts;
  twice.push_back(parts[0]);
  CHECK_THROWS_WITH(merge_parts(twice), Catch::Contains("are both shard 4/4"));
  auto foreign = parts;
  foreign[1].fingerprint = "0000000000000000";
  CHECK_THROWS_WITH(merge_parts(foreign), Catch::Contains("parts of different sweeps"));
  auto cut = parts;
  cut[0].result.points.pop_back();
  CHECK_THROWS_WITH(merge_parts(cut), Catch::Contains("not the 2 of its shard"));
  auto edited = nlohmann::ordered_json::parse(part_json(whole, {1, 1}, id).dump());
  edited["sweep"]["scenario"] = "other";
  CHECK_THROWS_WITH(read_part(edited.dump(), "edited.json"),
                    Catch::Contains("edited.json: the part's fingerprint does not match"));
  CHECK_THROWS_WITH(read_part("{}", "x.json"), Catch::Contains("x.json: not a sweep part"));
}

TEST_CASE("sweep.workers: a pool runs the body on every worker and joins them", "[sweep]") {
  std::atomic<int> ran{0};
  std::vector<std::string> notes;
  const auto n = run_workers(
      4, [&] { ++ran; }, [&](const std::string& s) { notes.push_back(s); });
  CHECK(n == 4);
  CHECK(ran.load() == 4);
  CHECK(notes.empty());
  CHECK(run_workers(0, [&] { ++ran; }) == 1);
  CHECK(ran.load() == 5);
}

TEST_CASE("sweep.for_each_index: every index once, and the first exception reaches the caller",
          "[sweep]") {
  std::vector<std::atomic<int>> seen(100);
  for_each_index(100, 4, [&](int i) { ++seen[static_cast<std::size_t>(i)]; });
  for (const auto& s : seen) CHECK(s.load() == 1);
  const auto throw_at_3 = [](std::atomic<int>& calls) {
    return [&calls](int i) {
      ++calls;
      if (i == 3) throw std::runtime_error("index 3");
    };
  };
  std::atomic<int> calls{0};
  CHECK_THROWS_WITH(for_each_index(1000, 4, throw_at_3(calls)), "index 3");
  // On one worker nothing is handed out after the throw.
  calls = 0;
  CHECK_THROWS_WITH(for_each_index(1000, 1, throw_at_3(calls)), "index 3");
  CHECK(calls.load() == 4);
}
