// poolsim metrics: every metric name with its unit, meaning and aliases,
// from the one table in models/metric_names.hpp; --json for scripts.
#include <iostream>

#include "app/common.hpp"
#include "models/metric_names.hpp"
#include "validate/output.hpp"
#include "validate/table.hpp"

namespace poolsim::app {
namespace {
std::string aliases_of(const MetricInfo& row) {
  std::string out;
  for (auto a : row.aliases)
    if (!a.empty()) {
      if (!out.empty()) out += ", ";
      out += a;
    }
  return out;
}
}  // namespace

std::string metric_names_footer() {
  std::string out = "Metric names (poolsim metrics explains each):\n ";
  std::size_t col = 1;
  for (const auto& row : metric_table()) {
    if (col + row.name.size() + 1 > 96) {
      out += "\n ";
      col = 1;
    }
    out += ' ';
    out += row.name;
    col += row.name.size() + 1;
  }
  return out + "\nAliases: p50, p90, p99, mean, max, cpu, ... (poolsim metrics)\n";
}

void register_metrics(CLI::App& app, std::function<int()>& action) {
  auto json = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "metrics", "List every metric: name, unit, meaning and the aliases flags accept (p99, mean)");
  cmd->add_option("--json", *json, "Write the list as JSON to PATH ('-' for stdout)")
      ->type_name("PATH");
  cmd->callback([json, &action] {
    action = [json] {
      if (*json != "-") {
        validate::Table t({"metric", "unit", "aliases", "meaning"});
        for (const auto& row : metric_table())
          t.add_row({std::string(row.name), std::string(row.unit), aliases_of(row),
                     std::string(row.meaning)});
        std::cout << t.str();
      }
      if (!json->empty()) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& row : metric_table()) {
          nlohmann::ordered_json aliases = nlohmann::ordered_json::array();
          for (auto a : row.aliases)
            if (!a.empty()) aliases.push_back(std::string(a));
          j.push_back({{"name", std::string(row.name)},
                       {"unit", std::string(row.unit)},
                       {"meaning", std::string(row.meaning)},
                       {"aliases", aliases}});
        }
        validate::write_json(*json,
                             {{"metrics", j}, {"warnings", nlohmann::ordered_json::array()}});
      }
      return kExitOk;
    };
  });
}

}  // namespace poolsim::app
