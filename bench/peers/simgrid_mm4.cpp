// simgrid_mm4.cpp: the M/M/4 queue of bench/sim_scenarios.cpp
// (BM_MM4_rho09_1M) written for SimGrid 3.32's s4u API, to compare the speed
// of the two simulators on the same model.
//
// Model: one generator actor sleeps each exponential interarrival time
// (rate 0.9 * 4 / 1 ms), appends a job to a FIFO and releases a semaphore;
// four server actors acquire the semaphore, take the oldest job and sleep its
// exponential service time (mean 1 ms). No platform cost is involved (pure
// sleeps on one host), like poolsim's zero-overhead profile. Samples are drawn
// before the simulation starts, so the timed part is the simulation only.
// Output: one line "jobs=N cpu_s=.. wall_s=.. mean_wait_s=.." (mean wait
// from arrival to service start; Erlang C gives 2.0455 ms at rho 0.9).
// Built apart from poolsim (bench/peers/CMakeLists.txt); see compare-simgrid.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <random>
#include <simgrid/s4u.hpp>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Job {
  double arrival;
  double service;
};

std::vector<double> interarrivals, services;
std::deque<Job> queue;
sg4::SemaphorePtr jobs_ready;
double wait_sum = 0;
long served = 0;
long total = 0;

void generator() {
  for (long i = 0; i < total; ++i) {
    sg4::this_actor::sleep_for(interarrivals[i]);
    queue.push_back({sg4::Engine::get_clock(), services[i]});
    jobs_ready->release();
  }
}

void server() {
  for (;;) {
    jobs_ready->acquire();
    Job j = queue.front();
    queue.pop_front();
    wait_sum += sg4::Engine::get_clock() - j.arrival;
    ++served;
    sg4::this_actor::sleep_for(j.service);
    if (served == total && queue.empty()) {
      sg4::Actor::kill_all();  // the others wait on the semaphore forever
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  total = argc > 1 ? std::atol(argv[1]) : 1000000;
  const int servers = 4;
  const double mean_service = 1e-3, rho = 0.9;
  const double rate = rho * servers / mean_service;
  std::mt19937_64 rng(42);
  std::exponential_distribution<double> ia(rate), sv(1.0 / mean_service);
  interarrivals.resize(total);
  services.resize(total);
  for (long i = 0; i < total; ++i) {
    interarrivals[i] = ia(rng);
    services[i] = sv(rng);
  }

  auto* zone = sg4::create_full_zone("world");
  sg4::Host* host = zone->create_host("host", "1Gf");
  zone->seal();
  jobs_ready = sg4::Semaphore::create(0);
  sg4::Actor::create("generator", host, generator);
  for (int i = 0; i < servers; ++i) sg4::Actor::create("server", host, server);

  const std::clock_t c0 = std::clock();
  const auto w0 = std::chrono::steady_clock::now();
  e.run();
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  std::printf("jobs=%ld cpu_s=%.4f wall_s=%.4f mean_wait_s=%.6g\n", served, cpu, wall,
              served ? wait_sum / served : 0.0);
  return 0;
}
