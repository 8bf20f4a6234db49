// poolsim simulate FILE: predict the scenario with the discrete-event simulator.
#include <fstream>
#include <iostream>

#include "app/common.hpp"
#include "models/metrics.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"
#include "validate/output.hpp"
#include "validate/replications.hpp"

namespace poolsim::app {
namespace {
struct SimulateFlags {
  CommonFlags common;
  std::string file;
  std::string trace;
  int replications = 1;
};
}  // namespace

void register_simulate(CLI::App& app, std::function<int()>& action) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = app.add_subcommand("simulate", "Predict the scenario with the simulator; prints the metrics table");
  cmd->add_option("FILE", flags->file, "Scenario YAML file")->required();
  cmd->add_option("--trace", flags->trace, "Write the simulated schedule as Chrome trace-event JSON (opens in Perfetto)")
      ->type_name("PATH");
  cmd->add_option("--replications", flags->replications,
                  "Run N seeds (seed, seed+1, ...): each metric's mean, 95% CI, min and max")
      ->check(CLI::PositiveNumber);
  add_common_flags(cmd, flags->common);
  cmd->callback([flags, &action] {
    action = [flags] {
      const Scenario s = load_checked(flags->file, flags->common);
      sim::SimOptions opt;
      opt.trace = !flags->trace.empty();
      // Replication 0 is the plain run (seed rule in validate/replications.hpp).
      const validate::Replicated rep = validate::replicate(s, flags->replications, 0, opt);
      const Workload& w = rep.workload;
      const RunResult& r = rep.first;
      if (!flags->common.quiet) {
        std::cout << "scenario " << s.name << ": " << validate::describe_workload(s, w) << "\n"
                  << "backend " << validate::backend_json(s.backend).dump() << " on machine '" << s.machine.name
                  << "' (" << s.machine.cores << " cores, capacity " << s.capacity() << " CPUs)\n\n";
      }
      if (flags->common.json != "-")
        std::cout << (rep.n > 1 ? validate::replicated_table(rep) : validate::simulated_table(rep.runs[0], r))
                  << validate::warnings_text(rep.warnings);
      if (!flags->common.json.empty()) validate::write_json(flags->common.json, validate::replicated_json(s, rep));
      if (opt.trace) write_trace(flags->trace, r.trace, s.name + " (simulated)");
      return kExitOk;
    };
  });
}

}  // namespace poolsim::app
