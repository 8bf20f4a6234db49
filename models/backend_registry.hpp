// backend_registry.hpp: the one list of backend kinds.
//
// Mechanism: kBackends has one entry per BackendKind, in enum order: the
// kind's name in files and on the command line, a one-line description, and
// its parameters, each with the BackendSpec member it fills (the member's
// type is the parameter's kind: int = a thread count, Bytes = a size,
// Duration = a duration, optional<int64_t> = a queue capacity or unbounded,
// RejectPolicy = a reject policy), its default as the docs write it, and a
// one-line meaning. From it come the names (to_string(BackendKind)), the
// loader's "not a parameter of ... (it belongs to ...)" messages, the JSON
// and report text of a backend (validate/output.cpp, html_report.cpp),
// `poolsim compare --help`, and the backend table of docs/scenarios.md (a
// test compares it with backend_table_markdown()). The simulated and the real
// factories are tables in sim/simulate.cpp and real/registry.cpp, each checked
// at compile time to have one entry per kind in this order
// (in_registry_order), so a kind added here without both factories does not
// compile.
//
// Invariants: kBackends[i].kind == BackendKind(i) (static_assert below);
// parameter keys are unique within a kind.
// Left out: how each parameter is read and checked (defaults that depend on
// cores or on another parameter, ranges) stays in the loader
// (scenario_loader.cpp, read_backend), which fills every BackendSpec member.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/scenario.hpp"

namespace poolsim {

enum class ParamKind { thread_count, size, duration, queue_capacity, reject_policy };

struct BackendParam {
  using Member =
      std::variant<int BackendSpec::*, Bytes BackendSpec::*, Duration BackendSpec::*,
                   std::optional<std::int64_t> BackendSpec::*, RejectPolicy BackendSpec::*>;
  std::string_view key;
  Member member;
  std::string_view default_text;  // "cores", "= threads", "60s", ...
  std::string_view meaning;       // one line

