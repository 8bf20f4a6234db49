// The HTML report and its SVG charts, on hand-made results.
//
// A tiny deterministic "schedule" stands in for the simulator and the real
// runner: tasks go, in order, to the CPU that frees up first; the measured
// repetitions are the same schedule a few percent slower, with per-thread
// traces. The structure checks look for each section, chart and table row;
// the browser check opens the report in headless Chromium once and asserts
// that it renders with a clean console and its charts in the DOM. Setting
// POOLSIM_SAMPLE_REPORT=PATH makes that test also keep the sample report at
// PATH (docs/report.md's screenshot is taken from it).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "validate/compare.hpp"
#include "validate/html_report.hpp"
#include "validate/svg_chart.hpp"

using namespace poolsim;
using namespace poolsim::validate;
namespace fs = std::filesystem;

namespace {

std::size_t count_of(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size()))
    ++n;
  return n;
}

// A fixed linear congruential generator (Knuth's MMIX constants): the test
// data must not depend on the standard library's distributions.
struct Lcg {
  std::uint64_t x;
  double uniform() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(x >> 11) / 9007199254740992.0;
  }
};

constexpr int kCpus = 2;
constexpr int kWorkers = 4;

// A batch of `tasks` CPU-bound tasks on kWorkers threads over kCpus CPUs,
// list-scheduled; `slow` stretches every task (a measured run is a little
// slower than the prediction). Threads: submitter 0, workers 1..kWorkers.
// rep < 0 is the prediction; measured repetitions count some switches
// differently so the sample shows every verdict (match, diverge, noisy).
RunResult make_run(int tasks, double slow, int rep, bool trace) {
  const bool measured = rep >= 0;
  RunResult r;
  r.mode = measured ? "measured" : "simulated";
  r.cpus_available = kCpus;
  Lcg rng{11};
  std::vector<Duration> cpu_free(kCpus, Duration{20000});  // workers start after 20 us
  std::vector<Duration> ends;
  if (trace) {
    if (measured) {
      r.trace.tracks.push_back({"submitter", false});
      for (int w = 1; w <= kWorkers; ++w)
        r.trace.tracks.push_back({"worker " + std::to_string(w), false});
    } else {
      for (int c = 0; c < kCpus; ++c) r.trace.tracks.push_back({"cpu " + std::to_string(c), true});
    }
  }
  for (int i = 0; i < tasks; ++i) {
    const auto len = Duration{static_cast<std::int64_t>((200000 + 1800000 * rng.uniform()) * slow)};
    const auto c = static_cast<std::size_t>(std::min_element(cpu_free.begin(), cpu_free.end()) -
                                            cpu_free.begin());
    TaskRecord t;
    t.submit = Duration{0};
    t.start = cpu_free[c];
    t.end = t.start + len;
    t.cpu = len;
    t.worker = static_cast<std::uint32_t>(1 + i % kWorkers);
    t.outcome = TaskOutcome::completed;
    cpu_free[c] = t.end;
    ends.push_back(t.end);
    if (trace) {
      if (measured) {
        const std::uint32_t track = t.worker;  // track 0 is the submitter
        const Duration run_end = t.start + len * 4 / 5;
        r.trace.spans.push_back({track, SpanKind::task, static_cast<std::uint32_t>(i),
                                 TraceSpan::kNoTask, t.start, t.end});
        r.trace.spans.push_back({track, SpanKind::running, static_cast<std::uint32_t>(i),
                                 TraceSpan::kNoTask, t.start, run_end});
        r.trace.spans.push_back({track, SpanKind::blocked, static_cast<std::uint32_t>(i),
                                 TraceSpan::kNoTask, run_end, t.end});
      } else {
        r.trace.spans.push_back({static_cast<std::uint32_t>(c), SpanKind::running,
                                 static_cast<std::uint32_t>(i), t.worker, t.start, t.end});
      }
    }
    r.records.push_back(t);
  }
  // Threads: the submitter, then the workers until the last task ends.
  std::sort(ends.begin(), ends.end());
  r.threads_series = {{Duration{0}, 1}, {Duration{20000}, 1 + kWorkers}, {ends.back(), 1}};
  // Runnable: min(workers, tasks left) until each completion.
  r.runnable_series.push_back({Duration{0}, 1});
  for (std::size_t k = 0; k < ends.size(); ++k)
    r.runnable_series.push_back(
        {k == 0 ? Duration{20000} : ends[k - 1],
         static_cast<std::int32_t>(std::min<std::size_t>(kWorkers, ends.size() - k))});
  r.runnable_series.push_back({ends.back(), 0});
  r.counters.switches_voluntary = measured ? tasks * (125 + 5 * rep) / 100 : tasks;
  r.counters.switches_involuntary =
      static_cast<std::int64_t>(tasks * 3 * (measured ? 1 + 0.4 * rep : 1.4));
  r.counters.threads_peak = 1 + kWorkers;
  r.counters.memory_peak = static_cast<Bytes>((1 + kWorkers) * 64 * 1024 * slow);
  r.counters.cpu_time = std::accumulate(r.records.begin(), r.records.end(), Duration{},
                                        [](Duration a, const TaskRecord& t) { return a + t.cpu; });
  return r;
}

