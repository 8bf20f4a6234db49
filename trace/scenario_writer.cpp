// scenario_writer.cpp: see scenario_writer.hpp.
#include "trace/scenario_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <stdexcept>

#include "models/assert.hpp"
#include "trace/perf_text.hpp"

namespace poolsim::trace {
namespace {

std::string ns(std::int64_t v) { return std::to_string(v) + "ns"; }
std::string ns(double seconds) { return std::to_string(std::llround(seconds * 1e9)) + "ns"; }

std::string human(double s) {
  if (s >= 1) return fmt::format("{:.4g} s", s);
  if (s >= 1e-3) return fmt::format("{:.4g} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.4g} us", s * 1e6);
  return fmt::format("{:.0f} ns", s * 1e9);
}

// The sample file of the CPU bursts at place `j` of a request (0: the
// first; after wait j for j >= 1): the bursts of one place share a
// distribution, the places differ (a request's first burst is not its last).
std::string cpu_file(const std::string& stem, const std::string& group, int j) {
  return stem + "." + group + (j == 0 ? std::string(".cpu.csv") : fmt::format(".cpu{}.csv", j));
}

double mean_s(const std::vector<std::int64_t>& v) {
  if (v.empty()) return 0;
  return static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0})) /
         static_cast<double>(v.size()) * 1e-9;
}

std::string sanitize_name(const std::string& s) { return name_slug(s, "imported"); }

