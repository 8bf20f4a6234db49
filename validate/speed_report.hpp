// speed_report.hpp: what the machine-speed check of the measured
// repetitions (real/speed_check.hpp) means for a report.
//
// Rule (docs/validation.md, "Disturbed runs"): a repetition still outside the
// speed band after its retries is `disturbed`; metrics and verdicts are drawn
// from the undisturbed repetitions only; when fewer than two of them remain
// (one when a single repetition was asked for), no verdict is drawn at all and
// the run's verdict is `disturbed` (exit 3: the machine did not run at the
// speed it was calibrated at).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/machine.hpp"
#include "models/result.hpp"

namespace poolsim::validate {

struct SpeedSummary {
  std::vector<RunResult> usable;  // the undisturbed repetitions
  int disturbed = 0;              // repetitions dropped as disturbed
  int repeated = 0;               // repetitions that needed more than one attempt
  bool verdict_possible = true;   // enough undisturbed repetitions remain
};

// Splits measured repetitions by their speed check.
SpeedSummary split_by_speed(const std::vector<RunResult>& reps);

// Lines for the terminal: nothing when every repetition was checked within
// the band at its first attempt; otherwise each repeated or disturbed one.
std::string speed_lines(const std::vector<RunResult>& reps);

// [{"before", "during", "after", "attempts", "disturbed"}] per repetition
// ("during" null when no phase was sampled).
nlohmann::ordered_json speed_json(const std::vector<RunResult>& reps);

// The machine's OS noise during the measurement against the profile's. The
// speed probe times sampled `cpu` phases on the thread CPU clock, which
// counts the interruptions this kernel charges to the thread; the canary
// before a repetition times the loop between interruptions. So 1 - during /
// before is the share of a phase's CPU time the interruptions took. The
// profile's noise predicts c s / (1 + c s), s its stolen share of a busy CPU
// (sim::noise_share) and c its noise_charged. A gap between the two is a
// machine noisier (or quieter) than when it was calibrated: near a CPU quota
// it moves throttling by tens of percent (docs/containers.md).
struct NoiseReport {
  int reps = 0;              // undisturbed repetitions with sampled phases
  double measured_loss = 0;  // mean of 1 - during / before over them
  double profile_loss = 0;   // what the machine profile's noise predicts
};
NoiseReport noise_report(const std::vector<RunResult>& reps, const MachineProfile& m);
// One line for the terminal (empty when no repetition had sampled phases).
std::string noise_line(const NoiseReport& n);
// {"measured_loss", "profile_loss", "repetitions"}, null when none.
nlohmann::ordered_json noise_json(const NoiseReport& n);

}  // namespace poolsim::validate
