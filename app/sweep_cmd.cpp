// poolsim sweep FILE --vary key=values [--vary ...]: run a scenario over a
// grid (simulated in parallel; --measure adds real runs one at a time),
// print a table, write CSV / JSON / a chart, and optionally fit the
// Universal Scalability Law to throughput against a varied key. The grid,
// the runs and the outputs live in validate/sweep*.hpp; this file parses
// flags, picks the way the grid is run (one process, one shard of N with
// --shard K/N, or the ranks of an MPI job: app/mpi_sweep.hpp), checks the
// flags before anything runs, and reports (app/sweep_report.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <streambuf>

#include "app/common.hpp"
#include "app/mpi_sweep.hpp"
#include "app/sweep_report.hpp"
#include "validate/output.hpp"
#include "validate/prediction.hpp"
#include "validate/progress.hpp"
#include "validate/sweep.hpp"
#include "validate/sweep_part.hpp"

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
  int replications = 1;
  int draws = 0;  // 0: kDefaultDraws with --measure, else 1
  std::string shard;
};

// --draws, or its default: 8 with --measure, else 1.
int effective_draws(const SweepFlags& f) {
  return f.draws > 0 ? f.draws : f.measure ? validate::kDefaultDraws : 1;
}

// What identifies a sweep across its shards: merge refuses parts whose
// identity differs (sweep_part.hpp).
nlohmann::ordered_json sweep_identity(const SweepFlags& f, const SweepOutputs& out) {
  nlohmann::ordered_json id;
  id["file"] = f.file;
  id["scenario_fnv1a"] = validate::fnv1a_hex(read_text(f.file));
  id["set"] = f.common.sets;
  id["seed"] = f.common.seed ? nlohmann::ordered_json(*f.common.seed) : nullptr;
  id["machine"] = f.common.machine;
  id["vary"] = f.vary;
  id["measure"] = f.measure;
  id["replications"] = f.replications;
  id["draws"] = effective_draws(f);
  id["plot_metrics"] = out.plot_metrics;
  id["usl_key"] = out.usl_key;
  return id;
}

// A stream buffer that drops everything: ranks other than 0 of an MPI job
// stay silent (rank 0 reports for all of them).
struct NullBuffer : std::streambuf {
  int overflow(int c) override { return c; }
};

int run_sweep_cmd(const SweepFlags& f) {
  std::unique_ptr<mpi::Session> session;
  if (mpi::launched()) session = std::make_unique<mpi::Session>();
  const bool distributed = session && session->size() > 1;
  if (distributed && session->rank() != 0) {
    // Never destroyed: std::cout and std::cerr are flushed after static
    // destructors run, so their buffer must outlive them.
    static auto* const null = new NullBuffer;
    std::cout.rdbuf(null);
    std::cerr.rdbuf(null);
  }
  std::optional<validate::Shard> shard;
  if (!f.shard.empty()) shard = validate::parse_shard(f.shard);
  // The cap is per process: the shards, and the MPI ranks that run points.
  // (N is clamped: beyond kMaxDistributedPoints it cannot raise the cap further.)
  const std::size_t processes = std::min(shard ? shard->n : 1, validate::kMaxDistributedPoints) *
                                (distributed ? static_cast<std::size_t>(session->size() - 1) : 1);
  const std::size_t cap = validate::grid_cap(processes);

  // Everything that can be wrong with the command line fails before any run.
  std::vector<validate::VaryAxis> axes;
  for (const auto& v : f.vary) axes.push_back(validate::parse_vary(v, cap));
  (void)validate::grid_size(axes, cap);
  SweepOutputs out{f.csv, f.plot, f.common.json, f.plot_metrics, f.usl_key, f.common.quiet};
  if (f.usl && out.usl_key.empty()) out.usl_key = axes.front().key;
  (void)check_sweep_outputs(out, axes);
  if (f.replications > 1 && f.measure)
    throw Usage(fmt::format(
        "--replications {} with --measure: replications repeat simulations with other seeds; a "
        "measured point repeats run.reps times (set it with --set run.reps=N)",
        f.replications));
  if (f.replications > 1 && f.draws > 1)
    throw Usage(fmt::format(
        "--draws {} with --replications {}: replications already average other seeds (other "
        "workloads and other noise); use one or the other",
        f.draws, f.replications));
  if (shard && (f.common.json.empty() || f.common.json == "-"))
    throw Usage("--shard " + f.shard +
                ": write the part to a file with --json PATH (poolsim merge PATH... joins them)");
  if (shard && (!f.csv.empty() || !f.plot.empty()))
    throw Usage("--shard " + f.shard +
                ": --csv and --plot belong to poolsim merge, which writes them for the whole grid");

  validate::PhasedProgress progress("sweep", std::cerr,
                                    validate::Progress::style_for_stderr(f.common.quiet));
  validate::SweepOptions so;
  so.file = f.file;
  so.load = load_options(f.common);
  so.axes = axes;
  so.measure = f.measure;
  so.replications = f.replications;
  so.draws = effective_draws(f);
  so.jobs = f.jobs;
  so.shard = shard;
  so.max_points = cap;
  so.real = real_options(f.common, false);
  // The per-point bar replaces the runner's per-repetition lines.
  so.real.progress = nullptr;
  so.on_phase = [&](const std::string& phase, std::size_t n) { progress.phase(phase, n); };
  so.on_point = [&](const std::string& label) { progress.step(label); };
  so.on_note = [&](const std::string& note) { log_line(f.common, "poolsim: note: " + note); };
  const validate::SweepResult r =
      distributed ? mpi::run_distributed(so, *session) : validate::run_sweep(so);
  progress.finish();
  if (distributed && session->rank() != 0) return kExitOk;

  if (!shard) {
    report_sweep(r, out);
    return kExitOk;
  }
  SweepOutputs table_only = out;
  table_only.json.clear();
  table_only.usl_key.clear();
  report_sweep(r, table_only);
  validate::write_json(f.common.json, validate::part_json(r, *shard, sweep_identity(f, out)));
  log_line(f.common, fmt::format("poolsim: wrote shard {}/{} ({} of {} points) to {}", shard->k,
                                 shard->n, r.points.size(), r.grid_points, f.common.json));
  return kExitOk;
}
}  // namespace

void register_sweep(CLI::App& app, std::function<int()>& action) {
  auto f = std::make_shared<SweepFlags>();
  auto* cmd =
      app.add_subcommand("sweep", "Run a scenario over a grid of values; CSV, JSON and a chart");
  cmd->add_option("FILE", f->file, "Scenario YAML file (format: docs/scenarios.md)")->required();
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
  cmd->add_option("--jobs,-j", f->jobs,
                  "Simulations in parallel (default: the CPUs this process may use: its affinity "
                  "mask and cgroup CPU quota)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--replications", f->replications,
                  "Simulate every point with N seeds (seed, seed+1, ...): each metric is the "
                  "mean, with its 95% CI in the table, CSV, JSON and HTML")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--draws", f->draws,
         "Predict each point as the mean of N simulations that differ only in the "
         "machine's draw (OS noise, a quota's period phase, the newidle balance's dice), as "
         "validate does (default: 8 with --measure, else 1)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  cmd->add_option(
         "--shard", f->shard,
         "Run only part K of N of the grid (points i with i mod N = K-1) and write it with "
         "--json PATH; join the parts with poolsim merge")
      ->type_name("K/N");
  add_common_flags(cmd, f->common);
  cmd->callback([f, &action] { action = [f] { return run_sweep_cmd(*f); }; });
}

}  // namespace poolsim::app
