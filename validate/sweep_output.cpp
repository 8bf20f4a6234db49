// sweep_output.cpp: the CSV, JSON, chart, HTML and USL outputs of a sweep
// (see sweep_output.hpp).
#include "validate/sweep_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "models/units.hpp"
#include "validate/output.hpp"
#include "validate/replications.hpp"

namespace poolsim::validate {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

namespace {

std::string join_sets_label(const std::vector<VaryAxis>& axes,
                            const std::vector<std::string>& values, std::size_t skip) {
  std::string out;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (i == skip) continue;
    if (!out.empty()) out += ' ';
    out += axes[i].key + "=" + values[i];
  }
  return out;
}

std::string csv_number(double v) { return fmt::format("{:.9g}", v); }

svg::Unit chart_unit_of(Metric m) {
  const auto u = unit_of(m);
  if (u == "s") return svg::Unit::seconds;
  if (u == "B") return svg::Unit::bytes;
  if (u == "fraction") return svg::Unit::fraction;
  if (u.empty()) return svg::Unit::count;
  return svg::Unit::plain;
}

nlohmann::ordered_json value_json(const std::string& text) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && p == text.data() + text.size()) return v;
  return text;
}

}  // namespace

double SweepPoint::value(Metric m) const {
  return measured ? (*measured)[static_cast<std::size_t>(m)].mean : predicted[m];
}

bool SweepPoint::overloaded() const {
  return std::any_of(warnings.begin(), warnings.end(),
                     [](const Warning& w) { return w.kind == "overload"; });
}

std::string sweep_csv(const SweepResult& r) {
  std::ostringstream out;
  std::vector<std::string> header;
  for (const auto& a : r.axes) header.push_back(csv_cell(a.key));
  for (auto name : kMetricNames) header.emplace_back(name);
  if (r.measured) {
    for (auto name : kMetricNames) header.push_back(std::string(name) + "_sd");
    for (auto name : kMetricNames) header.push_back(std::string(name) + "_predicted");
  }
  if (r.replications > 1) {
    for (auto name : kMetricNames) header.push_back(std::string(name) + "_ci95_low");
    for (auto name : kMetricNames) header.push_back(std::string(name) + "_ci95_high");
  }
  header.emplace_back("overload");
  for (std::size_t i = 0; i < header.size(); ++i) out << (i ? "," : "") << header[i];
  out << '\n';
  for (const auto& p : r.points) {
    bool first = true;
    auto cell = [&](const std::string& s) {
      out << (first ? "" : ",") << s;
      first = false;
    };
    for (const auto& v : p.values) cell(csv_cell(v));
    for (std::size_t m = 0; m < kMetricCount; ++m)
      cell(csv_number(p.value(static_cast<Metric>(m))));
    if (r.measured) {
      for (std::size_t m = 0; m < kMetricCount; ++m)
        cell(csv_number(p.measured ? (*p.measured)[m].sd : 0));
      for (std::size_t m = 0; m < kMetricCount; ++m) cell(csv_number(p.predicted.values[m]));
    }
    if (r.replications > 1) {
      for (std::size_t m = 0; m < kMetricCount; ++m)
        cell(csv_number(p.spread ? ci95((*p.spread)[m]).low : p.predicted.values[m]));
      for (std::size_t m = 0; m < kMetricCount; ++m)
        cell(csv_number(p.spread ? ci95((*p.spread)[m]).high : p.predicted.values[m]));
    }
    cell(p.overloaded() ? "1" : "0");
    out << '\n';
  }
  return out.str();
}

