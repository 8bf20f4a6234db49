// distribution_reader.cpp: a duration or a distribution map -> Distribution.
//
// Empirical distribution files: a text file with one duration per line, each
// with its unit ("1.5ms"); blank lines and lines starting with '#' are
// skipped; a relative `file:` is resolved against the scenario's directory.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "models/input_file.hpp"
#include "models/scenario_error.hpp"
#include "models/section_readers.hpp"

namespace poolsim::loader {

namespace fs = std::filesystem;
using yaml::MapReader;
using yaml::Val;

namespace {

// An empirical distribution: `file:` names a text file of durations, one per
// line with its unit; blank lines and # comments are skipped.
Distribution read_empirical(const Val& v, const MapReader& r) {
  const auto fv = r.require("file");
  const std::string file = yaml::scalar(fv, "a file name");
  fs::path p = file;
  if (p.is_relative()) p = v.src->base_dir() / p;
  std::string error;
  const auto text_read = read_input(p, kMaxSamplesFileBytes, error);
  if (!text_read) fv.fail("cannot read empirical samples file: " + error);
  const std::string& text = *text_read;
  EmpiricalDist e;
  e.file = file;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string cell = line.substr(first, last - first + 1);
    try {
      e.samples.push_back(parse_duration(cell));
    } catch (const UnitError& ex) {
      throw ScenarioError(
          p.string() + ":" + std::to_string(lineno) + ":" + std::to_string(first + 1), fv.path,
          ex.what());
    }
  }
  if (e.samples.empty())
    fv.fail("empirical samples file " + p.string() +
            " holds no durations (one per line, e.g. 1.5ms)");
  return Distribution(EmpiricalDist{std::move(e)});
}

}  // namespace

Distribution read_distribution(const Val& v) {
  if (v.node.IsScalar()) return Distribution::fixed(yaml::duration(v));
  if (!v.node.IsMap())
    v.fail(
        "expected a duration (e.g. 2ms) or a distribution map such as {dist: exponential, mean: "
        "2ms}, got " +
        yaml::describe_node(v.node));
  static const std::vector<std::string> kKinds = {"exponential", "uniform", "lognormal", "normal",
                                                  "empirical"};
  // Find the kind first, so the allowed keys can follow it.
  std::string kind;
  for (auto it = v.node.begin(); it != v.node.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == "dist") {
      Val kv{v.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
             v.path + ".dist"};
      kind = yaml::scalar(kv, "a distribution kind (" + yaml::join(kKinds) + ")");
      if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end())
        kv.fail(yaml::unknown_message("distribution", kind, kKinds));
    }
  std::vector<std::string> keys = {"dist"};
  if (kind == "exponential")
    keys.insert(keys.end(), {"mean"});
  else if (kind == "uniform")
    keys.insert(keys.end(), {"min", "max"});
  else if (kind == "lognormal")
    keys.insert(keys.end(), {"median", "p99"});
  else if (kind == "normal")
    keys.insert(keys.end(), {"mean", "sd"});
  else if (kind == "empirical")
    keys.insert(keys.end(), {"file"});
  else
    keys.insert(keys.end(),
                {"mean", "min", "max", "median", "p99", "sd", "file"});  // report the missing dist
  MapReader r(v, keys, "a distribution");
  r.require("dist", "one of " + yaml::join(kKinds));
  if (kind == "exponential") {
    const auto mv = r.require("mean");
    const Duration mean = yaml::duration(mv);
    if (mean <= Duration{0})
      mv.fail("the mean of an exponential distribution must be greater than 0ns");
    return Distribution::exponential(mean);
  }
  if (kind == "uniform") {
    const Duration lo = yaml::duration(r.require("min"));
    const auto hv = r.require("max");
    const Duration hi = yaml::duration(hv);
    if (hi < lo)
      hv.fail("uniform needs min <= max (min " + format_duration(lo) + ", max " +
              format_duration(hi) + ")");
    return Distribution::uniform(lo, hi);
  }
  if (kind == "lognormal") {
    const auto mv = r.require("median");
    const Duration median = yaml::duration(mv);
    if (median <= Duration{0})
      mv.fail("the median of a lognormal distribution must be greater than 0ns");
    const auto pv = r.require("p99");
    const Duration p99 = yaml::duration(pv);
    if (p99 <= median)
      pv.fail("lognormal needs median < p99 (median " + format_duration(median) + ", p99 " +
              format_duration(p99) + ")");
    return Distribution::lognormal(median, p99);
  }
  if (kind == "normal") {
    const Duration mean = yaml::duration(r.require("mean"));
    const Duration sd = yaml::duration(r.require("sd"));
    return Distribution::normal(mean, sd);
  }
  return read_empirical(v, r);
}

}  // namespace poolsim::loader
