// progress.cpp: the progress display (design in progress.hpp).
#include "app/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <string>

#include "models/units.hpp"

namespace poolsim::app {

namespace {
std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}
}  // namespace

ProgressBar::ProgressBar(std::FILE* out)
    : out_(out),
      tty_(isatty(fileno(out)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressBar::update(const sim::SimProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  const double wall = std::chrono::duration<double>(now - start_).count();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (wall < 1.0 || since < (tty_ ? 0.1 : 10.0)) return;
  last_ = now;
  double done = -1;
  if (p.task_limit > 0)
    done = static_cast<double>(p.final_tasks) / static_cast<double>(p.task_limit);
  else if (p.arrivals_end != Duration::max() && p.arrivals_end.count() > 0)
    done = to_seconds(p.now) / to_seconds(p.arrivals_end);
  done = std::min(done, 1.0);
  std::string eta = "?";
  if (done > 0) eta = clock_text(wall * (1 - done) / done);
  const std::string counts = fmt::format("{} tasks final, simulated {}, wall {}", p.final_tasks,
                                         format_seconds(to_seconds(p.now)), clock_text(wall));
  if (!tty_) {
    if (done >= 0)
      fmt::print(out_, "progress: {:.1f}%, {}, ETA {}\n", 100 * done, counts, eta);
    else
      fmt::print(out_, "progress: {}\n", counts);
    std::fflush(out_);
    return;
  }
  constexpr int kWidth = 30;
  const int filled = done < 0 ? 0 : static_cast<int>(done * kWidth);
  const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                          std::string(static_cast<std::size_t>(kWidth - filled), '.');
  fmt::print(out_, "\r[{}] {} {}, ETA {}\033[K", bar,
             done < 0 ? std::string("  ?  ") : fmt::format("{:5.1f}%", 100 * done), counts, eta);
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (tty_ && drawn_) fmt::print(out_, "\n");
}

}  // namespace poolsim::app