Scenario make_scenario() {
  Scenario s;
  s.name = "report-sample";
  s.description = "200 CPU-bound tasks on a pool of 4 threads, 2 CPUs <quota & \"set\">";
  s.seed = 7;
  s.machine.name = "host";
  s.machine.source = "configs/machines/host.yaml";
  s.machine.cores = 2;
  s.machine.slice = std::chrono::microseconds(3000);
  s.machine.tick = std::chrono::microseconds(4000);
  s.machine.switch_cost = Duration{1800};
  s.machine.stack_reserve = 8 * 1024 * 1024;
  s.machine.stack_touch = 16 * 1024;
  s.limits.cpus = 1.5;
  s.backend.kind = BackendKind::pool;
  s.backend.threads = kWorkers;
  s.backend.max_threads = kWorkers;
  s.run.reps = 3;
  s.tolerance.per_metric["latency_p99"] = 0.30;
  s.source_file = "scenarios/report-sample.yaml";
  return s;
}

const char* kYaml =
    "name: report-sample\n"
    "description: 200 CPU-bound tasks <quota & \"set\">\n"
    "workload:\n"
    "  arrival: {kind: batch, count: 200}\n"
    "  task: [{cpu: {dist: uniform, min: 200us, max: 2ms}}]\n"
    "backend: {kind: pool, threads: 4}\n"
    "# a comment with </pre><script>alert(1)</script>\n";

// Everything a report needs, owning its data (ReportInput holds pointers).
struct Fixture {
  Scenario scenario = make_scenario();
  Workload workload;
  RunResult predicted;
  std::vector<RunResult> measured;
  Comparison comparison;

