// sim_engine.cpp: raw speed of the discrete-event engine (events per second).
//
// 1024 self-rescheduling actors, each firing at pseudo-random delays (a
// fixed LCG, deterministic), so the heap holds ~1k pending events as in a
// busy simulation; a second case cancels half of what it schedules (the
// kernel cancels a CPU's pending event on every wake onto a busy CPU).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/engine.hpp"

namespace {

using poolsim::sim::Engine;
using poolsim::sim::EventId;

struct Actors {
  Engine* e;
  std::uint64_t x = 88172645463325252ULL;
  std::uint64_t remaining = 0;
  bool cancel_half = false;
  std::vector<EventId> spare;

  std::int64_t delay() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>((x >> 40) & 0xffff) + 1;
  }
  static void fire(void* ctx, std::uint64_t id) {
    auto* a = static_cast<Actors*>(ctx);
    if (a->remaining == 0) return;
    --a->remaining;
    a->e->at_ns(a->e->now_ns() + a->delay(), &Actors::fire, ctx, id);
    if (a->cancel_half) {
      EventId& s = a->spare[id];
      a->e->cancel(s);
      s = a->e->at_ns(a->e->now_ns() + a->delay(), &Actors::noop, ctx, id);
    }
  }
  static void noop(void*, std::uint64_t) {}
};

void run(benchmark::State& state, bool cancel_half) {
  const std::uint64_t events = 10'000'000;
  std::uint64_t fired = 0;
  for (auto _ : state) {
    Engine e;
    Actors a{&e};
    a.remaining = events;
    a.cancel_half = cancel_half;
    a.spare.resize(1024);
    for (std::uint64_t i = 0; i < 1024; ++i) e.at_ns(a.delay(), &Actors::fire, &a, i);
    e.run();
    fired += e.fired();
    benchmark::DoNotOptimize(e.now_ns());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(fired));
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(fired), benchmark::Counter::kIsRate);
}

void BM_EngineEvents(benchmark::State& state) { run(state, false); }
void BM_EngineEventsWithCancel(benchmark::State& state) { run(state, true); }

}  // namespace

BENCHMARK(BM_EngineEvents)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EngineEventsWithCancel)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
