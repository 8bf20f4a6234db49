// program_model.cpp: the per-thread state machine and the inference of
// program_model.hpp. Wake-up semantics follow kernel/sched/core.c
// (try_to_wake_up traces sched_waking only for a task that is not already
// runnable; a switch's prev_state R means preempted, anything else blocked).
#include "trace/program_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>

namespace poolsim::trace {

std::string base_name(const std::string& comm) {
  std::string s = comm;
  auto sep = [](char c) {
    return c == '-' || c == '_' || c == ':' || c == '/' || c == '#' || c == '.' || c == ' ';
  };
  while (!s.empty() && (std::isdigit(static_cast<unsigned char>(s.back())) || sep(s.back())))
    s.pop_back();
  return s.empty() ? comm : s;
}

ProgramImporter::ProgramImporter(ProgramSelector sel) : sel_(std::move(sel)) {}

bool ProgramImporter::is_program(int tid) const {
  const auto it = program_.find(tid);
  return it != program_.end() && it->second;
}

// The program thread a transition is about, creating it when the transition
// reveals a new member (the selected root; forks are handled in on()).
ProgramImporter::Thread* ProgramImporter::program_thread(const Transition& t) {
  if (t.tid <= 0) return nullptr;
  auto it = program_.find(t.tid);
  if (it == program_.end()) {
    bool member = false;
    if (sel_.pid >= 0)
      member = t.tid == sel_.pid || t.pid == sel_.pid;
    else if (!sel_.comm.empty())
      member = t.comm == sel_.comm;
    else
      member = root_ < 0 && t.comm == "perf-exec";
    // A thread of a process of the program (timehist names threads
    // comm[tid/pid] and shows no forks).
    if (!member && t.pid >= 0 && t.pid != t.tid && is_program(t.pid)) member = true;
    it = program_.emplace(t.tid, member).first;
    if (member && root_ < 0) root_ = t.tid;
  }
  if (!it->second) return nullptr;
  Thread& th = threads_[t.tid];
  th.tid = t.tid;
  if (t.pid >= 0) th.pid = t.pid;
  if (!t.comm.empty() && (t.comm != "perf-exec" || th.comm.empty())) th.comm = t.comm;
  return &th;
}

// The program's first process execs a new image. What it and its children
// did before was the launcher's (pyenv's `python3` is a bash script that
// forks readlink and basename 34 times and then execs Python; `sh -c`,
// `env`, `exec` in a wrapper script): those processes leave the program and
// the process's own history starts over, so the launcher's forks, pipes and
// waits are not taken for a pool (it was, in 6 of 8 short recordings of a
// Python pool started through pyenv).
void ProgramImporter::launcher_done(const Transition& t) {
  for (auto& [tid, member] : program_)
    if (member && tid != root_) {
      member = false;
      threads_.erase(tid);
    }
  remote_edges_.clear();
  Thread& old = threads_[root_];
  Thread fresh;
  fresh.tid = old.tid;
  fresh.pid = old.pid;
  fresh.comm = old.comm;
  fresh.running = old.running;
  fresh.on_since = t.time;
  fresh.last_cpu = old.last_cpu;
  old = std::move(fresh);
}

// A blocked thread is woken: the run segment before the block is closed.
void ProgramImporter::block_ends(Thread& th, std::int64_t wake_at, int waker) {
  th.blocks.push_back(Block{th.off_at, wake_at, th.seg_cpu, th.seg_runq, waker});
  th.seg_cpu = 0;
  th.seg_runq = 0;
}

// The per-thread state machine: one case per transition kind (forks add
// members; on/off CPU and wake-ups move a thread between running, runnable
// and blocked, closing a Block at each wake-up of a block).
// Long because it is one case per transition kind, each short.
void ProgramImporter::on(const Transition& t) {
  ++transitions_;
  if (t.kind == Transition::Kind::fork) {
    if (is_program(t.other) || (sel_.pid >= 0 && t.other == sel_.pid)) {
      if (root_ < 0) root_ = t.other;
      program_[t.other] = true;
      program_[t.tid] = true;
      Thread& th = threads_[t.tid];
      th.tid = t.tid;
      th.comm = t.comm;
    }
    return;
  }
  if (t.kind == Transition::Kind::exec) {
    if (t.tid == root_) launcher_done(t);
    return;
  }
  Thread* th = program_thread(t);
  if (!th) return;
  ++program_transitions_;
  switch (t.kind) {
    case Transition::Kind::on_cpu: {
      if (th->running) break;  // a lost switch-out: keep the earlier start
      // A switch-in the trace did not show comes with the earliest time it
      // can have happened (perf_text.hpp): not before the thread left the
      // CPU or was woken.
      std::int64_t at = t.time;
      if (th->off_valid) at = std::max(at, th->off_at);
      if (th->woken) at = std::max(at, th->woken_at);
      if (th->off_valid) {
        OffState st = th->off_state;
        if (st == OffState::unknown) st = th->woken ? OffState::blocked : OffState::preempted;
        if (st == OffState::preempted) {
          th->seg_runq += at - th->off_at;
        } else if (th->woken) {
          th->seg_runq += at - th->woken_at;
        } else {  // its wake-up is not in the trace: the block ends now
          block_ends(*th, at, kWakerUnknown);
        }
      }
      ++th->dispatches;
      if (th->last_cpu >= 0 && th->last_cpu != t.cpu) ++th->migrations;
      th->last_cpu = t.cpu;
      th->running = true;
      th->on_since = at;
      th->woken = false;
      th->off_valid = false;
      break;
    }
    case Transition::Kind::off_cpu: {
      if (th->running) {
        th->cpu += t.time - th->on_since;
        th->seg_cpu += t.time - th->on_since;
      }
      th->running = false;
      th->off_valid = true;
      th->off_at = t.time;
      th->off_state = t.state;
      th->woken = false;
      break;
    }
    case Transition::Kind::wake: {
      if (th->running || th->woken) break;  // already runnable: not the end of a block
      if (th->off_valid && th->off_state == OffState::preempted) break;
      if (!th->off_valid) {  // blocked since before the trace: the block is unknown
        th->off_valid = true;
        th->off_state = OffState::blocked;
        th->off_at = t.time;
      }
      const int waker = (t.other >= 0 && t.other != t.tid && is_program(t.other)) ? t.other
                        : t.other >= 0                                            ? kWakerUnknown
                                                                                  : t.other;
      // A waker outside the program counts like an interrupt: not a hand-off.
      block_ends(*th, t.time, t.other >= 0 && !is_program(t.other) ? kWakerInterrupt : waker);
      if (waker >= 0) {
        const auto w = threads_.find(waker);
        if (w != threads_.end()) {
          const Thread& wt = w->second;
          const std::int64_t ran = wt.running ? t.time - wt.on_since : 0;
          w->second.marks.push_back(Mark{t.time, wt.seg_cpu + ran, wt.blocks.size(), t.tid});
          if (t.target_cpu >= 0 && t.target_cpu != t.cpu) ++remote_edges_[{waker, t.tid}];
        }
      }
      th->woken = true;
      th->woken_at = t.time;
      break;
    }
    case Transition::Kind::exit:
    case Transition::Kind::fork:
    case Transition::Kind::exec:
      break;
  }
}

std::string name_slug(const std::string& s, const std::string& fallback) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u))
      out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? fallback : out;
}

