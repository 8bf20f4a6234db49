// progress.hpp: progress of a long batch of jobs (sweep grid points, sizing
// candidates) on stderr: a redrawn bar with ETA on a terminal, plain lines
// otherwise.
//
// Mechanism: the owner says how many steps there are; each finished step
// calls step(label). On a terminal (Style::bar) one line is redrawn in place
// with '\r': "[########........]  12/40  30%  3.2 s elapsed, ETA 7.5 s  backend.threads=8",
// at most every `redraw_interval` (and always for the last step) so thousands
// of fast steps do not flood the terminal; finish() ends the line. Elsewhere
// (Style::lines: a pipe, a CI log file) each step is one plain line
// "sweep: 12/40 (30%) backend.threads=8, ETA 7.5 s", which logs keep and grep.
// ETA = elapsed / done * (total - done): steps of similar cost (a grid of one
// scenario) make it good enough; it is only shown after the first step.
//
// Invariants: thread-safe (step() may be called from the sweep's worker
// threads; one mutex serialises the counter and the output); the clock is
// injectable so tests check the text exactly. Nothing is written when quiet.
//
// Why our own: Debian packages no C++ progress-bar library (indicators,
// progresscpp, tqdm.cpp and barkeep are not in the archive), and the whole job
// is one formatted line; docs/sizing.md says so.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>

namespace poolsim::validate {

class Progress {
 public:
  enum class Style { bar, lines, quiet };
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `label` prefixes every line ("sweep"); `total` steps; output to `out`.
  Progress(std::string label, std::size_t total, std::ostream& out, Style style,
           Clock clock = &std::chrono::steady_clock::now);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Style::bar when stderr is a terminal (isatty), else Style::lines; quiet wins.
  static Style style_for_stderr(bool quiet);

  // One step done; `item` says which (a grid point, a candidate size).
  void step(const std::string& item);
  // Ends the bar's line (idempotent; the destructor calls it).
  void finish();

  std::size_t done() const;

  // Minimum time between two redraws of the bar.
  std::chrono::milliseconds redraw_interval{100};
  // Width of the bar itself in characters.
  int bar_width = 24;

 private:
  std::string eta_text(double elapsed) const;

  std::string label_;
  std::size_t total_;
  std::ostream& out_;
  Style style_;
  Clock clock_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::size_t done_ = 0;
  bool drawn_ = false;  // the bar's line has content that finish() must end
  bool finished_ = false;
  mutable std::mutex mu_;
};

// Progress of a job that runs in phases (a sweep simulates, then measures),
// one Progress per phase, labelled "LABEL PHASE". phase() is called while no
// step() can run (between a sweep's phases); step() from any thread.
class PhasedProgress {
 public:
  PhasedProgress(std::string label, std::ostream& out, Progress::Style style);
  void phase(const std::string& name, std::size_t total);
  void step(const std::string& item);
  void finish();

 private:
  std::string label_;
  std::ostream& out_;
  Progress::Style style_;
  std::unique_ptr<Progress> current_;
};

// "3.2 s", "1 min 05 s", "2 h 03 min": for elapsed times and ETAs.
std::string format_eta(double seconds);

}  // namespace poolsim::validate
