// The machine-profile field table (models/machine_fields.hpp): its
// invariants, and that the loader, the profile writer and the shipped
// default profile all agree with it field by field.
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "loader_fixtures.hpp"
#include "models/machine_fields.hpp"
#include "models/scenario_loader.hpp"

using namespace poolsim;
using poolsim::test::shipped;
namespace fs = std::filesystem;

namespace {

// A profile whose every field holds a value no other field holds, none of
// them a round number (so the writer's exact units are exercised).
MachineProfile distinct_profile() {
  MachineProfile m;
  m.name = "distinct";
  for (std::size_t i = 0; i < kMachineFieldCount; ++i) {
    const MachineField& f = kMachineFields[i];
    const double k = static_cast<double>(i + 1);
    switch (f.kind()) {
      case FieldKind::count:  // a switch (range 0 to 1) holds 1
        set_machine_field_si(f, m, std::min(2 + k, f.range.max));
        break;
      case FieldKind::duration:  // inside the range: the periods start at 100 us
        set_machine_field_si(f, m, f.range.min + k * 1.001e-6);
        break;
      case FieldKind::size:  // a part of a page (arena_header) stays below a page
        set_machine_field_si(f, m,
                             f.range.max < 1024 * 1024 ? f.range.max - k : 1024 * 1024 * k + k);
        break;
      case FieldKind::fraction:
        set_machine_field_si(f, m, k / 100);
        break;
    }
  }
  m.stack_touch = 4096;  // must not exceed stack_reserve
  return m;
}

class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_(fs::temp_directory_path() / ("poolsim-fields-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(++n_) + ".yaml")) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { fs::remove(path_); }
  std::string str() const { return path_.string(); }

 private:
  static inline int n_ = 0;
  fs::path path_;
};

// The profile text without the line of `field`.
std::string without(const std::string& text, std::string_view field) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(std::string(field) + ":", 0) != 0) out += line + "\n";
  return out;
}

}  // namespace

// Compile-time lookup: a misspelt name in a MachineFieldName does not compile.
static_assert(machine_field_index("cores") == 0);
static_assert(MachineFieldName("carrier_stack").index == kMachineFieldCount - 1);
static_assert(kMachineFields[machine_field_index("stack_cache")].kind() == FieldKind::size);
static_assert(kMachineFields[machine_field_index("slice")].kind() == FieldKind::duration);
static_assert(kMachineFields[machine_field_index("wake_pack_util")].kind() == FieldKind::fraction);

TEST_CASE("machine_fields: names and members are unique, meanings and methods are given",
          "[machine_fields]") {
  std::set<std::string_view> names;
  std::set<std::size_t> members;
  MachineProfile probe{};
  for (const MachineField& f : kMachineFields) {
    CAPTURE(f.name);
    CHECK(names.insert(f.name).second);
    CHECK(!f.meaning.empty());
    CHECK(!f.measured.empty());
    CHECK(find_machine_field(f.name) == &f);
    // Distinct members: each field's storage has its own address.
    const auto addr = std::visit(
        [&](auto member) { return reinterpret_cast<std::size_t>(&(probe.*member)); }, f.member);
    CHECK(members.insert(addr).second);
  }
  CHECK(find_machine_field("swich_cost") == nullptr);
}

TEST_CASE("machine_fields: the shipped default profile gives exactly the table's fields, in order",
          "[machine_fields]") {
  const YAML::Node root = YAML::LoadFile(
      (fs::path(POOLSIM_SOURCE_DIR) / "configs" / "machines" / "default.yaml").string());
  std::vector<std::string> keys;
  for (const auto& kv : root)
    if (kv.first.Scalar() != "name") keys.push_back(kv.first.Scalar());
  std::vector<std::string> table;
  for (const MachineField& f : kMachineFields) table.emplace_back(f.name);
  CHECK(keys == table);
}