namespace {

// role_base's tags for threads of one name told apart by their CPU.
constexpr std::string_view kLightTag = "|light", kHeavyTag = "|heavy";

int bucket(std::size_t n) { return n == 0 ? 0 : n == 1 ? 1 : 2; }

std::string sanitize(const std::string& s) { return name_slug(s, "thread"); }

}  // namespace

namespace {
// Colour refinement (finish() step 2): name, leader, fan-out and fan-in
// buckets; then the colours of the partners.
std::map<int, std::string> colours(const std::vector<int>& tids,
                                   const std::map<int, std::set<int>>& wakees,
                                   const std::map<int, std::set<int>>& wakers,
                                   const std::map<int, std::string>& base,
                                   const std::map<int, bool>& leader) {
  auto get = [](const std::map<int, std::set<int>>& m, int k) {
    const auto it = m.find(k);
    return it == m.end() ? std::set<int>{} : it->second;
  };
  // Threads told apart by their CPU (role_base) keep that role: the fan
  // shapes of a short trace are noisy (a worker that seldom blocks is
  // seldom woken) and would split them again.
  auto settled = [&](int tid) {
    const std::string& b = base.at(tid);
    return b.ends_with(kLightTag) || b.ends_with(kHeavyTag);
  };
  std::map<int, std::string> colour;
  for (int tid : tids)
    colour[tid] = settled(tid) ? base.at(tid)
                               : base.at(tid) + "|" + (leader.at(tid) ? "L" : "t") +
                                     std::to_string(bucket(get(wakees, tid).size())) +
                                     std::to_string(bucket(get(wakers, tid).size()));
  std::map<int, std::string> refined;
  for (int tid : tids) {
    if (settled(tid)) {
      refined[tid] = colour[tid];
      continue;
    }
    std::set<std::string> in, out;
    for (int w : get(wakers, tid)) in.insert(colour[w]);
    for (int w : get(wakees, tid)) out.insert(colour[w]);
    std::string c = colour[tid] + "<";
    for (const auto& s : in) c += s + ",";
    c += ">";
    for (const auto& s : out) c += s + ",";
    refined[tid] = c;
  }
  return refined;
}

// Cuts a unit with k waits into r = round(k / w*) requests of w* waits (the
// last takes the rest), halving the burst at each cut, and adds them to `g`.
void add_requests(const Unit& u, int modal, GroupModel& g, std::int64_t& requests) {
  const auto k = static_cast<int>(u.waits.size());
  const int r =
      modal >= 1 ? std::max(1, static_cast<int>(std::lround(static_cast<double>(k) / modal))) : 1;
  std::vector<std::int64_t> b{u.bursts[0]}, w;
  auto emit = [&] {
    g.bursts.insert(g.bursts.end(), b.begin(), b.end());
    for (std::size_t j = 0; j < b.size(); ++j) g.burst_pos.push_back(static_cast<int>(j));
    g.waits.insert(g.waits.end(), w.begin(), w.end());
    ++g.requests_by_waits[static_cast<int>(w.size())];
    ++requests;
  };
  for (int i = 1; i <= k; ++i) {
    w.push_back(u.waits[i - 1]);
    if (modal >= 1 && i % modal == 0 && i / modal < r) {
      const std::int64_t half = u.bursts[i] / 2;
      b.push_back(half);
      emit();
      b = {u.bursts[i] - half};
      w.clear();
    } else {
      b.push_back(u.bursts[i]);
    }
  }
  emit();
}

}  // namespace

