// poolsim sweep FILE --vary key=values [--vary ...]: run a scenario over a
// grid (simulated in parallel; --measure adds real runs one at a time),
// print a table, write CSV / JSON / a chart, and optionally fit the
// Universal Scalability Law to throughput against a varied key. The grid,
// the runs and the outputs live in validate/sweep.hpp; this file parses
// flags, checks the outputs' paths before anything runs, and reports.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/common.hpp"
#include "models/units.hpp"
#include "validate/output.hpp"
#include "validate/progress.hpp"
#include "validate/sweep.hpp"
#include "validate/table.hpp"

namespace poolsim::app {
namespace {
struct SweepFlags {
  CommonFlags common;
  std::string file;
  std::vector<std::string> vary;
  bool measure = false;
  std::string csv, plot;
  std::vector<std::string> plot_metrics{"latency_p99", "throughput"};
  bool usl = false;
  std::string usl_key;
  int jobs = 0;
};

// The table's metric columns: the ones people sweep for.
const Metric kColumns[] = {Metric::throughput,     Metric::makespan,        Metric::latency_mean,
                           Metric::latency_p99,    Metric::cpu_utilization, Metric::threads_peak,
                           Metric::throttled_time, Metric::rejected};

void write_file(const std::string& path, const std::string& text, const char* what) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Usage(fmt::format("cannot write the {} '{}'", what, path));
  out << text;
  if (!out) throw Usage(fmt::format("cannot write the {} '{}'", what, path));
}

int run_sweep_cmd(const SweepFlags& f) {
  // Everything that can be wrong with the command line fails before any run.
  std::vector<validate::VaryAxis> axes;
  for (const auto& v : f.vary) axes.push_back(validate::parse_vary(v));
  (void)validate::expand_grid(axes);
  std::vector<Metric> plot_metrics;
  for (const auto& name : f.plot_metrics) {
    const auto m = metric_from(name);
    if (!m)
      throw Usage("--plot-metric: unknown metric '" + name +
                  "' (see the metric names in poolsim --help)");
    plot_metrics.push_back(*m);
  }
  const std::string ext = std::filesystem::path(f.plot).extension().string();
  if (!f.plot.empty() && ext != ".svg" && ext != ".html")
    throw Usage("--plot: the file must end in .svg or .html, got '" + f.plot + "'");
  std::string usl_key = f.usl_key;
  if (f.usl && usl_key.empty()) usl_key = axes.front().key;
  if (!usl_key.empty() && std::none_of(axes.begin(), axes.end(), [&](const validate::VaryAxis& a) {
        return a.key == usl_key;
      }))
    throw Usage("--usl-key " + usl_key + ": not a varied key");
  if (!usl_key.empty())
    for (const auto& a : axes)
      if (a.key == usl_key)
        for (const auto& v : a.values)
          if (const auto n = validate::numeric_value(v); !n || *n < 1)
            throw Usage("--usl: the values of " + usl_key +
                        " are the concurrency, numbers >= 1; got '" + v + "'");

  validate::PhasedProgress progress("sweep", std::cerr,
                                    validate::Progress::style_for_stderr(f.common.quiet));
  validate::SweepOptions so;
  so.file = f.file;
  so.load = load_options(f.common);
  so.axes = axes;
  so.measure = f.measure;
  so.jobs = f.jobs;
  so.real = real_options(f.common, false);
  // The per-point bar replaces the runner's per-repetition lines.
  so.real.progress = nullptr;
  so.on_phase = [&](const std::string& phase, std::size_t n) { progress.phase(phase, n); };
  so.on_point = [&](const std::string& label) { progress.step(label); };
  const validate::SweepResult r = validate::run_sweep(so);
  progress.finish();

  nlohmann::ordered_json usl;
  std::vector<validate::UslSeriesFit> fits;
  if (!usl_key.empty()) {
    fits = validate::sweep_usl(r, usl_key);
    usl = validate::usl_json(fits);
    if (const auto caveat = validate::usl_caveat(r); !caveat.empty())
      log_line(f.common, "poolsim: note: " + caveat);
  }

  const bool json_stdout = f.common.json == "-" || f.csv == "-";
  if (!json_stdout) {
    std::vector<std::string> header;
    std::vector<bool> right;
    for (const auto& a : r.axes) {
      header.push_back(a.key);
      right.push_back(true);
    }
    for (auto m : kColumns) {
      header.emplace_back(to_string(m));
      right.push_back(true);
    }
    if (r.measured) {
      header.emplace_back("latency_p99 predicted");
      right.push_back(true);
    }
    validate::Table table(header, right);
    for (const auto& p : r.points) {
      std::vector<std::string> row = p.values;
      for (auto m : kColumns) row.push_back(validate::format_metric(m, p.value(m)));
      if (r.measured)
        row.push_back(
            validate::format_metric(Metric::latency_p99, p.predicted[Metric::latency_p99]));
      table.add_row(row);
    }
    std::cout << fmt::format("sweep {}: {} points, {} in {:.1f} s\n\n", r.scenario, r.points.size(),
                             r.measured ? "simulated and measured" : "simulated", r.seconds)
              << table.str();
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
  if (!f.csv.empty()) write_file(f.csv, validate::sweep_csv(r), "CSV");
  if (!f.plot.empty()) {
    write_file(f.plot,
               ext == ".svg" ? validate::sweep_svg(r, plot_metrics)
                             : validate::sweep_html(r, plot_metrics, usl),
               "plot");
    log_line(f.common, "poolsim: wrote " + f.plot);
  }
  if (!f.common.json.empty()) {
    auto j = validate::sweep_json(r);
    if (!usl.is_null()) {
      j["usl"]["key"] = usl_key;
      j["usl"]["fits"] = usl;
    }
    validate::write_json(f.common.json, j);
  }
  return kExitOk;
}
}  // namespace

void register_sweep(CLI::App& app, std::function<int()>& action) {
  auto f = std::make_shared<SweepFlags>();
  auto* cmd =
      app.add_subcommand("sweep", "Run a scenario over a grid of values; CSV, JSON and a chart");
  cmd->add_option("FILE", f->file, "Scenario YAML file")->required();
  cmd->add_option("--vary", f->vary,
                  "KEY=VALUES, repeatable (grid = cartesian product): a list 1,2,4,8 or 1ms,2ms; a "
                  "range 1..64 or "
                  "1..64+8; a geometric range 1..64*2 or 1ms..16ms*2")
      ->type_name("KEY=VALUES")
      ->required();
  cmd->add_flag("--measure", f->measure,
                "Also run every point on this machine (one at a time, run.reps each)");
  cmd->add_option("--csv", f->csv,
                  "Write one CSV row per point: the varied keys, then every metric ('-': stdout)")
      ->type_name("PATH");
  cmd->add_option("--plot", f->plot,
                  "Write charts of the metrics against the first varied key: PATH.svg or PATH.html")
      ->type_name("PATH");
  cmd->add_option("--plot-metric", f->plot_metrics,
                  "Metric to chart (repeatable; default latency_p99 and throughput)")
      ->type_name("METRIC");
  cmd->add_flag("--usl", f->usl,
                "Fit the Universal Scalability Law to throughput against the first varied key (the "
                "concurrency)");
  cmd->add_option("--usl-key", f->usl_key,
                  "Fit the USL against this varied key instead (implies --usl)")
      ->type_name("KEY");
  cmd->add_option("--jobs,-j", f->jobs, "Simulations in parallel (default: this machine's CPUs)")
      ->check(CLI::NonNegativeNumber);
  add_common_flags(cmd, f->common);
  cmd->callback([f, &action] { action = [f] { return run_sweep_cmd(*f); }; });
}

}  // namespace poolsim::app
