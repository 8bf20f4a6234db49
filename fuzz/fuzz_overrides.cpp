// fuzz_overrides.cpp: libFuzzer target for the `--set key.path=value` grammar.
//
// Mechanism: the input is split at newlines; each line (at most 16) is one
// `--set` argument, applied in order to a fixed, valid scenario (a Poisson
// workload with classes, a lock phase and a pool), then the scenario is
// loaded. As in fuzz_scenario.cpp, anything but a Scenario or a ScenarioError
// is a finding. The `--vary` grammar of `poolsim sweep` lives in
// validate/sweep.cpp behind no public parse function, so it is not fuzzed
// here.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/scenario_loader.hpp"

namespace {

const char* kBase =
    "name: fuzz-base\n"
    "seed: 7\n"
    "machine: default\n"
    "limits: {cpus: 1.5, period: 100ms}\n"
    "workload:\n"
    "  arrival: {kind: poisson, rate: 400/s, count: 400}\n"
    "  classes:\n"
    "    - {weight: 70%, task: [{cpu: 2ms}, {lock: {name: db, hold: 10us}}]}\n"
    "    - {weight: 30%, task: [{cpu: {dist: exponential, mean: 500us}}, {wait: 5ms}]}\n"
    "backend: {kind: pool, threads: 4, max_threads: 8, queue: 100}\n"
    "run: {reps: 2, warmup: 0, timeout: 30s}\n"
    "tolerance: {default: 15%, latency_p99: 35%}\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kMaxSets = 16;
  static const poolsim::LoadOptions base = [] {
    poolsim::LoadOptions o;
    o.config_dir = POOLSIM_FUZZ_CONFIG_DIR;
    o.host_profile = "/nonexistent/poolsim-fuzz/host.yaml";
    return o;
  }();
  poolsim::LoadOptions opts = base;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  while (start <= text.size() && opts.sets.size() < kMaxSets) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    opts.sets.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  try {
    (void)poolsim::load_scenario_text(kBase, "/poolsim-fuzz/base.yaml", opts);
  } catch (const poolsim::ScenarioError&) {
  }
  return 0;
}
