// calibrate_common.cpp: clocks, pinning, quantiles and summaries shared by
// the calibration experiments (calibrate_experiments.hpp), and the forked
// child that reports through a pipe.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "models/assert.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/runner.hpp"

namespace poolsim::real::calib {

namespace {

// The unit a measurement of a field of this kind is reported in.
std::string unit_of(FieldKind k) {
  switch (k) {
    case FieldKind::count:
      return "";
    case FieldKind::duration:
      return "s";
    case FieldKind::size:
      return "B";
    case FieldKind::fraction:
      return "fraction";
  }
  return "";
}

std::int64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t now_ns() { return clock_ns(CLOCK_MONOTONIC); }

void sleep_until_ns(std::int64_t t) {
  const timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

std::int64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

std::int64_t process_cpu_ns() { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

Spinner::Spinner(int cpu, Policy policy) : cpu_(cpu), policy_(policy) {
  running_ = pthread_create(&thread_, nullptr, &Spinner::body, this) == 0;
  while (running_ && spins() == 0) sched_yield();
}

Spinner::~Spinner() {
  if (!running_) return;
  stop_.store(true, std::memory_order_relaxed);
  pthread_join(thread_, nullptr);
}

void* Spinner::body(void* self) {
  auto* s = static_cast<Spinner*>(self);
  pin_self(s->cpu_);
  if (s->policy_ == Policy::idle) {
    sched_param p{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
  }
  while (!s->stop_.load(std::memory_order_relaxed))
    s->spins_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void unpin_self(int cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int i = 0; i < cpus; ++i) CPU_SET(i, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::size_t median_index(const std::vector<double>& keys) {
  POOLSIM_ASSERT(!keys.empty(), "median_index: no keys");
  std::vector<std::size_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  return order[(order.size() - 1) / 2];
}

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

std::map<Duration, std::vector<double>> handovers_by_release(
    const std::vector<TaskRecord>& records) {
  std::map<Duration, std::vector<double>> released;
  for (const TaskRecord& rec : records)
    if (rec.outcome != TaskOutcome::not_run && rec.intended > Duration{0})
      released[rec.intended].push_back(to_seconds(rec.submit));
  for (auto& [at, submits] : released) std::sort(submits.begin(), submits.end());
  return released;
}

Measurement summarize(MachineFieldName field, std::vector<double> samples, std::string method) {
  Measurement m;
  m.field = std::string(field.field().name);
  m.unit = unit_of(field.field().kind());
  m.samples = static_cast<int>(samples.size());
  m.median = quantile(samples, 0.5);
  m.mean = mean_of(samples);
  m.p10 = quantile(samples, 0.1);
  m.p90 = quantile(samples, 0.9);
  m.method = std::move(method);
  return m;
}

double field_value(const std::vector<Measurement>& ms, MachineFieldName name) {
  for (const Measurement& m : ms)
    if (m.field == name.field().name) return m.median;
  return 0;
}

// Forks a child that writes its report to the pipe it is given and exits
// (`child` never returns), and returns all the child wrote once it is gone.
std::string forked_report(const std::function<void(int fd)>& child) {
  int p[2];
  if (::pipe(p) != 0) throw std::runtime_error("calibrate: pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("calibrate: fork failed");
  if (pid == 0) {
    ::close(p[0]);
    map_file_pages();  // as the runner's child: code faulted in before anything is timed
    child(p[1]);
    ::_exit(1);  // the child functions exit themselves
  }
  ::close(p[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return text;
}

}  // namespace poolsim::real::calib
