// poolsim compare FILE --backends a,b,c: one workload on several runtimes,
// side by side (simulated; --measure adds real runs). Each entry is a backend
// kind with optional parameters: `pool:threads=200:queue=1000`,
// `virtual-threads:carriers=2`; they replace the scenario's backend section.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/common.hpp"
#include "models/backend_registry.hpp"
#include "models/metrics.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"
#include "validate/output.hpp"
#include "validate/replications.hpp"
#include "validate/table.hpp"

namespace poolsim::app {
namespace {
struct CompareFlags {
  CommonFlags common;
  std::string file;
  std::vector<std::string> backends;
  bool measure = false;
  int replications = 1;
};

// "pool:threads=200:queue=1000" -> "backend={kind: pool, threads: 200, queue: 1000}"
std::string backend_override(const std::string& entry) {
  std::istringstream in(entry);
  std::string part, kind;
  std::getline(in, kind, ':');
  if (kind.empty()) throw Usage("--backends: empty backend entry in '" + entry + "'");
  std::string yaml = "{kind: " + kind;
  while (std::getline(in, part, ':')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Usage("--backends: expected KEY=VALUE after the kind in '" + entry + "', got '" + part +
                  "'");
    yaml += ", " + part.substr(0, eq) + ": " + part.substr(eq + 1);
  }
  return "backend=" + yaml + "}";
}

const Metric kCompareColumns[] = {Metric::makespan,           Metric::throughput,
                                  Metric::latency_mean,       Metric::latency_p99,
                                  Metric::cpu_utilization,    Metric::throttled_time,
                                  Metric::threads_peak,       Metric::memory_peak,
                                  Metric::switches_voluntary, Metric::switches_involuntary,
                                  Metric::completed,          Metric::rejected};
}  // namespace

// Long because it declares every option of `compare` in one place, each with its help
// text; the action it installs is short.
void register_compare(CLI::App& app, std::function<int()>& action) {
  auto flags = std::make_shared<CompareFlags>();
  auto* cmd = app.add_subcommand("compare", "The same workload on several backends, side by side");
  cmd->add_option("FILE", flags->file, "Scenario YAML file (format: docs/scenarios.md)")
      ->required();
  cmd->add_option("--backends", flags->backends,
                  "Comma-separated backends, each KIND[:KEY=VALUE...], e.g. "
                  "pool:threads=200,virtual-threads")
      ->delimiter(',')
      ->required();
  cmd->add_flag("--measure", flags->measure,
                "Also run each backend on this machine (run.reps repetitions)");
  cmd->add_option("--replications", flags->replications,
                  "Simulate each backend with N seeds (seed, seed+1, ...): means with 95% CIs")
      ->check(CLI::PositiveNumber);
  cmd->footer("Backend kinds and their parameters (defaults), from the backend registry:\n" +
              backend_kinds_help() +
              "Example: --backends pool:threads=16,virtual-threads:carriers=2,event-loop");
  add_common_flags(cmd, flags->common);
  cmd->callback([flags, &action] {
    action = [flags] {
      std::vector<std::string> header{"backend"};
      std::vector<bool> right{false};
      for (auto m : kCompareColumns) {
        header.emplace_back(std::string(to_string(m)) + (flags->measure ? " sim" : ""));
        right.push_back(true);
        if (flags->measure) {
          header.emplace_back(std::string(to_string(m)) + " real");
          right.push_back(true);
        }
      }
      validate::Table table(header, right);
      nlohmann::ordered_json out;
      std::string scenario_name, footnotes, applied;
      out["warnings"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < flags->backends.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
          if (flags->backends[i] == flags->backends[k])
            throw Usage("--backends lists '" + flags->backends[i] + "' twice (entries " +
                        std::to_string(k + 1) + " and " + std::to_string(i + 1) +
                        "): each backend is compared once");
      for (const auto& entry : flags->backends) {
        CommonFlags cf = flags->common;
        cf.sets.push_back(backend_override(entry));
        const Scenario s = load_checked(flags->file, cf);
        scenario_name = s.name;
        log_line(cf, fmt::format("compare {}: simulating {}", s.name, entry));
        const validate::Replicated rep = validate::replicate(s, flags->replications);
        const Workload& w = rep.workload;
        const Metrics pm = rep.mean();
        std::array<MetricStats, kMetricCount> st{};
        if (flags->measure) {
          log_line(cf, fmt::format("compare {}: measuring {}", s.name, entry));
          const auto reps = real::run_scenario(s, w, real_options(cf, false));
          std::vector<Metrics> ms;
          for (const auto& x : reps) ms.push_back(compute_metrics(x));
          st = summarize(ms);
        }
        // A backend that did not keep up is marked "(!)" and its warnings follow the table.
        std::vector<std::string> row{entry + (rep.warnings.empty() ? "" : " (!)")};
        for (const auto& wn : rep.warnings) {
          footnotes += fmt::format("(!) {}: {}\n", entry, wn.message);
          out["warnings"].push_back(
              {{"kind", wn.kind}, {"backend", entry}, {"message", entry + ": " + wn.message}});
        }
        nlohmann::ordered_json e;
        e["backend"] = validate::backend_json(s.backend);
        // Every parameter as simulated, the defaults the loader applied included.
        applied += fmt::format("  {}: {}\n", entry, e["backend"].dump());
        for (auto m : kCompareColumns) {
          row.push_back(validate::format_with_ci(m, pm[m], rep.ci[static_cast<std::size_t>(m)]));
          e["simulated"][std::string(to_string(m))] = pm[m];
          if (flags->measure) {
            const auto& ms = st[static_cast<std::size_t>(m)];
            row.push_back(validate::format_metric(m, ms.mean));
            e["measured"][std::string(to_string(m))] = validate::stats_json(ms);
          }
        }
        e["warnings"] = validate::warnings_json(rep.warnings);
        if (rep.n > 1) e["replications"] = validate::replications_json(rep);
        table.add_row(row);
        out["backends"].push_back(e);
      }
      out["scenario"] = scenario_name;
      if (flags->common.json != "-")
        std::cout << table.str() << (footnotes.empty() ? "" : "\n" + footnotes)
                  << "\nbackends as simulated (defaults applied):\n"
                  << applied
                  << (flags->replications > 1
                          ? fmt::format("\nmeans over {} replications [95% CI]\n",
                                        flags->replications)
                          : "");
      if (!flags->common.json.empty()) validate::write_json(flags->common.json, out);
      return kExitOk;
    };
  });
}

}  // namespace poolsim::app
