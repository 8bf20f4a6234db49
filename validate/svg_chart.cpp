// svg_chart.cpp: layout and drawing of the report charts (see svg_chart.hpp).
//
// Every chart follows the same frame: a title line, a legend that flows in
// rows under it, the plot area with its ticks and grid, the axis labels, and
// one caption line per reduction note at the bottom. Coordinates are printed
// with one decimal (a tenth of a pixel is below what a screen shows), through
// fmt with the "C" formatting of numbers, so the same input gives the same
// bytes on every machine.
#include "validate/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace poolsim::validate::svg {

namespace {

// Font metrics: 11-px sans-serif text averages about 6.2 px per character
// (measured on DejaVu Sans, Debian's default); used to flow the legend and
// to size the label column. An overestimate only wastes a little space.
constexpr double kCharWidth = 6.2;
constexpr double kTitleHeight = 24;
constexpr double kLegendRow = 16;
constexpr double kNoteRow = 14;
constexpr const char* kGridColor = "#e3e3e3";
constexpr const char* kAxisColor = "#666";
constexpr const char* kTextColor = "#222";
constexpr const char* kNoteColor = "#555";

// A coordinate or length in pixels: one decimal, no "-0".
std::string px(double v) {
  if (!std::isfinite(v)) v = 0;
  if (std::fabs(v) < 0.05) return "0";
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string color_of(const std::string& c, std::size_t i) {
  return c.empty() ? std::string(kPalette[i % kPaletteSize]) : c;
}

// The svg element's opening: fixed size in px, a viewBox so CSS can scale it.
std::string open_svg(double w, double h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "role=\"img\" aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"11\" fill=\"{3}\">"
      "<title>{2}</title>"
      "<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{2}</text>",
      px(w), px(h), escape_xml(title), kTextColor);
}

// Caption lines under the plot, one per note.
std::string notes_svg(const std::vector<std::string>& notes, double y0) {
  std::string out;
  for (std::size_t i = 0; i < notes.size(); ++i)
    out += fmt::format("<text x=\"4\" y=\"{}\" font-size=\"10\" fill=\"{}\">{}</text>",
                       px(y0 + kNoteRow * static_cast<double>(i) + 10), kNoteColor,
                       escape_xml(notes[i]));
  return out;
}

// A legend entry: a swatch drawn by the caller's callback and a name.
struct LegendItem {
  std::string name;
  std::string swatch;  // SVG drawn in a 20x10 box at the origin, moved by a <g>
};

// Flows the items in rows of at most `width` px; returns the SVG and the height used.
std::pair<std::string, double> legend_svg(const std::vector<LegendItem>& items, double x0,
                                          double y0, double width) {
  if (items.empty()) return {"", 0.0};
  std::string out;
  double x = x0, y = y0;
  for (const auto& it : items) {
    const double w = 26 + kCharWidth * static_cast<double>(it.name.size()) + 14;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += kLegendRow;
    }
    out += fmt::format("<g transform=\"translate({},{})\">{}<text x=\"26\" y=\"9\">{}</text></g>",
                       px(x), px(y), it.swatch, escape_xml(it.name));
    x += w;
  }
  return {out, y - y0 + kLegendRow};
}

// Ticks with their step (the step picks label units and decimals).
struct Ticks {
  std::vector<double> at;
  double step = 1;
};

double nice_step(double span, int target) {
  const double raw = span / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double f = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
  return f * mag;
}

Ticks linear_ticks(double lo, double hi, int target, Unit unit) {
  Ticks t;
  if (!(hi > lo)) hi = lo + 1;
  t.step = nice_step(hi - lo, target);
  if (unit == Unit::count) t.step = std::max(1.0, std::round(t.step));
  const double first = std::ceil(lo / t.step - 1e-9) * t.step;
  for (int i = 0;; ++i) {
    const double v = first + t.step * i;
    if (v > hi + t.step * 1e-9) break;
    t.at.push_back(std::fabs(v) < t.step * 1e-9 ? 0.0 : v);
  }
  return t;
}

// Decades between lo and hi (both > 0); with fewer than three decades the
// 2x and 5x points are added so the axis still has a few labels.
Ticks log_ticks(double lo, double hi) {
  Ticks t;
  const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int d1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool dense = d1 - d0 < 3;
  for (int d = d0; d <= d1; ++d) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !dense) continue;
      const double v = m * std::pow(10.0, d);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.at.push_back(v);
    }
  }
  t.step = 0;  // log labels pick their unit from each value
  return t;
}

