// poolsim simulate FILE: predict the scenario with the discrete-event simulator.
//
// Two paths. A run of kStreamFrom tasks or more (open arrivals on a
// backend that can stream, sim::can_stream) is streamed: tasks are drawn as
// the simulation reaches them and records folded into a summary, so memory
// stays flat in the task count, with a progress bar on stderr; its overload
// warning comes from the bottleneck's bound alone (models/warnings.hpp), the
// bound computed on the first kBoundSample tasks of the same workload. Every
// other run keeps its records, so the warning can also read the backlog,
// and `--replications N` runs N seeds (validate/replications.hpp).
#include <fstream>
#include <iostream>
#include <optional>
#include <span>

#include "app/common.hpp"
#include "app/progress.hpp"
#include "models/metrics.hpp"
#include "models/warnings.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"
#include "validate/output.hpp"
#include "validate/replications.hpp"

namespace poolsim::app {
namespace {

// From 100,000 tasks on a run streams: the records would cost ~120 bytes
// each (12 MB here, 120 MB at a million) and the task list as much again,
// while the summary keeps quantiles exact up to a million completions
// anyway. Below, a run keeps its records (the backlog trend of the overload
// warning reads them).
constexpr double kStreamFrom = 1e5;
constexpr std::int64_t kBoundSample = 100000;

struct SimulateFlags {
  CommonFlags common;
  std::string file;
  std::string trace;
  std::string records;
  int replications = 1;
  std::uint64_t draw = 0;  // SimOptions::draw
  std::string quantiles = "auto";
};

// Tasks an open arrival process will issue (batch: its count).
double expected_tasks(const Scenario& s) {
  if (!s.workload.arrival) return 0;
  const Arrival& a = *s.workload.arrival;
  if (a.count) return static_cast<double>(*a.count);
  if (!a.duration) return 0;
  if (a.kind == ArrivalKind::poisson) return a.rate * to_seconds(*a.duration);
  if (a.kind == ArrivalKind::periodic && a.interval.count() > 0)
    return to_seconds(*a.duration) / to_seconds(a.interval);
  return 0;
}

void print_header(const CommonFlags& f, const Scenario& s, const Workload& w) {
  if (f.quiet) return;
  std::cout << "scenario " << s.name << ": " << validate::describe_workload(s, w) << "\n"
            << "backend " << validate::backend_json(s.backend).dump() << " on machine '"
            << printable(s.machine.name) << "' (" << s.machine.cores << " cores, capacity "
            << s.capacity() << " CPUs)\n\n";
}

// The bottleneck of the first kBoundSample tasks of the workload, drawn
// without a duration (the bound of a short run's tasks and more). A run
// that drew that many had them added to `drawn` as it went; else they are
// drawn again, from a stream of their own. Either way their list is never
// built: the same bound and the same horizon check as the list's.
std::optional<Capacity> head_bottleneck(const Scenario& s, const StreamBound& drawn) {
  if (drawn.tasks() == static_cast<std::size_t>(kBoundSample)) return drawn.bottleneck();
  Scenario head = s;
  head.workload.arrival->count = kBoundSample;
  head.workload.arrival->duration.reset();
  const Workload hw = generate_workload(head, head.seed, GenerateOptions{true});
  return bottleneck(s, *hw.stream, hw.lock_names);
}

int simulate_streamed(const SimulateFlags& f, const Scenario& s) {
  Workload w = generate_workload(s, s.seed, GenerateOptions{true});
  sim::SimOptions opt;
  opt.trace = !f.trace.empty();
  opt.records = false;
  opt.draw = f.draw;
  if (f.quantiles == "exact") opt.quantiles.choice = QuantilePolicy::Choice::exact;
  if (f.quantiles == "histogram") opt.quantiles.choice = QuantilePolicy::Choice::histogram;
  // The overload bound reads the first kBoundSample tasks as the run draws
  // them (the same tasks a head of that many would draw, below).
  StreamBound head_bound(s, w.lock_names);
  w.stream->tap(static_cast<std::uint64_t>(kBoundSample),
                [&head_bound](const Task& t, std::span<const Phase> p) { head_bound.add(t, p); });
  std::optional<ProgressBar> bar;
  if (!f.common.quiet) {
    bar.emplace(stderr);
    opt.progress = [&bar](const sim::SimProgress& p) { bar->update(p); };
  }
  const RunResult r = sim::simulate(s, w, opt);
  if (bar) bar->finish();
  w.sync_stream();
  const Metrics m = compute_metrics(r);
  const auto warnings = overload_warnings(s, head_bottleneck(s, head_bound), r, m);
  print_header(f.common, s, w);
  if (f.common.json != "-")
    std::cout << validate::simulated_table(m, r) << validate::warnings_text(warnings);
  if (!f.common.json.empty()) {
    auto j = validate::simulated_json(s, w, m, r);
    j["warnings"] = validate::warnings_json(warnings);
    validate::write_json(f.common.json, j);
  }
  if (opt.trace) write_trace(f.trace, r.trace, s.name + " (simulated)");
  return kExitOk;
}

int simulate_kept(const SimulateFlags& f, const Scenario& s) {
  sim::SimOptions opt;
  opt.trace = !f.trace.empty();
  opt.draw = f.draw;
  // Replication 0 is the plain run (seed rule in validate/replications.hpp).
  const validate::Replicated rep = validate::replicate(s, f.replications, 0, opt);
  const Workload& w = rep.workload;
  const RunResult& r = rep.first;
  print_header(f.common, s, w);
  if (f.common.json != "-")
    std::cout << (rep.n > 1 ? validate::replicated_table(rep)
                            : validate::simulated_table(rep.runs[0], r))
              << validate::warnings_text(rep.warnings);
  if (!f.common.json.empty())
    validate::write_json(f.common.json, validate::replicated_json(s, rep));
  if (opt.trace) write_trace(f.trace, r.trace, s.name + " (simulated)");
  if (!f.records.empty()) write_records(f.records, w, std::span(&r, 1));
  return kExitOk;
}

}  // namespace

void register_simulate(CLI::App& app, std::function<int()>& action) {
  auto flags = std::make_shared<SimulateFlags>();
  auto* cmd = app.add_subcommand(
      "simulate", "Predict the scenario with the simulator; prints the metrics table");
  cmd->add_option("FILE", flags->file, "Scenario YAML file (format: docs/scenarios.md)")
      ->required();
  cmd->add_option("--trace", flags->trace,
                  "Write the simulated schedule as Chrome trace-event JSON (opens in Perfetto)")
      ->type_name("PATH");
  cmd->add_option("--records", flags->records,
                  "Write the simulated tasks as CSV: intended arrival, hand-over, start, end, CPU "
                  "time, thread (docs/cli.md); the run keeps its records, it does not stream")
      ->type_name("PATH");
  cmd->add_option("--replications", flags->replications,
                  "Run N seeds (seed, seed+1, ...): each metric's mean, 95% CI, min and max")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--draw", flags->draw,
                  "Take draw K of the machine's arbitrary state: OS noise from stream K, a "
                  "quota's period phase frac(K*0.618) (0: the seed's own); the workload stays")
      ->type_name("K");
  cmd->add_option("--quantiles", flags->quantiles,
                  "Latency quantiles: exact, histogram (0.5% relative error, constant memory), or "
                  "auto (exact up to 1,000,000 completed tasks); runs of fewer than 100,000 "
                  "tasks keep every record")
      ->check(CLI::IsMember({"auto", "exact", "histogram"}));
  add_common_flags(cmd, flags->common);
  cmd->callback([flags, &action] {
    action = [flags] {
      // Loaded with the streamed cap on open arrivals; a run that will not
      // stream is loaded again with the list cap, which refuses it located.
      LoadOptions lo = load_options(flags->common);
      lo.open_task_cap = kMaxStreamedTasks;
      const Scenario s = load_scenario(flags->file, lo);
      const bool stream = flags->replications == 1 && flags->records.empty() &&
                          sim::can_stream(s) && expected_tasks(s) >= kStreamFrom;
      if (!stream && expected_tasks(s) > static_cast<double>(kMaxTasks))
        load_checked(flags->file, flags->common);
      return stream ? simulate_streamed(*flags, s) : simulate_kept(*flags, s);
    };
  });
}

}  // namespace poolsim::app