// Wait count -> units, with at most kMaxClasses entries: a rarer count joins
// the kept count nearest to it.
std::map<int, std::int64_t> classes_of(const GroupModel& g) {
  std::vector<std::pair<std::int64_t, int>> by_count;
  for (auto [k, n] : g.requests_by_waits) by_count.emplace_back(n, k);
  std::sort(by_count.begin(), by_count.end(), [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::map<int, std::int64_t> kept;
  for (std::size_t i = 0; i < by_count.size() && i < kMaxClasses; ++i)
    kept[by_count[i].second] = by_count[i].first;
  for (std::size_t i = kMaxClasses; i < by_count.size(); ++i) {
    const int k = by_count[i].second;
    int best = kept.begin()->first;
    for (const auto& [kk, n] : kept)
      if (std::abs(kk - k) < std::abs(best - k)) best = kk;
    kept[best] += by_count[i].first;
  }
  return kept;
}

std::string thread_line(const ThreadSummary& t) {
  return fmt::format("{}[{}]: CPU {}, woken by other roles {} times, woke them {} times{}", t.comm,
                     t.tid, human(static_cast<double>(t.cpu) * 1e-9), t.handoffs_in, t.handoffs_out,
                     t.leader ? " (process leader)" : "");
}

}  // namespace

double per_unit(std::int64_t sum, std::int64_t n) {
  return static_cast<double>(sum) / static_cast<double>(std::max<std::int64_t>(n, 1)) * 1e-9;
}

std::string summary_text(const ProgramModel& m) {
  const GroupModel& b = m.groups[m.backend];
  std::string s;
  s += fmt::format("program {}: {} threads; {} sched events read, {} about the program\n", m.root,
                   m.program_threads, m.read.switches + m.read.wakes + m.read.forks + m.read.exits,
                   m.program_transitions);
  s += fmt::format(
      "backend: pool of {} threads (group {}), {} units -> {} requests, CPU {} per request, "
      "{:.2f} waits per request, run-queue delay {} per unit\n",
      b.tids.size(), b.name, m.units, m.requests, human(per_unit(m.unit_cpu, m.requests)),
      static_cast<double>(b.waits.size()) /
          static_cast<double>(std::max<std::int64_t>(m.requests, 1)),
      human(per_unit(m.unit_runq, m.units)));
  if (m.closed)
    s += fmt::format("arrival: closed loop, {} clients, think {} ({:.1f} requests/s)\n", m.clients,
                     human(m.think), m.rate);
  else
    s += fmt::format("arrival: open, {:.1f} requests/s, inter-arrival cv {:.2f}\n", m.rate,
                     m.interarrival_cv);
  for (const auto& t : m.unmapped) s += "not mapped to the backend: " + thread_line(t) + "\n";
  return s;
}

// The scenario: opening comment, then the keys. Long because the comment
// spells out every inference; each block writes one key.
std::string scenario_text(const ProgramModel& m, const std::string& stem, const WriteOptions& o) {
  const GroupModel& b = m.groups[m.backend];
  std::string y;
  auto c = [&](const std::string& line) { y += "# " + line + "\n"; };
  c("Imported by poolsim from " + o.source +
    (o.command.empty() ? "" : " (recorded: " + o.command + ")"));
  c(
      fmt::format("Trace: {} lines, {} switches ({} missing, {} hidden with unrecorded tasks), {} "
                  "wake-ups ({} in interrupt "
                  "context{}), {} forks; {} transitions of the program's {} threads; span {}.",
                  m.read.lines, m.read.switches, m.read.inconsistent, m.read.hidden_switches,
                  m.read.wakes, m.read.interrupt_wakes,
                  m.read.irq_context_events ? ""
                                            : ": no irq/timer events, so a timer that "
                                              "interrupts a thread counts as its waker",
                  m.read.forks, m.program_transitions, m.program_threads,
                  human(static_cast<double>(m.read.last_time - m.read.first_time) * 1e-9)));
  c("Program: " + m.root + " and its descendants.");
  c("A unit of work starts when a thread of the pool is woken by a thread of the program");
  c("outside the pool (a hand-off) and ends when it blocks to wait for the next one; timer");
  c("and I/O wake-ups inside a unit are its waits. Run-queue delay (woken or preempted, not");
  c("running) is the machine's doing: measured, reported, left to the simulator.");
  c(fmt::format("Backend: group `{}`, {} threads, {} complete units ({} open at the end, dropped);",
                b.name, b.tids.size(), m.units, m.open_units_dropped));
  c(fmt::format("  {} double wake-up fragments folded; most units have {} waits; cut into {}",
                m.reply_fragments, m.modal_waits, m.requests));
  c("  requests of that shape (a worker that finds queued work does not block, so several");
  c("  requests can share a unit).");
  c(fmt::format("  Per request: CPU {} in {:.2f} bursts (mean {}), {:.2f} waits (mean {}).",
                human(per_unit(m.unit_cpu, m.requests)),
                static_cast<double>(b.bursts.size()) / static_cast<double>(m.requests),
                human(mean_s(b.bursts)),
                static_cast<double>(b.waits.size()) / static_cast<double>(m.requests),
                human(mean_s(b.waits))));
  c(fmt::format("  Recorded: unit duration mean {}, run-queue delay {} per unit; {} lock waits",
                human(m.unit_duration), human(per_unit(m.unit_runq, m.units)), m.lock_waits));
  c(fmt::format("  (woken by a fellow worker: {} in all, contention, not in the workload).",
                human(static_cast<double>(m.lock_wait_time) * 1e-9)));
  const auto per_req = [&](std::int64_t n) {
    return static_cast<double>(n) / static_cast<double>(std::max<std::int64_t>(m.requests, 1));
  };
  const KernelEvents& k = m.backend_kernel;
  c(fmt::format(
      "  Kernel work inside the recorded bursts, per request: {:.2f} dispatches, {:.2f} "
      "migrations, {:.2f} wake-ups given ({:.2f} to another CPU).",
      per_req(k.dispatches), per_req(k.migrations), per_req(k.wakes), per_req(k.remote_wakes)));
  if (!m.netted_profile.empty())
    c(fmt::format(
        "  Taken out of the bursts at the `{}` profile's costs (switch, refill, migration, "
        "wake-up, IPI, OS noise), which the simulator charges again for the condition "
        "it simulates: {} per request; {} from the submitters' CPU; {} from each wait (the "
        "timer slack a timed wait ends after).",
        m.netted_profile, human(m.netted_backend), human(m.netted_submit), human(m.netted_wait)));
  else
    c("  Bursts as recorded (no `host` profile to net the kernel's costs out with: the simulator "
      "will add its own on top).");
  for (int si : m.submitters) {
    const GroupModel& g = m.groups[si];
    c(fmt::format("Submitter: group `{}`, {} threads, {} hand-offs, CPU {} = {} per request,",
                  g.name, g.tids.size(), g.handoffs_out, human(static_cast<double>(g.cpu) * 1e-9),
                  human(static_cast<double>(g.cpu) * 1e-9 / static_cast<double>(m.requests))));
    c("  folded into each task as its first CPU phase.");
  }
  if (m.closed)
    c(fmt::format(
        "Arrival: closed loop ({} replies wake the submitters for {} units): {:.1f} "
        "requests/s, units in progress {:.2f} + rate x think {} -> {} clients.",
        m.replies, m.units, m.rate, static_cast<double>(m.unit_time) / static_cast<double>(m.span),
        human(m.think), m.clients));
  else
    c(
        fmt::format("Arrival: open ({} replies for {} units): {:.1f} requests/s, hand-off "
                    "inter-arrival mean {} cv {:.2f} -> {}.",
                    m.replies, m.units, m.rate, human(m.interarrival_mean), m.interarrival_cv,
                    m.interarrival_cv < kPeriodicMaxCv ? "periodic" : "poisson"));
  if (o.machine.known)
    c(fmt::format("Recorded machine: {} CPUs, cpuset {}, quota {}.", o.machine.cpus,
                  o.machine.cpuset,
                  o.machine.quota_cpus ? fmt::format("{:.3g} CPUs", *o.machine.quota_cpus)
                                       : std::string("none")));
  else
    c(fmt::format("Recorded machine: not known (a saved trace); CPUs seen: {}.",
                  m.read.max_cpu + 1));
  if (m.unmapped.empty()) c("Every thread of the program is mapped to the backend or a submitter.");
  for (const auto& t : m.unmapped) c("Not mapped: " + thread_line(t));
  y += "name: " + (o.name.empty() ? sanitize_name(stem) : sanitize_name(o.name)) + "\n";
  y += "description: \"imported from a perf sched trace: " + std::to_string(b.tids.size()) +
       "-thread pool `" + b.name + "`\"\n";
  y += "machine: host\n";
  if (o.machine.known) {
    y += "limits:\n";
    y += "  cpuset: \"" + o.machine.cpuset + "\"\n";
    if (o.machine.quota_cpus) {
      y += fmt::format("  cpus: {:.4g}\n", *o.machine.quota_cpus);
      y += "  period: " + ns(o.machine.period_ns) + "\n";
    }
  }
  y += "workload:\n";
  if (m.closed)
    y += fmt::format("  arrival: {{kind: closed, clients: {}, think: {}, duration: {}}}\n",
                     m.clients, ns(m.think), ns(m.span));
  else if (m.interarrival_cv < kPeriodicMaxCv)
    y += fmt::format("  arrival: {{kind: periodic, interval: {}, count: {}}}\n", ns(1 / m.rate),
                     m.requests);
  else
    y += fmt::format("  arrival: {{kind: poisson, rate: {:.6g}/s, count: {}}}\n", m.rate,
                     m.requests);
  const std::string wait_file = stem + "." + b.name + ".wait.csv";
  const std::int64_t overhead = std::llround(m.submit_cpu_per_request * 1e9);
  auto task = [&](int k, const std::string& indent) {
    std::string t;
    if (overhead > 0) t += indent + "- cpu: " + ns(overhead) + "\n";
    t += indent + "- cpu: {dist: empirical, file: " + cpu_file(stem, b.name, 0) + "}\n";
    for (int i = 1; i <= k; ++i) {
      t += indent + "- wait: {dist: empirical, file: " + wait_file + "}\n";
      t += indent + "- cpu: {dist: empirical, file: " + cpu_file(stem, b.name, i) + "}\n";
    }
    return t;
  };
  const auto classes = classes_of(b);
  if (classes.size() == 1) {
    y += "  task:\n" + task(classes.begin()->first, "    ");
  } else {
    y += "  classes:\n";
    for (const auto& [k, n] : classes) {
      y += fmt::format("    - weight: {:.6g}  # {} requests with {} waits\n",
                       static_cast<double>(n) / static_cast<double>(m.requests), n, k);
      y += "      task:\n" + task(k, "        ");
    }
  }
  y += fmt::format("backend: {{kind: pool, threads: {}}}\n", b.tids.size());
  return y;
}

std::vector<std::filesystem::path> write_scenario(const ProgramModel& m,
                                                  const std::filesystem::path& out,
                                                  const WriteOptions& o) {
  namespace fs = std::filesystem;
  std::string stem = out.filename().string();
  for (const char* ext : {".yaml", ".yml"})
    if (stem.size() > std::string(ext).size() && stem.ends_with(ext))
      stem.resize(stem.size() - std::string(ext).size());
  const GroupModel& b = m.groups[m.backend];
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::vector<fs::path> written;
  auto samples = [&](const std::string& file, const std::vector<std::int64_t>& v,
                     const std::string& what) {
    const fs::path p = dir / file;
    std::ofstream f(p);
    if (!f) throw TraceError(p.string() + ": cannot write the sample file");
    f << "# " << what << " of group " << b.name << " (" << v.size() << " samples) from " << o.source
      << "\n";
    for (auto x : v) f << x << "ns\n";
    f.flush();  // a full disk shows here, not in the destructor
    if (!f) throw std::runtime_error(p.string() + ": writing the sample file failed");
    written.push_back(p);
  };
  POOLSIM_ASSERT(b.burst_pos.size() == b.bursts.size(), "a burst without its place in a request");
  const int positions =
      b.burst_pos.empty() ? 1 : 1 + *std::max_element(b.burst_pos.begin(), b.burst_pos.end());
  for (int j = 0; j < positions; ++j) {
    std::vector<std::int64_t> at;
    for (std::size_t i = 0; i < b.bursts.size(); ++i)
      if (b.burst_pos[i] == j) at.push_back(b.bursts[i]);
    samples(cpu_file(stem, b.name, j), at,
            j == 0 ? std::string("First CPU bursts") : fmt::format("CPU bursts after wait {}", j));
  }
  if (!b.waits.empty()) samples(stem + "." + b.name + ".wait.csv", b.waits, "off-CPU waits");
  std::ofstream f(out);
  if (!f) throw TraceError(out.string() + ": cannot write the scenario");
  f << scenario_text(m, stem, o);
  f.flush();
  if (!f) throw std::runtime_error(out.string() + ": writing the scenario failed");
  written.push_back(out);
  return written;
}

}  // namespace poolsim::trace
