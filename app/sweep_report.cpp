// sweep_report.cpp: the table and files of a sweep or merge (see sweep_report.hpp).
#include "app/sweep_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "models/metric_names.hpp"
#include "validate/output.hpp"
#include "validate/replications.hpp"
#include "validate/table.hpp"

namespace poolsim::app {

namespace {

// The table's metric columns: the ones people sweep for.
const Metric kSweepColumns[] = {
    Metric::throughput,      Metric::makespan,     Metric::latency_mean,   Metric::latency_p99,
    Metric::cpu_utilization, Metric::threads_peak, Metric::throttled_time, Metric::rejected};

// With --replications, these columns show the mean and its 95% CI.
bool with_ci(Metric m) {
  return m == Metric::throughput || m == Metric::latency_mean || m == Metric::latency_p99;
}

void print_table(const validate::SweepResult& r) {
  std::vector<std::string> header;
  std::vector<bool> right;
  for (const auto& a : r.axes) {
    header.push_back(a.key);
    right.push_back(true);
  }
  for (auto m : kSweepColumns) {
    header.emplace_back(to_string(m));
    right.push_back(true);
  }
  if (r.measured) {
    header.emplace_back("latency_p99 predicted");
    right.push_back(true);
  }
  header.emplace_back("warning");
  right.push_back(false);
  validate::Table table(header, right);
  std::size_t overloaded = 0;
  for (const auto& p : r.points) {
    std::vector<std::string> row = p.values;
    for (auto m : kSweepColumns)
      row.push_back(
          p.spread && with_ci(m)
              ? validate::format_with_ci(m, p.value(m),
                                         validate::ci95((*p.spread)[static_cast<std::size_t>(m)]))
              : validate::format_metric(m, p.value(m)));
    if (r.measured)
      row.push_back(validate::format_metric(Metric::latency_p99, p.predicted[Metric::latency_p99]));
    row.emplace_back(p.overloaded() ? "OVERLOAD" : "");
    overloaded += p.overloaded() ? 1 : 0;
    table.add_row(row);
  }
  std::cout << fmt::format("sweep {}: {} points, {} in {:.1f} s\n\n", r.scenario, r.points.size(),
                           r.measured ? "simulated and measured"
                           : r.replications > 1
                               ? fmt::format("simulated {} times each (seeds seed.."
                                             "seed+{}; mean [95% CI])",
                                             r.replications, r.replications - 1)
                               : "simulated",
                           r.seconds)
            << table.str();
  if (overloaded > 0) {
    const auto first = std::find_if(r.points.begin(), r.points.end(),
                                    [](const validate::SweepPoint& p) { return p.overloaded(); });
    std::string first_message;
    for (const auto& w : first->warnings)
      if (w.kind == "overload") first_message = w.message;
    std::cout << fmt::format(
        "\nwarning: {} of {} points are overloaded (OVERLOAD: arrivals outpace completions, the "
        "queue grows with the run, their latencies are not steady-state figures); the first, "
        "{}: {}\n",
        overloaded, r.points.size(), validate::point_label(r.axes, first->values), first_message);
  }
}

void print_fits(const std::vector<validate::UslSeriesFit>& fits, const std::string& usl_key) {
  for (const auto& fit : fits) {
    const auto& p = fit.fit.params;
    std::cout << fmt::format(
        "\nUSL fit of throughput vs {}{}: lambda {:.4g}/s per thread, sigma (contention) {:.4g}, "
        "kappa (coherency) "
        "{:.4g}, R^2 {:.4f}",
        usl_key, fit.series.empty() ? "" : " (" + fit.series + ")", p.lambda, p.sigma, p.kappa,
        fit.fit.r_squared);
    if (fit.fit.peak_concurrency)
      std::cout << fmt::format("; peak at N* = sqrt((1 - sigma) / kappa) = {:.1f} ({:.4g}/s)",
                               *fit.fit.peak_concurrency, fit.fit.peak_throughput.value_or(0));
    else
      std::cout << "; no peak (kappa = 0 or sigma >= 1): throughput levels off";
    std::cout << '\n';
  }
}

}  // namespace

void write_text_file(const std::string& flag, const std::string& path, const std::string& text,
                     const std::string& what) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  write_output(flag, path, what, [&](std::ostream& f) { f << text; });
}

std::vector<Metric> check_sweep_outputs(const SweepOutputs& o,
                                        const std::vector<validate::VaryAxis>& axes) {
  std::vector<Metric> plot_metrics;
  // Names or aliases (`p99`), models/metric_names.hpp; an unknown one is
  // exit 2 with a did-you-mean.
  for (const auto& name : o.plot_metrics) {
    try {
      plot_metrics.push_back(parse_metric(name, "--plot-metric"));
    } catch (const std::invalid_argument& e) {
      throw Usage(e.what());
    }
  }
  const std::string ext = std::filesystem::path(o.plot).extension().string();
  if (!o.plot.empty() && ext != ".svg" && ext != ".html")
    throw Usage("--plot: the file must end in .svg or .html, got '" + o.plot + "'");
  const std::string& key = o.usl_key;
  if (key.empty()) return plot_metrics;
  const auto axis = std::find_if(axes.begin(), axes.end(),
                                 [&](const validate::VaryAxis& a) { return a.key == key; });
  if (axis == axes.end()) throw Usage("--usl-key " + key + ": not a varied key");
  for (const auto& v : axis->values)
    if (const auto n = validate::numeric_value(v); !n || *n < 1)
      throw Usage("--usl: the values of " + key + " are the concurrency, numbers >= 1; got '" + v +
                  "'");
  return plot_metrics;
}

void report_sweep(const validate::SweepResult& r, const SweepOutputs& o) {
  const auto plot_metrics = check_sweep_outputs(o, r.axes);
  nlohmann::ordered_json usl;
  std::vector<validate::UslSeriesFit> fits;
  if (!o.usl_key.empty()) {
    fits = validate::sweep_usl(r, o.usl_key);
    usl = validate::usl_json(fits);
    if (const auto caveat = validate::usl_caveat(r); !caveat.empty() && !o.quiet)
      std::cerr << "poolsim: note: " << caveat << '\n';
  }
  if (o.json != "-" && o.csv != "-") {
    print_table(r);
    print_fits(fits, o.usl_key);
  }
  if (!o.csv.empty()) write_text_file("--csv", o.csv, validate::sweep_csv(r), "the CSV");
  if (!o.plot.empty()) {
    const bool svg = std::filesystem::path(o.plot).extension() == ".svg";
    write_text_file(
        "--plot", o.plot,
        svg ? validate::sweep_svg(r, plot_metrics) : validate::sweep_html(r, plot_metrics, usl),
        "the charts");
    if (!o.quiet) std::cerr << "poolsim: wrote " << o.plot << '\n';
  }
  if (!o.json.empty()) {
    auto j = validate::sweep_json(r);
    if (!usl.is_null()) {
      j["usl"]["key"] = o.usl_key;
      j["usl"]["fits"] = usl;
    }
    validate::write_json(o.json, j);
  }
}

}  // namespace poolsim::app
