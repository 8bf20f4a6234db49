// backend_reader.cpp: the `backend:` section: kind, its parameters, thread counts.
//
// The allowed parameters of each kind come from the backend registry
// (models/backend_registry.hpp), which also names the kinds a misplaced
// parameter belongs to. Pool parameters follow ThreadPoolExecutor's rules
// (core <= max, the four reject policies).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "models/backend_registry.hpp"
#include "models/section_readers.hpp"

namespace poolsim::loader {

using yaml::MapReader;
using yaml::Val;

namespace {

// "4", "cores", "2*cores", "cores*2", "cores/2" (at least 1); host_cpus in
// place of cores: every CPU of the machine, what a runtime that ignores the
// container sees (docs/containers.md).
int thread_count(const Val& v, int cores, int host_cpus) {
  std::string s = yaml::scalar(v, "a thread count (4, cores, 2*cores, cores/2, host_cpus)");
  s.erase(std::remove_if(s.begin(), s.end(),
                         [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
          s.end());
  const std::string expected =
      "expected a thread count: a whole number, cores, N*cores, cores*N or cores/N (got '" +
      v.node.Scalar() + "'); host_cpus may stand for cores";
  if (const auto h = s.find("host_cpus"); h != std::string::npos) {
    s.replace(h, 9, "cores");
    cores = host_cpus;
  }
  auto number = [&](const std::string& t) -> long long {
    if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        }))
      v.fail(expected);
    // More than 9 digits cannot be an int thread count.
    if (t.size() > 9)
      v.fail("a thread count must be at most 2147483647 (and at most run.max_threads), got " + t);
    return std::stoll(t);
  };
  long long n = 0;
  if (s == "cores") {
    n = cores;
  } else if (s.size() > 6 && s.compare(s.size() - 6, 6, "*cores") == 0) {
    n = number(s.substr(0, s.size() - 6)) * cores;
  } else if (s.rfind("cores*", 0) == 0) {
    n = number(s.substr(6)) * cores;
  } else if (s.rfind("cores/", 0) == 0) {
    const long long d = number(s.substr(6));
    if (d == 0) v.fail("cannot divide cores by 0");
    n = std::max<long long>(1, cores / d);
  } else {
    n = number(s);
  }
  if (n < 1) v.fail("a thread count must be at least 1 (got " + std::to_string(n) + ")");
  if (n > std::numeric_limits<int>::max())
    v.fail("a thread count must be at most 2147483647 (and at most run.max_threads), got " +
           std::to_string(n));
  return static_cast<int>(n);
}

// A thread-count parameter of the backend map, or its default.
struct CountOr {
  const MapReader& r;
  int cores, host_cpus;
  int operator()(const char* key, int dflt) const {
    if (auto x = r.get(key)) return thread_count(*x, cores, host_cpus);
    return dflt;
  }
};

// The backend's `kind:` (nothing when missing), read before the map is
// checked so the allowed keys can follow it.
std::optional<BackendKind> backend_kind(const Val& v, const std::vector<std::string>& kinds) {
  std::optional<BackendKind> kind;
  if (v.is_map())
    for (auto it = v.node.begin(); it != v.node.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "kind") {
        Val kv{v.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
               v.path + ".kind"};
        const std::string name = yaml::scalar(kv, "a backend kind (" + yaml::join(kinds) + ")");
        kind = backend_kind_from(name);
        if (!kind) kv.fail(yaml::unknown_message("backend kind", name, kinds));
      }
  return kind;
}

RejectPolicy read_reject_policy(const Val& rj) {
  static const std::vector<std::string> kPolicies = {"abort", "caller-runs", "discard",
                                                     "discard-oldest"};
  const std::string p = yaml::scalar(rj, "a reject policy (" + yaml::join(kPolicies) + ")");
  if (p == "abort") return RejectPolicy::abort;
  if (p == "caller-runs") return RejectPolicy::caller_runs;
  if (p == "discard") return RejectPolicy::discard;
  if (p == "discard-oldest") return RejectPolicy::discard_oldest;
  rj.fail(yaml::unknown_message("reject policy", p, kPolicies));
}

// kind: pool (ThreadPoolExecutor's parameters).
void read_pool(const MapReader& r, const CountOr& count_or, BackendSpec& b) {
  b.threads = count_or("threads", count_or.cores);
  b.max_threads = count_or("max_threads", b.threads);
  if (b.max_threads < b.threads)
    r.get("max_threads")
        ->fail("max_threads (" + std::to_string(b.max_threads) + ") must be at least threads (" +
               std::to_string(b.threads) + ")");
  if (auto q = r.get("queue")) {
    if (q->is_scalar() && q->node.Scalar() == "unbounded")
      b.queue.reset();
    else
      b.queue = yaml::integer(*q, 0, std::numeric_limits<std::int64_t>::max(),
                              "queue (a capacity, or unbounded)");
  }
  if (auto rj = r.get("reject")) b.reject = read_reject_policy(*rj);
  if (auto k = r.get("keep_alive")) b.keep_alive = yaml::duration(*k);
}

// kind: injecting-pool.
void read_injecting_pool(const MapReader& r, const CountOr& count_or, BackendSpec& b) {
  b.min_threads = count_or("min_threads", count_or.cores);
  // The default max_threads for injecting-pool (docs/runtimes.md), after the
  // Win32 default pool's maximum (sources give 500 or 512; unconfirmed).
  constexpr int kDefaultInjectingMax = 512;
  b.max_threads = count_or("max_threads", std::max(kDefaultInjectingMax, b.min_threads));
  if (b.min_threads > b.max_threads)
    (r.get("max_threads") ? *r.get("max_threads") : *r.get("min_threads"))
        .fail("injecting-pool needs min_threads <= max_threads (min " +
              std::to_string(b.min_threads) + ", max " + std::to_string(b.max_threads) + ")");
  if (auto d = r.get("injection_delay")) {
    b.injection_delay = yaml::duration(*d);
    if (b.injection_delay <= Duration{0}) d->fail("injection_delay must be greater than 0ns");
  }
}

}  // namespace