  explicit Fixture(int tasks = 200, bool traces = true) {
    workload.tasks.resize(static_cast<std::size_t>(tasks));
    predicted = make_run(tasks, 1.0, -1, traces);
    workload.total_work = predicted.counters.cpu_time;
    for (int rep = 0; rep < 3; ++rep)
      measured.push_back(make_run(tasks, 1.04 + 0.03 * rep, rep, traces && rep == 0));
    std::vector<Metrics> reps;
    for (const auto& r : measured) reps.push_back(compute_metrics(r));
    comparison = compare(compute_metrics(predicted), summarize(reps), scenario.tolerance);
  }
  ReportInput input() const {
    ReportInput in;
    in.scenario = &scenario;
    in.workload = &workload;
    in.comparison = &comparison;
    in.predicted = &predicted;
    in.measured = &measured;
    in.scenario_yaml = kYaml;
    in.generated_at = "2024-05-01 12:00:00 UTC";
    in.host = "Linux 6.1, 2 x test CPU";
    return in;
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Rectangles of a timeline: each is a closed "M..h..v..h..z" subpath.
std::size_t rects(const std::string& svg) { return count_of(svg, "zM") + count_of(svg, "z\""); }

}  // namespace

// ---- svg_chart ---------------------------------------------------------------

TEST_CASE("svg: tick labels are in human units", "[svg]") {
  using svg::Unit;
  CHECK(svg::tick_label(0, 0.001, Unit::seconds) == "0");
  CHECK(svg::tick_label(250e-6, 50e-6, Unit::seconds) == "250 us");
  CHECK(svg::tick_label(1.5e-3, 0.5e-3, Unit::seconds) == "1.5 ms");
  CHECK(svg::tick_label(2, 1, Unit::seconds) == "2 s");
  CHECK(svg::tick_label(300e-9, 100e-9, Unit::seconds) == "300 ns");
  CHECK(svg::tick_label(0.5, 0.25, Unit::fraction) == "50%");
  CHECK(svg::tick_label(2 * 1024 * 1024, 1024 * 1024, Unit::bytes) == "2 MiB");
  CHECK(svg::tick_label(20000, 5000, Unit::plain) == "20k");
  const auto t = svg::nice_ticks(0, 0.0042, 5);
  REQUIRE(t.size() == 5);
  CHECK(t[1] == Approx(0.001));
  CHECK(t.back() == Approx(0.004));
}

TEST_CASE("svg: escape_xml escapes all five XML characters", "[svg]") {
  CHECK(svg::escape_xml("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
}

TEST_CASE("svg.line_chart: a step series is drawn with its legend", "[svg]") {
  svg::LineChart c;
  c.title = "Threads <over> time";
  c.x = {"time", svg::Unit::seconds, false, {}, {}};
  c.y = {"threads", svg::Unit::count, false, {}, {}};
  svg::Series s;
  s.name = "predicted";
  s.step = true;
  s.points = {{0, 1}, {0.001, 5}, {0.003, 1}};
  s.step_until = 0.004;
  c.series.push_back(s);
  const auto r = svg::render_line_chart(c);
  CHECK(r.svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(r.svg.find("Threads &lt;over&gt; time") != std::string::npos);
  CHECK(r.svg.find(">predicted</text>") != std::string::npos);
  CHECK(r.svg.find("H") != std::string::npos);               // step path
  CHECK(r.svg.find(">4.0 ms</text>") != std::string::npos);  // x ticks in ms
  CHECK(r.notes.empty());
  CHECK(count_of(r.svg, "<svg") == 1);
  CHECK(count_of(r.svg, "</svg>") == 1);
}

TEST_CASE("svg.line_chart: downsampling keeps spikes", "[svg]") {
  svg::LineChart c;
  c.x = {"time", svg::Unit::seconds, false, {}, {}};
  c.y = {"runnable", svg::Unit::count, false, {}, {}};
  svg::Series s;
  s.name = "busy";
  s.step = true;
  for (int i = 0; i < 100000; ++i) s.points.push_back({i * 1e-6, static_cast<double>(i % 7)});
  s.points[54321].y = 999;  // one spike must survive the reduction
  c.series.push_back(s);
  const auto r = svg::render_line_chart(c);
  const std::size_t segments = count_of(r.svg, "V");
  CHECK(segments <= 2000);
  CHECK(segments > 500);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("100000 points reduced to") != std::string::npos);
  CHECK(r.svg.find("100000 points reduced to") !=
        std::string::npos);                                // caption printed in the chart
  CHECK(r.svg.find(">1000</text>") != std::string::npos);  // y axis reaches the spike
}

TEST_CASE("svg.timeline: rectangles are capped and the cap is said", "[svg]") {
  svg::TimelineChart c;
  c.title = "many spans";
  c.tracks = {"cpu 0", "cpu 1"};
  c.styles = {{"a", "#000", 1.0}, {"b", "#f00", 1.0}};
  c.max_rects = 300;
  // 400 spans per track, 1 ms apart over 0.4 s (a pixel is ~0.7 ms): spans
  // of one style are two pixels apart, so merging cannot help and the
  // shortest are dropped.
  for (std::uint32_t tr = 0; tr < 2; ++tr)
    for (int i = 0; i < 400; ++i) {
      const double b = i * 1e-3;
      c.spans.push_back({tr, static_cast<std::uint16_t>(i % 2), b, b + 1e-5 + 1e-7 * i});
    }
  const auto r = svg::render_timeline_chart(c);
  CHECK(rects(r.svg) == 300);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.svg.find("500 shortest spans (up to") != std::string::npos);
  CHECK(r.svg.find("not drawn, to stay under 300 rectangles") != std::string::npos);

  // Dense spans of one style merge first: 1000 spans 0.1 ms apart on one
  // track become one rectangle.
  svg::TimelineChart dense = c;
  dense.spans.clear();
  for (int i = 0; i < 1000; ++i) dense.spans.push_back({0, 0, i * 1e-4, i * 1e-4 + 5e-5});
  const auto d = svg::render_timeline_chart(dense);
  CHECK(rects(d.svg) == 1);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].find("1000 spans: 999 merged") != std::string::npos);