int decimals_for(double step_in_unit) {
  if (step_in_unit >= 1 || step_in_unit <= 0) return 0;
  return std::clamp(static_cast<int>(std::ceil(-std::log10(step_in_unit) - 1e-9)), 0, 6);
}

std::string scaled(double v, double step, double scale, const char* suffix) {
  const int dec = decimals_for(step / scale);
  return fmt::format("{:.{}f}{}", v / scale, dec, suffix);
}

// One axis mapped to a pixel range.
struct Scale {
  double lo = 0, hi = 1;  // data range
  double p0 = 0, p1 = 1;  // pixel range (p1 < p0 for a y axis)
  bool log = false;
  double operator()(double v) const {
    double f;
    if (log)
      f = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    else
      f = (v - lo) / (hi - lo);
    return p0 + f * (p1 - p0);
  }
};

std::string axis_ticks_svg(const Scale& xs, const Scale& ys, const Ticks& xt, const Ticks& yt,
                           const LineChart& c) {
  const Unit xu = c.x.unit, yu = c.y.unit;
  std::string out;
  for (double v : yt.at) {
    const double y = ys(v);
    out += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\"/>",
                       px(xs.p0), px(xs.p1), px(y), kGridColor);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", px(xs.p0 - 4),
                       px(y + 4), escape_xml(tick_label(v, ys.log ? v : yt.step, yu) + c.y_suffix));
  }
  for (double v : xt.at) {
    const double x = xs(v);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>", px(x),
                       px(ys.p0), px(ys.p1), kGridColor);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px(x),
                       px(ys.p0 + 14),
                       escape_xml(tick_label(v, xs.log ? v : xt.step, xu) + c.x_suffix));
  }
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>", px(xs.p0),
      px(ys.p1), px(xs.p1 - xs.p0), px(ys.p0 - ys.p1), kAxisColor);
  return out;
}

// ---- line chart helpers ----------------------------------------------------

// Keeps, per pixel column bucket, the first, lowest, highest and last sample
// (in their original order), so a reduced step or line series keeps its
// spikes and the value it carries into the next bucket.
std::vector<Point> reduce_points(const std::vector<Point>& pts, const Scale& xs,
                                 std::size_t max_points) {
  if (pts.size() <= max_points || max_points < 4) return pts;
  const std::size_t buckets = max_points / 4;
  std::vector<Point> out;
  out.reserve(max_points);
  std::size_t i = 0;
  while (i < pts.size()) {
    const auto bucket_of = [&](const Point& p) {
      const double f = (xs(p.x) - xs.p0) / (xs.p1 - xs.p0);
      return static_cast<std::size_t>(std::clamp(f, 0.0, 1.0) * static_cast<double>(buckets - 1));
    };
    const std::size_t b = bucket_of(pts[i]);
    std::size_t j = i, lo = i, hi = i;
    while (j < pts.size() && bucket_of(pts[j]) == b) {
      if (pts[j].y < pts[lo].y) lo = j;
      if (pts[j].y > pts[hi].y) hi = j;
      ++j;
    }
    std::size_t keep[4] = {i, lo, hi, j - 1};
    std::sort(std::begin(keep), std::end(keep));
    for (std::size_t k = 0; k < 4; ++k)
      if (k == 0 || keep[k] != keep[k - 1]) out.push_back(pts[keep[k]]);
    i = j;
  }
  return out;
}

// A point marker centred on (x, y): a filled square for a measured series, a
// hollow circle for a predicted one.
std::string marker_svg(double x, double y, bool measured, const std::string& color) {
  if (measured)
    return fmt::format(
        "<rect class=\"marker measured\" x=\"{}\" y=\"{}\" width=\"6\" height=\"6\" fill=\"{}\"/>",
        px(x - 3), px(y - 3), color);
  return fmt::format(
      "<circle class=\"marker predicted\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"#fff\" stroke=\"{}\" "
      "stroke-width=\"1.5\"/>",
      px(x), px(y), color);
}

// A saturated point: a triangle pointing up, centred on (x, y).
std::string saturated_svg(double x, double y) {
  return fmt::format("<path class=\"saturated\" d=\"M{} {}L{} {}L{} {}Z\" fill=\"{}\"/>", px(x),
                     px(y - 5), px(x + 4.5), px(y + 3), px(x - 4.5), px(y + 3), kSaturatedColor);
}