BackendSpec read_backend(const Val& v, int cores, int host_cpus) {
  std::vector<std::string> kinds;
  for (auto k : kAllBackends) kinds.emplace_back(to_string(k));
  const std::optional<BackendKind> kind = backend_kind(v, kinds);
  // The parameters of the backend registry (models/backend_registry.hpp).
  std::vector<std::string> allowed = {"kind"};
  for (const BackendInfo& b : kBackends)
    if (!kind || b.kind == *kind)  // without a kind, accept all so the missing kind is reported
      for (const BackendParam& p : b.params)
        if (std::find(allowed.begin(), allowed.end(), p.key) == allowed.end())
          allowed.emplace_back(p.key);
  MapReader r(v, allowed, "a backend", [&](const std::string& key) -> std::string {
    if (!kind) return {};
    const std::vector<std::string> owners = backend_kinds_with_param(key);
    if (owners.empty()) return {};
    return "'" + key + "' is not a parameter of backend kind '" + std::string(to_string(*kind)) +
           "' (it belongs to " + yaml::join(owners) + ")";
  });
  r.require("kind", "one of " + yaml::join(kinds));
  BackendSpec b;
  b.kind = *kind;
  if (auto s = r.get("stack")) {
    b.stack = yaml::size(*s);
    // glibc refuses stacks below PTHREAD_STACK_MIN (16 KiB on x86-64 Linux).
    if (b.stack < 16 * 1024) s->fail("a thread stack must be at least 16KiB (PTHREAD_STACK_MIN)");
  }
  const CountOr count_or{r, cores, host_cpus};
  switch (b.kind) {
    case BackendKind::thread_per_task:
      break;
    case BackendKind::pool:
      read_pool(r, count_or, b);
      break;
    case BackendKind::injecting_pool:
      read_injecting_pool(r, count_or, b);
      break;
    case BackendKind::virtual_threads:
      b.carriers = count_or("carriers", cores);
      break;
    case BackendKind::event_loop:
      b.loops = count_or("loops", cores);
      break;
    case BackendKind::work_stealing:
    case BackendKind::tbb:
    case BackendKind::asio_pool:
      b.threads = count_or("threads", cores);
      break;
  }
  return b;
}

}  // namespace poolsim::loader
