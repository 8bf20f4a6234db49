// perf_text.cpp: the line readers of perf_text.hpp. Field layouts follow the
// tracepoint formats of include/trace/events/{sched,irq,timer}.h as perf
// prints them (perf 6.1 on kernel 6.18 here), and the timehist columns of
// tools/perf/builtin-sched.c (timehist_print_sample, print_sched_time).
#include "trace/perf_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <optional>

namespace poolsim::trace {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> to_int(std::string_view s) {
  s = trim(s);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "515.672297" or "515.672297123" (seconds with up to 9 decimals) -> ns.
std::optional<std::int64_t> seconds_to_ns(std::string_view s) {
  s = trim(s);
  const auto dot = s.find('.');
  const auto whole = to_int(s.substr(0, dot));
  if (!whole || *whole < 0) return std::nullopt;
  std::int64_t frac = 0;
  if (dot != std::string_view::npos) {
    std::string_view f = s.substr(dot + 1);
    if (f.empty() || f.size() > 9) return std::nullopt;
    for (char c : f)
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const auto fv = to_int(f);
    if (!fv) return std::nullopt;
    frac = *fv;
    for (std::size_t i = f.size(); i < 9; ++i) frac *= 10;
  }
  return *whole * 1'000'000'000 + frac;
}

// "1.304" milliseconds (timehist columns) -> ns.
std::optional<std::int64_t> millis_to_ns(std::string_view s) {
  const auto ns = seconds_to_ns(s);
  if (!ns) return std::nullopt;
  return *ns / 1000;
}

// The value of `key=` in a tracepoint's fields, up to `next_key` (values such
// as comm may hold spaces) or the next space.
std::optional<std::string_view> field(std::string_view fields, std::string_view key,
                                      std::string_view next_key = {}) {
  std::size_t pos = 0;
  while (true) {
    pos = fields.find(key, pos);
    if (pos == std::string_view::npos) return std::nullopt;
    if (pos == 0 || fields[pos - 1] == ' ') break;
    pos += key.size();
  }
  const std::size_t start = pos + key.size();
  std::size_t end = next_key.empty() ? fields.find(' ', start) : fields.find(next_key, start);
  if (end == std::string_view::npos) end = fields.size();
  return fields.substr(start, end - start);
}

OffState off_state(std::string_view s) {
  if (s.empty()) return OffState::unknown;
  if (s[0] == 'R') return OffState::preempted;  // R, R+ (preempted while runnable)
  if (s[0] == 'X' || s[0] == 'Z') return OffState::exited;
  return OffState::blocked;
}

// "comm:tid [prio] S" (libtraceevent's sched_switch plugin form): comm ends
// at the last ':' before the tid.
bool plugin_task(std::string_view s, std::string& comm, int& tid, std::string_view* state) {
  s = trim(s);
  const auto br = s.find(" [");
  if (br == std::string_view::npos) return false;
  std::string_view ct = s.substr(0, br);
  const auto colon = ct.rfind(':');
  if (colon == std::string_view::npos) return false;
  const auto t = to_int(ct.substr(colon + 1));
  if (!t) return false;
  comm = std::string(ct.substr(0, colon));
  tid = static_cast<int>(*t);
  if (state) {
    const auto close = s.find(']', br);
    if (close == std::string_view::npos) return false;
    *state = trim(s.substr(close + 1));
  }
  return true;
}

// "comm[tid]" or "comm[tid/pid]" (timehist task names), or ":tid" for a
// task whose name perf never saw.
bool timehist_task(std::string_view s, std::string& comm, int& tid, int& pid) {
  s = trim(s);
  if (!s.empty() && s.front() == ':' && s.find('[') == std::string_view::npos) {
    const auto t = to_int(s.substr(1));
    if (!t) return false;
    comm.clear();
    tid = static_cast<int>(*t);
    pid = -1;
    return true;
  }
  if (s.empty() || s.back() != ']') return false;
  const auto open = s.rfind('[');
  if (open == std::string_view::npos || open == 0) return false;
  std::string_view ids = s.substr(open + 1, s.size() - open - 2);
  const auto slash = ids.find('/');
  const auto t = to_int(ids.substr(0, slash));
  if (!t) return false;
  tid = static_cast<int>(*t);
  pid = -1;
  if (slash != std::string_view::npos) {
    const auto p = to_int(ids.substr(slash + 1));
    if (!p) return false;
    pid = static_cast<int>(*p);
  }
  comm = std::string(s.substr(0, open));
  return true;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

TraceReader::TraceReader(std::string source, Sink sink)
    : source_(std::move(source)), sink_(std::move(sink)) {}

void TraceReader::fail(std::int64_t lineno, const std::string& what) const {
  throw TraceError(source_ + ":" + std::to_string(lineno) + ": " + what);
}

int& TraceReader::current(int cpu) {
  if (cpu >= static_cast<int>(current_.size())) current_.resize(cpu + 1, -1);
  return current_[cpu];
}
std::int64_t& TraceReader::cpu_last_time(int cpu) {
  if (cpu >= static_cast<int>(cpu_last_time_.size())) cpu_last_time_.resize(cpu + 1, -1);
  return cpu_last_time_[cpu];
}

bool TraceReader::departed(int cpu) const {
  return cpu < static_cast<int>(departed_.size()) && departed_[cpu];
}

void TraceReader::becomes_current(int cpu, int tid) {
  int& cur = current(cpu);
  if (cur > 0)
    if (const auto it = running_on_.find(cur); it != running_on_.end() && it->second == cpu)
      running_on_.erase(it);
  cur = tid;
  if (cpu < static_cast<int>(departed_.size())) departed_[cpu] = 0;
  if (tid <= 0) return;
  const auto [it, fresh] = running_on_.try_emplace(tid, cpu);
  if (fresh || it->second == cpu) return;
  const int old = it->second;
  it->second = cpu;
  if (current(old) != tid || departed(old)) return;
  if (old >= static_cast<int>(departed_.size())) departed_.resize(old + 1, 0);
  departed_[old] = 1;
  const std::int64_t last = cpu_last_time(old);
  if (last >= 0)
    sink_(Transition{Transition::Kind::off_cpu, last, old, tid, std::string(), 0, -1,
                     OffState::unknown});
}

void TraceReader::context(int cpu, int tid, const std::string& comm, int pid, std::int64_t time,
                          std::int64_t started) {
  if (tid < 0) return;  // perf prints -1 for a thread that has exited
  context_seen_.insert(tid);
  int& cur = current(cpu);
  if (cur >= 0 && cur != tid) {
    ++missing_[cur];
    const std::int64_t last = cpu_last_time(cpu) >= 0 ? cpu_last_time(cpu) : time;
    // The thread the CPU was running left it unseen: by the CPU's last
    // recorded event at the latest that still showed it there. Without this
    // off-CPU it would stay "running" until its next recorded switch, its
    // CPU time growing through a block it was woken from (a main thread in
    // join() looked like the busiest thread, and so like the pool). Its
    // state is left to the importer: blocked if a wake-up follows.
    if (cur != 0 && !departed(cpu))
      sink_(Transition{Transition::Kind::off_cpu, last, cpu, cur, std::string(), 0, -1,
                       OffState::unknown});
    // A switch to `tid` was not recorded: it runs now, and cannot have
    // started before the CPU's last recorded event.
    if (tid != 0) {
      std::int64_t since = last;
      // Out of idle, it cannot have started before its wake-up either (else
      // an unrecorded idle exit would credit it with the idle time).
      if (const auto w = last_wake_.find(tid); cur == 0 && w != last_wake_.end())
        since = std::clamp(w->second, since, time);
      // A sleep timer armed after its last recorded wake-up woke it, not
      // before the timer expired: on this VM's vCPU 1 nothing is recorded
      // while the CPU idles (no sched_waking from the timer interrupt, no
      // switch out of idle; docs/traces.md), and without this bound a
      // thread waking from nanosleep there is taken to have run since the
      // CPU went idle. A timer of another clock (CLOCK_REALTIME) converts
      // to a time outside (since, time] and is ignored.
      if (const auto st = sleep_timer_.find(tid);
          cur == 0 && st != sleep_timer_.end() && timer_offset_ != kNoOffset) {
        const auto w = last_wake_.find(tid);
        const std::int64_t expiry = st->second.expires + timer_offset_;
        if ((w == last_wake_.end() || w->second < st->second.armed_at) && expiry > since &&
            expiry <= time)
          since = expiry;
        sleep_timer_.erase(st);
      }
      // A sched_stat_runtime says how long it has run since it got the CPU.
      if (cur == 0 && started >= 0) since = std::clamp(started, since, time);
      becomes_current(cpu, tid);
      sink_(Transition{Transition::Kind::on_cpu, since, cpu, tid, comm, 0, pid});
      return;
    }
  }
  becomes_current(cpu, tid);
}

int& TraceReader::irq_depth(int cpu) {
  if (cpu >= static_cast<int>(irq_depth_.size())) irq_depth_.resize(cpu + 1, 0);
  return irq_depth_[cpu];
}

void TraceReader::note_time(std::int64_t t, int cpu) {
  if (stats_.first_time < 0 || t < stats_.first_time) stats_.first_time = t;
  stats_.last_time = std::max(stats_.last_time, t);
  stats_.max_cpu = std::max(stats_.max_cpu, cpu);
}

void TraceReader::feed(std::string_view line, std::int64_t lineno) {
  ++stats_.lines;
  last_lineno_ = lineno;
  const std::string_view t = trim(line);
  if (t.empty() || t.front() == '#') return;
  if (t.find("LOST") != std::string_view::npos &&
      t.find("PERF_RECORD_LOST") != std::string_view::npos)
    fail(lineno, "the trace lost events (" + std::string(t) +
                     "): record again with a larger buffer (perf record -m) or a shorter run");
  if (format_ == TextFormat::undecided) {
    if (t.rfind("time", 0) == 0 && t.find("task name") != std::string_view::npos) {
      format_ = TextFormat::timehist;
      return;
    }
    format_ = TextFormat::perf_script;
  }
  if (format_ == TextFormat::timehist)
    timehist_line(t, lineno);
  else
    perf_line(t, lineno);
}

// perf script: `COMM [PID/]TID [CPU] TIME: SYS:EVENT: FIELDS`. The CPU field
// is the first "[digits]" followed by a time and ':'; the comm before it may
// hold spaces. Long: the common prefix, then one block per event kind, in
// one place so the per-CPU state (current task, interrupt depth) is updated
// in line order.
void TraceReader::perf_line(std::string_view line, std::int64_t lineno) {
  const std::string expected =
      "expected a `perf script` line `COMM TID [CPU] TIME: sched:EVENT: FIELDS` or `perf sched "
      "timehist` text";
  std::size_t open = 0;
  std::size_t close = 0;
  std::int64_t time = 0;
  std::size_t after_time = 0;
  bool found = false;
  while ((open = line.find('[', open)) != std::string_view::npos) {
    close = line.find(']', open);
    if (close == std::string_view::npos) break;
    const auto c = to_int(line.substr(open + 1, close - open - 1));
    const auto colon = line.find(':', close);
    if (c && colon != std::string_view::npos) {
      const auto tm = seconds_to_ns(line.substr(close + 1, colon - close - 1));
      if (tm) {
        time = *tm;
        after_time = colon + 1;
        found = true;
        break;
      }
    }
    open = close;
  }
  if (!found) fail(lineno, expected);
  const int cpu = static_cast<int>(*to_int(line.substr(open + 1, close - open - 1)));
  std::string_view head = trim(line.substr(0, open));
  const auto sp = head.find_last_of(" \t");
  if (sp == std::string_view::npos) fail(lineno, expected + " (no TID before [CPU])");
  std::string_view ids = head.substr(sp + 1);
  const std::string comm(trim(head.substr(0, sp)));
  // "TID" alone, or "PID/TID" (perf script -F pid,tid).
  const auto slash = ids.find('/');
  const auto tid_v = to_int(slash == std::string_view::npos ? ids : ids.substr(slash + 1));
  if (!tid_v) fail(lineno, expected + " (TID is not a number)");
  const int tid = static_cast<int>(*tid_v);
  int pid = -1;
  if (slash != std::string_view::npos) {
    const auto p = to_int(ids.substr(0, slash));
    if (!p) fail(lineno, expected + " (PID is not a number)");
    pid = static_cast<int>(*p);
  }
  std::string_view rest = trim(line.substr(after_time));
  const auto ev_end = rest.find(": ");
  std::string_view event = ev_end == std::string_view::npos ? rest : rest.substr(0, ev_end);
  if (!event.empty() && event.back() == ':') event.remove_suffix(1);
  std::string_view fields = ev_end == std::string_view::npos ? "" : trim(rest.substr(ev_end + 2));
  note_time(time, cpu);

  auto bad = [&](const char* what) {
    fail(lineno, std::string(event) + ": expected " + what + ", got `" + std::string(fields) + "`");
  };
  if (event == "sched:sched_switch") {
    ++stats_.switches;
    std::string prev_comm, next_comm;
    int prev = 0, next = 0;
    std::string_view state;
    if (fields.find("prev_comm=") != std::string_view::npos) {
      const auto pc = field(fields, "prev_comm=", " prev_pid=");
      const auto pp = field(fields, "prev_pid=");
      const auto ps = field(fields, "prev_state=");
      const auto nc = field(fields, "next_comm=", " next_pid=");
      const auto np = field(fields, "next_pid=");
      if (!pc || !pp || !ps || !nc || !np || !to_int(*pp) || !to_int(*np))
        bad("prev_comm= prev_pid= prev_state= ==> next_comm= next_pid=");
      prev_comm = std::string(*pc);
      next_comm = std::string(*nc);
      prev = static_cast<int>(*to_int(*pp));
      next = static_cast<int>(*to_int(*np));
      state = *ps;
    } else {
      const auto arrow = fields.find("==>");
      if (arrow == std::string_view::npos ||
          !plugin_task(fields.substr(0, arrow), prev_comm, prev, &state) ||
          !plugin_task(fields.substr(arrow + 3), next_comm, next, nullptr))
        bad("`prev_comm=... ==> next_comm=...` or `comm:tid [prio] S ==> comm:tid [prio]`");
    }
    context(cpu, prev, prev_comm, pid, time);
    if (prev != 0) {
      Transition off{Transition::Kind::off_cpu, time, cpu, prev, prev_comm, 0, pid,
                     off_state(state)};
      sink_(off);
    }
    becomes_current(cpu, next);
    cpu_last_time(cpu) = time;
    if (next != 0) sink_(Transition{Transition::Kind::on_cpu, time, cpu, next, next_comm, 0, -1});
    return;
  }
  std::int64_t started = -1;
  if (event == "sched:sched_stat_runtime") {
    // "comm=NAME pid=TID runtime=NS [ns]": the thread's run since it was
    // last accounted (update_curr), at most since it got the CPU.
    const auto p = field(fields, "pid=", " runtime=");
    const auto rt = field(fields, "runtime=", " [ns]");
    if (p && rt && to_int(*p) && *to_int(*p) == tid && to_int(*rt)) started = time - *to_int(*rt);
  }
  context(cpu, tid, comm, pid, time, started);
  cpu_last_time(cpu) = time;
  if (event == "sched:sched_waking" || event == "sched:sched_wakeup" ||
      event == "sched:sched_wakeup_new") {
    const auto c = field(fields, "comm=", " pid=");
    const auto p = field(fields, "pid=");
    if (!c || !p || !to_int(*p)) bad("comm= pid=");
    const int wakee = static_cast<int>(*to_int(*p));
    // sched_wakeup follows sched_waking for the same wake-up when both are
    // recorded; the reader forwards both and the importer ignores a wake of
    // a thread that is already runnable.
    if (event == "sched:sched_wakeup_new") {
      ++stats_.other_events;
      return;
    }
    ++stats_.wakes;
    last_wake_[wakee] = time;
    int waker = tid;
    if (irq_depth(cpu) > 0) {
      waker = kWakerInterrupt;
      ++stats_.interrupt_wakes;
    }
    Transition w{Transition::Kind::wake, time, cpu, wakee, std::string(*c), waker, -1};
    if (const auto tc = field(fields, "target_cpu="); tc && to_int(*tc))
      w.target_cpu = static_cast<int>(*to_int(*tc));
    sink_(w);
    return;
  }
  if (event == "sched:sched_process_fork") {
    const auto pp = field(fields, "pid=");
    const auto cc = field(fields, "child_comm=", " child_pid=");
    const auto cp = field(fields, "child_pid=");
    if (!pp || !cc || !cp || !to_int(*pp) || !to_int(*cp)) bad("comm= pid= child_comm= child_pid=");
    ++stats_.forks;
    sink_(Transition{Transition::Kind::fork, time, cpu, static_cast<int>(*to_int(*cp)),
                     std::string(*cc), static_cast<int>(*to_int(*pp)), -1});
    return;
  }
  if (event == "sched:sched_process_exec") {
    // "filename=PATH pid=PID old_pid=PID": the process execs a new image.
    const auto p = field(fields, "pid=", " old_pid=");
    if (!p || !to_int(*p)) bad("filename= pid= old_pid=");
    ++stats_.other_events;
    sink_(
        Transition{Transition::Kind::exec, time, cpu, static_cast<int>(*to_int(*p)), comm, 0, pid});
    return;
  }
  if (event == "sched:sched_process_exit") {
    const auto p = field(fields, "pid=");
    if (!p || !to_int(*p)) bad("comm= pid=");
    ++stats_.exits;
    sink_(
        Transition{Transition::Kind::exit, time, cpu, static_cast<int>(*to_int(*p)), comm, 0, pid});
    return;
  }
  const bool enter = event == "irq:irq_handler_entry" || event == "irq:softirq_entry" ||
                     event == "timer:hrtimer_expire_entry";
  const bool leave = event == "irq:irq_handler_exit" || event == "irq:softirq_exit" ||
                     event == "timer:hrtimer_expire_exit";
  if (event == "timer:hrtimer_start") {
    // "hrtimer=P function=hrtimer_wakeup expires=NS softexpires=NS ...":
    // the thread in whose context it runs arms its own sleep timer.
    const auto fn = field(fields, "function=");
    const auto ex = field(fields, "expires=");
    if (tid != 0 && fn && *fn == "hrtimer_wakeup" && ex && to_int(*ex))
      sleep_timer_[tid] = SleepTimer{*to_int(*ex), time};
    ++stats_.other_events;
    return;
  }
  if (enter || leave) {
    if (event == "timer:hrtimer_expire_entry")
      if (const auto now = field(fields, "now="); now && to_int(*now))
        timer_offset_ = time - *to_int(*now);
    stats_.irq_context_events = true;
    int& d = irq_depth(cpu);
    d = enter ? d + 1 : std::max(0, d - 1);
    return;
  }
  if (event.find(':') == std::string_view::npos) fail(lineno, expected + " (no SYS:EVENT name)");
  ++stats_.other_events;
}

// timehist: `TIME [CPU] COMM[TID] WAIT SCHDELAY RUN [STATE]` or
// `TIME [CPU] COMM[TID] awakened: COMM[TID]`; header and separator lines,
// and the "Samples do not have callchains." note, are skipped.
void TraceReader::timehist_line(std::string_view line, std::int64_t lineno) {
  if (line.front() == '[' || line.front() == '-' || line.rfind("Samples", 0) == 0 ||
      line.rfind("time", 0) == 0)
    return;
  const auto parts = split_ws(line);
  const std::string expected =
      "expected a `perf sched timehist` line `TIME [CPU] COMM[TID] WAIT SCHDELAY RUN` or `TIME "
      "[CPU] COMM[TID] awakened: COMM[TID]`";
  if (parts.size() < 3) fail(lineno, expected);
  const auto time = seconds_to_ns(parts[0]);
  if (!time || parts[1].size() < 3 || parts[1].front() != '[' || parts[1].back() != ']')
    fail(lineno, expected);
  const auto cpu_v = to_int(parts[1].substr(1, parts[1].size() - 2));
  if (!cpu_v) fail(lineno, expected);
  const int cpu = static_cast<int>(*cpu_v);
  // The task name may hold spaces: it ends at the "]" that closes "[TID]";
  // the idle task is `<idle>`, without a TID.
  const auto task_start = static_cast<std::size_t>(parts[2].data() - line.data());
  std::string comm;
  int tid = 0, pid = -1;
  std::size_t task_end = std::string_view::npos;
  if (parts[2] == "<idle>" ||
      (parts[2].front() == ':' && timehist_task(parts[2], comm, tid, pid))) {
    if (parts[2] == "<idle>") comm = "<idle>";
    task_end = task_start + parts[2].size() - 1;
  } else {
    task_end = line.find(']', task_start);
    while (task_end != std::string_view::npos) {
      const auto open = line.rfind('[', task_end);
      if (open != std::string_view::npos && open > task_start &&
          timehist_task(line.substr(task_start, task_end + 1 - task_start), comm, tid, pid))
        break;
      task_end = line.find(']', task_end + 1);
    }
    if (task_end == std::string_view::npos) fail(lineno, expected + " (no COMM[TID])");
  }
  note_time(*time, cpu);
  const auto rest_parts = split_ws(line.substr(task_end + 1));
  if (!rest_parts.empty() && rest_parts[0] == "migrated:") return;  // timehist -M
  if (!rest_parts.empty() && rest_parts[0] == "awakened:") {
    timehist_wakers_ = true;
    std::string wcomm;
    int wtid = 0, wpid = -1;
    const auto aw = line.find("awakened:", task_end);
    if (!timehist_task(line.substr(aw + 9), wcomm, wtid, wpid))
      fail(lineno, expected + " (awakened: COMM[TID])");
    ++stats_.wakes;
    sink_(Transition{Transition::Kind::wake, *time, cpu, wtid, wcomm, tid, wpid});
    return;
  }
  if (rest_parts.size() < 3) fail(lineno, expected);
  const auto wait = millis_to_ns(rest_parts[0]);
  const auto delay = millis_to_ns(rest_parts[1]);
  const auto run = millis_to_ns(rest_parts[2]);
  if (!wait || !delay || !run) fail(lineno, expected + " (WAIT SCHDELAY RUN in msec)");
  ++stats_.switches;
  if (tid <= 0) return;  // the idle task, or a thread that has exited (`:-1[-1/PID]`)
  OffState st = OffState::unknown;
  if (rest_parts.size() >= 4 && rest_parts[3].size() == 1) st = off_state(rest_parts[3]);
  // The run interval ends at TIME; a wait before it means the thread had
  // blocked and was woken, which the awakened line (if -w was given) or an
  // unnamed wake-up at TIME - RUN - SCHDELAY tells the importer.
  Transition w{Transition::Kind::wake, *time - *run - *delay, cpu, tid, comm, kWakerUnknown, pid};
  if (*wait > 0) sink_(w);
  sink_(Transition{Transition::Kind::on_cpu, *time - *run, cpu, tid, comm, 0, pid});
  sink_(Transition{Transition::Kind::off_cpu, *time, cpu, tid, comm, 0, pid, st});
}

void TraceReader::finish(bool last_line_complete, std::string_view last_line) {
  if (!last_line_complete && !trim(last_line).empty())
    fail(last_lineno_ + 1, "the trace is truncated: its last line ends without a newline (`" +
                               std::string(last_line.substr(0, 80)) + "`)");
  if (format_ == TextFormat::undecided)
    throw TraceError(source_ + ": empty trace: no perf script or timehist lines");
  stats_.inconsistent = stats_.hidden_switches = 0;
  // A missing switch away from the idle task (tid 0) is not a lost event of
  // the program: on this project's VM, one vCPU's switches out of idle are
  // never recorded (a 0.3 s recording of traced-server: 150 switches on CPU 1,
  // none with prev_pid=0; 52 of 52 on CPU 0), while its program threads'
  // events are; the thread found running is given an on-CPU transition from
  // the CPU's last recorded event (context()).
  for (const auto& [tid, n] : missing_)
    (tid != 0 && context_seen_.count(tid) ? stats_.inconsistent : stats_.hidden_switches) += n;
  if (format_ == TextFormat::timehist && stats_.switches > 0 && !timehist_wakers_)
    throw TraceError(source_ +
                     ": timehist text without wake-ups: the import finds hand-offs by who woke "
                     "whom, which `perf sched timehist -w` (or `perf script`) shows");
  if (stats_.switches == 0)
    throw TraceError(source_ +
                     ": no sched_switch events: record with `perf sched record` (or "
                     "`perf record -e sched:sched_switch -e sched:sched_waking ...`)");
}

void read_trace_text(const std::string& path, TraceReader& reader) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path + ": cannot open the trace");
  std::string line;
  std::int64_t n = 0;
  bool complete = true;
  while (std::getline(in, line)) {
    ++n;
    complete = !in.eof();
    if (!complete && !trim(line).empty()) break;  // finish() reports the truncation
    if (line.find('\0') != std::string::npos)
      throw TraceError(path + ":" + std::to_string(n) +
                       ": binary data: not perf script or timehist text (a perf.data file is read "
                       "through `perf script`; give it a name ending in .data)");
    reader.feed(line, n);
  }
  reader.finish(complete, complete ? std::string_view{} : std::string_view(line));
}

}  // namespace poolsim::trace
