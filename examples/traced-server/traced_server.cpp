// traced-server: a worker pool of N threads serving a load generator's
// requests over a mutex+condvar queue. Each request is a CPU burst (burned
// against the thread's own CPU clock, so it costs the same CPU whatever the
// machine's load), a blocking wait (nanosleep) and a second, shorter CPU
// burst. The generator is open (a fixed rate, absolute-time sleeps) or closed
// (K requests outstanding: a new one for each completion). At the end it
// prints its own measurements: throughput (completed / time from the first
// submit to the last completion), mean latency (submit to completion) and
// mean queue wait (submit to a worker taking the request).
//
// Used to validate `poolsim record` / `import` end to end (docs/traces.md).
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "burn.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int workers = 4;
  double rate = 0;  // open loop, requests per second
  int clients = 0;  // closed loop, outstanding requests
  double cpu_us = 1000, wait_us = 2000, cpu2_us = 200;
  double duration_s = 5;
  bool names = true;
};

using example::burn;

struct Request {
  Clock::time_point submitted;
};

struct Server {
  Options opt;
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::deque<Request> queue;
  bool stopping = false;
  std::int64_t completed = 0, done_unseen = 0;
  double latency_sum = 0, queue_wait_sum = 0;
  Clock::time_point last_done;

  void worker(int id) {
    if (opt.names) pthread_setname_np(pthread_self(), ("worker-" + std::to_string(id)).c_str());
    while (true) {
      Request r;
      Clock::time_point taken;
      {
        std::unique_lock lk(mu);
        work_cv.wait(lk, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        r = queue.front();
        queue.pop_front();
        taken = Clock::now();
      }
      burn(opt.cpu_us);
      const auto w = std::chrono::nanoseconds(static_cast<std::int64_t>(opt.wait_us * 1000));
      timespec ts{static_cast<time_t>(w.count() / 1'000'000'000),
                  static_cast<long>(w.count() % 1'000'000'000)};
      nanosleep(&ts, nullptr);
      burn(opt.cpu2_us);
      const auto now = Clock::now();
      std::lock_guard lk(mu);
      ++completed;
      ++done_unseen;
      latency_sum += std::chrono::duration<double>(now - r.submitted).count();
      queue_wait_sum += std::chrono::duration<double>(taken - r.submitted).count();
      last_done = now;
      if (opt.clients > 0) done_cv.notify_one();
    }
  }

  void submit(Clock::time_point t) {
    {
      std::lock_guard lk(mu);
      queue.push_back(Request{t});
    }
    work_cv.notify_one();
  }

  // Open loop: request i is due at start + i / rate (absolute sleeps, so
  // a late wake-up does not shift the later arrivals).
  std::int64_t open_loop(Clock::time_point start) {
    const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / opt.rate));
    const auto end =
        start + std::chrono::nanoseconds(static_cast<std::int64_t>(opt.duration_s * 1e9));
    std::int64_t n = 0;
    for (auto due = start; due < end; due += period, ++n) {
      std::this_thread::sleep_until(due);
      submit(due);
    }
    return n;
  }

  // Closed loop: K outstanding; one new request per completion.
  std::int64_t closed_loop(Clock::time_point start) {
    const auto end =
        start + std::chrono::nanoseconds(static_cast<std::int64_t>(opt.duration_s * 1e9));
    std::int64_t n = 0;
    for (; n < opt.clients; ++n) submit(Clock::now());
    while (Clock::now() < end) {
      std::int64_t k = 0;
      {
        std::unique_lock lk(mu);
        done_cv.wait(lk, [&] { return done_unseen > 0; });
        k = done_unseen;
        done_unseen = 0;
      }
      for (std::int64_t i = 0; i < k && Clock::now() < end; ++i, ++n) submit(Clock::now());
    }
    return n;
  }
};

void usage() {
  std::fprintf(stderr,
               "traced-server [--workers N] (--rate R | --clients K) [--cpu US] [--wait US] "
               "[--cpu2 US] [--duration S] [--no-names]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Server s;
  Options& o = s.opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) usage();
      return std::atof(argv[++i]);
    };
    if (a == "--workers")
      o.workers = static_cast<int>(next());
    else if (a == "--rate")
      o.rate = next();
    else if (a == "--clients")
      o.clients = static_cast<int>(next());
    else if (a == "--cpu")
      o.cpu_us = next();
    else if (a == "--wait")
      o.wait_us = next();
    else if (a == "--cpu2")
      o.cpu2_us = next();
    else if (a == "--duration")
      o.duration_s = next();
    else if (a == "--no-names")
      o.names = false;
    else
      usage();
  }
  if (o.workers < 1 || (o.rate <= 0) == (o.clients <= 0)) usage();
  if (o.names) pthread_setname_np(pthread_self(), "traced-main");
  std::vector<std::thread> pool;
  for (int i = 0; i < o.workers; ++i) pool.emplace_back([&s, i] { s.worker(i); });
  std::int64_t submitted = 0;
  const auto start = Clock::now();
  std::thread gen([&] {
    if (o.names) pthread_setname_np(pthread_self(), "loadgen");
    submitted = o.clients > 0 ? s.closed_loop(start) : s.open_loop(start);
    std::unique_lock lk(s.mu);
    s.done_cv.wait(lk, [&] { return s.completed == submitted; });
  });
  // The generator waits for completions on done_cv in closed mode only; in
  // open mode the main thread polls for the end.
  if (o.clients == 0) {
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard lk(s.mu);
      if (submitted > 0 && s.completed == submitted) break;
    }
    s.done_cv.notify_all();
  }
  gen.join();
  {
    std::lock_guard lk(s.mu);
    s.stopping = true;
  }
  s.work_cv.notify_all();
  for (auto& t : pool) t.join();
  const double elapsed = std::chrono::duration<double>(s.last_done - start).count();
  std::printf("traced-server: workers %d, %s, cpu %.0f us + %.0f us, wait %.0f us\n", o.workers,
              o.clients > 0 ? ("closed " + std::to_string(o.clients) + " outstanding").c_str()
                            : ("open " + std::to_string(static_cast<int>(o.rate)) + "/s").c_str(),
              o.cpu_us, o.cpu2_us, o.wait_us);
  std::printf(
      "completed %lld in %.3f s: throughput %.1f/s, latency mean %.3f ms, queue wait mean %.3f "
      "ms\n",
      static_cast<long long>(s.completed), elapsed, s.completed / elapsed,
      s.latency_sum / s.completed * 1e3, s.queue_wait_sum / s.completed * 1e3);
  return 0;
}
