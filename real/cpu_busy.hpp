// cpu_busy.hpp: how busy this machine's CPUs are with other work, from
// /proc/stat, so that a measurement of the machine (calibrate) is not taken
// while other jobs run: calibrate would write their interference into the
// profile as the machine's own costs and OS noise (a profile calibrated at a
// load average of 20 here had noise_p99 = 42 ms and made simulated CPUs
// stall most of the time).
//
// Mechanism: the aggregate "cpu" line of /proc/stat counts jiffies by state;
// busy = everything but idle and iowait, over all of them, between two reads.
// scripts/reproduce's --max-busy check does the same in shell.
#pragma once

#include <optional>
#include <string>

namespace poolsim::real {

// The busy share (0..1) between two /proc/stat texts, or nullopt when either
// lacks a well-formed aggregate "cpu" line or no time passed.
std::optional<double> busy_fraction(const std::string& stat_before, const std::string& stat_after);

// The busy share of all CPUs over `seconds` (this thread sleeps meanwhile),
// or nullopt where /proc/stat cannot be read.
std::optional<double> sample_busy_fraction(double seconds);

}  // namespace poolsim::real
