// poolsim: one binary, subcommands of docs/cli.md.
#include <iostream>

#include "app/common.hpp"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }
  return guarded(action);
}