// Cuts the blocks of the backend's threads into units (see the header):
// a hand-off (a wake-up by a program thread outside `backend`) starts one, a
// reply (a Mark on a submitter) ends one. The CPU a worker runs after a reply
// and before it blocks for work, with no wait in between, is carried into the
// next unit's first burst.
std::int64_t Unit::cpu() const {
  return std::accumulate(bursts.begin(), bursts.end(), std::int64_t{0});
}

// Long because it is the sequence of inference steps that cut a thread's history into
// units of work, each block one step.
std::vector<Unit> ProgramImporter::units_of(const std::set<int>& backend,
                                            const std::set<int>& submitters, ProgramModel& m) {
  std::vector<std::vector<Unit>> per_thread;
  for (int tid : backend) {
    std::vector<Unit>& units = per_thread.emplace_back();
    const Thread& th = threads_.at(tid);
    bool in_unit = false, implicit = false;
    Unit u;
    std::int64_t burst = 0;
    std::size_t mi = 0;
    for (std::size_t i = 0; i < th.blocks.size(); ++i) {
      const Block& bl = th.blocks[i];
      std::int64_t consumed = 0;
      for (; mi < th.marks.size() && th.marks[mi].segment <= i; ++mi) {
        const Mark& mk = th.marks[mi];
        if (mk.segment < i || !submitters.count(mk.wakee)) continue;
        burst += std::clamp<std::int64_t>(mk.cpu - consumed, 0, bl.cpu - consumed);
        consumed = std::clamp<std::int64_t>(mk.cpu, consumed, bl.cpu);
        if (in_unit) {
          u.bursts.push_back(burst);
          u.end = mk.time;
          u.ends_by_reply = true;
          units.push_back(std::move(u));
        }
        u = Unit{};
        u.start = mk.time;
        u.by_reply = true;
        in_unit = implicit = true;
        burst = 0;
      }
      burst += bl.cpu - consumed;
      if (in_unit) u.runq += bl.runq;
      if (bl.waker >= 0 && !backend.count(bl.waker)) {  // a hand-off
        std::int64_t carried = 0;
        if (in_unit && !(implicit && u.waits.empty())) {
          u.bursts.push_back(burst);
          u.end = bl.off_at;
          units.push_back(std::move(u));
        } else if (in_unit) {
          carried = burst;
        }
        u = Unit{};
        u.start = bl.wake_at;
        in_unit = true;
        implicit = false;
        burst = carried;
      } else if (bl.waker >= 0) {  // a lock released by a fellow worker
        ++m.lock_waits;
        m.lock_wait_time += bl.wake_at - bl.off_at;
      } else if (in_unit) {  // a timer, I/O, or a thread outside the program
        u.bursts.push_back(burst);
        u.waits.push_back(bl.wake_at - bl.off_at);
        burst = 0;
      } else {
        burst = 0;
      }
    }
    if (in_unit) ++m.open_units_dropped;
  }
  // Fold the fragments of double wake-ups (a hand-off or reply, then the lock
  // the woken thread needs: a mutex, Python's GIL) into the next unit of
  // their thread.
  std::vector<std::int64_t> cpus;
  for (const auto& v : per_thread)
    for (const auto& u : v) cpus.push_back(u.cpu());
  std::vector<Unit> units;
  if (cpus.empty()) return units;
  std::nth_element(cpus.begin(), cpus.begin() + static_cast<std::ptrdiff_t>(cpus.size() / 2),
                   cpus.end());
  const double limit = kReplyFragmentShare * static_cast<double>(cpus[cpus.size() / 2]);
  // In a closed loop (most units end with a reply) whose replied units have
  // waits, every unit without waits is a fragment, whatever its CPU (a Python
  // worker runs bytecode between a reply and the GIL release that wakes the
  // submitter again).
  std::int64_t total = 0;
  std::map<std::size_t, std::int64_t> replied_waits;
  for (const auto& v : per_thread)
    for (const auto& u : v) {
      ++total;
      if (u.ends_by_reply) ++replied_waits[u.waits.size()];
    }
  std::int64_t replied = 0;
  std::size_t replied_mode = 0;
  for (auto [k, n] : replied_waits) {
    replied += n;
    if (n > replied_waits[replied_mode]) replied_mode = k;
  }
  const bool closed_fragments = 2 * replied >= total && replied_mode >= 1;
  for (auto& v : per_thread) {
    std::int64_t carry = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      Unit& u = v[i];
      u.bursts.front() += carry;
      carry = 0;
      if (u.waits.empty() && i + 1 < v.size() &&
          (static_cast<double>(u.cpu()) < limit || closed_fragments)) {
        carry = u.cpu();
        ++m.reply_fragments;
        continue;
      }
      units.push_back(std::move(u));
    }
  }
  std::sort(units.begin(), units.end(),
            [](const Unit& a, const Unit& b) { return a.start < b.start; });
  return units;
}

