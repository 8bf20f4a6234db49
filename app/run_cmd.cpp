// poolsim run FILE: execute the scenario on this machine, run.reps times.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "app/common.hpp"
#include "models/metrics.hpp"
#include "models/warnings.hpp"
#include "models/workload.hpp"
#include "real/runner.hpp"
#include "validate/output.hpp"
#include "validate/speed_report.hpp"

namespace poolsim::app {
namespace {
struct RunFlags {
  CommonFlags common;
  std::string file;
  std::string trace;
  std::string records;
};
}  // namespace

real::RealOptions real_options(const CommonFlags& f, bool trace) {
  real::RealOptions o;
  o.trace = trace;
  o.progress = [&f](int rep, int total, bool warmup) {
    log_line(f, fmt::format("  {} {}/{}", warmup ? "warmup" : "repetition", rep, total));
  };
  o.note = [&f](const std::string& line) { log_line(f, "  " + line); };
  return o;
}

void register_run(CLI::App& app, std::function<int()>& action) {
  auto flags = std::make_shared<RunFlags>();
  auto* cmd = app.add_subcommand(
      "run", "Execute the scenario on the real backend on this machine, run.reps times");
  cmd->add_option("FILE", flags->file, "Scenario YAML file (format: docs/scenarios.md)")
      ->required();
  cmd->add_option("--trace", flags->trace,
                  "Write the first measured repetition's schedule as Chrome trace-event JSON")
      ->type_name("PATH");
  cmd->add_option("--records", flags->records,
                  "Write every measured repetition's tasks as CSV: intended arrival, hand-over, "
                  "start, end, CPU time, thread (docs/cli.md)")
      ->type_name("PATH");
  add_common_flags(cmd, flags->common);
  cmd->callback([flags, &action] {
    action = [flags] {
      const Scenario s = load_checked(flags->file, flags->common);
      const Workload w = generate_workload(s);
      log_line(flags->common, fmt::format("run {}: {} warmup + {} measured repetitions", s.name,
                                          s.run.warmup, s.run.reps));
      const auto reps =
          real::run_scenario(s, w, real_options(flags->common, !flags->trace.empty()));
      std::vector<Metrics> ms;
      for (const auto& r : reps) ms.push_back(compute_metrics(r));
      const auto stats = summarize(ms);
      const auto warnings =
          reps.empty() ? std::vector<Warning>{} : overload_warnings(s, w, reps.front(), ms.front());
      if (!flags->common.quiet)
        std::cout << "scenario " << s.name << ": " << validate::describe_workload(s, w) << "\n"
                  << "backend " << validate::backend_json(s.backend).dump()
                  << ", measured on this machine\n\n";
      if (flags->common.json != "-")
        std::cout << validate::measured_table(stats) << validate::warnings_text(warnings)
                  << validate::speed_lines(reps);
      if (!flags->common.json.empty()) {
        auto j = validate::measured_json(s, stats, reps, warnings);
        j["machine_speed"] = validate::speed_json(reps);
        validate::write_json(flags->common.json, j);
      }
      if (!flags->trace.empty() && !reps.empty())
        write_trace(flags->trace, reps.front().trace, s.name + " (measured)");
      if (!flags->records.empty()) write_records(flags->records, w, reps);
      return kExitOk;
    };
  });
}

}  // namespace poolsim::app
