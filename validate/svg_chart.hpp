// svg_chart.hpp: the charts of poolsim's reports, generated as SVG text.
//
// Three chart kinds, each a plain description struct and one render function:
//   LineChart      several series of (x, y) points, drawn as straight lines or
//                  as step functions (a value holds until the next sample),
//                  linear or log axes: threads over time, runnable threads
//                  over time, latency CDFs, sweep plots (y against a swept
//                  parameter).
//   WhiskerChart   one row per metric: the measured mean with its min..max
//                  whisker and tolerance band, and the prediction as a dot,
//                  every row normalised to its own measured mean so metrics
//                  in seconds, bytes and counts share one log axis.
//   TimelineChart  a Gantt chart: spans on tracks (CPUs of the simulated
//                  schedule, threads of a measured run).
// Axis ticks are "nice" 1-2-5 steps (or decades on log axes) labelled in
// human units (ns/us/ms/s, B/KiB/MiB, k/M, %), plus an axis suffix ("/s",
// " threads") so every tick says what it counts.
//
// Line charts for people deciding something (sweeps, capacity):
//   - LineChart::auto_log picks a log y scale when its values are all
//     positive and span more than kAutoLogSpan (one saturated series at 50 s
//     would otherwise flatten every 50 ms series to zero); Axis::log forces it.
//   - LineChart::target draws the target (an SLO) as a labelled dashed line.
//   - Series::markers draws a marker on every point: hollow circles for
//     predictions, filled squares for measurements (Series::measured).
//   - Series::saturated_x marks points whose run was overloaded: a red
//     triangle; on a linear axis, when they would stretch the range more than
//     kSaturatedStretch times, they do not set it: those above are drawn on
//     the top edge, with their count and the largest value in a note.
//
// Invariants:
//   - Deterministic: the output is a pure function of the input; numbers are
//     printed with fixed precision by fmt, iteration orders are fixed,
//     nothing depends on addresses, time or locale-dependent containers.
//   - Bounded size: a line series is reduced to at most max_points points
//     (per pixel bucket the first, lowest, highest and last samples are kept,
//     so spikes and steps survive); a timeline to at most max_rects
//     rectangles (spans closer than a pixel with the same style are merged,
//     then the shortest spans are dropped) and max_tracks tracks. Every
//     reduction is reported in Rendered::notes and printed as a caption line
//     inside the SVG, never done silently.
//   - Safe: every text that reaches the SVG goes through escape_xml().
// Deliberately left out: interactivity (no JavaScript: the report must open
// anywhere without executing code), animations, and pie/bar chart kinds that
// no report uses. See docs/report.md for why this is generated SVG and not a
// bundled JavaScript chart library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace poolsim::validate::svg {

// How tick labels are written.
enum class Unit {
  plain,     // 1.5, 2k, 3.2M
  count,     // integers only: 0, 5, 10
  seconds,   // 0, 250 us, 1.5 ms, 2 s
  bytes,     // 0, 512 KiB, 4 MiB
  fraction,  // 0%, 50%, 100%
};

// A tick label for value v on an axis whose tick step is `step` (the step
// picks the unit and the number of decimals so neighbouring ticks differ).
std::string tick_label(double v, double step, Unit unit);
// "Nice" tick positions covering [lo, hi]: multiples of 1, 2 or 5 times a
// power of ten, about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);

// & < > " ' replaced by entities: safe in element text and in attribute values.
std::string escape_xml(std::string_view text);

// The colour-blind-safe palette (Okabe and Ito, "Color Universal Design",
// 2008) used by every chart: series i takes kPalette[i % size] unless it
// names its own colour.
inline constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                           "#E69F00", "#56B4E9", "#8C6D00", "#000000"};
inline constexpr std::size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
// LineChart::auto_log turns log on when max / min of the values exceeds this: the
// 20x the sweep needed (a 50-ms series under a 1-s one is flat at 5%
// of the height on a linear axis, under half a tick).
inline constexpr double kAutoLogSpan = 20;
// On a linear y axis, saturated points higher than this many times the
// highest other point are drawn on the top edge instead of setting the range
// (the others would fill less than a quarter of the height).
inline constexpr double kSaturatedStretch = 4;
// Colour of saturation markers (vermillion of the palette, also the
// "overloaded" colour of tables in HTML).
inline constexpr const char* kSaturatedColor = "#D55E00";

