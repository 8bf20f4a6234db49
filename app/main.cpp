// poolsim: one binary, subcommands of docs/cli.md.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "app/common.hpp"
#include "models/yaml_reader.hpp"

int main(int argc, char** argv) {
  using namespace poolsim::app;
  CLI::App app{
      "poolsim: how many threads, which kind of pool, and what happens in a 1.5-CPU container?\n"
      "Predicts a scenario with a discrete-event simulator of the OS and thread runtimes,\n"
      "measures it on this machine, and reports how far the two diverge."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "poolsim 0.1.0");
  std::function<int()> action;
  register_simulate(app, action);
  register_run(app, action);
  register_validate(app, action);
  register_compare(app, action);
  register_calibrate(app, action);
  register_size(app, action);
  register_sweep(app, action);
  register_record(app, action);
  register_import(app, action);
  register_capacity(app, action);
  register_metrics(app, action);
  app.footer(metric_names_footer());
  register_merge(app, action);
  // A first word that is no subcommand: name the closest one (CLI11 would say
  // only that a subcommand is required).
  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    const std::string word = argv[1];
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      std::cerr << "poolsim: " << printable(poolsim::yaml::unknown_message("command", word, names))
                << "\nRun with --help for more information.\n";
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // As app.exit(e) prints it, with the echoed arguments made printable.
    std::cerr << "poolsim: " << printable(e.what()) << "\nRun with --help for more information.\n";
    return kExitBadInput;
  }
  return guarded(action);
}