// Roles the wake graph alone cannot tell apart: the clients of an unnamed
// request/reply program and its workers both hand work to many threads and
// take work from many (one shared pipe: clients wake workers with requests,
// workers wake clients with replies, and pipe_read makes the workers wake
// each other), and in a short trace a worker that finds the next request
// queued is seldom woken, so its shape is a client's. There the work tells
// them apart: the workers run the requests, the clients wait for the
// replies, so their CPU differs by an order of magnitude or more. The
// threads of one name (the leader apart) that hand work to each other are
// split at the widest gap of their CPU when it is at least kRoleCpuGap, and
// keep that role whatever their shapes (colours()); without such a gap they
// are one role (Python workers that hand each other the GIL: the wake-ups
// are many and uneven, and by their fan-in and fan-out buckets the four
// workers of one recording were four groups). A pool's busy and lightly
// used workers differ by less than the gap; where they differ more, the
// light ones go with the clients. Named siblings never qualify: their wake-ups of each
// other are not edges (finish(), step 1), so they are told apart by name.
std::map<int, std::string> ProgramImporter::role_base(const std::vector<int>& tids,
                                                      const std::map<int, std::set<int>>& wakees,
                                                      const std::map<int, std::string>& base,
                                                      const std::map<int, bool>& leader) {
  std::map<int, std::string> out = base;
  std::map<std::string, std::vector<int>> same_name;  // the threads of one name, leader apart
  for (int tid : tids)
    if (!leader.at(tid)) same_name[base.at(tid)].push_back(tid);
  for (auto& [name, members] : same_name) {
    if (members.size() < 2) continue;
    const std::set<int> in(members.begin(), members.end());
    const bool self_handoff = std::any_of(members.begin(), members.end(), [&](int tid) {
      const auto it = wakees.find(tid);
      return it != wakees.end() && std::any_of(it->second.begin(), it->second.end(),
                                               [&](int w) { return in.count(w) > 0; });
    });
    if (!self_handoff) continue;
    std::sort(members.begin(), members.end(),
              [&](int a, int b) { return threads_[a].cpu < threads_[b].cpu; });
    std::size_t cut = 0;
    double widest = 0;
    for (std::size_t i = 1; i < members.size(); ++i) {
      const double lo =
          static_cast<double>(std::max<std::int64_t>(threads_[members[i - 1]].cpu, 1));
      const double gap = static_cast<double>(threads_[members[i]].cpu) / lo;
      if (gap > widest) widest = gap, cut = i;
    }
    if (widest < kRoleCpuGap) cut = 0;  // comparable CPU: one role, the pool's
    for (std::size_t i = 0; i < members.size(); ++i)
      out[members[i]] += i < cut ? kLightTag : kHeavyTag;
  }
  return out;
}

