// machine_fields.cpp: typed access to a MachineProfile through the field
// table (machine_fields.hpp): one std::visit per operation, so each kind's
// rule (units, rounding, text form) is written once.
#include "models/machine_fields.hpp"

#include <cmath>
#include <cstdio>
#include <type_traits>

namespace poolsim {

namespace {

// The largest unit that divides the value exactly, so the text reads back to
// the same nanosecond / byte.
std::string exact_duration(Duration d) {
  const std::int64_t ns = d.count();
  if (ns != 0 && ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000) + "s";
  if (ns != 0 && ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns != 0 && ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

std::string exact_size(Bytes b) {
  constexpr Bytes kKiB = 1024;
  if (b != 0 && b % (kKiB * kKiB * kKiB) == 0)
    return std::to_string(b / (kKiB * kKiB * kKiB)) + "GiB";
  if (b != 0 && b % (kKiB * kKiB) == 0) return std::to_string(b / (kKiB * kKiB)) + "MiB";
  if (b != 0 && b % kKiB == 0) return std::to_string(b / kKiB) + "KiB";
  return std::to_string(b) + "B";
}

// One end of a field's range, in the field's own units.
std::string bound_text(const MachineField& f, double v) {
  switch (f.kind()) {
    case FieldKind::count:
      return std::to_string(static_cast<long long>(v));
    case FieldKind::duration:
      return v == 0 ? "0" : exact_duration(from_seconds(v));
    case FieldKind::size:
      return v == 0 ? "0" : exact_size(static_cast<Bytes>(v));
    case FieldKind::fraction: {
      char text[32];
      std::snprintf(text, sizeof text, "%g", v);
      return text;
    }
  }
  return {};
}

}  // namespace

std::string machine_field_range(const MachineField& f) {
  const std::string span = bound_text(f, f.range.min) + " to " + bound_text(f, f.range.max);
  return f.range.zero_off ? "0 (off) or " + span : span;
}

std::string machine_field_range_error(const MachineField& f, const MachineProfile& m) {
  const double v = machine_field_si(f, m);
  if (f.range.zero_off && v == 0) return {};
  if (v >= f.range.min && v <= f.range.max) return {};  // false for NaN
  return std::string(f.name) + " must be " + machine_field_range(f) + ", got " +
         machine_field_yaml(f, m);
}

std::string_view to_string(FieldKind k) {
  switch (k) {
    case FieldKind::count:
      return "count";
    case FieldKind::duration:
      return "duration";
    case FieldKind::size:
      return "size";
    case FieldKind::fraction:
      return "fraction";
  }
  return "?";
}

const MachineField* find_machine_field(std::string_view name) {
  for (const MachineField& f : kMachineFields)
    if (f.name == name) return &f;
  return nullptr;
}

double machine_field_si(const MachineField& f, const MachineProfile& m) {
  return std::visit(
      [&](auto member) -> double {
        const auto& v = m.*member;
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Duration>)
          return to_seconds(v);
        else
          return static_cast<double>(v);
      },
      f.member);
}

void set_machine_field_si(const MachineField& f, MachineProfile& m, double v) {
  std::visit(
      [&](auto member) {
        auto& x = m.*member;
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Duration>)
          x = from_seconds(v);
        else
          x = static_cast<T>(v);
      },
      f.member);
}

void copy_machine_field(const MachineField& f, MachineProfile& to, const MachineProfile& from) {
  std::visit([&](auto member) { to.*member = from.*member; }, f.member);
}

bool same_machine_fields(const MachineProfile& a, const MachineProfile& b) {
  for (const MachineField& f : kMachineFields)
    if (!std::visit([&](auto member) { return a.*member == b.*member; }, f.member)) return false;
  return true;
}

std::string machine_field_yaml(const MachineField& f, const MachineProfile& m) {
  switch (f.kind()) {
    case FieldKind::count:
      return std::to_string(m.*std::get<int MachineProfile::*>(f.member));
    case FieldKind::duration:
      return exact_duration(m.*std::get<Duration MachineProfile::*>(f.member));
    case FieldKind::size:
      return exact_size(m.*std::get<Bytes MachineProfile::*>(f.member));
    case FieldKind::fraction: {
      // Three significant digits: calibrate's threshold is a midpoint of
      // 10% steps, and a file's percentages have at most three.
      char text[32];
      std::snprintf(text, sizeof text, "%.3g", m.*std::get<double MachineProfile::*>(f.member));
      return text;
    }
  }
  return {};
}

std::string machine_fields_markdown() {
  std::string out =
      "| field | kind | range | meaning | how `poolsim calibrate` measures it | if a file leaves "
      "it out |\n|---|---|---|---|---|---|\n";
  for (const MachineField& f : kMachineFields)
    out += "| `" + std::string(f.name) + "` | " + std::string(to_string(f.kind())) + " | " +
           machine_field_range(f) + " | " + std::string(f.meaning) + " | " +
           std::string(f.measured) + " | " +
           (f.presence == FieldPresence::required ? "error" : "the `default` profile's value") +
           " |\n";
  return out;
}

}  // namespace poolsim