  // Few spans: drawn as they are, no caption.
  svg::TimelineChart small = c;
  small.spans.resize(10);
  const auto s = svg::render_timeline_chart(small);
  CHECK(rects(s.svg) == 10);
  CHECK(s.notes.empty());
}

TEST_CASE("svg.whisker: rows are normalised to the measured mean, out-of-range points are marked",
          "[svg]") {
  svg::WhiskerChart c;
  c.title = "pvm";
  c.rows.push_back({"makespan", 0.81, 0.84, 0.82, 0.87, 0.10, "#1a7f37", "-3.6%"});
  c.rows.push_back({"rejected", 3, 0, 0, 0, 0.10, "#cf222e", "+inf"});
  c.rows.push_back({"latency_p99", 500, 1, 0.9, 1.1, 0.3, "#cf222e", "+49900%"});
  const auto r = svg::render_whisker_chart(c);
  CHECK(count_of(r.svg, "<circle") == 2);  // legend dot + makespan; the others are edge arrows
  CHECK(r.svg.find(">makespan</text>") != std::string::npos);
  CHECK(r.notes.size() == 2);
  CHECK(r.svg.find("measured mean is 0") != std::string::npos);
}

TEST_CASE("svg: the same input gives the same bytes", "[svg]") {
  Fixture f(60);
  const auto a = render_html_report(f.input());
  Fixture g(60);
  const auto b = render_html_report(g.input());
  CHECK(a == b);
  CHECK(render_html_report(f.input()) == a);
}

// ---- the report ----------------------------------------------------------------

