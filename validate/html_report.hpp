// html_report.hpp: the self-contained HTML report of `poolsim validate --html`.
//
// One file, no network access needed to open it: inline CSS and SVG charts
// generated here (validate/svg_chart.hpp), no JavaScript library.
#pragma once

#include <string>
#include <vector>

#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "validate/compare.hpp"

namespace poolsim::validate {

struct ReportInput {
  const Scenario* scenario = nullptr;
  const Workload* workload = nullptr;
  const Comparison* comparison = nullptr;
  const RunResult* predicted = nullptr;  // the simulation (with its trace if one was taken)
  const std::vector<RunResult>* measured =
      nullptr;                // the measured repetitions (the first one's trace, if any)
  std::string scenario_yaml;  // the scenario file's text, shown verbatim
  std::string generated_at;   // timestamp line for the header
  std::string host;           // kernel and CPU model of the measuring machine
};

// The whole HTML document.
std::string render_html_report(const ReportInput& in);

}  // namespace poolsim::validate