  constexpr ParamKind kind() const { return static_cast<ParamKind>(member.index()); }
};

struct BackendInfo {
  BackendKind kind;
  std::string_view name;  // in files, --set and --backends
  std::string_view doc;   // one line: what the runtime is
  // The parameter that sets how many worker threads it starts with (what
  // `size --graph` sweeps); empty for thread-per-task, which has none.
  std::string_view workers;
  std::span<const BackendParam> params;
};

namespace backend_registry_detail {
// clang-format off
inline constexpr BackendParam kStack{"stack", &BackendSpec::stack, "8MiB", "thread stack size (reserve)"};
inline constexpr BackendParam kThreads{"threads", &BackendSpec::threads, "cores", "worker threads"};
inline constexpr BackendParam kThreadPerTask[] = {kStack};
inline constexpr BackendParam kPool[] = {
    {"threads", &BackendSpec::threads, "cores", "core threads, started one per submit until there are this many"},
    {"max_threads", &BackendSpec::max_threads, "= threads", "threads it grows to when the queue is full"},
    {"queue", &BackendSpec::queue, "unbounded", "queue capacity (a count, or unbounded)"},
    {"reject", &BackendSpec::reject, "abort", "when full at max_threads: abort, caller-runs, discard, discard-oldest"},
    {"keep_alive", &BackendSpec::keep_alive, "60s", "idle time after which a thread above `threads` ends"},
    kStack};
inline constexpr BackendParam kWorkStealing[] = {kThreads, kStack};
inline constexpr BackendParam kInjectingPool[] = {
    {"min_threads", &BackendSpec::min_threads, "cores", "threads it starts with"},
    {"max_threads", &BackendSpec::max_threads, "512", "threads it may inject up to"},
    {"injection_delay", &BackendSpec::injection_delay, "500ms", "no progress for this long adds a thread"},
    kStack};
inline constexpr BackendParam kVirtualThreads[] = {
    {"carriers", &BackendSpec::carriers, "cores", "OS threads that run the virtual threads"}};
inline constexpr BackendParam kEventLoop[] = {
    {"loops", &BackendSpec::loops, "cores", "event-loop threads"}};
inline constexpr BackendParam kLibraryThreads[] = {kThreads};
// clang-format on
}  // namespace backend_registry_detail

inline constexpr BackendInfo kBackends[] = {
    {BackendKind::thread_per_task, "thread-per-task",
     "a new OS thread per task (CreateThread, new Thread, pthread_create)", "",
     backend_registry_detail::kThreadPerTask},
    {BackendKind::pool, "pool",
     "ThreadPoolExecutor-style pool with a FIFO queue: core threads, then queue, then grow to "
     "max_threads, then reject",
     "threads", backend_registry_detail::kPool},
    {BackendKind::work_stealing, "work-stealing",
     "per-worker deques (LIFO local pop, FIFO steal) and a global injection queue", "threads",
     backend_registry_detail::kWorkStealing},
    {BackendKind::injecting_pool, "injecting-pool",
     "starts small and adds a thread when the queue makes no progress for injection_delay "
     "(Windows / .NET style)",
     "min_threads", backend_registry_detail::kInjectingPool},
    {BackendKind::virtual_threads, "virtual-threads",
     "M:N user-level threads on carriers; a wait unmounts, a wait inside a lock pins the carrier",
     "carriers", backend_registry_detail::kVirtualThreads},
    {BackendKind::event_loop, "event-loop",
     "loop threads; waits are non-blocking timers, a wait inside a lock blocks the loop", "loops",
     backend_registry_detail::kEventLoop},
    {BackendKind::tbb, "tbb", "oneTBB task arena (the real library; simulated as work-stealing)",
     "threads", backend_registry_detail::kLibraryThreads},
    {BackendKind::asio_pool, "asio-pool",
     "asio::thread_pool (the real library; simulated as a pool)", "threads",
     backend_registry_detail::kLibraryThreads},
};
inline constexpr std::size_t kBackendCount = std::size(kBackends);

namespace backend_registry_detail {
consteval bool registry_in_enum_order() {
  if (kBackendCount != std::size(kAllBackends)) return false;
  for (std::size_t i = 0; i < kBackendCount; ++i)
    if (kBackends[i].kind != kAllBackends[i] || static_cast<std::size_t>(kAllBackends[i]) != i)
      return false;
  return true;
}
static_assert(registry_in_enum_order(), "kBackends must list every BackendKind, in enum order");
}  // namespace backend_registry_detail

// True when `entries` (any array of structs with a `kind` member, such as a
// layer's factory table) has one entry per kind in registry order; a layer
// static_asserts it, and then indexes its table with backend_index().
template <class Entry, std::size_t N>
consteval bool in_registry_order(const Entry (&entries)[N]) {
  if (N != kBackendCount) return false;
  for (std::size_t i = 0; i < N; ++i)
    if (entries[i].kind != kBackends[i].kind) return false;
  return true;
}

constexpr std::size_t backend_index(BackendKind k) { return static_cast<std::size_t>(k); }
constexpr const BackendInfo& backend_info(BackendKind k) { return kBackends[backend_index(k)]; }

// The parameter `key` of kind `k`, or nullptr.
const BackendParam* find_backend_param(BackendKind k, std::string_view key);
// The kinds that have a parameter called `key`, in registry order.
std::vector<std::string> backend_kinds_with_param(std::string_view key);

// The value of a parameter as text for people: "4", "8 MiB", "60 s",
// "unbounded", "caller-runs".
std::string backend_param_text(const BackendParam& p, const BackendSpec& b);

// "pool: threads (cores), max_threads (= threads), ..." per kind, one line
// each with its description: what `compare --help` shows.
std::string backend_kinds_help();
// The backend table of docs/scenarios.md (Markdown, with a trailing newline).
std::string backend_table_markdown();

}  // namespace poolsim
