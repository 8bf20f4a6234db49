// speed_report.cpp: disturbed repetitions in reports (design comment in the header).
#include "validate/speed_report.hpp"

#include <fmt/format.h>

#include "real/speed_check.hpp"
#include "sim/noise.hpp"

namespace poolsim::validate {

SpeedSummary split_by_speed(const std::vector<RunResult>& reps) {
  SpeedSummary out;
  for (const RunResult& r : reps) {
    if (r.speed.attempts > 1) ++out.repeated;
    if (r.speed.disturbed) {
      ++out.disturbed;
      continue;
    }
    out.usable.push_back(r);
  }
  const std::size_t needed = reps.size() >= 2 ? 2 : reps.size();
  out.verdict_possible = out.usable.size() >= needed && !out.usable.empty();
  return out;
}

std::string speed_lines(const std::vector<RunResult>& reps) {
  std::string out;
  for (std::size_t i = 0; i < reps.size(); ++i) {
    const SpeedCheck& s = reps[i].speed;
    if (!s.measured || (s.attempts <= 1 && !s.disturbed)) continue;
    out += fmt::format(
        "machine speed: repetition {} {} ({})\n", i + 1,
        s.disturbed ? "was disturbed, left out of the verdict"
                    : "was run again until the machine ran at its calibrated speed and held it",
        real::describe_speed(s));
  }
  return out;
}

nlohmann::ordered_json speed_json(const std::vector<RunResult>& reps) {
  auto arr = nlohmann::ordered_json::array();
  for (const RunResult& r : reps) {
    const SpeedCheck& s = r.speed;
    nlohmann::ordered_json e;
    const auto or_null = [](bool known, double v) {
      return known ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
    };
    e["before"] = s.before;
    e["during"] = or_null(s.during_sampled, s.during);
    e["phase_cpu"] = or_null(s.during_sampled, s.phase_cpu);
    e["after"] = s.after;
    e["kernel_before"] = or_null(s.kernel_checked, s.kernel_before);
    e["kernel_after"] = or_null(s.kernel_checked, s.kernel_after);
    e["attempts"] = s.attempts;
    e["disturbed"] = s.disturbed;
    arr.push_back(e);
  }
  return arr;
}

NoiseReport noise_report(const std::vector<RunResult>& reps, const MachineProfile& m) {
  NoiseReport n;
  const double share = sim::noise_share(m) * m.noise_charged;
  n.profile_loss = share / (1 + share);
  double sum = 0;
  for (const RunResult& r : reps) {
    const SpeedCheck& s = r.speed;
    if (!s.measured || s.disturbed || !s.during_sampled || s.before <= 0) continue;
    sum += 1 - s.phase_cpu / s.before;
    ++n.reps;
  }
  if (n.reps > 0) n.measured_loss = sum / n.reps;
  return n;
}

std::string noise_line(const NoiseReport& n) {
  if (n.reps == 0) return "";
  return fmt::format(
      "machine noise: the sampled cpu phases lost {:.1f}% of their CPU time to interruptions "
      "(mean of {} repetition{}); the profile's OS noise predicts {:.1f}%\n",
      n.measured_loss * 100, n.reps, n.reps == 1 ? "" : "s", n.profile_loss * 100);
}

nlohmann::ordered_json noise_json(const NoiseReport& n) {
  if (n.reps == 0) return nullptr;
  nlohmann::ordered_json j;
  j["measured_loss"] = n.measured_loss;
  j["profile_loss"] = n.profile_loss;
  j["repetitions"] = n.reps;
  return j;
}

}  // namespace poolsim::validate
