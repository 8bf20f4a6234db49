// poolsim as a library: load a bundled scenario, build one in code, simulate
// both, read metrics and per-task records, and write a trace.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <poolsim/poolsim.hpp>

int main(int argc, char** argv) {
  namespace ps = poolsim;
  try {
    // 1. A scenario file, here the quickstart bundled with the installation,
    //    on the bundled `default` machine profile (as --machine default).
    const auto file = argc > 1 ? std::filesystem::path(argv[1])
                               : std::filesystem::path(POOLSIM_INSTALLED_CONFIG_DIR) / "scenarios" /
                                     "quickstart.yaml";
    ps::LoadOptions options = ps::lib::default_load_options();
    options.machine = "default";
    const ps::Scenario quick = ps::lib::load(file, options);
    const ps::lib::Result q = ps::lib::simulate(quick);
    std::printf("%s: makespan %.6f s, p99 latency %.6f s, %zu tasks\n", quick.name.c_str(),
                *q.metric("makespan"), *q.metric("latency_p99"), q.run.records.size());

    // 2. A scenario built in code: 200 tasks of 1 ms CPU, on 1 to 4 threads.
    for (int threads : {1, 2, 4}) {
      const ps::Scenario s =
          ps::lib::ScenarioBuilder("in-code")
              .set("machine", "default")
              .set("workload.arrival", "{kind: batch, count: 200}")
              .set("workload.task", "[{cpu: 1ms}]")
              .set("backend", "{kind: pool, threads: " + std::to_string(threads) + "}")
              .build();
      const ps::lib::Result r = ps::lib::simulate(s, /*trace=*/threads == 4);
      std::printf("in-code, %d threads: makespan %.6f s, throughput %.1f/s\n", threads,
                  *r.metric("makespan"), *r.metric("throughput"));
      if (threads == 4) {
        std::ofstream out("consumer-trace.json");
        ps::lib::write_trace(out, r, "in-code, 4 threads");
        std::printf("trace: %zu spans on %zu tracks -> consumer-trace.json\n",
                    r.run.trace.spans.size(), r.run.trace.tracks.size());
      }
    }

    // 3. Errors are the CLI's: located, with what was expected.
    try {
      (void)ps::lib::ScenarioBuilder("bad")
          .set("machine", "default")
          .set("workload.arrival", "{kind: batch, count: 10}")
          .set("workload.task", "[{cpu: 1ms}]")
          .set("backend", "{kind: pool, threads: many}")
          .build();
    } catch (const ps::ScenarioError& e) {
      std::printf("error, as expected: %s\n", e.what());
    }
  } catch (const std::exception& e) {
    std::cerr << "poolsim-consumer: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
