// progress.cpp: see progress.hpp (bar on a terminal, plain lines elsewhere).
#include "validate/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace poolsim::validate {

std::string format_eta(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 3600) return fmt::format("{} min {:02} s", total / 60, total % 60);
  return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

Progress::Progress(std::string label, std::size_t total, std::ostream& out, Style style,
                   Clock clock)
    : label_(std::move(label)), total_(total), out_(out), style_(style), clock_(std::move(clock)) {
  start_ = clock_();
}

Progress::~Progress() { finish(); }

Progress::Style Progress::style_for_stderr(bool quiet) {
  if (quiet) return Style::quiet;
  return ::isatty(STDERR_FILENO) ? Style::bar : Style::lines;
}

std::size_t Progress::done() const {
  std::lock_guard lock(mu_);
  return done_;
}

std::string Progress::eta_text(double elapsed) const {
  if (done_ == 0) return "ETA ?";
  if (done_ >= total_) return "done";
  const double eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  return "ETA " + format_eta(eta);
}

void Progress::step(const std::string& item) {
  std::lock_guard lock(mu_);
  if (finished_) return;
  ++done_;
  if (style_ == Style::quiet) return;
  const auto now = clock_();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double frac =
      total_ == 0 ? 1.0 : std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
  const int pct = static_cast<int>(std::floor(frac * 100.0));
  if (style_ == Style::lines) {
    out_ << fmt::format("{}: {}/{} ({}%) {}, {}\n", label_, done_, total_, pct, item,
                        eta_text(elapsed));
    out_.flush();
    return;
  }
  const bool last = done_ >= total_;
  if (drawn_ && !last && now - last_draw_ < redraw_interval) return;
  last_draw_ = now;
  const int filled = static_cast<int>(std::floor(frac * bar_width));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(bar_width - filled), '.');
  // "\r" returns to the line start, "\x1b[K" (ANSI erase to end of line) clears
  // what a longer previous item left behind.
  out_ << fmt::format("\r{} [{}] {}/{} {:3}%  {} elapsed, {}  {}\x1b[K", label_, bar, done_, total_,
                      pct, format_eta(elapsed), eta_text(elapsed), item);
  out_.flush();
  drawn_ = true;
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (style_ == Style::bar && drawn_) {
    out_ << '\n';
    out_.flush();
  }
}

PhasedProgress::PhasedProgress(std::string label, std::ostream& out, Progress::Style style)
    : label_(std::move(label)), out_(out), style_(style) {}

void PhasedProgress::phase(const std::string& name, std::size_t total) {
  if (current_) current_->finish();
  current_ = std::make_unique<Progress>(label_ + " " + name, total, out_, style_);
}

void PhasedProgress::step(const std::string& item) {
  if (current_) current_->step(item);
}

void PhasedProgress::finish() {
  if (current_) current_->finish();
}

}  // namespace poolsim::validate
