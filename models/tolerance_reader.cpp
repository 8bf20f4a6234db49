// tolerance_reader.cpp: the `tolerance:` section (validation tolerances).
//
// `default` and per-metric fractions (70% or 0.7, may exceed 1); a metric
// written as `off` goes to Tolerance::ignored.
#include <string>
#include <vector>

#include "models/metric_names.hpp"
#include "models/section_readers.hpp"

namespace poolsim::loader {

using yaml::MapReader;
using yaml::Val;

Tolerance read_tolerance(const Val& v) {
  std::vector<std::string> allowed = {"default"};
  for (auto n : kMetricNames) allowed.emplace_back(n);
  MapReader r(v, allowed, "tolerances", [&](const std::string& key) {
    return yaml::unknown_message("metric", key, allowed) +
           " (tolerance keys are default or a metric name)";
  });
  Tolerance t;
  for (const auto& k : r.keys()) {
    const Val fv = *r.get(k);
    // `off`: the metric is not compared at all (Tolerance::ignored).
    if (fv.is_scalar() && fv.node.Scalar() == "off") {
      if (k == "default")
        fv.fail("the default tolerance cannot be off; turn metrics off one by one");
      t.ignored.insert(k);
      continue;
    }
    const double f = yaml::fraction(fv, /*allow_above_one=*/true);
    if (k == "default")
      t.default_tolerance = f;
    else
      t.per_metric[k] = f;
  }
  return t;
}

}  // namespace poolsim::loader
