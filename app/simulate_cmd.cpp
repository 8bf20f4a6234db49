// poolsim simulate FILE: predict the scenario with the discrete-event simulator.
#include <fstream>
#include <iostream>

#include "app/common.hpp"
#include "models/metrics.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"
#include "validate/output.hpp"

namespace poolsim::app {
namespace {
struct SimulateFlags {
  CommonFlags common;
  std::string file;
  std::string trace;
};
}  // namespace

void register_simulate(CLI::App& app, std::function<int()>& action) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = app.add_subcommand("simulate", "Predict the scenario with the simulator; prints the metrics table");
  cmd->add_option("FILE", flags->file, "Scenario YAML file")->required();
  cmd->add_option("--trace", flags->trace, "Write the simulated schedule as Chrome trace-event JSON (opens in Perfetto)")
      ->type_name("PATH");
  add_common_flags(cmd, flags->common);
  cmd->callback([flags, &action] {
    action = [flags] {
      const Scenario s = load_checked(flags->file, flags->common);
      const Workload w = generate_workload(s);
      sim::SimOptions opt;
      opt.trace = !flags->trace.empty();
      const RunResult r = sim::simulate(s, w, opt);
      const Metrics m = compute_metrics(r);
      if (!flags->common.quiet) {
        std::cout << "scenario " << s.name << ": " << validate::describe_workload(s, w) << "\n"
                  << "backend " << validate::backend_json(s.backend).dump() << " on machine '"
                  << printable(s.machine.name) << "' (" << s.machine.cores << " cores, capacity "
                  << s.capacity() << " CPUs)\n\n";
      }
      if (flags->common.json != "-") std::cout << validate::simulated_table(m, r);
      if (!flags->common.json.empty()) validate::write_json(flags->common.json, validate::simulated_json(s, w, m, r));
      if (opt.trace) write_trace(flags->trace, r.trace, s.name + " (simulated)");
      return kExitOk;
    };
  });
}

}  // namespace poolsim::app
