// The backend registry (models/backend_registry.hpp): names, parameters, the
// loader's messages made from it, and docs/scenarios.md's backend table,
// which must be what the registry prints.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "loader_fixtures.hpp"
#include "models/backend_registry.hpp"
#include "models/scenario_loader.hpp"

using namespace poolsim;
using poolsim::test::shipped;
namespace fs = std::filesystem;

namespace {

const std::string kWorkload =
    "workload:\n  arrival: {kind: batch, count: 2}\n  task: [{cpu: 1ms}]\n";

std::string error_of(const std::string& backend) {
  try {
    load_scenario_text("name: t\nmachine: default\n" + kWorkload + "backend: " + backend + "\n",
                       "t.yaml", shipped());
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return {};
}

// The Markdown table that follows the "## Backends" heading of a page.
std::string backend_table_of(const fs::path& page) {
  std::ifstream f(page);
  std::string line, table;
  bool in_section = false;
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Backends";
    if (!in_section) continue;
    if (line.rfind("|", 0) == 0) {
      table += line + "\n";
    } else if (!table.empty()) {
      break;
    }
  }
  return table;
}

}  // namespace

TEST_CASE("backend_registry: names round-trip, parameter keys are unique within a kind",
          "[registry]") {
  for (const BackendInfo& b : kBackends) {
    CAPTURE(b.name);
    CHECK(to_string(b.kind) == b.name);
    CHECK(backend_kind_from(b.name) == b.kind);
    CHECK(&backend_info(b.kind) == &b);
    CHECK(!b.doc.empty());
    std::set<std::string_view> keys;
    for (const BackendParam& p : b.params) {
      CHECK(keys.insert(p.key).second);
      CHECK(!p.default_text.empty());
      CHECK(!p.meaning.empty());
      CHECK(find_backend_param(b.kind, p.key) == &p);
    }
  }
  CHECK(!backend_kind_from("threadpool"));
}

TEST_CASE("backend_registry: docs/scenarios.md's backend table is the one the registry prints",
          "[registry][docs]") {
  const std::string docs = backend_table_of(fs::path(POOLSIM_SOURCE_DIR) / "docs" / "scenarios.md");
  // On a difference, the table the registry prints goes to stdout, unwrapped,
  // ready to paste into docs/scenarios.md.
  if (docs != backend_table_markdown())
    std::cout << "docs/scenarios.md, \"## Backends\", should read:\n" << backend_table_markdown();
  CHECK(docs == backend_table_markdown());
}

TEST_CASE(
    "backend_registry: the loader accepts a kind's own parameters and names the owners of "
    "another kind's",
    "[registry][loader]") {
  for (const BackendInfo& b : kBackends) {
    CAPTURE(b.name);
    // Every parameter of the kind is accepted (with a value of its type).
    std::string map = "{kind: " + std::string(b.name);
    for (const BackendParam& p : b.params) {
      switch (p.kind()) {
        case ParamKind::thread_count:
          map += ", " + std::string(p.key) + ": 2";
          break;
        case ParamKind::size:
          map += ", " + std::string(p.key) + ": 64KiB";
          break;
        case ParamKind::duration:
          map += ", " + std::string(p.key) + ": 1ms";
          break;
        case ParamKind::queue_capacity:
          map += ", " + std::string(p.key) + ": 4";
          break;
        case ParamKind::reject_policy:
          map += ", " + std::string(p.key) + ": discard";
          break;
      }
    }
    CHECK(error_of(map + "}").empty());
  }
  CHECK_THAT(error_of("{kind: virtual-threads, threads: 2}"),
             Catch::Contains("'threads' is not a parameter of backend kind 'virtual-threads' (it "
                             "belongs to pool, work-stealing, tbb, asio-pool)"));
  CHECK_THAT(error_of("{kind: event-loop, carriers: 2}"),
             Catch::Contains("(it belongs to virtual-threads)"));
}

TEST_CASE("backend_registry: parameter values read as people write them", "[registry]") {
  BackendSpec b;
  b.kind = BackendKind::pool;
  b.threads = 4;
  b.reject = RejectPolicy::caller_runs;
  b.keep_alive = std::chrono::milliseconds(2);
  std::string text;
  for (const BackendParam& p : backend_info(b.kind).params)
    text += std::string(p.key) + "=" + backend_param_text(p, b) + " ";
  CHECK(text == "threads=4 max_threads=0 queue=unbounded reject=caller-runs keep_alive=" +
                    format_seconds(0.002) + " stack=" + format_bytes(8.0 * 1024 * 1024) + " ");
  CHECK_THAT(backend_kinds_help(), Catch::Contains("reject (abort; or caller-runs, discard, "
                                                   "discard-oldest)"));
}
