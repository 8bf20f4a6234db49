#include "models/scenario.hpp"

#include <algorithm>
#include <cmath>

#include "models/backend_registry.hpp"

namespace poolsim {

int effective_cores(const MachineProfile& m, const Limits& l) {
  int n = l.cpuset.empty() ? m.cores : static_cast<int>(l.cpuset.size());
  if (l.cpus) n = std::min(n, std::max(1, static_cast<int>(std::ceil(*l.cpus - 1e-9))));
  return std::max(1, n);
}

int shares_from_weight(int weight) {
  return static_cast<int>((static_cast<std::int64_t>(weight) * 1024 + 50) / 100);
}

int weight_from_shares(int shares) {
  // cpu.weight is 1..10000: shares 2..5 round to 1, 262144 to 10000 (25600 is out of range).
  return static_cast<int>(
      std::clamp<std::int64_t>((static_cast<std::int64_t>(shares) * 100 + 512) / 1024, 1, 10000));
}

double cpu_capacity(const MachineProfile& m, const Limits& l) {
  double n = l.cpuset.empty() ? m.cores : static_cast<double>(l.cpuset.size());
  if (l.cpus) n = std::min(n, *l.cpus);
  return n;
}

std::string_view to_string(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::batch:
      return "batch";
    case ArrivalKind::poisson:
      return "poisson";
    case ArrivalKind::periodic:
      return "periodic";
    case ArrivalKind::closed:
      return "closed";
  }
  return "?";
}

std::string_view to_string(BackendKind k) { return backend_info(k).name; }

std::optional<BackendKind> backend_kind_from(std::string_view name) {
  for (auto k : kAllBackends)
    if (to_string(k) == name) return k;
  return std::nullopt;
}

std::string_view to_string(RejectPolicy p) {
  switch (p) {
    case RejectPolicy::abort:
      return "abort";
    case RejectPolicy::caller_runs:
      return "caller-runs";
    case RejectPolicy::discard:
      return "discard";
    case RejectPolicy::discard_oldest:
      return "discard-oldest";
  }
  return "?";
}

int BackendSpec::initial_threads() const {
  switch (kind) {
    case BackendKind::thread_per_task:
      return 0;
    case BackendKind::pool:
      return threads;  // started lazily, up to core
    case BackendKind::injecting_pool:
      return min_threads;
    case BackendKind::virtual_threads:
      return carriers;
    case BackendKind::event_loop:
      return loops;
    case BackendKind::work_stealing:
    case BackendKind::tbb:
    case BackendKind::asio_pool:
      return threads;
  }
  return threads;
}

int BackendSpec::thread_bound() const {
  switch (kind) {
    case BackendKind::thread_per_task:
      return 0;
    case BackendKind::pool:
    case BackendKind::injecting_pool:
      return std::max(max_threads, initial_threads());
    default:
      return initial_threads();
  }
}

double Tolerance::for_metric(std::string_view metric) const {
  if (auto it = per_metric.find(metric); it != per_metric.end()) return it->second;
  return default_tolerance;
}

}  // namespace poolsim
