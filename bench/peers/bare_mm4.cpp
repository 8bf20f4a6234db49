// bare_mm4.cpp: the M/M/4 queue of bench/scenarios/mm4.yaml as the smallest
// discrete-event program we could write: a binary-heap priority queue of
// (time, sequence, kind) events, a FIFO of waiting jobs and a count of idle
// servers. It models nothing but the queue (no threads, CPUs or run queues),
// so it is the floor for the same event count: bench/run-peers runs it
// beside `poolsim simulate` and SimGrid.
//
// Model: arrivals at rate 0.9 * 4 / 1 ms (exponential gaps), exponential
// services of mean 1 ms, four servers, FIFO; samples are drawn as the events
// happen (std::mt19937_64, seed 42), like poolsim draws its tasks as the
// simulation consumes them. Output: one line "jobs=N cpu_s=.. wall_s=..
// mean_wait_s=.." (Erlang C gives a mean wait of 2.0455 ms at rho 0.9).
// Built apart from poolsim (bench/peers/CMakeLists.txt).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <queue>
#include <random>
#include <vector>

namespace {

struct Event {
  double t;
  std::uint64_t seq;
  bool arrival;
  bool operator>(const Event& o) const { return t > o.t || (t == o.t && seq > o.seq); }
};

}  // namespace

int main(int argc, char** argv) {
  const long total = argc > 1 ? std::atol(argv[1]) : 1000000;
  const int servers = 4;
  const double mean_service = 1e-3, rho = 0.9;
  const double rate = rho * servers / mean_service;
  std::mt19937_64 rng(42);
  std::exponential_distribution<double> ia(rate), sv(1.0 / mean_service);

  const auto wall0 = std::chrono::steady_clock::now();
  const std::clock_t cpu0 = std::clock();
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::deque<double> waiting;  // arrival times
  std::uint64_t seq = 0;
  long arrived = 0, served = 0;
  int idle = servers;
  double wait_sum = 0;
  events.push({ia(rng), seq++, true});
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    if (e.arrival) {
      ++arrived;
      if (arrived < total) events.push({e.t + ia(rng), seq++, true});
      if (idle > 0) {
        --idle;
        ++served;
        events.push({e.t + sv(rng), seq++, false});
      } else {
        waiting.push_back(e.t);
      }
    } else if (!waiting.empty()) {
      wait_sum += e.t - waiting.front();
      waiting.pop_front();
      ++served;
      events.push({e.t + sv(rng), seq++, false});
    } else {
      ++idle;
    }
  }
  const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::printf("jobs=%ld cpu_s=%.6f wall_s=%.6f mean_wait_s=%.9f\n", served, cpu, wall,
              wait_sum / static_cast<double>(served));
  return served == total ? 0 : 1;
}
