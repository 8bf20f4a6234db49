// little.hpp: Little's law, offered load, CPU utilisation and the classic
// pool-size formula: the first numbers `poolsim size` prints.
//
// Little's law L = lambda W (J. D. C. Little, "A proof for the queuing formula
// L = lambda W", Operations Research 9(3), 1961): holds for any stable system in
// the long run, whatever the distributions and the discipline.
// Offered load a = lambda S Erlangs: the mean number of busy servers when each
// request holds one for S seconds (a thread holds its worker for CPU + wait).
// CPU utilisation rho = lambda C / capacity, capacity in CPUs: the cores, or a CFS
// quota (cpu.max "150000 100000" is 1.5 CPUs), whichever is smaller.
// Pool size N = cores * U * (1 + W / C) (B. Goetz et al., "Java Concurrency in
// Practice", 2006, section 8.2, "Sizing thread pools"): enough threads that the
// CPUs stay busy at the target utilisation U while each thread spends W/C of its
// time waiting for every unit of CPU.
//
// What they leave out: Little's law says nothing about the distribution (see
// erlang.hpp and mmck.hpp for tails); Goetz's formula ignores the arrival rate
// entirely (it sizes for saturation, not for a given load) and any queueing delay.
// All times are in seconds and rates per second.
#pragma once

#include <optional>

namespace poolsim::queueing {

// L = lambda W: mean number in the system (concurrency) for a rate and a mean time.
double littles_law_concurrency(double arrival_rate, double mean_time);
// W = L / lambda and lambda = L / W: the other two readings of the same law.
double littles_law_time(double mean_in_system, double arrival_rate);
double littles_law_rate(double mean_in_system, double mean_time);

// a = lambda S, in Erlangs.
double offered_load(double arrival_rate, double service_time);

// The CPUs a pool can use: the core count, capped by a fractional quota if any.
double cpu_capacity(int cores, std::optional<double> quota_cpus);

// CPUs the load needs, lambda C.
double cpus_needed(double arrival_rate, double cpu_time);

// rho = lambda C / capacity. Above 1 the CPUs cannot carry the load; the caller
// refuses it and reports cpus_needed - capacity as the shortfall.
double cpu_utilization(double arrival_rate, double cpu_time, double capacity_cpus);

// Goetz: cores * target_utilization * (1 + wait_time / cpu_time), unrounded.
// cores may be fractional (a quota); target_utilization in (0, 1].
double goetz_pool_size(double cores, double target_utilization, double wait_time, double cpu_time);

}  // namespace poolsim::queueing
