// calibrate.hpp: measure this machine into a machine profile.
//
// Each field of MachineProfile (models/machine.hpp) is measured by a small
// experiment that isolates its mechanism (see calibrate_experiments.hpp and
// docs/calibration.md). Every experiment takes several samples; the profile
// gets the median and the report keeps the spread. Quick mode takes a few
// seconds (used when `machine: host` is needed and no profile exists yet);
// thorough mode takes more samples.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "models/machine.hpp"

namespace poolsim::real {

struct CalibrateOptions {
  bool quick = true;
  bool quiet = false;
  // Refuse (MachineRefused) when other work keeps the CPUs more than
  // max_busy busy over a second before the measurement starts or before the
  // OS-noise step (real/cpu_busy.hpp); allow_busy measures anyway.
  double max_busy = 0.10;
  bool allow_busy = false;
};

// One measured figure: the median goes into the profile.
struct Measurement {
  std::string field;        // MachineProfile field name
  double median = 0;        // seconds, bytes or count
  double p10 = 0, p90 = 0;  // spread of the samples
  int samples = 0;
  std::string unit;    // "s", "B", ""
  std::string method;  // how it was measured, one line
};

struct CalibrationReport {
  MachineProfile profile;
  std::vector<Measurement> measurements;
  std::string kernel;  // uname -r
  std::string cpu_model;
};

CalibrationReport calibrate(const CalibrateOptions& opt);
// The profile `calibrate` writes: every field of models/machine_fields.hpp set
// from the median of the measurement of that name, stack_touch rounded to
// whole 4 KiB pages. Throws std::logic_error naming a field no measurement
// covers.
MachineProfile profile_from_measurements(const std::vector<Measurement>& ms);
// Writes the profile as YAML with the report as comments; creates parent
// directories.
void write_profile(const CalibrationReport& report, const std::filesystem::path& path);

}  // namespace poolsim::real