// The kernel events inside the run intervals of `tids`: their dispatches and
// migrations, and the wake-ups they gave across the pool's boundary (the
// pool's replies to other roles when `tids` is the pool, the submitters'
// hand-offs into it otherwise): the ones the simulator models again.
KernelEvents ProgramImporter::kernel_events(
    const std::set<int>& tids, const std::set<int>& pool,
    const std::map<std::pair<int, int>, std::int64_t>& edges) {
  KernelEvents e;
  for (int tid : tids) {
    e.dispatches += threads_[tid].dispatches;
    e.migrations += threads_[tid].migrations;
  }
  for (const auto& [edge, n] : edges) {
    if (!tids.count(edge.first) || pool.count(edge.first) == pool.count(edge.second)) continue;
    e.wakes += n;
    const auto r = remote_edges_.find(edge);
    if (r != remote_edges_.end()) e.remote_wakes += r->second;
  }
  return e;
}

void net_kernel_costs(ProgramModel& m, const KernelCosts& c) {
  const double requests = static_cast<double>(std::max<std::int64_t>(m.requests, 1));
  auto per_request = [&](const KernelEvents& e) {  // ns
    return static_cast<double>(e.dispatches * c.dispatch + e.migrations * c.migration +
                               e.wakes * c.wake + e.remote_wakes * c.ipi) /
           requests;
  };
  GroupModel& b = m.groups[static_cast<std::size_t>(m.backend)];
  if (b.bursts.empty()) return;
  const double per_burst =
      per_request(m.backend_kernel) / (static_cast<double>(b.bursts.size()) / requests);
  const double scale = 1.0 / (1.0 + c.noise_share);
  double before = 0, after = 0;
  for (auto& x : b.bursts) {
    before += static_cast<double>(x);
    x = std::max<std::int64_t>(0, std::llround(static_cast<double>(x) * scale - per_burst));
    after += static_cast<double>(x);
  }
  m.netted_backend = (before - after) / requests * 1e-9;
  double waits_before = 0, waits_after = 0;
  for (auto& w : b.waits) {
    waits_before += static_cast<double>(w);
    w = std::max<std::int64_t>(0, w - c.timer_slack);
    waits_after += static_cast<double>(w);
  }
  if (!b.waits.empty())
    m.netted_wait = (waits_before - waits_after) / static_cast<double>(b.waits.size()) * 1e-9;
  const double sub = m.submit_cpu_per_request;
  const double sub_net = std::max(0.0, sub * scale - per_request(m.submit_kernel) * 1e-9);
  m.netted_submit = sub - sub_net;
  m.submit_cpu_per_request = sub_net;
  m.netted_profile = c.profile;
}

