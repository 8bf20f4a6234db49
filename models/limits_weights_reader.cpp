// limits_weights_reader.cpp: limits.shares / weight / neighbour (see the header).
#include "models/limits_weights_reader.hpp"

#include <string>

namespace poolsim::yaml {

namespace {

// cpu.shares bounds (MIN_SHARES, MAX_SHARES in kernel/sched/sched.h) and
// cpu.weight bounds (CGROUP_WEIGHT_MIN/MAX, include/linux/cgroup.h).
constexpr int kMinShares = 2, kMaxShares = 262144;
constexpr int kMinWeight = 1, kMaxWeight = 10000;
// A neighbour of more threads than this is a typo (each is a simulated thread
// that never blocks).
constexpr int kMaxNeighbourThreads = 4096;

// `shares` or `weight` of the map `r` (one of them, or neither: 1024).
int read_group_weight(const MapReader& r, const std::string& where) {
  const auto s = r.get("shares");
  const auto w = r.get("weight");
  if (s && w)
    w->fail(where + ".weight and " + where +
            ".shares are the same thing (cgroup v2 and v1 names of the group's CPU weight); give "
            "one");
  if (s)
    return static_cast<int>(integer(*s, kMinShares, kMaxShares,
                                    "cpu.shares between 2 and 262144 (1024 = 1 CPU request)"));
  if (w)
    return shares_from_weight(static_cast<int>(
        integer(*w, kMinWeight, kMaxWeight, "cpu.weight between 1 and 10000 (default 100)")));
  return 1024;
}

}  // namespace

void read_weights(const MapReader& r, Limits& l) {
  l.shares = read_group_weight(r, "limits");
  if (auto n = r.get("neighbour")) {
    MapReader nr(*n, {"threads", "shares", "weight"}, "limits.neighbour");
    Neighbour nb;
    nb.threads = static_cast<int>(
        integer(nr.require("threads", "how many CPU-bound threads the neighbour runs"), 1,
                kMaxNeighbourThreads, "a thread count between 1 and 4096"));
    nb.shares = read_group_weight(nr, "limits.neighbour");
    l.neighbour = nb;
  }
}

}  // namespace poolsim::yaml
