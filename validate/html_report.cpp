// html_report.cpp: the self-contained HTML report of `poolsim validate --html`.
//
// One HTML5 document, built as a string: inline CSS, inline SVG charts from
// svg_chart.hpp, no script, no external resource (it opens offline, in any
// browser, and a mail client or CI artifact viewer shows it as it is). The
// sections, in reading order:
//   1. header: scenario, description, overall verdict badge, workload,
//      backend, machine profile, limits, run options, host, timestamp;
//   2. the verdict table (one row per compared metric);
//   3. predicted vs measured per metric (whiskers, normalised to the
//      measured mean);
//   4. latency CDFs: the prediction and each measured repetition (pooled
//      when there are more than kMaxCdfReps);
//   5. threads and runnable threads over time: the prediction and the first
//      measured repetition;
//   6. the simulated per-CPU schedule beside the measured per-thread one;
//   7. the scenario file verbatim.
// A missing input (no trace, no series, no measured run) is said in place of
// its chart, never skipped silently. Every text from the input goes through
// escape_xml(). The output is a pure function of ReportInput: the timestamp
// is an input, so the same input gives the same bytes (tested).
// Deliberately left out: interactivity (zoom, tooltips) and any JavaScript;
// for exploring a schedule, --trace-dir writes Perfetto traces.
#include "validate/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/backend_registry.hpp"
#include "models/machine_fields.hpp"
#include "models/metrics.hpp"
#include "validate/compare.hpp"
#include "validate/output.hpp"
#include "validate/speed_report.hpp"
#include "validate/svg_chart.hpp"

