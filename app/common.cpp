#include "app/common.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "models/units.hpp"
#include "real/calibrate.hpp"
#include "real/runner.hpp"
#include "sim/simulate.hpp"

namespace poolsim::app {

void add_common_flags(CLI::App* cmd, CommonFlags& f) {
  cmd->add_option("--set", f.sets, "Override a scenario field before validation: key.path=value (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--seed", f.seed, "Workload seed (replaces the scenario's seed)");
  cmd->add_option("--machine", f.machine, "Machine profile: default, host, a name under configs/machines/, or a YAML path")
      ->type_name("NAME|PATH");
  cmd->add_option("--json", f.json, "Write the result as JSON to PATH ('-' for stdout)")->type_name("PATH");
  cmd->add_flag("--quiet,-q", f.quiet, "No progress or log lines on stderr");
}

LoadOptions load_options(const CommonFlags& f) {
  LoadOptions o;
  o.sets = f.sets;
  o.seed = f.seed;
  if (!f.machine.empty()) o.machine = f.machine;
  o.create_host_profile = [quiet = f.quiet](const std::filesystem::path& path) {
    if (!quiet)
      std::cerr << "poolsim: no 'host' machine profile yet; calibrating this machine (quick mode) into "
                << path.string() << "\n";
    real::CalibrateOptions co;
    co.quick = true;
    co.quiet = quiet;
    const auto report = real::calibrate(co);
    real::write_profile(report, path);
  };
  return o;
}

Scenario load_checked(const std::string& file, const CommonFlags& f) {
  return load_scenario(file, load_options(f));
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream o;
  o << f.rdbuf();
  return o.str();
}

void log_line(const CommonFlags& f, const std::string& line) {
  if (!f.quiet) std::cerr << line << '\n';
}

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const ScenarioError& e) {
    std::cerr << "poolsim: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const Usage& e) {
    std::cerr << "poolsim: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const UnitError& e) {
    std::cerr << "poolsim: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "poolsim: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const Refused& e) {
    std::cerr << "poolsim: " << e.what() << '\n';
    return kExitRefused;
  } catch (const real::MachineRefused& e) {
    std::cerr << "poolsim: the machine refused: " << e.what() << '\n';
    return kExitRefused;
  } catch (const std::bad_alloc&) {
    std::cerr << "poolsim: out of memory\n";
    return kExitRefused;
  } catch (const std::exception& e) {
    std::cerr << "poolsim: error: " << e.what() << '\n';
    return kExitRefused;
  }
}

void write_trace(const std::filesystem::path& path, const Trace& t, const std::string& title) {
  std::ofstream f(path);
  if (!f) throw Usage("cannot write trace '" + path.string() + "'");
  write_chrome_trace(f, t, title);
}

}  // namespace poolsim::app
