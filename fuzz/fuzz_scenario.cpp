// fuzz_scenario.cpp: libFuzzer target for the scenario loader.
//
// Mechanism: each input is a scenario file's text, loaded with
// load_scenario_text() against the shipped configs/ (machine profiles) and no
// `host` profile. The contract under test (issue 20): whatever the bytes, the
// loader returns a Scenario or throws ScenarioError, within a bounded time and
// memory; any other exception, a crash, an AddressSanitizer or UBSan report,
// a timeout or an out-of-memory is a finding. A loaded scenario whose
// workload is small is also generated (generate_workload), so the generator's
// arithmetic on fuzzed durations and rates runs under the sanitizers too.
// Left out: the real runner and the simulator (their inputs are what the
// loader accepts; the fuzzer would spend its time simulating).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"

namespace {

poolsim::LoadOptions options() {
  poolsim::LoadOptions o;
  o.config_dir = POOLSIM_FUZZ_CONFIG_DIR;
  o.host_profile = "/nonexistent/poolsim-fuzz/host.yaml";
  return o;
}

// Tasks the generator would make, if the arrival gives a count (graphs and
// duration-limited arrivals are skipped: their size is what the loader's
// checks bound, not something to spend fuzzing time on).
bool small_enough(const poolsim::Scenario& s) {
  constexpr std::int64_t kMaxFuzzTasks = 2000;
  const auto& a = s.workload.arrival;
  return a && a->count && !a->duration && *a->count <= kMaxFuzzTasks &&
         a->kind != poolsim::ArrivalKind::closed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const poolsim::LoadOptions opts = options();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const poolsim::Scenario s = poolsim::load_scenario_text(text, "/poolsim-fuzz/s.yaml", opts);
    if (small_enough(s)) {
      try {
        (void)poolsim::generate_workload(s);
      } catch (const std::invalid_argument&) {
        // The generator's documented refusals (horizon, task cap).
      }
    }
  } catch (const poolsim::ScenarioError&) {
    // The documented way to refuse an input.
  }
  return 0;
}