nlohmann::ordered_json sweep_json(const SweepResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  if (!r.source.empty()) j["file"] = r.source;
  j["mode"] = r.measured ? "measured" : "simulated";
  j["replications"] = r.replications;
  j["vary"] = nlohmann::ordered_json::array();
  for (const auto& a : r.axes) {
    nlohmann::ordered_json aj;
    aj["key"] = a.key;
    aj["values"] = nlohmann::ordered_json::array();
    for (const auto& v : a.values) aj["values"].push_back(value_json(v));
    j["vary"].push_back(aj);
  }
  j["points"] = nlohmann::ordered_json::array();
  for (const auto& p : r.points) {
    nlohmann::ordered_json pj;
    for (std::size_t i = 0; i < r.axes.size(); ++i)
      pj["values"][r.axes[i].key] = value_json(p.values[i]);
    pj["backend"] = p.backend_json.is_null() ? backend_json(p.backend) : p.backend_json;
    nlohmann::ordered_json pred;
    for (std::size_t m = 0; m < kMetricCount; ++m)
      pred[std::string(kMetricNames[m])] = p.predicted.values[m];
    if (p.measured) {
      nlohmann::ordered_json meas;
      for (std::size_t m = 0; m < kMetricCount; ++m)
        meas[std::string(kMetricNames[m])] = stats_json((*p.measured)[m]);
      pj["measured"] = meas;
      pj["predicted"] = pred;
    } else {
      pj["metrics"] = pred;
    }
    if (p.spread) {
      // replications.hpp's per-metric object: mean, sd, min, max, n, ci95.
      nlohmann::ordered_json rj;
      rj["n"] = r.replications;
      for (std::size_t m = 0; m < kMetricCount; ++m) {
        const auto& st = (*p.spread)[m];
        auto e = stats_json(st);
        const auto ci = ci95(st);
        e["ci95"] = {ci.low, ci.high};
        rj["metrics"][std::string(kMetricNames[m])] = e;
      }
      pj["replications"] = rj;
    }
    pj["warnings"] = warnings_json(p.warnings);
    j["points"].push_back(pj);
  }
  return j;
}

std::optional<double> numeric_value(const std::string& text) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && p == text.data() + text.size()) return v;
  try {
    return to_seconds(parse_duration(text));
  } catch (const UnitError&) {
  }
  try {
    return parse_rate(text);
  } catch (const UnitError&) {
  }
  try {
    return static_cast<double>(parse_size(text));
  } catch (const UnitError&) {
  }
  return std::nullopt;
}

// Long because it builds the chart's parts in order: the x values and their scale (a
// log axis for a geometric sweep), then one series per combination of the other axes,
// with its overloaded points marked.
svg::LineChart sweep_chart(const SweepResult& r, Metric metric) {
  svg::LineChart c;
  const std::string mname(to_string(metric));
  c.y.label = mname;
  c.y.unit = chart_unit_of(metric);
  if (r.axes.empty()) {
    c.title = fmt::format("{}: {} (one point)", r.scenario, mname);
    return c;
  }
  const VaryAxis& xa = r.axes.front();
  // x: numbers if every value of the first axis reads as one, else indices.
  std::vector<double> xs;
  bool numeric = true;
  bool durations = true, sizes = true, integers = true;
  for (const auto& v : xa.values) {
    const auto n = numeric_value(v);
    if (!n) {
      numeric = false;
      break;
    }
    xs.push_back(*n);
    double plain = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), plain);
    const bool is_plain = ec == std::errc() && p == v.data() + v.size();
    try {
      (void)parse_duration(v);
    } catch (const UnitError&) {
      durations = false;
    }
    try {
      (void)parse_size(v);
    } catch (const UnitError&) {
      sizes = false;
    }
    if (!is_plain || plain != std::floor(plain)) integers = false;
  }
  if (!numeric) {
    xs.clear();
    for (std::size_t i = 0; i < xa.values.size(); ++i) xs.push_back(static_cast<double>(i));
    std::string names;
    for (std::size_t i = 0; i < xa.values.size(); ++i)
      names += fmt::format("{}{}={}", i ? ", " : "", i, xa.values[i]);
    c.x.label = xa.key + " (index: " + names + ")";
    c.x.unit = svg::Unit::count;
  } else {
    c.x.label = xa.key;
    c.x.unit = durations  ? svg::Unit::seconds
               : sizes    ? svg::Unit::bytes
               : integers ? svg::Unit::count
                          : svg::Unit::plain;
    const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    // A geometric sweep (1..64*2) reads best on a log axis.
    c.x.log = *lo > 0 && *hi / *lo >= 32;
  }
  std::map<std::string, std::size_t> x_index;
  for (std::size_t i = 0; i < xa.values.size(); ++i) x_index.emplace(xa.values[i], i);
  // Series: one per combination of the other axes, in grid order.
  std::vector<std::string> order;
  std::map<std::string, svg::Series> by_name;
  for (const auto& p : r.points) {
    const std::string name = join_sets_label(r.axes, p.values, 0);
    auto [it, inserted] = by_name.try_emplace(name);
    if (inserted) {
      order.push_back(name);
      it->second.name = name.empty() ? mname : name;
    }
    const double x = xs[x_index.at(p.values[0])];
    it->second.points.push_back({x, p.value(metric)});
    if (p.overloaded()) it->second.saturated_x.push_back(x);
  }
  for (const auto& name : order) {
    auto s = by_name.at(name);
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const svg::Point& a, const svg::Point& b) { return a.x < b.x; });
    c.series.push_back(std::move(s));
  }
  c.title = fmt::format(
      "{}: {} vs {} ({}{})", r.scenario, mname, xa.key, r.measured ? "measured" : "simulated",
      r.replications > 1 ? fmt::format(", mean of {} replications", r.replications)
                         : std::string());
  return c;
}

