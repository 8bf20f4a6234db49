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
#include <stdexcept>
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

// One measured figure: the median goes into the profile; the mean is
// reported beside it (a long tail shows as a mean well above the median,
// docs/calibration.md "Medians, not means, for costs").
struct Measurement {
  std::string field;        // MachineProfile field name
  double median = 0;        // seconds, bytes or count
  double mean = 0;          // of the same samples
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
// A value of measurement `m` in its unit, as calibrate's table prints it
// (format_seconds, format_bytes, a percentage for a fraction).
std::string format_value(const Measurement& m, double v);
// The profile `calibrate` writes: every field of models/machine_fields.hpp set
// from the median of the measurement of that name, stack_touch rounded to
// whole 4 KiB pages. Throws std::logic_error naming a field no measurement
// covers.
MachineProfile profile_from_measurements(const std::vector<Measurement>& ms);
// Throws MachineRefused ("the machine was disturbed during the measurement")
// when the noise benchmark saw interruptions closer than 100 us apart on
// average (noise_interval below its range, 0 excepted): a machine busy with
// other work all through it.
void refuse_flooded_noise(const std::vector<Measurement>& ms);
// A profile path that cannot be written, or a write that failed; what()
// names the path (exit 3 in the CLI).
struct ProfileWriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Checks, before the measurements start, that `path` can take a profile:
// it is a regular file or does not exist yet (not a directory, device or
// FIFO), its directory exists (`create_parent`: is created, for the default
// host profile) and a file can be created in it. Throws ProfileWriteError.
void check_profile_path(const std::filesystem::path& path, bool create_parent);
// Writes the profile as YAML with the report as comments: to a temporary
// file in the same directory, then renamed over `path`, so that a failed
// write (a full disk) leaves the old file, or none, and no partial one.
// Creates parent directories when `create_parent`. Throws ProfileWriteError.
void write_profile(const CalibrationReport& report, const std::filesystem::path& path,
                   bool create_parent = true);

}  // namespace poolsim::real