// Builds the model: edges, groups, backend and submitters, units and
// requests, the arrival process, the unmapped threads. Long because it is
// the sequence of inference steps, each block one step, numbered.
ProgramModel ProgramImporter::finish(const ReadStats& stats, const std::string& source) {
  ProgramModel m;
  m.read = stats;
  m.transitions = transitions_;
  m.program_transitions = program_transitions_;
  if (root_ < 0) {
    if (sel_.pid >= 0 || !sel_.comm.empty())
      throw TraceError(source + ": no thread of the selected program (" +
                       (sel_.pid >= 0 ? "pid " + std::to_string(sel_.pid) : "comm " + sel_.comm) +
                       ") in the trace");
    throw TraceError(
        source +
        ": cannot tell which program to import: no `perf-exec` task (the trace was "
        "not recorded with `perf sched record -- CMD`); give --pid PID or --comm NAME");
  }
  std::vector<int> tids;
  for (const auto& [tid, th] : threads_)
    if (is_program(tid)) tids.push_back(tid);
  m.program_threads = static_cast<std::int64_t>(tids.size());
  m.root = (threads_.count(root_) ? threads_[root_].comm : std::string()) + "[" +
           std::to_string(root_) + "]";
  auto is_leader = [&](int tid) {
    return tid == root_ || (threads_[tid].pid >= 0 && threads_[tid].pid == tid);
  };

  // 1. Wake edges between program threads, and the significant ones.
  std::map<std::pair<int, int>, std::int64_t> edges;
  for (int tid : tids)
    for (const Block& b : threads_[tid].blocks)
      if (b.waker >= 0) ++edges[{b.waker, tid}];
  std::map<int, std::int64_t> issued, received;
  for (const auto& [e, c] : edges) {
    issued[e.first] += c;
    received[e.second] += c;
  }
  // An edge counts for the waker's fan-out when it is a share of the
  // waker's wake-up traffic (issued or received, the larger), and for the
  // wakee's fan-in likewise: a worker's 3 stray wake-ups of main next to its
  // 373 hand-offs do not make it a submitter.
  auto activity = [&](int tid) {
    return static_cast<double>(std::max(issued[tid], received[tid]));
  };
  std::map<int, std::set<int>> wakees, wakers;
  // Wake-ups between named siblings (same name pattern, not the process's own
  // name) do not shape roles: a pool's threads signal each other, and
  // without interrupt events (timehist) a timer firing in one of them looks
  // like a wake-up by it. Unnamed threads share the process's name and keep
  // those edges: they are all the roles can be told by.
  auto process_name = [&](int tid) {
    const int pid = threads_[tid].pid >= 0 ? threads_[tid].pid : root_;
    const auto it = threads_.find(pid);
    return base_name(it != threads_.end() ? it->second.comm : threads_[root_].comm);
  };
  auto siblings = [&](int a, int b) {
    const std::string n = base_name(threads_[a].comm);
    return n == base_name(threads_[b].comm) && n != process_name(a) && !is_leader(a) &&
           !is_leader(b);
  };
  for (const auto& [e, c] : edges) {
    if (c < kEdgeMinCount || siblings(e.first, e.second)) continue;
    if (static_cast<double>(c) >= kEdgeMinShare * activity(e.first))
      wakees[e.first].insert(e.second);
    if (static_cast<double>(c) >= kEdgeMinShare * activity(e.second))
      wakers[e.second].insert(e.first);
  }

  // 2. Groups by colour.
  std::map<int, std::string> base;
  std::map<int, bool> leader;
  for (int tid : tids) {
    base[tid] = base_name(threads_[tid].comm);
    leader[tid] = is_leader(tid);
  }
  const auto colour = colours(tids, wakees, wakers, role_base(tids, wakees, base, leader), leader);
  std::map<std::string, std::vector<int>> by_colour;
  for (int tid : tids) by_colour[colour.at(tid)].push_back(tid);
  std::vector<std::vector<int>> groups;
  for (auto& [c, members] : by_colour) groups.push_back(members);
  std::map<int, int> group_of;
  for (int i = 0; i < static_cast<int>(groups.size()); ++i)
    for (int tid : groups[i]) group_of[tid] = i;

  // 3. The backend: of the groups woken by other groups (at least
  // kEdgeMinCount times), the one that spends the most CPU (the work is
  // where the CPU goes; a closed loop's submitter is woken as often),
  // groups without the process leader first.
  std::vector<std::int64_t> in_from_others(groups.size(), 0), group_cpu(groups.size(), 0);
  for (const auto& [e, c] : edges)
    if (group_of[e.first] != group_of[e.second]) in_from_others[group_of[e.second]] += c;
  for (int i = 0; i < static_cast<int>(groups.size()); ++i)
    for (int tid : groups[i]) group_cpu[i] += threads_[tid].cpu;
  // A group holding the process leader (the main thread) is the pool only
  // when no other group qualifies: a main thread that starts the workers and
  // join()s them is woken by them at the end, and an unrecorded idle exit
  // (this VM's vCPU 1, docs/traces.md) can make its join() look like the
  // most CPU of the program.
  auto has_leader = [&](int i) {
    return std::any_of(groups[i].begin(), groups[i].end(), [&](int tid) { return leader[tid]; });
  };
  int backend = -1;
  for (const bool leaders : {false, true}) {
    for (int i = 0; i < static_cast<int>(groups.size()); ++i) {
      if (in_from_others[i] < kEdgeMinCount || has_leader(i) != leaders) continue;
      if (backend < 0 || group_cpu[i] > group_cpu[backend] ||
          (group_cpu[i] == group_cpu[backend] && groups[i].size() > groups[backend].size()))
        backend = i;
    }
    if (backend >= 0) break;
  }
  if (backend < 0)
    throw TraceError(source + ": no unit of work: no thread of the program (" + m.root + ", " +
                     std::to_string(tids.size()) +
                     " threads) was woken by a thread of another role of the program; a program "
                     "whose threads never hand work to each other cannot be imported as a pool");
  const std::string backend_base = base[groups[backend].front()];
  for (int i = 0; i < static_cast<int>(groups.size()); ++i) {
    if (i == backend || groups[i].empty()) continue;
    // Idle threads of the pool's name join it; so do all named siblings
    // (the pool's name is not the process's): a pool's threads share a name
    // pattern, and a stray wake-up edge in a short trace must not split it.
    const bool joins = std::all_of(groups[i].begin(), groups[i].end(), [&](int tid) {
      if (leader[tid] || base[tid] != backend_base) return false;
      return (wakees[tid].empty() && wakers[tid].empty()) || base[tid] != process_name(tid);
    });
    if (!joins) continue;
    for (int tid : groups[i]) group_of[tid] = backend;
    groups[backend].insert(groups[backend].end(), groups[i].begin(), groups[i].end());
    groups[i].clear();
  }
  const std::set<int> backend_tids(groups[backend].begin(), groups[backend].end());

  // 4. Submitters: groups with significant hand-offs into the backend.
  std::map<int, std::int64_t> into_backend;
  for (const auto& [e, c] : edges)
    if (backend_tids.count(e.second) && !backend_tids.count(e.first))
      into_backend[group_of[e.first]] += c;
  const std::int64_t handoffs =
      std::accumulate(into_backend.begin(), into_backend.end(), std::int64_t{0},
                      [](std::int64_t a, const auto& kv) { return a + kv.second; });
  std::vector<int> subs;
  for (auto [gi, c] : into_backend)
    if (c >= kEdgeMinCount &&
        static_cast<double>(c) >= kEdgeMinShare * static_cast<double>(handoffs))
      subs.push_back(gi);

  // 5. Units, the modal wait count, requests.
  std::set<int> sub_tids;
  for (int gi : subs) sub_tids.insert(groups[gi].begin(), groups[gi].end());
  const auto units = units_of(backend_tids, sub_tids, m);
  if (units.empty())
    throw TraceError(source + ": no complete unit of work in the pool `" + backend_base +
                     "` (its hand-offs never ended in a block)");
  std::map<int, std::int64_t> by_waits;
  for (const auto& u : units) {
    ++by_waits[static_cast<int>(u.waits.size())];
    m.unit_cpu += std::accumulate(u.bursts.begin(), u.bursts.end(), std::int64_t{0});
    m.unit_runq += u.runq;
    m.unit_time += u.end - u.start;
  }
  m.modal_waits = std::max_element(by_waits.begin(), by_waits.end(), [](auto a, auto b) {
                    return a.second < b.second;
                  })->first;
  GroupModel bg;
  for (const auto& u : units) add_requests(u, m.modal_waits, bg, m.requests);
  m.backend_kernel = kernel_events(backend_tids, backend_tids, edges);
  m.submit_kernel = kernel_events(sub_tids, backend_tids, edges);
  m.units = static_cast<std::int64_t>(units.size());

  // 6. Arrival process: rate of requests over the span of the units;
  // inter-arrival times between hand-offs; replies and think times.
  const std::int64_t first = units.front().start;
  std::int64_t last = first;
  for (const auto& u : units) last = std::max(last, u.end);
  m.span = std::max<std::int64_t>(last - first, 1);
  // Requests per second between the first and the last hand-off (for an
  // unsaturated pool, 1 / the mean inter-arrival time); with a single unit,
  // over the unit's span.
  const std::int64_t starts = units.back().start - first;
  m.rate = m.requests >= 2 && starts > 0
               ? static_cast<double>(m.requests - 1) / (static_cast<double>(starts) * 1e-9)
               : static_cast<double>(m.requests) / (static_cast<double>(m.span) * 1e-9);
  if (units.size() >= 2) {
    std::vector<double> gaps;
    for (std::size_t i = 1; i < units.size(); ++i)
      gaps.push_back(static_cast<double>(units[i].start - units[i - 1].start));
    const double mean =
        std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
    double sq = 0;
    for (double g : gaps) sq += (g - mean) * (g - mean);
    m.interarrival_mean = mean * 1e-9;
    m.interarrival_cv = mean > 0 ? std::sqrt(sq / static_cast<double>(gaps.size())) / mean : 0;
  }
  m.unit_duration = static_cast<double>(m.unit_time) / static_cast<double>(m.units) * 1e-9;
  think_times(m, subs, groups, backend_tids);

  // 7. Groups in order (backend, submitters), names, unmapped threads.
  name_groups(m, groups, backend, subs, std::move(bg), base, backend_tids);
  return m;
}

