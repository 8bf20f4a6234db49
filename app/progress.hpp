// progress.hpp: the progress display of a long simulation on stderr.
//
// On a terminal: one line redrawn in place (a bar, the share done, tasks
// final, simulated time, wall time and an ETA), at most ten times a second,
// ended with a newline. Otherwise (a pipe, a log file): a plain line every
// ten seconds of wall time. The share done is tasks final over the task
// count when the workload has one, else simulated time over the end of the
// arrivals; without either only counts are shown. The ETA assumes the rest
// runs at the average rate so far. Nothing is printed for runs shorter than
// a second, and nothing at all with --quiet (the caller does not create one).
// Not validate/progress.hpp: that one counts discrete steps of a known total
// and writes a line per step in a pipe; a simulation reports a fraction
// (often of an unknown total) every 2^20 events.
#pragma once

#include <chrono>
#include <cstdio>

#include "sim/simulate.hpp"

namespace poolsim::app {

class ProgressBar {
 public:
  explicit ProgressBar(std::FILE* out);
  void update(const sim::SimProgress& p);
  // Ends the line (terminal) after the run.
  void finish();

 private:
  std::FILE* out_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace poolsim::app
