// sweep_report.hpp: what `poolsim sweep` and `poolsim merge` both do with a
// finished SweepResult: the table and USL fits on stdout, and the CSV, chart
// (SVG or HTML) and JSON files. Both commands call the same function with the
// same output flags, which is what makes a merge of shards write the bytes
// one sweep writes.
#pragma once

#include <string>
#include <vector>

#include "app/common.hpp"
#include "validate/sweep.hpp"

namespace poolsim::app {

struct SweepOutputs {
  std::string csv, plot, json;
  std::vector<std::string> plot_metrics{"latency_p99", "throughput"};
  std::string usl_key;  // empty: no fit
  bool quiet = false;
};

// Checks the flags that do not need a run (metric names, --plot extension,
// --usl key and values) and returns the metrics to chart; Usage on error.
std::vector<Metric> check_sweep_outputs(const SweepOutputs& o,
                                        const std::vector<validate::VaryAxis>& axes);

// Prints the table (unless a JSON/CSV goes to stdout) and writes the files.
void report_sweep(const validate::SweepResult& r, const SweepOutputs& o);

// Writes `text` to `path` ('-': stdout); Usage naming `what` and the path if
// it cannot.
void write_text_file(const std::string& flag, const std::string& path, const std::string& text,
                     const std::string& what);

}  // namespace poolsim::app