// Closed-loop detection and think time: a reply is a backend thread waking a
// submitter thread; the think time is from a reply to that submitter's next
// block.
void ProgramImporter::think_times(ProgramModel& m, const std::vector<int>& subs,
                                  const std::vector<std::vector<int>>& groups,
                                  const std::set<int>& backend) {
  std::int64_t sub_cpu = 0;
  std::set<int> sub_tids;
  for (int gi : subs)
    for (int tid : groups[gi]) {
      sub_tids.insert(tid);
      sub_cpu += threads_[tid].cpu;
    }
  // The think time of a reply: from the reply waking the submitter to the
  // submitter blocking again (it has answered with the next request by
  // then), less its CPU and its run-queue delay. Not reply to next hand-off: when every worker is
  // busy the next request wakes nobody, and that gap would be queueing, not thinking.
  double sum = 0;
  std::int64_t n = 0;
  for (int tid : sub_tids) {
    const auto& blocks = threads_[tid].blocks;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (blocks[i].waker < 0 || !backend.count(blocks[i].waker)) continue;
      ++m.replies;
      if (i + 1 < blocks.size()) {
        // Its CPU in that run is already in each task (the submitter's CPU
        // per request), and its run-queue delay (woken, not yet running) is
        // the machine's, which the simulator produces itself: the think time
        // is the rest, its waits.
        sum += static_cast<double>(std::max<std::int64_t>(
            0, blocks[i + 1].off_at - blocks[i].wake_at - blocks[i + 1].cpu - blocks[i + 1].runq));
        ++n;
      }
    }
  }
  m.submit_cpu_per_request = static_cast<double>(sub_cpu) /
                             static_cast<double>(std::max<std::int64_t>(m.requests, 1)) * 1e-9;
  m.closed = !subs.empty() &&
             static_cast<double>(m.replies) >= kClosedReplyShare * static_cast<double>(m.units);
  if (m.closed) {
    m.think = n > 0 ? sum / static_cast<double>(n) * 1e-9 : 0;
    const double in_units = static_cast<double>(m.unit_time) / (static_cast<double>(m.span));
    m.clients = std::max(1, static_cast<int>(std::lround(in_units + m.rate * m.think)));
  }
}

