// backend_registry.cpp: lookups over kBackends and the texts made from it
// (compare --help, the docs' backend table, a parameter's value for people).
#include "models/backend_registry.hpp"

#include <fmt/format.h>

#include <type_traits>

#include "models/units.hpp"

namespace poolsim {

namespace {

constexpr RejectPolicy kRejectPolicies[] = {RejectPolicy::abort, RejectPolicy::caller_runs,
                                            RejectPolicy::discard, RejectPolicy::discard_oldest};

// "abort; or caller-runs, discard, discard-oldest" for a reject policy, else
// the parameter's default.
std::string default_text(const BackendParam& p) {
  if (p.kind() != ParamKind::reject_policy) return std::string(p.default_text);
  std::string others;
  for (RejectPolicy r : kRejectPolicies)
    if (to_string(r) != p.default_text)
      others += (others.empty() ? "" : ", ") + std::string(to_string(r));
  return std::string(p.default_text) + "; or " + others;
}

}  // namespace

const BackendParam* find_backend_param(BackendKind k, std::string_view key) {
  for (const BackendParam& p : backend_info(k).params)
    if (p.key == key) return &p;
  return nullptr;
}

std::vector<std::string> backend_kinds_with_param(std::string_view key) {
  std::vector<std::string> out;
  for (const BackendInfo& b : kBackends)
    if (find_backend_param(b.kind, key) != nullptr) out.emplace_back(b.name);
  return out;
}

std::string backend_param_text(const BackendParam& p, const BackendSpec& b) {
  return std::visit(
      [&](auto member) -> std::string {
        const auto& v = b.*member;
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Bytes>)
          return format_bytes(static_cast<double>(v));
        else if constexpr (std::is_same_v<T, Duration>)
          return format_seconds(to_seconds(v));
        else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>)
          return v ? fmt::format("{}", *v) : std::string("unbounded");
        else if constexpr (std::is_same_v<T, RejectPolicy>)
          return std::string(to_string(v));
        else
          return fmt::format("{}", v);
      },
      p.member);
}

std::string backend_kinds_help() {
  std::string out;
  for (const BackendInfo& b : kBackends) {
    out += fmt::format("  {}: {}\n", b.name, b.doc);
    std::string params;
    for (const BackendParam& p : b.params)
      params += fmt::format("{}{} ({})", params.empty() ? "" : ", ", p.key, default_text(p));
    out += fmt::format("    parameters: {}\n", params);
  }
  return out;
}

std::string backend_table_markdown() {
  std::string out = "| kind | what it is | parameters (defaults) |\n|---|---|---|\n";
  for (const BackendInfo& b : kBackends) {
    std::string params;
    for (const BackendParam& p : b.params)
      params += fmt::format("{}`{}` ({})", params.empty() ? "" : ", ", p.key, default_text(p));
    out += fmt::format("| `{}` | {} | {} |\n", b.name, b.doc, params);
  }
  return out;
}

}  // namespace poolsim
