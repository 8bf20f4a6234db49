// poolsim record [--out SCENARIO] -- CMD ARGS...: runs the command under
// `perf sched record` (tracefs mounted where needed), then imports the trace
// (trace/) with the CPUs, cpuset and quota it ran under. perf.data lives in a
// temporary folder that is removed on every way out; SIGINT/SIGTERM/SIGHUP go
// to perf (and so to the command), then the folder is removed and the signal
// re-raised, as `poolsim run` does.
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/common.hpp"
#include "app/host_costs.hpp"
#include "trace/perf_tool.hpp"
#include "trace/scenario_writer.hpp"
#include "trace/trace_import.hpp"

namespace poolsim::app {
namespace {
namespace fs = std::filesystem;

struct RecordFlags {
  std::vector<std::string> command;
  std::string out, name;
  bool quiet = false;
};

std::string read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

// The CPUs this process may run on, and the CFS quota of its cpu cgroup
// (v1 cpu.cfs_quota_us / cpu.cfs_period_us, or v2 cpu.max).
trace::RecordedMachine this_machine() {
  trace::RecordedMachine m;
  m.known = true;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    std::string s;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (!CPU_ISSET(c, &set)) continue;
      int e = c;
      while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set)) ++e;
      s += (s.empty() ? "" : ",") + (e == c ? std::to_string(c) : fmt::format("{}-{}", c, e));
      c = e;
    }
    m.cpus = CPU_COUNT(&set);
    m.cpuset = s;
  }
  std::ifstream cg("/proc/self/cgroup");
  std::string line;
  while (std::getline(cg, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string ctrl = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    std::stringstream cs(ctrl);
    std::string c;
    bool cpu = false;
    while (std::getline(cs, c, ','))
      if (c == "cpu") cpu = true;
    if (cpu) {
      for (const char* root : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
        const fs::path d = fs::path(root) / fs::path(path).relative_path();
        const std::string q = read_line(d / "cpu.cfs_quota_us");
        const std::string p = read_line(d / "cpu.cfs_period_us");
        if (q.empty() || p.empty()) continue;
        if (std::stoll(q) > 0 && std::stoll(p) > 0) {
          m.quota_cpus = static_cast<double>(std::stoll(q)) / static_cast<double>(std::stoll(p));
          m.period_ns = std::stoll(p) * 1000;
        }
        break;
      }
    } else if (ctrl.empty() && !m.quota_cpus) {
      const std::string v =
          read_line(fs::path("/sys/fs/cgroup") / fs::path(path).relative_path() / "cpu.max");
      std::stringstream vs(v);
      std::string q, p;
      vs >> q >> p;
      if (!q.empty() && q != "max" && !p.empty()) {
        m.quota_cpus = std::stod(q) / std::stod(p);
        m.period_ns = std::stoll(p) * 1000;
      }
    }
  }
  return m;
}

int run_record(const RecordFlags& f) {
  if (f.command.empty())
    throw Usage("record needs a command: poolsim record [--out FILE] -- CMD ARGS...");
  std::string out = f.out;
  if (out.empty()) out = fs::path(f.command.front()).filename().string() + ".yaml";
  try {
    trace::ensure_tracefs();
  } catch (const trace::PerfRefused& e) {
    throw Refused(e.what());
  }
  std::string t = (fs::temp_directory_path() / "poolsim-record-XXXXXX").string();
  if (!::mkdtemp(t.data())) throw Refused("cannot create a temporary folder in /tmp");
  const fs::path dir = t;
  auto cleanup = [&] {
    std::error_code ec;
    fs::remove_all(dir, ec);
  };
  const auto machine = this_machine();
  std::string cmdline;
  for (const auto& a : f.command) cmdline += (cmdline.empty() ? "" : " ") + a;
  trace::ProgramModel m;
  double import_s = 0;
  int status = 0;
  {
    trace::SignalForwarder signals;
    try {
      const std::string data = (dir / "perf.data").string();
      if (!f.quiet) std::cerr << "recording (perf record of the sched events): " << cmdline << '\n';
      status = trace::perf_sched_record(f.command, data, (dir / "perf-record.stderr").string());
      const auto t0 = std::chrono::steady_clock::now();
      m = trace::import_trace(data, trace::ProgramSelector{}, dir.string());
      import_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } catch (const trace::Interrupted& e) {
      cleanup();
      trace::SignalForwarder::reraise(e.signal);
    } catch (const trace::PerfRefused& e) {
      cleanup();
      throw Refused(e.what());
    } catch (const trace::TraceError& e) {
      cleanup();
      // The temporary perf.data is gone: name the recording instead.
      std::string msg = e.what();
      const std::string data = (dir / "perf.data").string();
      if (const auto p = msg.find(data); p != std::string::npos)
        msg.replace(p, data.size(), "the recording of `" + cmdline + "`");
      throw trace::TraceError(msg);
    } catch (...) {
      cleanup();
      throw;
    }
  }
  cleanup();
  if (const auto costs = host_kernel_costs()) trace::net_kernel_costs(m, *costs);
  trace::WriteOptions o;
  o.name = f.name;
  o.source = "perf sched record";
  o.command = cmdline;
  o.machine = machine;
  const auto files = trace::write_scenario(m, out, o);
  std::cerr << trace::summary_text(m);
  if (!f.quiet)
    std::cerr << fmt::format("command exit status {}; imported {} trace lines in {:.2f} s\n",
                             status, m.read.lines, import_s);
  for (const auto& p : files) std::cout << "wrote " << p.string() << '\n';
  return kExitOk;
}
}  // namespace

void register_record(CLI::App& app, std::function<int()>& action) {
  auto f = std::make_shared<RecordFlags>();
  auto* cmd = app.add_subcommand(
      "record",
      "Run a command under `perf sched record` and import the trace as a scenario (needs root "
      "or perf permissions; mounts tracefs where needed)");
  cmd->add_option("--out,-o", f->out, "Scenario file to write (default: CMD.yaml)")
      ->type_name("SCENARIO");
  cmd->add_option("--name", f->name, "Scenario name (default: from the output file name)");
  cmd->add_flag("--quiet,-q", f->quiet, "Fewer lines on stderr");
  cmd->add_option("command", f->command, "The command to record, after --")
      ->expected(-1)
      ->type_name("CMD ARGS...");
  cmd->callback([f, &action] { action = [f] { return run_record(*f); }; });
}

}  // namespace poolsim::app