std::string sweep_svg(const SweepResult& r, const std::vector<Metric>& metrics) {
  std::vector<std::string> parts;
  int width = 0, height = 0;
  std::string body;
  for (auto m : metrics) {
    const auto rendered = svg::render_line_chart(sweep_chart(r, m));
    std::string s = rendered.svg;
    // The chart's own size, from its root element's attributes.
    auto attr = [&](const std::string& name) {
      const auto at = s.find(name + "=\"");
      if (at == std::string::npos) return 0;
      return std::atoi(s.c_str() + at + name.size() + 2);
    };
    const int w = attr("width"), h = attr("height");
    // Position it: <svg x="0" y="H" ...> nested inside the outer <svg>.
    const auto open = s.find("<svg");
    if (open != std::string::npos) s.insert(open + 4, fmt::format(" x=\"0\" y=\"{}\"", height));
    body += s;
    if (!s.empty() && s.back() != '\n') body += '\n';
    width = std::max(width, w);
    height += h;
  }
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\">\n{2}</svg>\n",
      width, height, body);
}

std::string sweep_html(const SweepResult& r, const std::vector<Metric>& metrics,
                       const nlohmann::ordered_json& usl) {
  using svg::escape_xml;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>" + escape_xml("poolsim sweep: " + r.scenario) + "</title>\n";
  h += "<style>body{font-family:sans-serif;margin:1.5em;max-width:72em}"
       "table{border-collapse:collapse;font-size:0.9em}td,th{border:1px solid #ccc;padding:2px 6px}"
       "td.n{text-align:right}figure{margin:1em 0}pre{background:#f6f6f6;padding:0.5em}</style>\n";
  h += "</head>\n<body>\n";
  h += "<h1>" + escape_xml("poolsim sweep: " + r.scenario) + "</h1>\n";
  std::string varied;
  for (const auto& a : r.axes) {
    std::string vals;
    for (std::size_t i = 0; i < a.values.size(); ++i) vals += (i ? "," : "") + a.values[i];
    varied += (varied.empty() ? "" : "; ") + a.key + " = " + vals;
  }
  h += "<p>" +
       escape_xml(fmt::format(
           "{} points, {}; varied: {}", r.points.size(),
           r.measured           ? "measured on this machine (predictions alongside)"
           : r.replications > 1 ? fmt::format("simulated, each the mean of {} replications (seed, "
                                              "seed+1, ...) with its 95% confidence interval",
                                              r.replications)
                                : "simulated",
           varied)) +
       "</p>\n";
  const auto overloaded = std::count_if(r.points.begin(), r.points.end(),
                                        [](const SweepPoint& p) { return p.overloaded(); });
  if (overloaded > 0)
    h += "<p>" +
         escape_xml(fmt::format("{} of {} points are overloaded (arrivals outpace completions): "
                                "marked 'overload' in the table and with triangles in the charts",
                                overloaded, r.points.size())) +
         "</p>\n";
  for (auto m : metrics) {
    h += "<figure>\n" + svg::render_line_chart(sweep_chart(r, m)).svg + "\n</figure>\n";
  }
  if (!usl.is_null() && !usl.empty()) {
    h += "<h2>Universal Scalability Law</h2>\n<pre>" + escape_xml(usl.dump(2)) + "</pre>\n";
  }
  h += "<h2>Points</h2>\n<table>\n<tr>";
  for (const auto& a : r.axes) h += "<th>" + escape_xml(a.key) + "</th>";
  for (auto name : kMetricNames) h += "<th>" + escape_xml(std::string(name)) + "</th>";
  h += "<th>warning</th></tr>\n";
  for (const auto& p : r.points) {
    h += "<tr>";
    for (const auto& v : p.values) h += "<td>" + escape_xml(v) + "</td>";
    for (std::size_t m = 0; m < kMetricCount; ++m) {
      const auto metric = static_cast<Metric>(m);
      h += "<td class=\"n\">" +
           escape_xml(p.spread ? format_with_ci(metric, p.value(metric), ci95((*p.spread)[m]))
                               : format_metric(metric, p.value(metric))) +
           "</td>";
    }
    std::string warn;
    for (const auto& w : p.warnings) warn += (warn.empty() ? "" : "; ") + w.kind + ": " + w.message;
    h += "<td>" + escape_xml(warn) + "</td></tr>\n";
  }
  h += "</table>\n</body>\n</html>\n";
  return h;
}

