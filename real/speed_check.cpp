// speed_check.cpp: the machine-speed canary (design comment in speed_check.hpp).
#include "real/speed_check.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>
#include <vector>

#include "real/cpu_work.hpp"

namespace poolsim::real {

double canary_speed() { return canary_rate() / reference_units_per_ns(); }

bool within_band(double speed, double band) { return std::fabs(speed - 1.0) <= band; }

bool within_band(const SpeedCheck& s, double band) {
  return within_band(s.before, band) && within_band(s.after, band) &&
         (!s.during_sampled || within_band(s.during, band)) &&
         (!s.kernel_checked ||
          (within_band(s.kernel_before, band) && within_band(s.kernel_after, band)));
}

bool within_band(const Canaries& c, double band) {
  return within_band(c.loop, band) && (c.kernel == 0 || within_band(c.kernel, band));
}

namespace {
constexpr std::size_t kKernelRoundBytes = std::size_t{8} << 20;  // glibc's default stack
constexpr int kKernelWarmRounds = 10, kKernelRounds = 101;

// One round of the stack path: what glibc's allocate_stack and a thread's
// first touches cost the kernel, and the unmap of a stack its cache drops.
Duration kernel_round() {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto t0 = std::chrono::steady_clock::now();
  void* mem =
      mmap(nullptr, kKernelRoundBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error("speed check: mmap of an 8 MiB stack failed");
  char* p = static_cast<char*>(mem);
  mprotect(p + page, kKernelRoundBytes - page, PROT_READ | PROT_WRITE);
  *reinterpret_cast<volatile char*>(p + kKernelRoundBytes - 1) = 1;
  *reinterpret_cast<volatile char*>(p + kKernelRoundBytes - 1 - page) = 1;
  munmap(mem, kKernelRoundBytes);
  return std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - t0);
}
}  // namespace

Duration kernel_round_time() {
  for (int i = 0; i < kKernelWarmRounds; ++i) kernel_round();
  std::vector<Duration> t(kKernelRounds);
  for (Duration& d : t) d = kernel_round();
  std::nth_element(t.begin(), t.begin() + kKernelRounds / 2, t.end());
  return t[kKernelRounds / 2];
}

double kernel_speed(Duration profile_round) {
  if (profile_round <= Duration{0}) return 0;
  const Duration now = kernel_round_time();
  return static_cast<double>(profile_round.count()) /
         static_cast<double>(std::max<Duration::rep>(1, now.count()));
}

bool steady(const SpeedCheck& s, double drift) {
  return s.before > 0 && within_band(s.after / s.before, drift);
}

Canaries wait_for_speed(double band, Duration limit, Duration kernel_ref,
                        const std::function<void(const std::string&)>& note) {
  const auto read = [&] { return Canaries{canary_speed(), kernel_speed(kernel_ref)}; };
  Canaries c = read();
  if (within_band(c, band)) return c;
  if (note)
    note(fmt::format(
        "the machine runs at {} of its calibrated speed{}: waiting up to {:.0f} s for it",
        format_speed(c.loop),
        c.kernel > 0 ? fmt::format(" (its kernel paths at {})", format_speed(c.kernel)) : "",
        to_seconds(limit)));
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!within_band(c, band) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    c = read();
  }
  return c;
}

std::string format_speed(double speed) { return fmt::format("{:.2f}x", speed); }

std::string describe_speed(const SpeedCheck& s) {
  if (!s.measured) return "not checked";
  std::string out = "before " + format_speed(s.before);
  out += s.during_sampled ? ", during " + format_speed(s.during) : ", during: no phase sampled";
  out += ", after " + format_speed(s.after);
  if (s.kernel_checked)
    out +=
        ", kernel paths " + format_speed(s.kernel_before) + " and " + format_speed(s.kernel_after);
  out += fmt::format(", {} attempt{}", s.attempts, s.attempts == 1 ? "" : "s");
  return out;
}

}  // namespace poolsim::real
