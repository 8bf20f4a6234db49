// sweep_part.hpp: the file one shard of a sweep writes (`sweep --shard K/N
// --json PATH`), and the merge of N such files into the whole grid's
// SweepResult (`poolsim merge`), from which the outputs write exactly the
// bytes one process would have written.
//
// Mechanism:
//   - A part holds the header of the sweep (scenario name, source, arrival
//     kind, axes with their values as written, the grid's size), the shard
//     K/N, the identity of the sweep (`identity`: the scenario text's hash,
//     --set, --seed, --machine, the --vary specs, --measure and the output
//     flags merge must repeat) and its fingerprint (FNV-1a 64 of the identity
//     and the grid), and every point it ran: grid index, values, backend
//     JSON, the predicted metrics and, with --measure, the measured
//     statistics, with --replications each metric's spread over the seeds
//     (mean, sd, min, max, n), and the point's warnings. Doubles are written by nlohmann::json with
//     round-trip precision and non-finite ones as the strings "nan", "inf", "-inf", so a merged
//     point is the same double as the one simulated.
//   - merge_parts checks, before merging: every file is a part (format
//     version), every part has the first part's fingerprint and N, no shard
//     appears twice, none is missing, and each holds exactly the grid
//     indices of its shard. Any failure is std::invalid_argument naming the
//     files (exit 2).
//
// Left out: merging parts of different N (re-sharding), partial merges.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "validate/sweep_result.hpp"

namespace poolsim::validate {

inline constexpr int kSweepPartVersion = 2;  // 2: replications, spread and warnings

// The part file of shard `s`: the header and points of `r` plus `identity`.
nlohmann::ordered_json part_json(const SweepResult& r, Shard s,
                                 const nlohmann::ordered_json& identity);

// One point as JSON and back (also the MPI ranks' message).
nlohmann::ordered_json point_json(const SweepPoint& p);
SweepPoint point_from_json(const nlohmann::ordered_json& j);

// FNV-1a 64-bit hash as 16 hex digits.
std::string fnv1a_hex(const std::string& text);

struct SweepPart {
  std::string path;  // for messages
  Shard shard;
  std::string fingerprint;
  nlohmann::ordered_json identity;
  SweepResult result;  // the shard's points only
};

// Parses a part file's text; throws std::invalid_argument ("PATH: ...").
SweepPart read_part(const std::string& text, const std::string& path);

// The whole grid from all N parts (any order), checked as described above.
// The result's `seconds` is the sum of the parts'.
SweepResult merge_parts(const std::vector<SweepPart>& parts);

}  // namespace poolsim::validate
