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

}  // namespace poolsim::validate