std::vector<UslSeriesFit> sweep_usl(const SweepResult& r, const std::string& key) {
  std::size_t axis = r.axes.size();
  for (std::size_t i = 0; i < r.axes.size(); ++i)
    if (r.axes[i].key == key) axis = i;
  if (axis == r.axes.size())
    throw std::invalid_argument("--usl " + key + ": not a varied key (vary it with --vary " + key +
                                "=...)");
  std::vector<std::string> order;
  std::map<std::string, UslSeriesFit> fits;
  for (const auto& p : r.points) {
    const auto n = numeric_value(p.values[axis]);
    if (!n || *n < 1)
      throw std::invalid_argument(
          "--usl " + key + ": the concurrency must be a number >= 1, got '" + p.values[axis] + "'");
    const std::string series = join_sets_label(r.axes, p.values, axis);
    auto [it, inserted] = fits.try_emplace(series);
    if (inserted) {
      order.push_back(series);
      it->second.series = series;
    }
    it->second.points.push_back({*n, p.value(Metric::throughput)});
  }
  std::vector<UslSeriesFit> out;
  for (const auto& name : order) {
    UslSeriesFit f = fits.at(name);
    try {
      f.fit = queueing::fit_usl(f.points);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--usl " + key + (name.empty() ? "" : " (" + name + ")") + ": " +
                                  e.what());
    }
    out.push_back(std::move(f));
  }
  return out;
}

nlohmann::ordered_json usl_json(const std::vector<UslSeriesFit>& fits) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& f : fits) {
    nlohmann::ordered_json e;
    if (!f.series.empty()) e["series"] = f.series;
    e["lambda"] = f.fit.params.lambda;
    e["sigma"] = f.fit.params.sigma;
    e["kappa"] = f.fit.params.kappa;
    e["r_squared"] = f.fit.r_squared;
    e["peak_concurrency"] =
        f.fit.peak_concurrency ? nlohmann::ordered_json(*f.fit.peak_concurrency) : nullptr;
    e["peak_throughput"] =
        f.fit.peak_throughput ? nlohmann::ordered_json(*f.fit.peak_throughput) : nullptr;
    e["points"] = f.points.size();
    j.push_back(e);
  }
  return j;
}

std::string usl_caveat(const SweepResult& r) {
  if (r.graph) return {};
  if (r.arrival == ArrivalKind::poisson || r.arrival == ArrivalKind::periodic)
    return fmt::format(
        "the scenario's arrivals are open ({}): its throughput is the arrival rate whenever the "
        "pool keeps up, "
        "so the fit says little about scalability; a batch or closed workload measures capacity",
        to_string(r.arrival));
  return {};
}

}  // namespace poolsim::validate