namespace poolsim::validate {

namespace {

using svg::escape_xml;

// Above this many measured repetitions, their latencies are pooled into one
// CDF: more than eight overlaid lines cannot be told apart.
constexpr std::size_t kMaxCdfReps = 8;
// The x axis of a latency CDF turns logarithmic when the slowest task is
// this many times the median: the body would otherwise be squeezed into a
// few pixels at the left.
constexpr double kLogLatencySpread = 50;
// Chart widths in px: full-width charts, and the two timelines side by side
// inside the 1240-px content column.
constexpr int kWideChart = 1000;
constexpr int kHalfChart = 600;

// Colours shared by the table, the badge and the whisker chart (GitHub's
// success / danger / attention colours: readable on white, AA contrast).
std::string_view verdict_color(Verdict v) {
  switch (v) {
    case Verdict::match:
      return "#1a7f37";
    case Verdict::diverge:
      return "#cf222e";
    case Verdict::noisy:
      return "#9a6700";
    case Verdict::disturbed:
      return "#6e7781";
  }
  return "#555";
}

// The prediction is drawn in palette colour 0, the measurement in colour 1.
const std::string kPredictedColor = svg::kPalette[0];
const std::string kMeasuredColor = svg::kPalette[1];

constexpr const char* kCss = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #1f2328; background: #fff; margin: 0; }
main { max-width: 1280px; margin: 0 auto; padding: 16px 20px 40px; }
h1 { font-size: 24px; margin: 8px 0 4px; display: flex; align-items: center; gap: 12px; flex-wrap: wrap; }
h2 { font-size: 18px; margin: 28px 0 6px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 15px; margin: 12px 0 4px; }
p.description { margin: 0 0 8px; color: #444; font-size: 15px; }
p.hint { margin: 2px 0 8px; color: #57606a; font-size: 13px; max-width: 900px; }
p.absent { margin: 8px 0; padding: 10px 12px; background: #fff8c5; border: 1px solid #d4a72c;
           border-radius: 6px; color: #4d2d00; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 12px; color: #fff; font-size: 13px;
         font-weight: 600; letter-spacing: .02em; }
.badge.big { font-size: 16px; padding: 4px 14px; }
.summary { font-size: 15px; margin: 4px 0 12px; }
dl.info { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 8px 0; }
dl.info dt { color: #57606a; }
dl.info dd { margin: 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid #d8dee4; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
tr.diverge td { background: #ffebe9; }
tr.noisy td { background: #fff8c5; }
table.machine td, table.machine th { padding: 2px 10px; font-size: 13px; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; align-items: start; }
@media (max-width: 1100px) { .charts { grid-template-columns: 1fr; } }
figure { margin: 8px 0; }
svg { max-width: 100%; height: auto; display: block; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 12px; overflow-x: auto;
      font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
footer { margin-top: 32px; color: #57606a; font-size: 12px; }
)css";

std::string badge(Verdict v, bool big = false) {
  return fmt::format("<span class=\"badge{}\" style=\"background:{}\">{}</span>", big ? " big" : "",
                     verdict_color(v), to_string(v));
}

// A figure with the chart's SVG.
std::string figure(const svg::Rendered& r) { return "<figure>" + r.svg + "</figure>\n"; }

std::string absent(const std::string& what) {
  return "<p class=\"absent\">" + escape_xml(what) + "</p>\n";
}

// Last completion of a run (its makespan), seconds; 0 without completions.
double last_end(const RunResult& r) {
  Duration end{};
  for (const auto& t : r.records)
    if (t.outcome == TaskOutcome::completed) end = std::max(end, t.end);
  return to_seconds(end);
}

const RunResult* first_measured(const ReportInput& in) {
  return in.measured != nullptr && !in.measured->empty() ? &in.measured->front() : nullptr;
}

// ---- header ----------------------------------------------------------------

std::string backend_text(const BackendSpec& b) {
  std::string out;
  for (const BackendParam& p : backend_info(b.kind).params)
    out += (out.empty() ? "" : ", ") + std::string(p.key) + " " + backend_param_text(p, b);
  return std::string(to_string(b.kind)) + (out.empty() ? "" : " (" + out + ")");
}

std::string limits_text(const Limits& l) {
  std::string out;
  if (l.cpus) out = fmt::format("quota {:g} CPUs per {}", *l.cpus, format_duration(l.period));
  if (!l.cpuset.empty()) out += (out.empty() ? "" : ", ") + std::string("cpuset ") + l.cpuset_text;
  return out.empty() ? "none (every CPU of the machine, no quota)" : out;
}

std::string machine_table(const MachineProfile& m) {
  std::string out = "<table class=\"machine\"><tbody>";
  for (const MachineField& f : kMachineFields) {
    const double v = machine_field_si(f, m);
    std::string text;
    switch (f.kind()) {
      case FieldKind::count:
        text = fmt::format("{}", static_cast<long long>(v));
        break;
      case FieldKind::duration:
        text = format_seconds(v);
        break;
      case FieldKind::size:
        text = format_bytes(v);
        break;
      case FieldKind::fraction:
        text = fmt::format("{:g}%", 100 * v);
        break;
    }
    out += fmt::format("<tr><th>{}</th><td class=\"num\">{}</td></tr>", escape_xml(f.name),
                       escape_xml(text));
  }
  return out + "</tbody></table>";
}

std::string header_html(const ReportInput& in) {
  const Scenario& s = *in.scenario;
  const Comparison& c = *in.comparison;
  std::string out;
  out += fmt::format("<header>\n<h1>{} {}</h1>\n", escape_xml(s.name), badge(c.overall, true));
  if (!s.description.empty())
    out += fmt::format("<p class=\"description\">{}</p>\n", escape_xml(s.description));
  out += fmt::format(
      "<p class=\"summary\">{} metrics compared: <strong style=\"color:{}\">{} match</strong>, "
      "<strong style=\"color:{}\">{} diverge</strong>, <strong style=\"color:{}\">{} "
      "noisy</strong>.</p>\n",
      c.rows.size(), verdict_color(Verdict::match), c.matched, verdict_color(Verdict::diverge),
      c.diverged, verdict_color(Verdict::noisy), c.noisy);
  const auto item = [&](const std::string& k, const std::string& v) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape_xml(k), escape_xml(v));
  };
  out += "<dl class=\"info\">\n";
  if (!s.source_file.empty()) item("scenario file", s.source_file);
  item("seed", fmt::format("{}", s.seed));
  if (in.workload != nullptr) item("workload", describe_workload(s, *in.workload));
  item("backend", backend_text(s.backend));
  item("machine profile",
       s.machine.name + (s.machine.source.empty() ? "" : " (" + s.machine.source + ")"));
  item("limits", limits_text(s.limits));
  item("measurement", fmt::format("{} repetitions after {} warm-up, timeout {} each", s.run.reps,
                                  s.run.warmup, format_duration(s.run.timeout)));
  if (in.measured != nullptr) item("measured repetitions", fmt::format("{}", in.measured->size()));
  if (!in.host.empty()) item("host", in.host);
  if (!in.generated_at.empty()) item("generated", in.generated_at);
  out += "</dl>\n";
  out += "<details><summary>machine profile fields</summary>" + machine_table(s.machine) +
         "</details>\n";
  return out + "</header>\n";
}

// ---- verdict table and whiskers --------------------------------------------

std::string verdict_table(const Comparison& c) {
  std::string out =
      "<table class=\"verdicts\"><thead><tr><th>metric</th><th class=\"num\">predicted</th>"
      "<th class=\"num\">measured mean &#177; sd</th><th class=\"num\">min .. max</th><th "
      "class=\"num\">n</th>"
      "<th class=\"num\">error</th><th "
      "class=\"num\">tolerance</th><th>verdict</th></tr></thead>\n<tbody>\n";
  for (const auto& r : c.rows) {
    const Metric m = r.metric;
    out += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{} &#177; {}</td>"
        "<td class=\"num\">{} .. {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">&#177;{:.0f}%</td><td>{}</td></tr>\n",
        to_string(r.verdict), escape_xml(to_string(m)), escape_xml(format_metric(m, r.predicted)),
        escape_xml(format_metric(m, r.measured.mean)), escape_xml(format_metric(m, r.measured.sd)),
        escape_xml(format_metric(m, r.measured.min)), escape_xml(format_metric(m, r.measured.max)),
        r.measured.n, escape_xml(signed_percent(r.error)), r.tolerance * 100, badge(r.verdict));
  }
  return out + "</tbody></table>\n";
}

svg::Rendered whisker_chart(const Comparison& c) {
  svg::WhiskerChart ch;
  ch.title = "Predicted vs measured, per metric";
  ch.width = kWideChart;
  for (const auto& r : c.rows) {
    svg::WhiskerRow w;
    w.label = std::string(to_string(r.metric));
    w.predicted = r.predicted;
    w.mean = r.measured.mean;
    w.min = r.measured.min;
    w.max = r.measured.max;
    w.tolerance = r.tolerance;
    w.color = std::string(verdict_color(r.verdict));
    w.value_text = signed_percent(r.error) + "  " + std::string(to_string(r.verdict));
    ch.rows.push_back(std::move(w));
  }
  return svg::render_whisker_chart(ch);
}

// ---- latency ---------------------------------------------------------------

svg::Series cdf_series(std::string name, const std::vector<double>& sorted) {
  svg::Series s;
  s.name = std::move(name);
  s.step = true;
  s.points.reserve(sorted.size());
  const double n = static_cast<double>(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    s.points.push_back({sorted[i], static_cast<double>(i + 1) / n});
  return s;
}

std::string latency_section(const ReportInput& in) {
  std::string out = "<section id=\"latency\">\n<h2>Latency</h2>\n";
  out +=
      "<p class=\"hint\">Cumulative distribution of task latency (completion minus submission, "
      "completed "
      "tasks only): the height at x is the share of tasks that finished within x. A prediction to "
      "the left "
      "of the measurement is optimistic.</p>\n";
  svg::LineChart ch;
  ch.title = "Latency CDF";
  ch.width = kWideChart;
  ch.height = 340;
  ch.x = {"latency", svg::Unit::seconds, false, 0.0, {}};
  ch.y = {"share of completed tasks", svg::Unit::fraction, false, 0.0, 1.0};
  std::vector<double> all;
  std::string missing;
  if (in.predicted != nullptr) {
    const auto lat = sorted_latencies(*in.predicted);
    if (lat.empty()) missing += "The simulated run completed no task. ";
    all.insert(all.end(), lat.begin(), lat.end());
    auto s = cdf_series("predicted", lat);
    s.color = kPredictedColor;
    s.width = 2.5;
    ch.series.push_back(std::move(s));
  } else {
    missing += "No simulated run was given. ";
  }
  const std::size_t reps = in.measured != nullptr ? in.measured->size() : 0;
  if (reps == 0) missing += "No measured repetition was given. ";
  if (reps > kMaxCdfReps) {
    std::vector<double> pooled;
    for (const auto& r : *in.measured) {
      const auto lat = sorted_latencies(r);
      pooled.insert(pooled.end(), lat.begin(), lat.end());
    }
    std::sort(pooled.begin(), pooled.end());
    all.insert(all.end(), pooled.begin(), pooled.end());
    auto s = cdf_series(fmt::format("measured ({} repetitions pooled)", reps), pooled);
    s.color = kMeasuredColor;
    ch.series.push_back(std::move(s));
  } else {
    for (std::size_t i = 0; i < reps; ++i) {
      const auto lat = sorted_latencies((*in.measured)[i]);
      all.insert(all.end(), lat.begin(), lat.end());
      auto s = cdf_series(fmt::format("measured rep {}", i + 1), lat);
      s.color = kMeasuredColor;
      s.width = 1.2;
      s.opacity = reps > 1 ? 0.75 : 1.0;
      if (i % 2 == 1) s.dashed = true;
      ch.series.push_back(std::move(s));
    }
  }
  if (!missing.empty()) out += absent(missing);
  if (all.empty()) return out + absent("No latency to plot: no task completed.") + "</section>\n";
  std::sort(all.begin(), all.end());
  const double median = nearest_rank(all, 0.5);
  if (median > 0 && all.back() / median > kLogLatencySpread) {
    ch.x.log = true;
    ch.x.min.reset();
    out += "<p class=\"hint\">The latency axis is logarithmic: the slowest task took more than " +
           fmt::format("{:g}", kLogLatencySpread) + " times the median.</p>\n";
  }
  return out + figure(svg::render_line_chart(ch)) + "</section>\n";
}

// ---- threads over time -----------------------------------------------------

svg::Series step_series(std::string name, const std::vector<Sample>& samples, double until) {
  svg::Series s;
  s.name = std::move(name);
  s.step = true;
  s.points.reserve(samples.size());
  for (const auto& p : samples) s.points.push_back({to_seconds(p.t), static_cast<double>(p.value)});
  if (until > 0) s.step_until = until;
  return s;
}

std::string series_section(const ReportInput& in, const char* id, const char* heading,
                           const char* hint, const char* y_label,
                           std::vector<Sample> RunResult::*member) {
  std::string out = fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"hint\">{}</p>\n", id,
                                heading, hint);
  svg::LineChart ch;
  ch.title = heading;
  ch.width = kWideChart;
  ch.height = 280;
  ch.x = {"time since the run's origin", svg::Unit::seconds, false, 0.0, {}};
  ch.y = {y_label, svg::Unit::count, false, {}, {}};
  std::string missing;
  if (in.predicted != nullptr && !(in.predicted->*member).empty()) {
    auto s = step_series("predicted", in.predicted->*member, last_end(*in.predicted));
    s.color = kPredictedColor;
    s.width = 2;
    ch.series.push_back(std::move(s));
  } else {
    missing += "The simulated run has no such series. ";
  }
  const RunResult* m = first_measured(in);
  if (m != nullptr && !(m->*member).empty()) {
    auto s = step_series("measured rep 1", m->*member, last_end(*m));
    s.color = kMeasuredColor;
    s.width = 1.5;
    ch.series.push_back(std::move(s));
  } else {
    missing += "The first measured repetition has no such series. ";
  }
  if (!missing.empty()) out += absent(missing);
  if (ch.series.empty()) return out + "</section>\n";
  return out + figure(svg::render_line_chart(ch)) + "</section>\n";
}

// ---- schedules -------------------------------------------------------------

double trace_end(const Trace& t) {
  Duration end{};
  for (const auto& s : t.spans) end = std::max(end, s.end);
  return to_seconds(end);
}

// Simulated CPUs: each thread's running spans in one of eight colours
// (thread id mod 8), so a switch shows as a colour change; throttled
// periods in red; anything else grey.
svg::Rendered cpu_timeline(const Trace& t, double x_max) {
  svg::TimelineChart ch;
  ch.title = "Simulated schedule, per CPU";
  ch.width = kHalfChart;
  ch.x_max = x_max;
  constexpr std::uint16_t kThreadColors = 8;
  for (std::uint16_t i = 0; i < kThreadColors; ++i)
    ch.styles.push_back(
        {i == 0 ? "running (colour = thread id mod 8)" : "", svg::kPalette[i], 1.0});
  const std::uint16_t throttled = kThreadColors, other = kThreadColors + 1;
  ch.styles.push_back({"throttled", "#cf222e", 1.0});
  ch.styles.push_back({"other", "#999999", 0.5});
  std::vector<std::uint32_t> index(t.tracks.size(), TraceSpan::kNoTask);
  for (std::size_t i = 0; i < t.tracks.size(); ++i)
    if (t.tracks[i].is_cpu) {
      index[i] = static_cast<std::uint32_t>(ch.tracks.size());
      ch.tracks.push_back(t.tracks[i].name);
    }
  for (const auto& s : t.spans) {
    if (s.track >= index.size() || index[s.track] == TraceSpan::kNoTask) continue;
    std::uint16_t style = other;
    if (s.kind == SpanKind::running || s.kind == SpanKind::task)
      style =
          s.thread == TraceSpan::kNoTask ? 0 : static_cast<std::uint16_t>(s.thread % kThreadColors);
    else if (s.kind == SpanKind::throttled)
      style = throttled;
    ch.spans.push_back({index[s.track], style, to_seconds(s.begin), to_seconds(s.end)});
  }
  return svg::render_timeline_chart(ch);
}

// Measured threads: the task a thread runs as a light full-height bar, what
// the thread did meanwhile (CPU work, blocked, ...) as a narrower bar on top.
svg::Rendered thread_timeline(const Trace& t, double x_max) {
  svg::TimelineChart ch;
  ch.title = "Measured schedule, per thread (rep 1)";
  ch.width = kHalfChart;
  ch.x_max = x_max;
  ch.styles = {{"task", "#b6d4ee", 1.0},
               {"running", kPredictedColor, 0.55},
               {"runnable", "#E69F00", 0.55},
               {"blocked", "#8c959f", 0.55},
               {"throttled", "#cf222e", 0.55}};
  std::vector<std::uint32_t> index(t.tracks.size(), TraceSpan::kNoTask);
  for (std::size_t i = 0; i < t.tracks.size(); ++i)
    if (!t.tracks[i].is_cpu) {
      index[i] = static_cast<std::uint32_t>(ch.tracks.size());
      ch.tracks.push_back(t.tracks[i].name);
    }
  for (const auto& s : t.spans) {
    if (s.track >= index.size() || index[s.track] == TraceSpan::kNoTask) continue;
    std::uint16_t style = 0;
    switch (s.kind) {
      case SpanKind::task:
        style = 0;
        break;
      case SpanKind::running:
        style = 1;
        break;
      case SpanKind::runnable:
        style = 2;
        break;
      case SpanKind::blocked:
        style = 3;
        break;
      case SpanKind::throttled:
        style = 4;
        break;
    }
    ch.spans.push_back({index[s.track], style, to_seconds(s.begin), to_seconds(s.end)});
  }
  return svg::render_timeline_chart(ch);
}

bool has_tracks(const Trace& t, bool cpu) {
  if (t.empty()) return false;
  return std::any_of(t.tracks.begin(), t.tracks.end(),
                     [&](const TraceTrack& k) { return k.is_cpu == cpu; });
}

std::string schedule_section(const ReportInput& in) {
  std::string out = "<section id=\"schedule\">\n<h2>Schedule</h2>\n";
  out +=
      "<p class=\"hint\">Left: what each CPU ran in the simulation. Right: what each thread did in "
      "the first "
      "measured repetition. Both share one time axis; gaps on a CPU are idle time.</p>\n";
  const RunResult* m = first_measured(in);
  const bool sim_ok = in.predicted != nullptr && has_tracks(in.predicted->trace, true);
  const bool real_ok = m != nullptr && has_tracks(m->trace, false);
  double x_max = 0;
  if (sim_ok) x_max = std::max(x_max, trace_end(in.predicted->trace));
  if (real_ok) x_max = std::max(x_max, trace_end(m->trace));
  out += "<div class=\"charts\">\n<div>\n";
  if (sim_ok)
    out += figure(cpu_timeline(in.predicted->trace, x_max));
  else
    out += "<h3>Simulated schedule, per CPU</h3>\n" +
           absent(
               "No trace was recorded for the simulated run, so its per-CPU schedule cannot be "
               "shown.");
  out += "</div>\n<div>\n";
  if (real_ok)
    out += figure(thread_timeline(m->trace, x_max));
  else
    out +=
        "<h3>Measured schedule, per thread</h3>\n" +
        absent(
            "No trace was recorded for the first measured repetition, so its per-thread schedule "
            "cannot be shown.");
  return out + "</div>\n</div>\n</section>\n";
}

}  // namespace

std::string render_html_report(const ReportInput& in) {
  if (in.scenario == nullptr || in.comparison == nullptr)
    throw std::invalid_argument("render_html_report: the scenario and the comparison are required");
  const Scenario& s = *in.scenario;
  const Comparison& c = *in.comparison;

  std::string out;
  out.reserve(1 << 16);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>poolsim validate: {} ({})</title>\n", escape_xml(s.name),
                     to_string(c.overall));
  out += fmt::format("<style>{}</style>\n</head>\n<body>\n<main>\n", kCss);
  out += header_html(in);

  out += "<section id=\"verdicts\">\n<h2>Verdicts</h2>\n";
  out +=
      "<p class=\"hint\">error = (predicted &#8722; measured mean) / measured mean. A metric "
      "matches when "
      "|error| is within its tolerance; it is noisy when the measurement's own spread (sd / mean) "
      "is wider "
      "than the tolerance, so no verdict can be drawn from it.</p>\n";
  if (in.measured != nullptr) {
    const std::string speed = speed_lines(*in.measured);
    if (!speed.empty())
      out += fmt::format("<p class=\"speed\"><strong>Machine speed.</strong> {}</p>\n",
                         escape_xml(speed));
  }
  if (c.overall == Verdict::disturbed)
    out +=
        "<p class=\"speed\">No verdict is drawn: too few repetitions ran at the machine's "
        "calibrated speed (docs/validation.md, \"Disturbed runs\").</p>\n";
  if (c.rows.empty())
    out += absent("No metric was compared (every metric is ignored by the tolerance).");
  else
    out += verdict_table(c);
  out += "</section>\n";

  out += "<section id=\"whiskers\">\n<h2>Prediction against measurement</h2>\n";
  out +=
      "<p class=\"hint\">Each row is scaled to its own measured mean (the dashed line), so metrics "
      "of every "
      "unit share one logarithmic axis. The bar spans the measured min..max over repetitions, the "
      "green "
      "band is the tolerance, the dot is the prediction in its verdict's colour.</p>\n";
  if (!c.rows.empty()) out += figure(whisker_chart(c));
  out += "</section>\n";

  out += latency_section(in);
  out += series_section(
      in, "threads", "Threads over time",
      "Live OS threads of the run (the submitter included), the prediction against the first "
      "measured repetition.",
      "threads", &RunResult::threads_series);
  out += series_section(
      in, "runnable", "Runnable threads over time",
      "Threads running or waiting for a CPU: above the core count, threads queue for CPUs.",
      "runnable + running threads", &RunResult::runnable_series);
  out += schedule_section(in);

  out += "<section id=\"scenario\">\n<h2>Scenario file</h2>\n";
  if (in.scenario_yaml.empty())
    out += absent("The scenario's text was not given.");
  else
    out += "<pre><code>" + escape_xml(in.scenario_yaml) + "</code></pre>\n";
  out += "</section>\n";
  out +=
      "<footer>Generated by poolsim validate. This file is self-contained: inline CSS and SVG, no "
      "script, "
      "no network access.</footer>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace poolsim::validate
