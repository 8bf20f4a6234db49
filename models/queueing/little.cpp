// little.cpp: Little's law and the pool-size formulas; formulas and sources in little.hpp.
#include "models/queueing/little.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace poolsim::queueing {
namespace {

void check_positive(const char* what, double v) {
  if (!(v > 0) || !std::isfinite(v))
    throw std::invalid_argument(fmt::format("{} must be positive, got {}", what, v));
}
void check_non_negative(const char* what, double v) {
  if (!(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(fmt::format("{} must be >= 0, got {}", what, v));
}

}  // namespace

double littles_law_concurrency(double arrival_rate, double mean_time) {
  check_non_negative("arrival rate", arrival_rate);
  check_non_negative("mean time in system", mean_time);
  return arrival_rate * mean_time;
}

double littles_law_time(double mean_in_system, double arrival_rate) {
  check_non_negative("mean number in system", mean_in_system);
  check_positive("arrival rate", arrival_rate);
  return mean_in_system / arrival_rate;
}

double littles_law_rate(double mean_in_system, double mean_time) {
  check_non_negative("mean number in system", mean_in_system);
  check_positive("mean time in system", mean_time);
  return mean_in_system / mean_time;
}

double offered_load(double arrival_rate, double service_time) {
  check_non_negative("arrival rate", arrival_rate);
  check_non_negative("service time", service_time);
  return arrival_rate * service_time;
}

double cpu_capacity(int cores, std::optional<double> quota_cpus) {
  if (cores < 1) throw std::invalid_argument(fmt::format("cores must be >= 1, got {}", cores));
  if (!quota_cpus) return cores;
  check_positive("CPU quota", *quota_cpus);
  return std::min(static_cast<double>(cores), *quota_cpus);
}

double cpus_needed(double arrival_rate, double cpu_time) {
  check_non_negative("arrival rate", arrival_rate);
  check_non_negative("CPU time", cpu_time);
  return arrival_rate * cpu_time;
}

double cpu_utilization(double arrival_rate, double cpu_time, double capacity_cpus) {
  check_positive("CPU capacity", capacity_cpus);
  return cpus_needed(arrival_rate, cpu_time) / capacity_cpus;
}

double goetz_pool_size(double cores, double target_utilization, double wait_time, double cpu_time) {
  check_positive("cores", cores);
  if (!(target_utilization > 0 && target_utilization <= 1))
    throw std::invalid_argument(
        fmt::format("target utilisation must be in (0, 1], got {}", target_utilization));
  check_non_negative("wait time", wait_time);
  check_positive("CPU time", cpu_time);
  return cores * target_utilization * (1 + wait_time / cpu_time);
}

}  // namespace poolsim::queueing