struct Rendered {
  std::string svg;                 // one <svg> element, no XML prolog (inline in HTML or a file)
  std::vector<std::string> notes;  // what was reduced or left out; also printed in the SVG
};

// ---- line and step charts -------------------------------------------------
struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string name;                  // legend entry
  std::vector<Point> points;         // sorted by x (stable-sorted by the renderer otherwise)
  bool step = false;                 // step function: y holds from x until the next point's x
  std::optional<double> step_until;  // a step series' last value holds until this x
  std::string color;                 // empty: palette colour of the series index
  double width = 1.5;                // stroke width in px
  bool dashed = false;
  double opacity = 1.0;
  bool markers = false;   // a marker on every point
  bool measured = false;  // filled squares (measured) instead of hollow circles (predicted)
  std::vector<double> saturated_x;  // x of the points whose run was overloaded (marked, see above)
};

struct Axis {
  std::string label;
  Unit unit = Unit::plain;
  bool log = false;                // log10 scale; non-positive values are left out (noted)
  std::optional<double> min, max;  // forced range; otherwise from the data (linear y from 0)
};
// The tick suffix for a swept key and its values: " threads" for thread,
// carrier and loop counts, " clients", "/s" for rates; empty otherwise.
std::string axis_suffix(std::string_view key, const std::vector<std::string>& values);

struct LineChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  int width = 640, height = 300;
  // At most this many points per series after reduction (~2000 keeps a
  // 640-px chart exact: four samples per horizontal pixel bucket).
  std::size_t max_points = 2000;
  std::optional<double> target;  // a horizontal target line (y units)
  std::string target_label;      // its label, e.g. "target 100 ms"
  // The y axis turns log when all its values are > 0 and span more than
  // kAutoLogSpan (y.log = true forces log; both false force linear).
  bool auto_log = false;
  std::string x_suffix, y_suffix;  // appended to every tick label: "/s", " threads"
};
Rendered render_line_chart(const LineChart& c);

// ---- predicted vs measured, per metric -------------------------------------
struct WhiskerRow {
  std::string label;  // metric name
  double predicted = 0;
  double mean = 0, min = 0, max = 0;  // the measurement over repetitions
  double tolerance = 0;               // relative, drawn as a band around the measured mean
  std::string color;       // of the prediction dot (the verdict's colour); empty: palette 0
  std::string value_text;  // right-hand annotation, e.g. "+4.2%"
};

struct WhiskerChart {
  std::string title;
  std::vector<WhiskerRow> rows;
  int width = 640;
  // The axis covers ratios to the measured mean within [1/max_ratio, max_ratio];
  // points beyond are drawn at the edge as arrows (and noted).
  double max_ratio = 16;
};
Rendered render_whisker_chart(const WhiskerChart& c);

// ---- timelines (Gantt) -------------------------------------------------------
struct TimelineStyle {
  std::string name;  // legend entry; empty: part of the nearest named style before it
  std::string color;
  double height = 1.0;  // fraction of the track height, centred
};

struct TimelineSpan {
  std::uint32_t track = 0;
  std::uint16_t style = 0;    // index into TimelineChart::styles; styles are drawn in index order
  double begin = 0, end = 0;  // seconds
};

struct TimelineChart {
  std::string title;
  std::vector<std::string> tracks;
  std::vector<TimelineStyle> styles;
  std::vector<TimelineSpan> spans;
  std::optional<double> x_max;  // common time range with a neighbouring chart
  int width = 620;
  std::size_t max_rects = 20000;
  std::size_t max_tracks = 128;  // further tracks are left out (noted)
};
Rendered render_timeline_chart(const TimelineChart& c);

}  // namespace poolsim::validate::svg