std::string series_swatch(const Series& s, const std::string& color) {
  return fmt::format(
             "<line x1=\"0\" y1=\"5\" x2=\"20\" y2=\"5\" stroke=\"{}\" stroke-width=\"{}\"{}{}/>",
             color, px(std::max(2.0, s.width)), s.dashed ? " stroke-dasharray=\"5 3\"" : "",
             s.opacity < 1 ? fmt::format(" stroke-opacity=\"{:.2f}\"", s.opacity) : "") +
         (s.markers ? marker_svg(10, 5, s.measured, color) : "");
}

// Whether an auto_log y axis should be logarithmic: every finite value
// positive, and max / min above kAutoLogSpan.
bool wants_log_y(const LineChart& c) {
  if (c.y.log) return true;
  if (!c.auto_log) return false;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const Series& s : c.series)
    for (const Point& p : s.points) {
      const double v = p.y;
      if (!std::isfinite(v)) continue;
      if (v <= 0) return false;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  return std::isfinite(lo) && hi / lo > kAutoLogSpan;
}

bool is_saturated(const Series& s, const Point& p) {
  return std::find(s.saturated_x.begin(), s.saturated_x.end(), p.x) != s.saturated_x.end();
}

}  // namespace

// ---- public helpers --------------------------------------------------------

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  return linear_ticks(lo, hi, target, Unit::plain).at;
}

std::string tick_label(double v, double step, Unit unit) {
  if (v == 0) return unit == Unit::fraction ? "0%" : "0";
  // The unit is chosen from about five steps (the axis span), so every label
  // on one axis uses the same unit.
  const double span = std::fabs(step) * 5;
  switch (unit) {
    case Unit::seconds:
      if (span < 1e-6) return scaled(v, step, 1e-9, " ns");
      if (span < 1e-3) return scaled(v, step, 1e-6, " us");
      if (span < 1) return scaled(v, step, 1e-3, " ms");
      return scaled(v, step, 1, " s");
    case Unit::bytes:
      if (span < 1024) return scaled(v, step, 1, " B");
      if (span < 1024.0 * 1024) return scaled(v, step, 1024, " KiB");
      if (span < 1024.0 * 1024 * 1024) return scaled(v, step, 1024.0 * 1024, " MiB");
      return scaled(v, step, 1024.0 * 1024 * 1024, " GiB");
    case Unit::fraction:
      return scaled(v, step, 0.01, "%");
    case Unit::count:
      return fmt::format("{:.0f}", v);
    case Unit::plain:
      if (span >= 5e6) return scaled(v, step, 1e6, "M");
      if (span >= 5e3) return scaled(v, step, 1e3, "k");
      return scaled(v, step, 1, "");
  }
  return fmt::format("{}", v);
}

std::string axis_suffix(std::string_view key, const std::vector<std::string>& values) {
  const auto ends = [](std::string_view t, std::string_view suffix) {
    return t.size() >= suffix.size() && t.substr(t.size() - suffix.size()) == suffix;
  };
  if (!values.empty() && std::all_of(values.begin(), values.end(), [&](const std::string& v) {
        return ends(v, "/s") || ends(v, "/ms") || ends(v, "/us");
      }))
    return "/s";  // numeric_value() reads every rate per second
  for (std::string_view k : {"threads", "carriers", "loops", "min_threads", "max_threads"})
    if (ends(key, k)) return " threads";
  if (ends(key, "clients")) return " clients";
  if (ends(key, "cpus")) return " CPUs";
  if (ends(key, "queue")) return " slots";
  return "";
}

// ---- line chart ------------------------------------------------------------