void ProgramImporter::name_groups(ProgramModel& m, std::vector<std::vector<int>>& groups,
                                  int backend, const std::vector<int>& subs, GroupModel bg,
                                  const std::map<int, std::string>& base,
                                  const std::set<int>& backend_tids) {
  std::vector<int> order{backend};
  order.insert(order.end(), subs.begin(), subs.end());
  std::map<std::string, int> base_count;
  for (int gi : order) ++base_count[sanitize(base.at(groups[gi].front()))];
  std::set<std::string> used;
  std::map<int, std::string> name_of;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& tids = groups[order[k]];
    GroupModel g = k == 0 ? std::move(bg) : GroupModel{};
    std::string n = sanitize(base.at(tids.front()));
    if (base_count[n] > 1) n += k == 0 ? "-pool" : "-submitter";
    while (used.count(n)) n.append(1, '-').append(std::to_string(k));
    used.insert(n);
    g.name = n;
    g.tids = tids;
    for (int tid : tids) {
      g.cpu += threads_[tid].cpu;
      name_of[tid] = n;
    }
    m.groups.push_back(std::move(g));
  }
  for (std::size_t k = 1; k < order.size(); ++k) m.submitters.push_back(static_cast<int>(k));
  std::map<int, std::int64_t> in, out, units;
  for (const auto& [tid, th] : threads_)
    for (const Block& b : th.blocks)
      if (b.waker >= 0 && is_program(tid) &&
          (!name_of.count(tid) || !name_of.count(b.waker) || name_of[tid] != name_of[b.waker])) {
        ++in[tid];
        ++out[b.waker];
      }
  for (auto& g : m.groups)
    for (int tid : g.tids) {
      g.handoffs_in += in[tid];
      g.handoffs_out += out[tid];
    }
  for (const auto& [tid, th] : threads_) {
    if (!is_program(tid)) continue;
    ThreadSummary s;
    s.tid = tid;
    s.pid = th.pid;
    s.comm = th.comm;
    s.cpu = th.cpu;
    for (const Block& b : th.blocks) s.runq += b.runq;
    s.handoffs_in = in[tid];
    s.handoffs_out = out[tid];
    s.leader = tid == root_ || (th.pid >= 0 && th.pid == tid);
    if (backend_tids.count(tid)) s.units = -1;
    const auto it = name_of.find(tid);
    if (it != name_of.end())
      s.group = it->second;
    else
      m.unmapped.push_back(s);
    m.threads.push_back(std::move(s));
  }
}

}  // namespace poolsim::trace
