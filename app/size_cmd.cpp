// poolsim size: recommend a pool size from a request stream (rate, CPU and
// wait per request, cores or quota, a latency target): Little's law, Goetz's
// formula, Erlang C / M/D/c, M/M/c/K for a bounded queue, then a simulated
// sweep that confirms or corrects the number, and container advice with
// --host-cores. With --graph FILE: work/span bounds of a task graph and a
// simulated thread sweep. The arithmetic lives in validate/sizing.hpp; this
// file parses flags, reports progress and writes the outputs.
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "app/common.hpp"
#include "models/backend_registry.hpp"
#include "models/units.hpp"
#include "validate/container_sizing.hpp"
#include "validate/output.hpp"
#include "validate/progress.hpp"
#include "validate/replications.hpp"
#include "validate/sizing.hpp"
#include "validate/sizing_resources.hpp"

namespace poolsim::app {
namespace {
struct SizeFlags {
  CommonFlags common;
  std::string rate, cpu, wait, target_p99, service = "deterministic", graph, backend = "pool";
  std::string resources;  // --resources FILE (validate/sizing_resources.hpp)
  std::optional<int> cores, host_cores;
  std::optional<double> cpus;
  std::optional<std::int64_t> queue;
  std::string target_utilization = "100%";
  std::int64_t requests = 20000;
  bool no_simulate = false;
  int jobs = 0;
  int replications = 1;
  bool container = false;     // --container: the common sizing rules in the container
  std::string burst, cpuset;  // --burst, --cpuset (with --container)
};

// The recommended size's p99 over the replications, against the target.
std::string size_replications_text(const validate::SizingReport& report,
                                   const validate::Replicated& rep) {
  const auto i = static_cast<std::size_t>(Metric::latency_p99);
  const auto& st = rep.stats[i];
  return fmt::format(
             "\nrecommended {} threads over {} replications (seeds {}..{}): latency_p99 {} (95% CI "
             "{} .. {}; "
             "min {}, max {}); {} the target {}\n",
             report.recommended, rep.n, rep.seeds.front(), rep.seeds.back(),
             validate::format_metric(Metric::latency_p99, st.mean),
             validate::format_metric(Metric::latency_p99, rep.ci[i].low),
             validate::format_metric(Metric::latency_p99, rep.ci[i].high),
             validate::format_metric(Metric::latency_p99, st.min),
             validate::format_metric(Metric::latency_p99, st.max),
             rep.ci[i].high <= report.target_p99 ? "within"
             : st.mean <= report.target_p99      ? "on average within, not surely,"
                                                 : "NOT within",
             format_seconds(report.target_p99)) +
         validate::warnings_text(rep.warnings);
}

// Parses a flag's value, naming the flag in the error ("--rate 0/s: ...").
template <class Parse>
auto flag_value(const char* flag, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const UnitError& e) {
    throw Usage(std::string(flag) + " " + text + ": " + e.what());
  }
}

// "thread-per-task, pool, ...": the kinds of backend_registry.hpp.
std::string kind_names() {
  std::string out;
  for (const auto& b : kBackends) out += (out.empty() ? "" : ", ") + std::string(b.name);
  return out;
}

// --wait as a distribution in the scenario syntax ("{dist: lognormal, median:
// 20ms, p99: 200ms}"), read by the scenario loader inside a one-task scenario
// so that its checks and messages are the loader's; sets wait (the mean),
// wait_dist and wait_p99.
void read_wait_distribution(const std::string& text, validate::SizingInputs& in) {
  const std::string prefix = "workload.task[1].wait";
  Scenario s;
  try {
    s = load_scenario_text(
        "name: size-wait\nmachine: {base: default, cores: 1}\nworkload:\n  arrival: {kind: "
        "batch, count: 1}\n  task:\n    - {cpu: 1ms}\n    - wait: " +
            text + "\nbackend: {kind: pool, threads: 1}\n",
        "--wait", in.load);
  } catch (const ScenarioError& e) {
    std::string key = e.key();
    key = key.rfind(prefix, 0) == 0 ? key.substr(prefix.size()) : std::string();
    if (!key.empty() && key.front() == '.') key.erase(0, 1);
    throw Usage("--wait " + text + ": " + (key.empty() ? "" : key + ": ") + e.message());
  }
  const auto& task = s.workload.classes.at(0).task;
  if (task.size() != 2 || !std::holds_alternative<WaitPhase>(task[1]))
    throw Usage("--wait " + text +
                ": expected a duration or one distribution, e.g. '{dist: lognormal, median: "
                "20ms, p99: 200ms}'");
  const Distribution& d = std::get<WaitPhase>(task[1]).time;
  in.wait = d.mean_seconds();
  in.wait_p99 = d.quantile_seconds(0.99);
  in.wait_dist = text;
}

// size builds a scenario of `requests` tasks on a pool of up to this many
// threads with a queue of `queue` slots: both are bounded like a scenario's.
constexpr std::int64_t kMaxQueue = kMaxTasks;

// size --resources FILE: the scenario's bounded resources and its threads.
int run_size_resources(const SizeFlags& f, validate::SizingProgress& sp,
                       validate::PhasedProgress& progress) {
  const bool to_stdout = f.common.json == "-";
  if (!f.rate.empty() || !f.cpu.empty() || !f.wait.empty() || f.cores || f.host_cores || f.queue ||
      !f.graph.empty() || f.container)
    throw Usage(
        "size --resources FILE takes the workload, machine and backend from the scenario: "
        "--rate, --cpu, --wait, --cores, --host-cores, --queue, --graph and --container do not "
        "apply (use --set, --machine)");
  std::optional<double> target;
  if (!f.target_p99.empty())
    target = flag_value("--target-p99", f.target_p99,
                        [](const std::string& t) { return to_seconds(parse_duration(t)); });
  const auto r = validate::size_resources(f.resources, load_options(f.common), target,
                                          !f.no_simulate, f.jobs, sp);
  progress.finish();
  if (!to_stdout) std::cout << validate::resource_sizing_text(r);
  if (!f.common.json.empty())
    validate::write_json(f.common.json, validate::resource_sizing_json(r));
  return kExitOk;
}

// size --graph FILE: a task graph's useful threads.
int run_size_graph(const SizeFlags& f, validate::SizingProgress& sp,
                   validate::PhasedProgress& progress) {
  const bool to_stdout = f.common.json == "-";
  if (!f.rate.empty() || !f.cpu.empty() || !f.wait.empty() || f.cores || f.host_cores || f.queue ||
      !f.target_p99.empty())
    throw Usage(
        "size --graph FILE takes the workload and machine from the scenario: --rate, --cpu, "
        "--wait, "
        "--cores, --host-cores, --queue and --target-p99 do not apply (use --set, --machine)");
  CommonFlags cf = f.common;
  if (f.cpus) cf.sets.push_back(fmt::format("limits.cpus={:.17g}", *f.cpus));
  const auto g = validate::size_graph(f.graph, load_options(cf), !f.no_simulate, f.jobs, sp);
  progress.finish();
  if (!to_stdout) std::cout << validate::graph_sizing_text(g);
  if (!f.common.json.empty()) validate::write_json(f.common.json, validate::graph_sizing_json(g));
  return kExitOk;
}

// The flags of the rate/CPU/wait form as SizingInputs (Usage on a bad flag).
validate::SizingInputs sizing_inputs(const SizeFlags& f) {
  if (f.rate.empty() || f.cpu.empty())
    throw Usage(
        "size needs --rate and --cpu (and usually --wait), e.g. size --rate 1500/s --cpu 2ms "
        "--wait 38ms "
        "--cores 4; or --graph FILE");
  if (!f.cores && !f.host_cores)
    throw Usage("size needs --cores N (or --host-cores N with --cpus Q)");
  if (f.cores && f.host_cores && *f.cores != *f.host_cores)
    throw Usage(fmt::format(
        "--cores {} and --host-cores {} disagree: in a container the pool sees the host's "
        "cores and the quota (--cpus) limits it; give one of them",
        *f.cores, *f.host_cores));
  if (!f.common.sets.empty())
    throw Usage("size builds its scenario from the flags; --set applies only with --graph FILE");
  validate::SizingInputs in;
  in.rate = flag_value("--rate", f.rate, [](const std::string& t) { return parse_rate(t); });
  auto seconds = [](const std::string& t) { return to_seconds(parse_duration(t)); };
  in.cpu = flag_value("--cpu", f.cpu, seconds);
  if (in.cpu <= 0)
    throw Usage("--cpu " + f.cpu + ": the CPU time per request must be greater than 0");
  in.load = load_options(f.common);
  in.load.sets.clear();
  in.load.machine.reset();
  in.load.seed.reset();
  if (const auto kind = backend_kind_from(f.backend))
    in.backend = *kind;
  else
    throw Usage("--backend " + f.backend + ": not a backend kind (" + kind_names() + ")");
  const auto brace = f.wait.find_first_not_of(" \t");
  if (brace != std::string::npos && f.wait[brace] == '{')
    read_wait_distribution(f.wait, in);
  else
    in.wait = f.wait.empty() ? 0.0 : flag_value("--wait", f.wait, seconds);
  in.cores = f.cores ? *f.cores : *f.host_cores;
  in.cpus = f.cpus;
  in.host_cores = f.host_cores;
  if (!f.target_p99.empty()) in.target_p99 = flag_value("--target-p99", f.target_p99, seconds);
  if (f.queue && *f.queue > kMaxQueue)
    throw Usage(fmt::format("--queue {}: must be at most {} (the task cap)", *f.queue, kMaxQueue));
  if (f.requests > kMaxTasks)
    throw Usage(fmt::format("--requests {}: must be at most {} (the task cap of one simulation)",
                            f.requests, kMaxTasks));
  in.queue = f.queue;
  if (f.service == "deterministic")
    in.service = queueing::ServiceShape::deterministic;
  else if (f.service == "exponential")
    in.service = queueing::ServiceShape::exponential;
  else
    throw Usage("--service must be deterministic or exponential, got '" + f.service + "'");
  in.target_utilization = flag_value("--target-utilization", f.target_utilization,
                                     [](const std::string& t) { return parse_fraction(t); });
  in.simulate = !f.no_simulate;
  in.requests = f.requests;
  in.seed = f.common.seed.value_or(1);
  if (!f.common.machine.empty()) in.machine = f.common.machine;
  in.jobs = f.jobs;

  if (!f.container && (!f.burst.empty() || !f.cpuset.empty()))
    throw Usage("--burst and --cpuset describe the container of size --container");
  return in;
}

// size --container: every common sizing rule in the container, side by side.
int run_size_container(const SizeFlags& f, const validate::SizingInputs& in,
                       validate::SizingProgress& sp, validate::PhasedProgress& progress) {
  const bool to_stdout = f.common.json == "-";
  validate::ContainerInputs ci;
  ci.base = in;
  if (!f.burst.empty()) ci.burst = parse_duration(f.burst);
  ci.cpuset = f.cpuset;
  if (!f.cpuset.empty()) {
    const Scenario s = load_scenario_text(
        "name: c\nmachine: {base: default, cores: " + std::to_string(in.cores) +
            "}\nlimits: {cpuset: \"" + f.cpuset +
            "\"}\nworkload: {arrival: {kind: batch, count: 1}, task: [{cpu: 1ms}]}\n"
            "backend: {kind: pool, threads: 1}\n",
        "--cpuset", in.load);
    ci.cpuset_size = static_cast<int>(s.limits.cpuset.size());
  }
  const auto cr = validate::size_container(ci, sp);
  progress.finish();
  if (!to_stdout) std::cout << validate::container_sizing_text(cr);
  if (!f.common.json.empty())
    validate::write_json(f.common.json, validate::container_sizing_json(cr));
  return kExitOk;
}

int run_size(const SizeFlags& f) {
  validate::PhasedProgress progress("size", std::cerr,
                                    validate::Progress::style_for_stderr(f.common.quiet));
  validate::SizingProgress sp;
  sp.on_phase = [&](const std::string& phase, std::size_t n) { progress.phase(phase, n); };
  sp.on_point = [&](const std::string& label) { progress.step(label); };

  if (!f.resources.empty()) return run_size_resources(f, sp, progress);
  if (!f.graph.empty()) return run_size_graph(f, sp, progress);
  const validate::SizingInputs in = sizing_inputs(f);
  if (f.container) return run_size_container(f, in, sp, progress);
  const bool to_stdout = f.common.json == "-";
  const auto report = validate::size_pool(in, sp);
  // --replications N: the recommended pool simulated again with N seeds.
  std::optional<validate::Replicated> rep;
  if (f.replications > 1 && in.simulate && report.recommended > 0)
    rep = validate::replicate(
        load_scenario_text(validate::sizing_scenario_yaml(in, report.recommended), "<size>",
                           in.load),
        f.replications, f.jobs);
  progress.finish();
  if (!to_stdout)
    std::cout << validate::sizing_text(report) << (rep ? size_replications_text(report, *rep) : "");
  auto j = validate::sizing_json(report);
  j["warnings"] = validate::warnings_json(rep ? rep->warnings : std::vector<Warning>{});
  if (rep) (j["replications"] = validate::replications_json(*rep))["threads"] = report.recommended;
  if (!f.common.json.empty()) validate::write_json(f.common.json, j);
  return kExitOk;
}
}  // namespace

