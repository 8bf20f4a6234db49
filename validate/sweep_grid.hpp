// sweep_grid.hpp: the --vary grammar, the grid it spans, and the deterministic
// split of a grid into shards (`sweep --shard K/N`).
//
// Mechanism:
//   1. Each --vary is parsed into an axis: a key path and its values, written
//      as a list `1,2,4,8`, an arithmetic range `1..64` (step 1) or `1..64+8`,
//      or a geometric range `1..64*2`. Range ends may carry the same unit
//      suffix (`1ms..16ms*2`, `500/s..4000/s*2`) and may be written with an
//      exponent (`1..1e4`); values keep their text, so a list may hold
//      anything the scenario accepts (`1ms,2ms`, `pool,tbb`). A range's size
//      is computed before it is expanded, so `1..1e9` is refused at once.
//   2. The grid is the cartesian product, the first axis varying slowest
//      (row-major: the order of the CSV rows); point i has grid index i.
//   3. Shard K of N (1-based) holds the points whose index i has
//      i mod N == K - 1: strided rather than in blocks, so that a cost that
//      grows along an axis (more threads, more tasks) is spread evenly.
//   4. The cap: one process runs at most kMaxGridPoints points. A grid may
//      hold kMaxGridPoints x P points when P processes share it (P = N shards,
//      or the MPI ranks that run points); callers pass that limit.
//
// Left out: adaptive grids, negative range ends, ranges of non-numbers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace poolsim::validate {

// A grid larger than this is refused per process: at ~50 ms per simulated
// point it is already more than 10 minutes on 2 cores, and almost surely a
// typo (1..100000).
inline constexpr std::size_t kMaxGridPoints = 10'000;
// A grid shared by P processes may hold kMaxGridPoints x P points, and never
// more than this: the merging process holds every point's result in memory
// (about 1 KiB each).
inline constexpr std::size_t kMaxDistributedPoints = 1'000'000;
// The cap of a grid shared by `processes` processes.
std::size_t grid_cap(std::size_t processes);

struct VaryAxis {
  std::string key;                  // "backend.threads", "workload.task[0].cpu"
  std::vector<std::string> values;  // as written (ranges expanded)
};

// "backend.threads=1..64*2" -> {key, values}. Throws std::invalid_argument
// (exit 2 in the CLI) with what was expected: no '=', empty key or value,
// a range whose end is below its start, a step <= 0, a factor <= 1, unequal
// unit suffixes, more than `max_values` values. A long spec is abbreviated in
// the message.
VaryAxis parse_vary(const std::string& spec, std::size_t max_values = kMaxGridPoints);
// The value part alone: "1,2,4", "1..8", "1..64*2", "1ms..8ms*2".
std::vector<std::string> expand_values(const std::string& text,
                                       std::size_t max_values = kMaxGridPoints);

// The cartesian product, first axis slowest. Each point holds one value per
// axis. Throws std::invalid_argument on a repeated key or a grid above
// `max_points`.
std::vector<std::vector<std::string>> expand_grid(const std::vector<VaryAxis>& axes,
                                                  std::size_t max_points = kMaxGridPoints);
// The number of points without expanding (same checks).
std::size_t grid_size(const std::vector<VaryAxis>& axes, std::size_t max_points = kMaxGridPoints);

// Point `index` of the grid (row-major, first axis slowest) without expanding it.
std::vector<std::string> grid_point(const std::vector<VaryAxis>& axes, std::size_t index);

// "backend.threads=8 workload.task[0].cpu=2ms"
std::string point_label(const std::vector<VaryAxis>& axes, const std::vector<std::string>& values);

// `text` when it is short, else its first 60 characters, "...", and its size:
// for error messages that echo user input.
std::string abbreviate(const std::string& text);

// Shard K of N, 1 <= K <= N.
struct Shard {
  std::size_t k = 1, n = 1;
  bool operator==(const Shard&) const = default;
};
// "2/3" -> {2, 3}; throws std::invalid_argument ("--shard ...: expected K/N ...").
Shard parse_shard(const std::string& text);
// The grid indices of shard `s` in a grid of `points` points, ascending.
std::vector<std::size_t> shard_indices(std::size_t points, Shard s);

}  // namespace poolsim::validate