TEST_CASE("report: the page has every section, chart and metric row", "[report]") {
  Fixture f;
  const std::string html = render_html_report(f.input());
  CHECK(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
  CHECK(html.find("</html>") != std::string::npos);
  CHECK(html.find("<script") ==
        std::string::npos);  // the YAML's <script> is escaped, none of our own
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // no external resource
  CHECK(html.find("https://") == std::string::npos);
  // Header.
  CHECK(html.find("<h1>report-sample <span class=\"badge big\"") != std::string::npos);
  CHECK(html.find("2 CPUs &lt;quota &amp; &quot;set&quot;&gt;") != std::string::npos);
  CHECK(html.find("pool (threads 4, max_threads 4") != std::string::npos);
  CHECK(html.find("quota 1.5 CPUs per 100 ms") != std::string::npos);
  CHECK(html.find("2024-05-01 12:00:00 UTC") != std::string::npos);
  CHECK(html.find("Linux 6.1, 2 x test CPU") != std::string::npos);
  // One table row per compared metric, with its verdict (every metric but
  // resource_wait_mean: the sample scenario has no bounded resources).
  REQUIRE(f.comparison.rows.size() == kMetricCount - 1);
  for (const auto& row : f.comparison.rows) {
    const std::string cell = "\"><td>" + std::string(to_string(row.metric)) + "</td>";
    CAPTURE(cell);
    CHECK(count_of(html, cell) == 1);
  }
  CHECK(count_of(html, "<tr class=\"") == kMetricCount - 1);
  // Charts: whiskers, latency CDF, threads, runnable, two timelines.
  CHECK(count_of(html, "<svg ") == 6);
  CHECK(count_of(html, "</svg>") == 6);
  CHECK(html.find("Predicted vs measured, per metric") != std::string::npos);
  CHECK(html.find(">measured rep 3</text>") != std::string::npos);  // three CDFs overlaid
  CHECK(html.find("Simulated schedule, per CPU") != std::string::npos);
  CHECK(html.find("Measured schedule, per thread (rep 1)") != std::string::npos);
  CHECK(html.find(">cpu 1</text>") != std::string::npos);
  CHECK(html.find(">running (colour = thread id mod 8)</text>") !=
        std::string::npos);                                   // workers 1..4
  CHECK(html.find(">runnable</text>") == std::string::npos);  // no span uses it: not in the legend
  CHECK(html.find(">worker 4</text>") != std::string::npos);
  CHECK(html.find("class=\"absent\"") == std::string::npos);
  // The scenario text verbatim, escaped.
  CHECK(html.find("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("</pre><script>") == std::string::npos);
  CHECK(html.find("{kind: batch, count: 200}") != std::string::npos);
}

TEST_CASE("report: missing traces are said, not hidden", "[report]") {
  Fixture f(50, false);
  f.measured.front().threads_series.clear();
  auto in = f.input();
  const std::string html = render_html_report(in);
  CHECK(html.find("No trace was recorded for the simulated run") != std::string::npos);
  CHECK(html.find("No trace was recorded for the first measured repetition") != std::string::npos);
  CHECK(html.find("The first measured repetition has no such series.") != std::string::npos);
  CHECK(count_of(html, "<svg ") == 4);  // whiskers, CDF, threads (predicted only), runnable

  std::vector<RunResult> none;
  in.measured = &none;
  const std::string no_runs = render_html_report(in);
  CHECK(no_runs.find("No measured repetition was given.") != std::string::npos);

  in.comparison = nullptr;
  CHECK_THROWS_AS(render_html_report(in), std::invalid_argument);
}

TEST_CASE("report: a diverging metric is marked", "[report]") {
  Fixture f(50);
  // Predict twice the measured makespan: that row must diverge and say so.
  Metrics p = compute_metrics(f.predicted);
  p[Metric::makespan] *= 2.5;
  std::vector<Metrics> reps;
  for (const auto& r : f.measured) reps.push_back(compute_metrics(r));
  f.comparison = compare(p, summarize(reps), f.scenario.tolerance);
  const std::string html = render_html_report(f.input());
  CHECK(html.find("<tr class=\"diverge\"><td>makespan</td>") != std::string::npos);
  CHECK(html.find("<h1>report-sample <span class=\"badge big\" "
                  "style=\"background:#cf222e\">diverge</span>") != std::string::npos);
}

TEST_CASE("report: a large run gives a small page", "[report]") {
  // 100,000 tasks: 100k points per latency CDF and step series, 100k CPU
  // spans and 300k thread spans; every chart must be reduced, and say so.
  Fixture f(100000);
  const std::string html = render_html_report(f.input());
  CHECK(html.size() < 2'500'000);
  CHECK(count_of(html, "<svg ") == 6);
  CHECK(count_of(html, "points reduced to") >= 4);  // predicted and measured CDFs, runnable series
  CHECK(html.find("100000 spans: ") != std::string::npos);  // the simulated CPUs
  CHECK(html.find("300000 spans: ") != std::string::npos);  // the measured threads
  CHECK(count_of(html, "merged into a neighbour less than one pixel") == 2);
}

// One Chromium launch: the report must render with a clean console and its
// charts in the DOM.
TEST_CASE("report: the page renders in headless Chromium without console errors",
          "[report][browser]") {
  const char* chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium))
    FAIL(
        "chromium not found at /usr/bin/chromium: install it with 'scripts/install-deps "
        "--with-browser' "
        "(Debian package chromium); this test does not skip");
  Fixture f;
  const std::string html = render_html_report(f.input());
  if (const char* keep = std::getenv("POOLSIM_SAMPLE_REPORT")) {
    std::ofstream(keep, std::ios::binary) << html;
  }

  char tmpl[] = "/tmp/poolsim-report-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  const fs::path page = dir / "report.html";
  const fs::path dom = dir / "dom.html";
  const fs::path log = dir / "stderr.log";
  std::ofstream(page, std::ios::binary) << html;
  const std::string cmd =
      "timeout 60 " + std::string(chromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --user-data-dir=" +
      (dir / "profile").string() +
      " --enable-logging=stderr --v=0 --virtual-time-budget=2000 --dump-dom file://" +
      page.string() + " >" + dom.string() + " 2>" + log.string();
  const int status = std::system(cmd.c_str());
  const std::string out = slurp(dom);
  const std::string err = slurp(log);
  fs::remove_all(dir);

  INFO("command: " << cmd);
  INFO("chromium stderr:\n" << err.substr(0, 4000));
  REQUIRE(status == 0);
  // Console messages (errors, failed resource loads) and uncaught exceptions.
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    CAPTURE(line);
    CHECK(line.find(":CONSOLE") == std::string::npos);
    CHECK(line.find("Uncaught") == std::string::npos);
    CHECK(line.find("net::ERR_") == std::string::npos);
  }
  // The DOM as the browser built it: every chart and the table are there.
  CHECK(count_of(out, "<svg ") == 6);
  CHECK(out.find("<table class=\"verdicts\">") != std::string::npos);
  CHECK(out.find("<title>poolsim validate: report-sample") != std::string::npos);
  CHECK(out.find("id=\"schedule\"") != std::string::npos);
}