// One pass in drawing order (scales, ranges, ticks, legend, series, marks,
// labels, notes). Long because every step reads the ranges and scales the
// steps before it settled.
Rendered render_line_chart(const LineChart& c_in) {
  // The axes' effective scales (auto_log resolved); the rest reads `c`.
  LineChart c = c_in;
  c.y.log = wants_log_y(c_in);
  Rendered r;
  const double left = 64, right = 16, bottom = 40;
  const double w = c.width;
  // Saturated points leave the linear y range to the others when they would
  // stretch it more than kSaturatedStretch times (flattening the rest).
  double sat_hi = -std::numeric_limits<double>::infinity(), unsat_hi = sat_hi;
  for (const Series& s : c.series)
    for (const Point& p : s.points)
      if (std::isfinite(p.y)) {
        double& hi = is_saturated(s, p) ? sat_hi : unsat_hi;
        hi = std::max(hi, p.y);
      }
  const bool clip_saturated =
      !c.y.log && std::isfinite(unsat_hi) && unsat_hi > 0 && sat_hi > kSaturatedStretch * unsat_hi;

  // Data ranges (log axes see only positive values).
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  double ylo = xlo, yhi = -xlo;
  std::vector<std::vector<Point>> data(c.series.size());
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    std::size_t dropped = 0;
    for (const Point& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y) || (c.x.log && p.x <= 0) ||
          (c.y.log && p.y <= 0)) {
        ++dropped;
        continue;
      }
      data[i].push_back(p);
    }
    std::stable_sort(data[i].begin(), data[i].end(),
                     [](const Point& a, const Point& b) { return a.x < b.x; });
    if (dropped > 0)
      r.notes.push_back(
          fmt::format("{}: {} point{} left out (not finite, or not positive on a log axis)", s.name,
                      dropped, dropped == 1 ? "" : "s"));
    for (const Point& p : data[i]) {
      xlo = std::min(xlo, p.x);
      xhi = std::max(xhi, p.x);
      if (clip_saturated && is_saturated(s, p)) continue;
      ylo = std::min(ylo, p.y);
      yhi = std::max(yhi, p.y);
    }
    if (s.step && s.step_until && !data[i].empty() && std::isfinite(*s.step_until))
      xhi = std::max(xhi, *s.step_until);
  }
  const bool any = std::isfinite(xlo);
  if (!any) {
    xlo = c.x.log ? 1 : 0;
    xhi = xlo * 10 + 1;
    ylo = c.y.log ? 1 : 0;
    yhi = ylo * 10 + 1;
    r.notes.push_back("no data");
  }
  if (any && !std::isfinite(ylo)) {  // the only unsaturated points were not finite
    ylo = 0;
    yhi = 1;
  }
  if (c.target && std::isfinite(*c.target) && (!c.y.log || *c.target > 0)) {
    ylo = std::min(ylo, *c.target);
    yhi = std::max(yhi, *c.target);
  }
  if (c.x.min) xlo = *c.x.min;
  if (c.x.max) xhi = *c.x.max;
  if (!(xhi > xlo)) xhi = c.x.log ? xlo * 10 : xlo + 1;
  if (!c.y.log && !c.y.min) ylo = std::min(0.0, ylo);
  if (c.y.min) ylo = *c.y.min;
  if (c.y.max) yhi = *c.y.max;
  if (!(yhi > ylo)) yhi = c.y.log ? ylo * 10 : ylo + 1;

  Ticks xt = c.x.log ? log_ticks(xlo, xhi) : linear_ticks(xlo, xhi, 6, c.x.unit);
  Ticks yt;
  if (c.y.log) {
    ylo = std::pow(10.0, std::floor(std::log10(ylo) + 1e-9));
    yhi = std::pow(10.0, std::ceil(std::log10(yhi) - 1e-9));
    if (!(yhi > ylo)) yhi = ylo * 10;
    yt = log_ticks(ylo, yhi);
  } else {
    yt = linear_ticks(ylo, yhi, 5, c.y.unit);
    // Round the top up to the next tick above the highest value, so a line
    // at the maximum is not hidden under the frame.
    if (!c.y.max && !yt.at.empty() && yt.at.back() < yhi + yt.step * 1e-9) {
      yhi = yt.at.back() + yt.step;
      yt.at.push_back(yhi);
    }
  }

  // Legend, then the plot frame under it.
  std::vector<LegendItem> items;
  for (std::size_t i = 0; i < c.series.size(); ++i)
    items.push_back({c.series[i].name, series_swatch(c.series[i], color_of(c.series[i].color, i))});
  auto [legend, legend_h] = legend_svg(items, left, kTitleHeight + 2, w - left - right);
  const double top = kTitleHeight + legend_h + 10;
  const double plot_h = std::max(80.0, static_cast<double>(c.height) - 24 - bottom);
  const Scale xs{xlo, xhi, left, w - right, c.x.log};
  const Scale ys{ylo, yhi, top + plot_h, top, c.y.log};

  std::string body;
  body += axis_ticks_svg(xs, ys, xt, yt, c);
  std::size_t above = 0;
  double above_max = 0;
  bool any_saturated = false;
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    if (data[i].empty()) continue;
    const std::vector<Point> pts = reduce_points(data[i], xs, c.max_points);
    if (pts.size() < data[i].size())
      r.notes.push_back(
          fmt::format("{}: {} points reduced to {} (first, lowest, highest and last per pixel "
                      "column kept)",
                      s.name, data[i].size(), pts.size()));
    const auto X = [&](double v) { return std::clamp(xs(v), xs.p0, xs.p1); };
    const auto Y = [&](double v) { return std::clamp(ys(v), ys.p1, ys.p0); };
    std::string d = fmt::format("M{} {}", px(X(pts[0].x)), px(Y(pts[0].y)));
    for (std::size_t k = 1; k < pts.size(); ++k) {
      if (s.step)
        d += fmt::format("H{}V{}", px(X(pts[k].x)), px(Y(pts[k].y)));
      else
        d += fmt::format("L{} {}", px(X(pts[k].x)), px(Y(pts[k].y)));
    }
    if (s.step && s.step_until && *s.step_until > pts.back().x)
      d += fmt::format("H{}", px(X(*s.step_until)));
    body +=
        fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}{}/>", d,
                    color_of(s.color, i), px(s.width), s.dashed ? " stroke-dasharray=\"5 3\"" : "",
                    s.opacity < 1 ? fmt::format(" stroke-opacity=\"{:.2f}\"", s.opacity) : "");
    // Markers on the points as given (never reduced: a sweep has few points).
    for (const Point& p : data[i]) {
      if (s.markers) body += marker_svg(X(p.x), Y(p.y), s.measured, color_of(s.color, i));
      if (!is_saturated(s, p)) continue;
      any_saturated = true;
      if (ys(p.y) < ys.p1 - 0.5) {
        ++above;
        above_max = std::max(above_max, p.y);
      }
      body += saturated_svg(X(p.x), Y(p.y));
    }
  }
  if (c.target && std::isfinite(*c.target) && (!c.y.log || *c.target > 0)) {
    const double y = ys(*c.target);
    body += fmt::format(
        "<line class=\"target\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" "
        "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
        px(xs.p0), px(xs.p1), px(y), kAxisColor);
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text>",
                        px(xs.p1 - 4), px(y - 4), kAxisColor,
                        escape_xml(c.target_label.empty() ? "target" : c.target_label));
  }
  if (any_saturated)
    r.notes.push_back(
        above > 0
            ? fmt::format("triangles: saturated (overloaded) runs; {} above the axis, up to {}",
                          above, tick_label(above_max, above_max, c.y.unit) + c.y_suffix)
            : "triangles: saturated (overloaded) runs");
  // Axis labels.
  body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                      px((xs.p0 + xs.p1) / 2), px(ys.p0 + 32),
                      escape_xml(c.x.label + (c.x.log ? " (log scale)" : "")));
  body += fmt::format(
      "<text transform=\"translate(12,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
      px((ys.p0 + ys.p1) / 2), escape_xml(c.y.label + (c.y.log ? " (log scale)" : "")));

  const double notes_y = ys.p0 + bottom;
  const double h = notes_y + kNoteRow * static_cast<double>(r.notes.size()) + 4;
  r.svg = open_svg(w, h, c.title) + legend + body + notes_svg(r.notes, notes_y) + "</svg>";
  return r;
}

