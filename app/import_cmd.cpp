// poolsim import perf-sched PATH --out SCENARIO: a saved scheduler trace
// (perf.data, or `perf script` / `perf sched timehist -w` text) to a scenario
// plus its empirical sample files. The inference lives in trace/; this file
// parses flags and reports what was inferred (stderr) and written (stdout).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "app/common.hpp"
#include "app/host_costs.hpp"
#include "trace/perf_tool.hpp"
#include "trace/scenario_writer.hpp"
#include "trace/trace_import.hpp"

namespace poolsim::app {
namespace {
struct ImportFlags {
  std::string path, out, name, comm;
  int pid = -1;
  bool quiet = false;
};

// A scratch folder for perf's stderr, removed on every way out.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    std::string t = (std::filesystem::temp_directory_path() / "poolsim-import-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw Refused("cannot create a temporary folder in /tmp");
    dir = t;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

int run_import(const ImportFlags& f) {
  const auto t0 = std::chrono::steady_clock::now();
  trace::ProgramSelector sel{f.pid, f.comm};
  trace::ProgramModel m;
  {
    trace::SignalForwarder signals;
    Scratch scratch;
    try {
      m = trace::import_trace(f.path, sel, scratch.dir.string());
    } catch (const trace::PerfRefused& e) {
      throw Refused(e.what());
    } catch (const trace::Interrupted& e) {
      std::error_code ec;
      std::filesystem::remove_all(scratch.dir, ec);
      trace::SignalForwarder::reraise(e.signal);
    }
  }
  if (const auto costs = host_kernel_costs()) trace::net_kernel_costs(m, *costs);
  trace::WriteOptions o;
  o.name = f.name;
  o.source = f.path;
  const auto files = trace::write_scenario(m, f.out, o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << trace::summary_text(m);
  if (!f.quiet)
    std::cerr << fmt::format("imported {} trace lines in {:.2f} s\n", m.read.lines, secs);
  for (const auto& p : files) std::cout << "wrote " << p.string() << '\n';
  return kExitOk;
}
}  // namespace

void register_import(CLI::App& app, std::function<int()>& action) {
  auto f = std::make_shared<ImportFlags>();
  auto* cmd = app.add_subcommand("import", "Import a saved trace as a scenario");
  cmd->require_subcommand(1);
  auto* ps = cmd->add_subcommand(
      "perf-sched",
      "A perf sched trace (perf.data, or `perf script` / `perf sched timehist -w` text) to a "
      "scenario: thread groups, CPU bursts and waits per unit of work, arrivals, the pool");
  ps->add_option("trace", f->path, "perf.data, or saved perf script / timehist text")
      ->required()
      ->type_name("PATH");
  ps->add_option("--out,-o", f->out,
                 "Scenario file to write (sample files go beside it: STEM.GROUP.cpu.csv, ...)")
      ->required()
      ->type_name("SCENARIO");
  ps->add_option("--pid", f->pid,
                 "The program: this process and its descendants (default: the command perf "
                 "recorded, its `perf-exec` task)");
  ps->add_option("--comm", f->comm,
                 "The program: threads first seen with this name, and descendants");
  ps->add_option("--name", f->name, "Scenario name (default: from the output file name)");
  ps->add_flag("--quiet,-q", f->quiet, "No timing line on stderr");
  ps->callback([f, &action] { action = [f] { return run_import(*f); }; });
}

}  // namespace poolsim::app
