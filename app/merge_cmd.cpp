// poolsim merge PART.json...: join the shard files of `poolsim sweep --shard
// K/N --json PART` into the table, CSV, JSON and chart one `poolsim sweep`
// with the same flags writes for the whole grid, byte for byte. The checks
// (same sweep, every shard once) are in validate/sweep_part.hpp; the outputs
// are sweep's own (app/sweep_report.hpp), with the chart metrics and the USL
// key the sweep was given (they are part of the sweep's identity).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/common.hpp"
#include "app/sweep_report.hpp"
#include "validate/sweep_part.hpp"

namespace poolsim::app {
namespace {
struct MergeFlags {
  std::vector<std::string> parts;
  std::string csv, plot, json;
  bool quiet = false;
};

std::string read_part_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Usage("merge: '" + path +
                "' is not a file (expected a part written by poolsim sweep "
                "--shard K/N --json PATH)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw Usage("merge: cannot read '" + path + "'");
  return text.str();
}

int run_merge_cmd(const MergeFlags& f) {
  std::vector<validate::SweepPart> parts;
  for (const auto& path : f.parts) parts.push_back(validate::read_part(read_part_text(path), path));
  const validate::SweepResult r = validate::merge_parts(parts);
  const auto& id = parts.front().identity;
  SweepOutputs out;
  out.csv = f.csv;
  out.plot = f.plot;
  out.json = f.json;
  out.quiet = f.quiet;
  out.plot_metrics = id.at("plot_metrics").get<std::vector<std::string>>();
  out.usl_key = id.at("usl_key").get<std::string>();
  report_sweep(r, out);
  return kExitOk;
}
}  // namespace

void register_merge(CLI::App& app, std::function<int()>& action) {
  auto f = std::make_shared<MergeFlags>();
  auto* cmd = app.add_subcommand(
      "merge",
      "Join the parts of a sharded sweep (sweep --shard K/N --json PART) into its outputs");
  cmd->add_option("PART", f->parts, "Part files, one per shard, in any order")->required();
  cmd->add_option("--csv", f->csv, "Write the whole grid's CSV ('-': stdout)")->type_name("PATH");
  cmd->add_option("--json", f->json, "Write the whole grid's JSON ('-': stdout)")
      ->type_name("PATH");
  cmd->add_option("--plot", f->plot, "Write the charts: PATH.svg or PATH.html")->type_name("PATH");
  cmd->add_flag("--quiet,-q", f->quiet, "No log lines on stderr");
  cmd->callback([f, &action] { action = [f] { return run_merge_cmd(*f); }; });
}

}  // namespace poolsim::app