// ---- whisker chart ---------------------------------------------------------

// Long because it is the chart's steps in order: the ratios and the log range that holds
// them, the legend, the ticks, one whisker per metric (arrows beyond the axis).
Rendered render_whisker_chart(const WhiskerChart& c) {
  Rendered r;
  constexpr double kRow = 22;
  double label_w = 60;
  double value_w = 40;
  for (const auto& row : c.rows) {
    label_w = std::max(label_w, kCharWidth * static_cast<double>(row.label.size()) + 12);
    value_w = std::max(value_w, kCharWidth * static_cast<double>(row.value_text.size()) + 12);
  }
  const double w = c.width;
  const double x0 = label_w, x1 = w - value_w;

  // Ratios to the measured mean; the axis is the smallest symmetric log
  // range from this list that holds them all (capped by max_ratio).
  struct Ratios {
    double pred = 1, lo = 1, hi = 1;
    bool whisker = false, pred_ok = true;
  };
  std::vector<Ratios> ratios;
  double need = 1;
  for (const auto& row : c.rows) {
    Ratios q;
    if (row.mean > 0) {
      q.pred = row.predicted / row.mean;
      q.lo = row.min / row.mean;
      q.hi = row.max / row.mean;
      q.whisker = true;
    } else if (row.mean == 0 && row.predicted == 0) {
      q.pred = 1;  // both zero: an exact match
    } else {
      q.pred_ok = false;
      r.notes.push_back(
          fmt::format("{}: the measured mean is {}, so no ratio exists; the prediction is "
                      "drawn at the edge",
                      row.label, row.mean == 0 ? "0" : "negative"));
    }
    for (double v : {q.pred, q.lo, q.hi})
      if (v > 0 && std::isfinite(v)) need = std::max({need, v, 1 / v});
    need = std::max(need, 1 + row.tolerance);
    ratios.push_back(q);
  }
  double range = c.max_ratio;
  for (double cand : {1.25, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0}) {
    if (cand >= c.max_ratio) break;
    if (need <= cand * (1 + 1e-9)) {
      range = cand;
      break;
    }
  }
  const double lr = std::log2(range);
  const auto X = [&](double ratio) {
    const double l = ratio > 0 ? std::clamp(std::log2(ratio), -lr, lr) : -lr;
    return x0 + (l + lr) / (2 * lr) * (x1 - x0);
  };
  const auto out_of_range = [&](double ratio) {
    return !(ratio > 0) || !std::isfinite(ratio) || std::fabs(std::log2(ratio)) > lr * (1 + 1e-9);
  };

  // Legend: what each mark means.
  const std::string pred_color = kPalette[0];
  std::vector<LegendItem> items = {
      {"predicted", fmt::format("<circle cx=\"10\" cy=\"5\" r=\"4\" fill=\"{}\"/>", pred_color)},
      {"measured mean", "<rect x=\"9\" y=\"0\" width=\"2\" height=\"10\" fill=\"#222\"/>"},
      {"measured min..max", "<line x1=\"2\" y1=\"5\" x2=\"18\" y2=\"5\" stroke=\"#222\"/>"},
      {"tolerance", "<rect x=\"2\" y=\"1\" width=\"16\" height=\"8\" fill=\"#dff0e0\"/>"},
  };
  auto [legend, legend_h] = legend_svg(items, x0, kTitleHeight + 2, x1 - x0);
  const double top = kTitleHeight + legend_h + 8;
  const double plot_h = kRow * static_cast<double>(std::max<std::size_t>(1, c.rows.size()));
  const double bottom_axis = top + plot_h;

  std::string body;
  // Ticks: ratios in the range; percent labels on narrow axes, factors on wide ones.
  std::vector<double> ticks;
  if (range <= 2.0 + 1e-9)
    ticks = {0.5, 2.0 / 3, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2};
  else
    for (double t = 1 / range; t <= range * (1 + 1e-9); t *= 2) ticks.push_back(t);
  for (double t : ticks) {
    if (out_of_range(t)) continue;
    const double x = X(t);
    const std::string label =
        range <= 2.0 + 1e-9
            ? (std::fabs(t - 1) < 1e-9 ? "0" : fmt::format("{:+.0f}%", (t - 1) * 100))
        : t < 1 ? fmt::format("\u00f7{:g}", 1 / t)
                : fmt::format("\u00d7{:g}", t);
    body +=
        fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"{4}/>", px(x),
                    px(top), px(bottom_axis), std::fabs(t - 1) < 1e-9 ? "#999" : kGridColor,
                    std::fabs(t - 1) < 1e-9 ? " stroke-dasharray=\"3 2\"" : "");
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px(x),
                        px(bottom_axis + 14), escape_xml(label));
  }
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const WhiskerRow& row = c.rows[i];
    const Ratios& q = ratios[i];
    const double yt = top + kRow * static_cast<double>(i);
    const double y = yt + kRow / 2;
    if (i % 2 == 1)
      body += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6f6f6\"/>",
                          px(yt), px(w), px(kRow));
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", px(x0 - 6),
                        px(y + 4), escape_xml(row.label));
    if (row.tolerance > 0) {
      const double a = X(1 - row.tolerance), b = X(1 + row.tolerance);
      body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#dff0e0\"/>",
                          px(a), px(yt + 3), px(b - a), px(kRow - 6));
    }
    if (q.whisker) {
      const double a = X(q.lo), b = X(q.hi);
      body += fmt::format(
          "<path d=\"M{0} {2}H{1}M{0} {3}V{4}M{1} {3}V{4}\" stroke=\"#222\" fill=\"none\"/>", px(a),
          px(b), px(y), px(y - 4), px(y + 4));
    }
    body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"2\" height=\"12\" fill=\"#222\"/>",
                        px(X(1) - 1), px(y - 6));
    const std::string col = row.color.empty() ? pred_color : row.color;
    if (q.pred_ok && !out_of_range(q.pred)) {
      body += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" stroke=\"#fff\"/>",
                          px(X(q.pred)), px(y), col);
    } else {
      // Beyond the axis: an arrow at the edge pointing outwards.
      const bool high = !q.pred_ok ? row.predicted > 0 : q.pred > 1;
      const double x = high ? x1 : x0;
      const double s = high ? 1 : -1;
      body += fmt::format("<path d=\"M{} {}L{} {}L{} {}Z\" fill=\"{}\"/>", px(x - 8 * s), px(y - 5),
                          px(x), px(y), px(x - 8 * s), px(y + 5), col);
      if (q.pred_ok)
        r.notes.push_back(
            fmt::format("{}: the prediction is {:.3g} times the measured mean, beyond the axis",
                        row.label, q.pred));
    }
    body += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", px(x1 + 6), px(y + 4),
                        escape_xml(row.value_text));
  }
  body += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>", px(x0),
      px(top), px(x1 - x0), px(plot_h), kAxisColor);
  body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px((x0 + x1) / 2),
                      px(bottom_axis + 30), "value relative to the measured mean (log scale)");

  const double notes_y = bottom_axis + 38;
  const double h = notes_y + kNoteRow * static_cast<double>(r.notes.size()) + 4;
  r.svg = open_svg(w, h, c.title) + legend + body + notes_svg(r.notes, notes_y) + "</svg>";
  return r;
}

