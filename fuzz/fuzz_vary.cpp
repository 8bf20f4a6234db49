// fuzz_vary.cpp: libFuzzer target for the `--vary KEY=VALUES` grammar of
// `poolsim sweep` (validate/sweep_grid.hpp).
//
// Mechanism: the input is split at newlines; each line (at most 4) is one
// `--vary` argument, parsed by parse_vary exactly as the CLI does. The axes
// then go through grid_size (repeated keys, the point cap), and the last
// point is applied as `--set KEY=VALUE` to a fixed, valid
// scenario and loaded, as `sweep` loads every point (validate/sweep.cpp,
// load_point). Besides crashes and sanitizer reports, a finding is:
//   - any exception but std::invalid_argument from the grammar, or any but
//     ScenarioError from the loader;
//   - an axis with no values, an empty value, or more values than the cap;
//   - a range (`..`) whose expansion holds the same value twice (a sweep
//     would run one point twice under two grid indices).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/scenario_loader.hpp"
#include "validate/sweep_grid.hpp"

namespace {

const char* kBase =
    "name: fuzz-vary\n"
    "seed: 7\n"
    "machine: default\n"
    "workload:\n"
    "  arrival: {kind: poisson, rate: 400/s, count: 400}\n"
    "  task: [{cpu: 2ms}, {wait: 5ms}, {lock: {name: db, hold: 10us}}]\n"
    "backend: {kind: pool, threads: 4, max_threads: 8, queue: 100}\n"
    "run: {reps: 2, warmup: 0, timeout: 30s}\n";

// A deliberate crash: libFuzzer keeps the input that caused it.
void finding(bool broken) {
  if (broken) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace v = poolsim::validate;
  constexpr std::size_t kMaxAxes = 4;
  // A smaller cap than the CLI's keeps each input fast; the grammar's checks
  // are the same at any cap.
  constexpr std::size_t kCap = 1000;
  static const poolsim::LoadOptions base = [] {
    poolsim::LoadOptions o;
    o.config_dir = POOLSIM_FUZZ_CONFIG_DIR;
    o.host_profile = "/nonexistent/poolsim-fuzz/host.yaml";
    return o;
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<v::VaryAxis> axes;
  std::size_t start = 0;
  try {
    while (start <= text.size() && axes.size() < kMaxAxes) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string spec = text.substr(start, end - start);
      start = end + 1;
      v::VaryAxis axis = v::parse_vary(spec, kCap);
      finding(axis.key.empty() || axis.values.empty() || axis.values.size() > kCap);
      for (const std::string& value : axis.values) finding(value.empty());
      const std::string values = spec.substr(spec.find('=') + 1);
      if (values.find("..") != std::string::npos && values.find(',') == std::string::npos &&
          values.find_first_of("{[") == std::string::npos) {
        const std::set<std::string> distinct(axis.values.begin(), axis.values.end());
        finding(distinct.size() != axis.values.size());
      }
      axes.push_back(std::move(axis));
    }
    const std::size_t points = v::grid_size(axes, kCap);
    finding(points == 0 || points > kCap);
    // One point (the last: every axis at its range's end) keeps an input
    // fast enough for the seconds CI gives this target.
    poolsim::LoadOptions opts = base;
    const std::vector<std::string> point = v::grid_point(axes, points - 1);
    finding(point.size() != axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) opts.sets.push_back(axes[i].key + "=" + point[i]);
    try {
      (void)poolsim::load_scenario_text(kBase, "/poolsim-fuzz/base.yaml", opts);
    } catch (const poolsim::ScenarioError&) {
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
