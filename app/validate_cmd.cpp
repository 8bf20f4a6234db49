// poolsim validate FILE: run.reps measured repetitions, then the simulation,
// then the divergence report per metric (exit 0 match, 1 diverge).
#include <fmt/format.h>
#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "app/common.hpp"
#include "models/metrics.hpp"
#include "models/warnings.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"
#include "validate/compare.hpp"
#include "validate/html_report.hpp"
#include "validate/output.hpp"
#include "validate/prediction.hpp"
#include "validate/speed_report.hpp"

namespace poolsim::app {
namespace {
struct ValidateFlags {
  CommonFlags common;
  std::string file;
  std::string html;
  std::string trace_dir;
  std::string records_dir;
  int draws = validate::kDefaultDraws;
};

std::string host_line() {
  struct utsname u {};
  uname(&u);
  std::string cpu;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return fmt::format("{} {} ({}), {} CPUs", u.sysname, u.release, cpu,
                     std::thread::hardware_concurrency());
}

std::string timestamp() {
  const auto t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}
}  // namespace

// Long because it declares every option of `validate` in one place, each with its help
// text; the action it installs is short.
void register_validate(CLI::App& app, std::function<int()>& action) {
  auto flags = std::make_shared<ValidateFlags>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Simulate, measure, and report the divergence per metric (exit 0 all match, 1 any diverges)");
  cmd->add_option("FILE", flags->file, "Scenario YAML file (format: docs/scenarios.md)")
      ->required();
  cmd->add_option("--html", flags->html, "Write a self-contained HTML report with charts")
      ->type_name("PATH");
  cmd->add_option("--trace-dir", flags->trace_dir,
                  "Write Perfetto-ready traces: DIR/simulated.json and DIR/measured.json")
      ->type_name("DIR");
  cmd->add_option("--records-dir", flags->records_dir,
                  "Write DIR/simulated.csv (draw 0) and DIR/measured.csv (every measured "
                  "repetition): one row per task, as simulate/run --records (docs/cli.md)")
      ->type_name("DIR");
  cmd->add_option("--draws", flags->draws,
                  "Predict the mean of N simulations that differ only in the machine's draw: OS "
                  "noise, a quota's period phase and the newidle balance's dice (1 without any)")
      ->capture_default_str()
      ->type_name("N");
  add_common_flags(cmd, flags->common);
  cmd->callback([flags, &action] {
    action = [flags] {
      const auto& cf = flags->common;
      const Scenario s = load_checked(flags->file, cf);
      const Workload w = generate_workload(s);
      if (!flags->trace_dir.empty()) make_output_dir("--trace-dir", flags->trace_dir);
      if (!flags->records_dir.empty()) make_output_dir("--records-dir", flags->records_dir);
      const bool trace = !flags->html.empty() || !flags->trace_dir.empty();
      // Measured first, from the process `poolsim run` would be: each
      // repetition's child is a fork of this one, and the simulation leaves
      // a heap with free memory and, on worker threads, malloc arenas and
      // cached stacks that a child's threads would reuse (the quickstart's
      // memory_peak read 36.8 KiB after parallel draws, 58-60 after draws on
      // this thread, 60-68 from `run`).
      log_line(cf, fmt::format("validate {}: measuring {} warmup + {} repetitions", s.name,
                               s.run.warmup, s.run.reps));
      const auto measured = real::run_scenario(s, w, real_options(cf, trace));
      log_line(cf, fmt::format("validate {}: simulating {} tasks on '{}'", s.name, w.tasks.size(),
                               to_string(s.backend.kind)));
      sim::SimOptions so;
      so.trace = trace;
      const validate::Prediction prediction = validate::predict(s, w, so, flags->draws);
      const RunResult& predicted = prediction.first;
      const Metrics& pm = prediction.metrics;
      if (prediction.draws > 1)
        log_line(cf, fmt::format("validate {}: predicted the mean of {} draws", s.name,
                                 prediction.draws));
      // Verdicts come from the repetitions run at the calibrated speed only
      // (validate/speed_report.hpp); with too few of those, none is drawn.
      const auto speed = validate::split_by_speed(measured);
      std::vector<Metrics> mm;
      for (const auto& r : speed.verdict_possible ? speed.usable : measured)
        mm.push_back(compute_metrics(r));
      const auto stats = summarize(mm);
      auto cmp = validate::compare(pm, stats, s.tolerance);
      if (!speed.verdict_possible) validate::mark_disturbed(cmp);
      const auto warnings = overload_warnings(s, w, predicted, pm);

      if (cf.json != "-") {
        if (!cf.quiet)
          std::cout << "scenario " << s.name << ": " << validate::describe_workload(s, w) << "\n"
                    << "backend " << validate::backend_json(s.backend).dump() << ", machine '"
                    << printable(s.machine.name) << "' (" << s.machine.cores << " cores)\n";
        if (!cf.quiet && prediction.draws > 1)
          std::cout << "predicted: the mean of " << prediction.draws
                    << " simulations that differ only in the machine's draw (noise, tick and "
                       "period phases, newidle dice)\n";
        if (!cf.quiet) std::cout << "\n";
        std::cout << validate::comparison_table(cmp) << validate::warnings_text(warnings)
                  << validate::speed_lines(measured)
                  << validate::noise_line(validate::noise_report(measured, s.machine));
      }
      if (!cf.json.empty()) {
        auto j = validate::comparison_json(s, cmp);
        j["warnings"] = validate::warnings_json(warnings);
        j["draws"] = prediction.draws;
        j["machine_speed"] = validate::speed_json(measured);
        j["machine_noise"] = validate::noise_json(validate::noise_report(measured, s.machine));
        validate::write_json(cf.json, j);
      }
      if (!flags->trace_dir.empty()) {
        write_trace(std::filesystem::path(flags->trace_dir) / "simulated.json", predicted.trace,
                    s.name + " (simulated)");
        if (!measured.empty())
          write_trace(std::filesystem::path(flags->trace_dir) / "measured.json",
                      measured.front().trace, s.name + " (measured)");
        log_line(cf, "traces written to " + flags->trace_dir + " (open them at ui.perfetto.dev)");
      }
      if (!flags->records_dir.empty()) {
        const std::filesystem::path dir(flags->records_dir);
        write_records((dir / "simulated.csv").string(), w, std::span(&predicted, 1));
        write_records((dir / "measured.csv").string(), w, measured);
        log_line(cf, "records written to " + flags->records_dir);
      }
      if (!flags->html.empty()) {
        validate::ReportInput in;
        in.scenario = &s;
        in.workload = &w;
        in.comparison = &cmp;
        in.predicted = &predicted;
        in.measured = &measured;
        in.scenario_yaml = read_text(flags->file);
        for (const auto& set : cf.sets) in.scenario_yaml += "\n# --set " + set;
        in.generated_at = timestamp();
        in.host = host_line();
        const auto html = validate::render_html_report(in);
        const auto tmp = flags->html + ".tmp";
        {
          std::ofstream f(tmp);
          if (!f) throw Usage("--html " + flags->html + ": cannot open " + tmp + " for writing");
          f << html;
          f.flush();
          if (!f) {
            f.close();
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw Refused("--html " + flags->html + ": writing the report failed");
          }
        }
        std::filesystem::rename(tmp, flags->html);
        log_line(cf, "report written to " + flags->html);
      }
      if (cmp.overall == validate::Verdict::disturbed) {
        std::cerr
            << "poolsim: the machine refused: it did not run at its calibrated speed in enough "
               "repetitions (see 'machine speed' above; docs/validation.md)\n";
        return kExitRefused;
      }
      return cmp.overall == validate::Verdict::diverge ? kExitDiverges : kExitOk;
    };
  });
}

}  // namespace poolsim::app