// ---- timeline chart --------------------------------------------------------

// Long because it is the chart's steps in order: the drawable spans, their order, two
// reductions (merge, keep the longest), the legend, track height and labels, one path per
// style.
Rendered render_timeline_chart(const TimelineChart& c) {
  Rendered r;
  const double w = c.width;
  const std::size_t ntracks = std::min(c.tracks.size(), c.max_tracks);
  if (c.tracks.size() > ntracks)
    r.notes.push_back(fmt::format("showing the first {} of {} tracks", ntracks, c.tracks.size()));
  double label_w = 40;
  for (std::size_t i = 0; i < ntracks; ++i)
    label_w = std::max(label_w,
                       std::min(160.0, kCharWidth * static_cast<double>(c.tracks[i].size()) + 10));
  const double x0 = label_w, x1 = w - 12;

  // Spans on shown tracks with a known style, finite and non-empty.
  std::vector<TimelineSpan> spans;
  spans.reserve(c.spans.size());
  double tmax = 0;
  for (const auto& s : c.spans) {
    if (s.track >= ntracks || s.style >= c.styles.size() || !(s.end > s.begin) ||
        !std::isfinite(s.end))
      continue;
    spans.push_back(s);
    tmax = std::max(tmax, s.end);
  }
  if (c.x_max) tmax = std::max(tmax, *c.x_max);
  if (!(tmax > 0)) tmax = 1;
  const std::size_t total = spans.size();
  // Order: style (draw order), then track, then time.
  const auto by_style = [](const TimelineSpan& a, const TimelineSpan& b) {
    if (a.style != b.style) return a.style < b.style;
    if (a.track != b.track) return a.track < b.track;
    if (a.begin != b.begin) return a.begin < b.begin;
    return a.end < b.end;
  };
  std::sort(spans.begin(), spans.end(), by_style);

  // Reduction 1: merge same-style neighbours on a track less than a pixel apart.
  const double pixel = tmax / (x1 - x0);
  if (spans.size() > c.max_rects) {
    std::vector<TimelineSpan> merged;
    merged.reserve(spans.size());
    for (const auto& s : spans) {
      if (!merged.empty() && merged.back().style == s.style && merged.back().track == s.track &&
          s.begin - merged.back().end <= pixel) {
        merged.back().end = std::max(merged.back().end, s.end);
      } else {
        merged.push_back(s);
      }
    }
    if (merged.size() < total)
      r.notes.push_back(
          fmt::format("{} spans: {} merged into a neighbour less than one pixel ({}) away", total,
                      total - merged.size(), tick_label(pixel, pixel, Unit::seconds)));
    spans = std::move(merged);
  }
  // Reduction 2: keep the longest spans.
  if (spans.size() > c.max_rects) {
    std::sort(spans.begin(), spans.end(), [&](const TimelineSpan& a, const TimelineSpan& b) {
      const double da = a.end - a.begin, db = b.end - b.begin;
      if (da != db) return da > db;
      return by_style(a, b);
    });
    const double cut = spans[c.max_rects - 1].end - spans[c.max_rects - 1].begin;
    const std::size_t dropped = spans.size() - c.max_rects;
    spans.resize(c.max_rects);
    std::sort(spans.begin(), spans.end(), by_style);
    r.notes.push_back(
        fmt::format("{} shortest spans (up to {}) not drawn, to stay under {} rectangles", dropped,
                    tick_label(cut, cut, Unit::seconds), c.max_rects));
  }

  // Legend: the named styles that some drawn span uses; an unnamed style
  // counts for the nearest named style before it (its group).
  std::vector<bool> drawn(c.styles.size(), false), used(c.styles.size(), false);
  for (const auto& s : spans) drawn[s.style] = true;
  for (std::size_t i = 0, owner = 0; i < c.styles.size(); ++i) {
    if (!c.styles[i].name.empty()) owner = i;
    if (drawn[i]) used[owner] = true;
  }
  std::vector<LegendItem> items;
  for (std::size_t i = 0; i < c.styles.size(); ++i) {
    const TimelineStyle& st = c.styles[i];
    if (!st.name.empty() && used[i])
      items.push_back(
          {st.name, fmt::format("<rect x=\"2\" y=\"{}\" width=\"16\" height=\"{}\" fill=\"{}\"/>",
                                px(5 - 5 * st.height), px(10 * st.height), st.color)});
  }
  auto [legend, legend_h] = legend_svg(items, x0, kTitleHeight + 2, x1 - x0);
  const double top = kTitleHeight + legend_h + 8;
  // Track height: up to 20 px, shrunk so the chart stays under ~400 px of tracks.
  const double th = std::clamp(
      std::floor(400.0 / static_cast<double>(std::max<std::size_t>(1, ntracks))), 3.0, 20.0);
  const double plot_h = th * static_cast<double>(std::max<std::size_t>(1, ntracks));
  const Scale xs{0, tmax, x0, x1, false};

  std::string body;
  const Ticks xt = linear_ticks(0, tmax, 6, Unit::seconds);
  for (double v : xt.at) {
    const double x = xs(v);
    body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>", px(x),
                        px(top), px(top + plot_h), kGridColor);
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", px(x),
                        px(top + plot_h + 14), escape_xml(tick_label(v, xt.step, Unit::seconds)));
  }
  // Track labels where they fit (every track at >= 9 px, else first and last).
  for (std::size_t i = 0; i < ntracks; ++i) {
    if (th < 9 && i != 0 && i + 1 != ntracks) continue;
    const double y = top + th * static_cast<double>(i) + th / 2 + 4;
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\"{}>{}</text>", px(x0 - 4),
                        px(y), th < 9 ? " font-size=\"9\"" : "", escape_xml(c.tracks[i]));
    if (th >= 6 && i > 0)
      body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#f0f0f0\"/>",
                          px(x0), px(top + th * static_cast<double>(i)), px(x1));
  }
  // One path per style: each rectangle is "Mx yhWvHh-Wz" (compact for 20k rectangles).
  std::size_t k = 0;
  while (k < spans.size()) {
    const std::uint16_t style = spans[k].style;
    const TimelineStyle& st = c.styles[style];
    const double rh = th * std::clamp(st.height, 0.05, 1.0);
    const double inset = (th - rh) / 2;
    std::string d;
    for (; k < spans.size() && spans[k].style == style; ++k) {
      const auto& s = spans[k];
      const double a = xs(s.begin);
      const double wd = std::max(0.5, xs(s.end) - a);  // sub-pixel spans stay visible
      d += fmt::format("M{} {}h{}v{}h-{}z", px(a), px(top + th * s.track + inset), px(wd), px(rh),
                       px(wd));
    }
    body += fmt::format("<path d=\"{}\" fill=\"{}\"/>", d, st.color);
  }
  body += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\"/>", px(x0),
      px(top), px(x1 - x0), px(plot_h), kAxisColor);
  body += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">time since the run's origin</text>",
      px((x0 + x1) / 2), px(top + plot_h + 30));

  const double notes_y = top + plot_h + 38;
  const double h = notes_y + kNoteRow * static_cast<double>(r.notes.size()) + 4;
  r.svg = open_svg(w, h, c.title) + legend + body + notes_svg(r.notes, notes_y) + "</svg>";
  return r;
}

}  // namespace poolsim::validate::svg
