// container_sizing.hpp: `poolsim size --container`: for one request stream in
// one container (quota, burst, cpuset on a host with N CPUs), the pool sizes
// the common rules give, each simulated in that container, side by side.
//
// The rules (docs/containers.md has which runtime uses which, with sources):
//   host CPUs          N: what a runtime that ignores the container sees
//                      (std::thread::hardware_concurrency, Go before 1.25,
//                      nproc without a cpuset, a JVM without container
//                      support);
//   quota rounded down max(1, floor(Q)), at most the cpuset: Rust's
//                      available_parallelism and num_cpus::get;
//   quota rounded up   ceil(Q), at most the cpuset: Go 1.25's GOMAXPROCS
//                      (which never goes below 2), the JVM availableProcessors,
//                      .NET's Environment.ProcessorCount;
//   Little's law       ceil(lambda (C + W)): threads busy on average.
// Each distinct size is simulated (validate/sweep.hpp) on the request stream
// `size` uses (Poisson arrivals, [cpu C, wait W]) with the container's
// limits, and reported with p99, max, throttled periods and time and burst
// periods. The recommendation: the lowest p99; sizes within kP99Slack of it
// count as equal, and among those the least throttled time, then the fewest
// threads, wins; the text says which numbers decided.
// Left out: nothing is measured (sweep --measure does that), and the rules'
// minimums beyond the ones above (Go's 2 is applied, JVM's flags are not).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/units.hpp"
#include "validate/sizing.hpp"

namespace poolsim::validate {

// p99s within this fraction of the lowest one count as equal.
inline constexpr double kP99Slack = 0.05;

struct ContainerInputs {
  SizingInputs base;    // rate, cpu, wait, cpus (the quota), host_cores, service, requests
  Duration burst{};     // limits.burst
  std::string cpuset;   // limits.cpuset ("0-1"); empty: every host CPU
  int cpuset_size = 0;  // CPUs in the cpuset (0: none)
};

struct ContainerChoice {
  std::string rule;  // "host CPUs", "quota rounded down", ...
  std::string who;   // which runtimes pick it
  int threads = 0;
  Metrics metrics;
};

struct ContainerSizing {
  ContainerInputs in;
  std::vector<ContainerChoice> choices;
  std::size_t recommended = 0;  // index into choices
  std::string why;
};

// Throws SizingRefused without a quota or host CPU count, or for a load the
// container cannot carry (lambda C >= min(quota, cpuset)).
ContainerSizing size_container(const ContainerInputs& in, const SizingProgress& progress = {});
std::string container_sizing_text(const ContainerSizing& r);
nlohmann::ordered_json container_sizing_json(const ContainerSizing& r);

}  // namespace poolsim::validate
