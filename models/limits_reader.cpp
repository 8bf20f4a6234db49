// limits_reader.cpp: the `limits:` section (a container's CPU quota and cpuset).
//
// The bounds are the kernel's: cgroup cpu.max takes 1ms..1s periods and a
// quota of at least 1ms per period, a burst is at most the quota
// (Documentation/scheduler/sched-bwc.rst, tg_set_cfs_bandwidth); a cpuset
// names CPUs of the machine profile.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "models/limits_weights_reader.hpp"
#include "models/section_readers.hpp"

namespace poolsim::loader {

using yaml::MapReader;
using yaml::Val;

namespace {

// limits.cpus: Kubernetes millicores ("1500m" = 1.5) or a number of CPUs.
double read_cpu_quota(const Val& c) {
  const std::string text = yaml::scalar(c, "a CPU quota such as 1.5 or 1500m");
  double cpus = 0;
  if (!text.empty() && text.back() == 'm') {
    const std::string digits = text.substr(0, text.size() - 1);
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(),
                     [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
      c.fail("expected Kubernetes millicores such as 1500m (a whole number then m), got '" + text +
             "'");
    cpus = static_cast<double>(std::stoll(digits)) / 1000.0;
  } else {
    cpus = yaml::real_number(c, "a CPU quota such as 1.5 or 1500m");
  }
  // cgroup cpu.max takes a quota of at least 1ms per period (sched-bwc.rst),
  // and the period is at most 1s: 0.001 CPUs is the smallest quota; a quota
  // of more CPUs than a machine profile may have (65536) is a typo.
  if (cpus < 0.001 || cpus > 65536)
    c.fail(
        "limits.cpus must be between 0.001 (1ms of CPU per 1s period, the smallest cgroup "
        "quota) and 65536 (the most cores a machine profile may have), got " +
        text);
  return cpus;
}

// limits.burst, given the quota and period already read into `l`.
Duration read_burst(const Val& b, const Limits& l) {
  // tg_set_cfs_bandwidth: 0 <= burst <= quota.
  const Duration burst = yaml::duration(b);
  if (!l.cpus) b.fail("limits.burst needs limits.cpus (a burst of unused quota)");
  const Duration quota{std::llround(*l.cpus * static_cast<double>(l.period.count()))};
  if (burst < Duration{0} || burst > quota)
    b.fail("limits.burst must be between 0ns and the quota (cpus * period = " +
           format_duration(quota) + "), got " + format_duration(burst));
  return burst;
}

// The CPUs of a cpuset text such as "0-1" or "0,2,4-5", each passed to `add`.
void parse_cpuset_text(const Val& cs, const std::string& text,
                       const std::function<void(long long)>& add) {
  const std::string expected =
      "expected a cpuset such as \"0-1\" or \"0,2,4-5\", got '" + text + "'";
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  if (t.empty()) cs.fail(expected);
  std::size_t i = 0;
  auto num = [&]() -> long long {
    std::size_t j = i;
    while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
    if (j == i || j - i > 6) cs.fail(expected);
    const long long x = std::stoll(t.substr(i, j - i));
    i = j;
    return x;
  };
  while (i < t.size()) {
    const long long a = num();
    long long b = a;
    if (i < t.size() && t[i] == '-') {
      ++i;
      b = num();
      if (b < a)
        cs.fail("cpuset range " + std::to_string(a) + "-" + std::to_string(b) + " runs backwards");
    }
    for (long long c = a; c <= b; ++c) add(c);
    if (i < t.size()) {
      if (t[i] != ',' || i + 1 == t.size()) cs.fail(expected);
      ++i;
    }
  }
}

// limits.cpuset: a list of CPU numbers or a cpuset text; every CPU on `m`.
void read_cpuset(const Val& cs, const MachineProfile& m, Limits& l) {
  std::set<int> cpus;
  auto add = [&](long long cpu, const Val& at) {
    if (cpu < 0 || cpu >= m.cores)
      at.fail("CPU " + std::to_string(cpu) + " is not on machine '" + m.name + "' (CPUs 0-" +
              std::to_string(m.cores - 1) + ")");
    cpus.insert(static_cast<int>(cpu));
  };
  if (cs.is_seq()) {
    if (cs.size() == 0) cs.fail("a cpuset needs at least one CPU");
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const Val e = cs.at(i);
      const auto cpu = yaml::integer(e, 0, std::numeric_limits<int>::max(), "a CPU number");
      add(cpu, e);
      parts.push_back(std::to_string(cpu));
    }
    l.cpuset_text = yaml::join(parts, ",");
  } else {
    const std::string text =
        yaml::scalar(cs, "a cpuset such as \"0-1\" or \"0,2,4-5\", or a list of CPUs");
    parse_cpuset_text(cs, text, [&](long long cpu) { add(cpu, cs); });
    l.cpuset_text = text;
  }
  l.cpuset.assign(cpus.begin(), cpus.end());
}

}  // namespace

Limits read_limits(const Val& v, const MachineProfile& m) {
  MapReader r(v, {"cpus", "period", "cpuset", "burst", "shares", "weight", "neighbour"}, "limits");
  Limits l;
  yaml::read_weights(r, l);
  if (auto c = r.get("cpus")) l.cpus = read_cpu_quota(*c);
  if (auto p = r.get("period")) {
    // cgroup cpu.cfs_period_us accepts 1 ms .. 1 s (sched-bwc.rst).
    l.period = yaml::duration(*p);
    if (l.period < std::chrono::milliseconds(1) || l.period > std::chrono::seconds(1))
      p->fail("the quota period must be between 1ms and 1s (cgroup cpu.max limits), got " +
              format_duration(l.period));
  }
  if (auto b = r.get("burst")) l.burst = read_burst(*b, l);
  if (auto cs = r.get("cpuset")) read_cpuset(*cs, m, l);
  return l;
}

}  // namespace poolsim::loader