void register_size(CLI::App& app, std::function<int()>& action) {
  auto f = std::make_shared<SizeFlags>();
  auto* cmd = app.add_subcommand("size",
                                 "Recommend a pool size from rate, CPU and wait per request, cores "
                                 "or quota, and a latency target");
  cmd->add_option("--rate", f->rate, "Arrival rate, e.g. 1500/s")->type_name("RATE");
  cmd->add_option("--cpu", f->cpu, "CPU time per request, e.g. 2ms")->type_name("DURATION");
  cmd->add_option("--wait", f->wait,
                  "Blocking wait per request (I/O, sleeps), e.g. 38ms (default 0), or a "
                  "distribution as in a scenario (docs/scenarios.md): '{dist: lognormal, median: "
                  "20ms, p99: 200ms}'")
      ->type_name("DURATION|DIST");
  cmd->add_option("--backend", f->backend,
                  "The runtime to size (default pool): pool, work-stealing, tbb, asio-pool "
                  "(threads), injecting-pool (min_threads), virtual-threads (carriers), "
                  "event-loop (loops); docs/sizing.md")
      ->type_name("KIND");
  cmd->add_option("--cores", f->cores, "CPUs of the machine the pool runs on")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cpus", f->cpus, "CPU quota (container cpu.max / --cpus), e.g. 1.5")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--host-cores", f->host_cores,
         "The host's CPU count seen inside a container (with --cpus): adds the container advice")
      ->check(CLI::PositiveNumber);
  cmd->add_option(
         "--target-p99", f->target_p99,
         "Latency target for the 99th percentile (default: 1.25 x the service time's own p99)")
      ->type_name("DURATION");
  cmd->add_option("--queue", f->queue, "Bounded queue slots: adds M/M/c/K rejection and latency")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--service", f->service,
                  "Service-time shape for the queueing model and the simulation: deterministic "
                  "(default, fixed "
                  "--cpu/--wait) or exponential")
      ->check(CLI::IsMember({"deterministic", "exponential"}));
  cmd->add_option("--target-utilization", f->target_utilization,
                  "Goetz formula's target CPU utilisation U (default 100%)")
      ->type_name("FRACTION");
  cmd->add_option("--requests", f->requests, "Requests per simulated size (default 20000)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-simulate", f->no_simulate, "Theory only: skip the simulated sweep");
  cmd->add_option("--jobs,-j", f->jobs, "Simulations in parallel (default: this machine's CPUs)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--resources", f->resources,
                  "A scenario with `resources:` and an open arrival rate: the permits each "
                  "resource needs (Little's law, Erlang C) and the threads, confirmed by "
                  "simulation (docs/sizing.md)")
      ->type_name("FILE");
  cmd->add_option("--graph", f->graph,
                  "A scenario with workload.graph: report work, critical path and the bounds, and "
                  "sweep its threads")
      ->type_name("FILE");
  cmd->add_option("--replications", f->replications,
                  "Simulate the recommended size again with N seeds (seed, seed+1, ...): p99 mean, "
                  "95% CI, min, max")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--container", f->container,
                "With --host-cores and --cpus: p99 and throttling of each common sizing rule "
                "(host CPUs, quota rounded down/up, Little's law) in that container");
  cmd->add_option("--burst", f->burst, "CFS burst of the container (with --container), e.g. 50ms")
      ->type_name("DURATION");
  cmd->add_option("--cpuset", f->cpuset, "CPUs of the container (with --container), e.g. \"0-1\"")
      ->type_name("LIST");
  add_common_flags(cmd, f->common);
  cmd->callback([f, &action] { action = [f] { return run_size(*f); }; });
}

}  // namespace poolsim::app