TEST_CASE("machine_fields: every field survives the profile writer and the loader exactly",
          "[machine_fields]") {
  const MachineProfile m = distinct_profile();
  const std::string text = machine_profile_yaml(m, "written by a test");
  const TempFile file(text);
  const MachineProfile r = load_machine_profile(file.str(), shipped());
  for (const MachineField& f : kMachineFields) {
    CAPTURE(f.name, machine_field_yaml(f, m));
    CHECK(text.find("\n" + std::string(f.name) + ": " + machine_field_yaml(f, m) + "\n") !=
          std::string::npos);
    CHECK(machine_field_si(f, r) == Approx(machine_field_si(f, m)).epsilon(1e-12));
  }
  CHECK(same_machine_fields(r, m));
}

TEST_CASE(
    "machine_fields: a profile without a required field is refused, one without a from_default "
    "field takes the default profile's value",
    "[machine_fields]") {
  const MachineProfile m = distinct_profile();
  const MachineProfile d = load_machine_profile("default", shipped());
  const std::string text = machine_profile_yaml(m);
  for (const MachineField& f : kMachineFields) {
    CAPTURE(f.name);
    const TempFile file(without(text, f.name));
    if (f.presence == FieldPresence::required) {
      try {
        load_machine_profile(file.str(), shipped());
        FAIL("loaded a profile without " << f.name);
      } catch (const ScenarioError& e) {
        CHECK_THAT(e.key(), Catch::EndsWith(std::string(f.name)));
      }
    } else {
      const MachineProfile r = load_machine_profile(file.str(), shipped());
      CHECK(machine_field_si(f, r) == machine_field_si(f, d));
      CHECK(machine_field_si(f, r) != machine_field_si(f, m));
    }
  }
}

TEST_CASE("machine_fields: a negative duration is refused for every duration field",
          "[machine_fields]") {
  for (const MachineField& f : kMachineFields) {
    if (f.kind() != FieldKind::duration) continue;
    CAPTURE(f.name);
    const TempFile file("base: default\n" + std::string(f.name) + ": -1us\n");
    try {
      load_machine_profile(file.str(), shipped());
      FAIL("accepted a negative " << f.name);
    } catch (const ScenarioError& e) {
      CHECK_THAT(e.key(), Catch::EndsWith(std::string(f.name)));
    }
  }
}

TEST_CASE("machine_fields: docs/scenarios.md's field table is the one the table prints",
          "[machine_fields][docs]") {
  std::ifstream page(fs::path(POOLSIM_SOURCE_DIR) / "docs" / "scenarios.md");
  std::string line, table;
  bool in_section = false;
  while (std::getline(page, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Machine profiles";
    if (!in_section) continue;
    if (line.rfind("|", 0) == 0)
      table += line + "\n";
    else if (!table.empty())
      break;
  }
  // On a difference, the expected table goes to stdout, unwrapped, ready to
  // paste into docs/scenarios.md.
  if (table != machine_fields_markdown())
    std::cout << "docs/scenarios.md, \"## Machine profiles\", should read:\n"
              << machine_fields_markdown();
  CHECK(table == machine_fields_markdown());
}

TEST_CASE("machine_fields.range: every field states a range its shipped value is inside",
          "[machine_fields][hostile]") {
  const MachineProfile d = load_machine_profile("default", shipped());
  for (const MachineField& f : kMachineFields) {
    CAPTURE(f.name);
    CHECK(f.range.min <= f.range.max);
    CHECK(machine_field_range_error(f, d).empty());
  }
}

TEST_CASE("machine_fields.range: a value outside the range names the field, range and value",
          "[machine_fields][hostile]") {
  MachineProfile m = load_machine_profile("default", shipped());
  const MachineField& tick = MachineFieldName("tick").field();
  m.tick = Duration{20'000};
  CHECK(machine_field_range_error(tick, m) == "tick must be 0 (off) or 100us to 1s, got 20us");
  m.tick = Duration{0};
  CHECK(machine_field_range_error(tick, m).empty());
  const MachineField& pack = MachineFieldName("wake_pack_util").field();
  m.wake_pack_util = std::nan("");
  CHECK(machine_field_range_error(pack, m) == "wake_pack_util must be 0 to 1, got nan");
  const MachineField& stack = MachineFieldName("stack_reserve").field();
  m.stack_reserve = 4096;
  CHECK(machine_field_range_error(stack, m) == "stack_reserve must be 16KiB to 1024GiB, got 4KiB");
}
