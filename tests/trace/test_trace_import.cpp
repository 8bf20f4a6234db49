// Tests of the trace import (trace/): the text readers, the per-thread state
// machine and the inference, on a hand-written trace whose every number is
// known (synthetic.perf-script.txt: two requests of a 2-worker pool, each
// CPU, a timer wait, CPU; one timer fires while the submitter runs; one
// preemption), on traces recorded here with perf (traced-server, trimmed to
// 0.05 s runs) and on bad traces.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "models/scenario_loader.hpp"
#include "trace/perf_text.hpp"
#include "trace/program_model.hpp"
#include "trace/scenario_writer.hpp"
#include "trace/trace_import.hpp"

using namespace poolsim;
using namespace poolsim::trace;
namespace fs = std::filesystem;

namespace {
std::string data(const std::string& f) { return std::string(POOLSIM_TEST_DATA) + "/trace/" + f; }

ProgramModel import_file(const std::string& f, ProgramSelector sel = {}) {
  return import_trace(data(f), sel, fs::temp_directory_path().string());
}

std::string error_of(const std::string& f) {
  try {
    import_file(f);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "no error";
}

struct TempDir {
  fs::path dir;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "poolsim-trace-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    dir = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
}  // namespace

TEST_CASE("trace_reader: perf script lines become transitions with wakers", "[trace]") {
  std::vector<Transition> out;
  TraceReader r("x", [&](const Transition& t) { out.push_back(t); });
  r.feed(
      "         loadgen   100/103   [001]    10.000000000:         sched:sched_waking: "
      "comm=worker 0 pid=101 prio=120 target_cpu=000",
      1);
  r.feed(
      "  Web Content   7/7  [000]   10.000000500: sched:sched_switch: prev_comm=Web Content "
      "prev_pid=7 prev_prio=120 prev_state=R+ ==> next_comm=worker 0 next_pid=101 next_prio=120",
      2);
  r.feed(
      "         swapper     0/0     [000]    10.000310000: timer:hrtimer_expire_entry: "
      "hrtimer=0x1 function=hrtimer_wakeup now=1",
      3);
  r.feed(
      "         swapper     0/0     [000]    10.000310001:         sched:sched_waking: "
      "comm=loadgen pid=103 prio=120 target_cpu=000",
      4);
  r.finish(true);
  // The timer fires in swapper's context on CPU 0: worker 0 left that CPU
  // unseen, by 10.0000005 s (the CPU's last recorded event) at the latest.
  REQUIRE(out.size() == 5);
  CHECK(out[0].kind == Transition::Kind::wake);
  CHECK(out[0].tid == 101);
  CHECK(out[0].comm == "worker 0");
  CHECK(out[0].other == 103);
  CHECK(out[0].time == 10'000'000'000);
  CHECK(out[1].kind == Transition::Kind::off_cpu);
  CHECK(out[1].tid == 7);
  CHECK(out[1].comm == "Web Content");
  CHECK(out[1].state == OffState::preempted);
  CHECK(out[2].kind == Transition::Kind::on_cpu);
  CHECK(out[2].tid == 101);
  CHECK(out[3].kind == Transition::Kind::off_cpu);
  CHECK(out[3].tid == 101);
  CHECK(out[3].time == 10'000'000'500);
  CHECK(out[3].state == OffState::unknown);
  CHECK(out[4].other == kWakerInterrupt);
  CHECK(r.stats().interrupt_wakes == 1);
  CHECK(r.stats().switches == 1);
}

TEST_CASE("trace_reader: the libtraceevent sched_switch form is read", "[trace]") {
  std::vector<Transition> out;
  TraceReader r("x", [&](const Transition& t) { out.push_back(t); });
  r.feed("perf 12 [000] 1.5: sched:sched_switch: perf:12 [120] S ==> my:app:34 [120]", 1);
  r.finish(true);
  REQUIRE(out.size() == 2);
  CHECK(out[0].tid == 12);
  CHECK(out[0].state == OffState::blocked);
  CHECK(out[1].tid == 34);
  CHECK(out[1].comm == "my:app");
  CHECK(out[1].time == 1'500'000'000);
}

TEST_CASE("trace_reader: a switch-in hidden by an unrecorded task is recovered, not lost",
          "[trace]") {
  // On this VM the host agent's threads (tokio-rt-worker) are switched in by
  // recorded switches, but nothing they do is recorded, their switch-outs
  // included: the next event on that CPU runs in another thread's context.
  std::vector<Transition> out;
  TraceReader r("x", [&](const Transition& t) { out.push_back(t); });
  r.feed(
      "swapper/0 0/0 [000] 1.000000000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 "
      "prev_prio=120 prev_state=R ==> next_comm=tokio-rt-worker next_pid=68 next_prio=110",
      1);
  r.feed("w 5/7 [000] 1.000100000: sched:sched_waking: comm=x pid=9 prio=120 target_cpu=000", 2);
  r.feed(
      "w 5/7 [000] 1.000200000: sched:sched_switch: prev_comm=w prev_pid=7 prev_prio=120 "
      "prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
      3);
  r.feed(
      "swapper/0 0/0 [000] 1.000300000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 "
      "prev_prio=120 prev_state=R ==> next_comm=tokio-rt-worker next_pid=68 next_prio=110",
      4);
  r.feed(
      "swapper/0 0/0 [000] 1.000400000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 "
      "prev_prio=120 prev_state=R ==> next_comm=w next_pid=7 next_prio=120",
      5);
  r.finish(true);
  CHECK(r.stats().hidden_switches == 2);
  CHECK(r.stats().inconsistent == 0);
  // The agent left the CPU unseen, by the CPU's last recorded event (1.0 s);
  // thread 7 ran from no earlier than that.
  REQUIRE(out.size() >= 4);
  CHECK(out[0].tid == 68);  // switched in by a recorded switch
  CHECK(out[1].kind == Transition::Kind::off_cpu);
  CHECK(out[1].tid == 68);
  CHECK(out[1].time == 1'000'000'000);
  CHECK(out[2].kind == Transition::Kind::on_cpu);
  CHECK(out[2].tid == 7);
  CHECK(out[2].time == 1'000'000'000);
  CHECK(out[3].kind == Transition::Kind::wake);
  CHECK(out[3].other == 7);
}

TEST_CASE(
    "trace_reader: after an unrecorded switch out of idle a thread runs from its stat_runtime",
    "[trace]") {
  // CPU 1 goes idle at 1.0 s; the switch out of idle is not recorded (this
  // VM's vCPU 1); at 2.0 s worker 7 reports 100 us of runtime: it got the
  // CPU at 1.9999 s, not at the CPU's last event (1.0 s), which would credit
  // it with a second of idle time.
  std::vector<Transition> out;
  TraceReader r("x", [&](const Transition& t) { out.push_back(t); });
  r.feed(
      "w 7/7 [001] 1.000000000: sched:sched_switch: prev_comm=w prev_pid=7 prev_prio=120 "
      "prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
      1);
  r.feed("w 7/7 [001] 2.000000000: sched:sched_stat_runtime: comm=w pid=7 runtime=100000 [ns]", 2);
  r.finish(true);
  CHECK(r.stats().hidden_switches == 1);
  CHECK(r.stats().inconsistent == 0);
  REQUIRE(out.size() == 2);
  CHECK(out[1].kind == Transition::Kind::on_cpu);
  CHECK(out[1].tid == 7);
  CHECK(out[1].time == 1'999'900'000);
}

TEST_CASE("trace_reader: a switch missing for a thread whose events are recorded is inconsistent",
          "[trace]") {
  TraceReader r("x", [](const Transition&) {});
  r.feed(
      "a 1/1 [000] 1.0: sched:sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S "
      "==> next_comm=b next_pid=2 next_prio=120",
      1);
  // b's switch-out on CPU 0 is missing; b runs on CPU 1 later.
  r.feed(
      "c 3/3 [000] 2.0: sched:sched_switch: prev_comm=c prev_pid=3 prev_prio=120 prev_state=S "
      "==> next_comm=a next_pid=1 next_prio=120",
      2);
  r.feed("b 2/2 [001] 3.0: sched:sched_waking: comm=a pid=1 prio=120 target_cpu=000", 3);
  r.finish(true);
  CHECK(r.stats().inconsistent == 1);
  CHECK(r.stats().hidden_switches == 0);
}

TEST_CASE("trace_import: switches hidden by an unrecorded task leave the model unchanged",
          "[trace]") {
  // hidden-agent: synthetic.perf-script.txt with the host agent switched in
  // after every switch to idle (8 of 33 switches then do not follow on: the
  // old check refused such recordings as losing events).
  const auto a = import_file("synthetic.perf-script.txt");
  const auto m = import_file("hidden-agent.perf-script.txt");
  CHECK(m.read.switches == 33);
  CHECK(m.read.hidden_switches == 8);
  CHECK(m.read.inconsistent == 0);
  CHECK(m.units == a.units);
  CHECK(m.requests == a.requests);
  CHECK(m.groups[m.backend].bursts == a.groups[a.backend].bursts);
  CHECK(m.groups[m.backend].waits == a.groups[a.backend].waits);
  CHECK(m.unit_runq == a.unit_runq);
  CHECK(m.rate == Approx(a.rate));
}

TEST_CASE("trace_import: switches out of idle left unrecorded on a CPU are not lost events",
          "[trace]") {
  // idle-exits-hidden: synthetic.perf-script.txt without the switches out of
  // idle on CPU 1 (this VM records none there, while the program's own
  // events on CPU 1 are recorded): the same units, requests and groups.
  const auto a = import_file("synthetic.perf-script.txt");
  const auto m = import_file("idle-exits-hidden.perf-script.txt");
  CHECK(m.read.inconsistent == 0);
  CHECK(m.read.hidden_switches == 3);  // 4 removed, the first before any CPU 1 event
  CHECK(m.units == a.units);
  CHECK(m.requests == a.requests);
  CHECK(m.groups.size() == a.groups.size());
  CHECK(m.groups[m.backend].bursts == a.groups[a.backend].bursts);
}

TEST_CASE("trace_import: a trace with switches cut out is refused as having lost events",
          "[trace]") {
  // cut: synthetic.perf-script.txt without worker-0's last five switch-outs.
  CHECK_THAT(error_of("cut.perf-script.txt"),
             Catch::Contains("the trace lost events: 4 of 18 switches"));
}

TEST_CASE("trace_import: the hand-written trace gives its known units exactly", "[trace]") {
  const auto m = import_file("synthetic.perf-script.txt");
  CHECK(m.read.lines == 45);
  CHECK(m.read.switches == 23);
  CHECK(m.read.wakes == 9);
  CHECK(m.read.interrupt_wakes == 5);
  CHECK(m.read.inconsistent == 0);
  CHECK(m.read.hidden_switches == 0);
  CHECK(m.root == "traced-main[100]");
  CHECK(m.program_threads == 4);
  REQUIRE(m.groups.size() == 2);
  const auto& b = m.groups[m.backend];
  CHECK(b.name == "worker");
  CHECK(b.tids == std::vector<int>{101, 102});  // the idle worker-1 joins its pool
  CHECK(m.groups[1].name == "loadgen");
  CHECK(m.groups[1].cpu == 45'000);
  CHECK(m.units == 2);
  CHECK(m.requests == 2);
  CHECK(m.open_units_dropped == 1);
  CHECK(m.modal_waits == 1);
  CHECK(b.bursts == std::vector<std::int64_t>{100'000, 50'000, 300'000, 100'000});
  CHECK(b.waits == std::vector<std::int64_t>{200'000, 200'000});
  CHECK(m.unit_cpu == 550'000);
  CHECK(m.unit_runq == 65'000);  // 10 + 5 us, then 0 + 10 + 40 (preempted) us
  CHECK(m.unit_time == 365'000 + 650'000);
  CHECK(m.span == 1'650'000);
  CHECK(m.rate == Approx(1000));  // (2 - 1) requests over 1 ms between hand-offs
  CHECK(m.interarrival_mean == Approx(1e-3));
  CHECK(m.interarrival_cv == Approx(0).margin(1e-12));
  CHECK_FALSE(m.closed);
  CHECK(m.replies == 0);
  CHECK(m.submit_cpu_per_request == Approx(22.5e-6));
  REQUIRE(m.unmapped.size() == 1);
  CHECK(m.unmapped[0].tid == 100);
}

TEST_CASE("trace_import: the scenario of the hand-written trace loads and holds its samples",
          "[trace]") {
  const auto m = import_file("synthetic.perf-script.txt");
  TempDir tmp;
  WriteOptions o;
  o.source = "synthetic";
  const auto files = write_scenario(m, tmp.dir / "syn.yaml", o);
  REQUIRE(files.size() == 4);  // first bursts, bursts after the wait, waits, scenario
  const std::string text = scenario_text(m, "syn", o);
  CHECK(text.find("arrival: {kind: periodic, interval: 1000000ns, count: 2}") != std::string::npos);
  CHECK(text.find("backend: {kind: pool, threads: 2}") != std::string::npos);
  CHECK(text.find("- cpu: 22500ns") != std::string::npos);
  CHECK(text.find("Not mapped: traced-main[100]") != std::string::npos);
  LoadOptions lo;
  lo.machine = "default";
  const Scenario s = load_scenario((tmp.dir / "syn.yaml").string(), lo);
  CHECK(s.backend.threads == 2);
  REQUIRE(s.workload.classes.size() == 1);
  const auto& task = s.workload.classes[0].task;
  REQUIRE(task.size() == 4);
  // Each place in the request has its own bursts: the first CPU phase draws
  // the requests' first bursts, the phase after the wait their last ones.
  const auto& b = m.groups[m.backend];
  for (const int place : {0, 1}) {
    const auto& e =
        std::get<EmpiricalDist>(std::get<CpuPhase>(task[place == 0 ? 1 : 3]).work.variant());
    std::vector<Duration> want;
    for (std::size_t i = 0; i < b.bursts.size(); ++i)
      if (b.burst_pos[i] == place) want.push_back(Duration{b.bursts[i]});
    CHECK(e.samples.size() == 2);
    CHECK(e.samples == want);
  }
  CHECK(b.bursts[2] == 300'000);
  CHECK(b.burst_pos == std::vector<int>{0, 1, 0, 1});
}

TEST_CASE("trace_import: a recorded open loop maps the workers, the generator and the rate",
          "[trace]") {
  const auto m = import_file("open-loop.perf-script.txt");
  const auto& b = m.groups[m.backend];
  CHECK(b.name == "worker");
  CHECK(b.tids.size() == 2);
  // loadgen hands off every request; in a 0.05 s trace the main thread's
  // two shutdown wake-ups (notify_all) are also a significant edge.
  std::vector<std::string> subs;
  for (int si : m.submitters) subs.push_back(m.groups[si].name);
  CHECK(subs == std::vector<std::string>{"loadgen", "traced-main"});
  CHECK(m.groups[m.submitters[0]].handoffs_out >= 9);
  CHECK_FALSE(m.closed);
  CHECK(m.requests == 10);  // traced-server --rate 200 --duration 0.05
  CHECK(m.modal_waits == 1);
  // traced-server burns 1000 + 200 us per request around a 2 ms nanosleep.
  CHECK(static_cast<double>(m.unit_cpu) / static_cast<double>(m.requests) ==
        Approx(1.2e6).epsilon(0.05));
  CHECK(std::accumulate(b.bursts.begin(), b.bursts.end(), std::int64_t{0}) == m.unit_cpu);
  CHECK(b.bursts.size() == b.waits.size() + static_cast<std::size_t>(m.requests));
  for (auto w : b.waits) CHECK(w >= 2'000'000);
}

TEST_CASE("trace_import: an unnamed closed loop separates workers and generator by role",
          "[trace]") {
  // traced-server --no-names --workers 2 --clients 2: every thread is
  // "traced-server"; the generator is told apart by its wake-up fan-out.
  const auto m = import_file("closed-unnamed.perf-script.txt");
  const auto& b = m.groups[m.backend];
  CHECK(b.tids.size() == 2);
  CHECK(m.closed);
  CHECK(m.clients == 2);
  REQUIRE(m.submitters.size() == 1);
  CHECK(m.groups[m.submitters[0]].tids.size() == 1);
  CHECK(m.reply_fragments > 0);
  REQUIRE(m.unmapped.size() == 1);
  CHECK(m.unmapped[0].leader);
}

TEST_CASE("trace_import: timehist text is read", "[trace]") {
  const auto m = import_file("open-loop.timehist.txt");
  CHECK(m.read.switches > 0);
  CHECK(m.groups[m.backend].name == "worker");
  // Without interrupt events the timers' wake-ups land on whatever thread
  // ran; the named pool still holds together.
  CHECK(m.groups[m.backend].tids.size() == 2);
  CHECK(m.requests > 0);
}

TEST_CASE("trace_import: text a user saves from perf sched record imports", "[trace]") {
  // `perf sched record -- traced-server --workers 2 --rate 200 --duration
  // 0.3`, then `perf script > out.txt` (perf's default fields: no PID, times
  // in microseconds; the sched_stat_runtime lines removed to keep the file
  // small) and `perf sched timehist -w --state` (with `<idle>`, `:-1[-1/PID]`
  // for exited threads, `:TID` for a task perf never named).
  for (const char* f : {"perf-sched-record.perf-script.txt", "perf-sched-record.timehist.txt"}) {
    INFO(f);
    const auto m = import_file(f);
    const auto& b = m.groups[m.backend];
    CHECK(b.name == "worker");
    CHECK(b.tids.size() == 2);
    CHECK_FALSE(m.closed);
    CHECK(m.requests == 60);
    CHECK(m.rate == Approx(200).epsilon(0.02));
    CHECK(static_cast<double>(m.unit_cpu) / static_cast<double>(m.requests) ==
          Approx(1.2e6).epsilon(0.08));
  }
}

TEST_CASE("trace_import: timehist text without wake-ups says to add -w", "[trace]") {
  TempDir tmp;
  const fs::path f = tmp.dir / "th.txt";
  {
    std::ifstream in(data("perf-sched-record.timehist.txt"));
    std::ofstream out(f);
    std::string line;
    while (std::getline(in, line))
      if (line.find("awakened:") == std::string::npos) out << line << '\n';
  }
  std::string e;
  try {
    import_trace(f.string(), {}, tmp.dir.string());
  } catch (const TraceError& x) {
    e = x.what();
  }
  CHECK_THAT(e, Catch::Contains("timehist text without wake-ups"));
  CHECK_THAT(e, Catch::Contains("perf sched timehist -w"));
}

TEST_CASE("trace_import: bad traces are refused with the line and what was expected", "[trace]") {
  CHECK_THAT(error_of("truncated.txt"),
             Catch::Contains("truncated.txt:348: the trace is truncated"));
  CHECK_THAT(error_of("lost.txt"), Catch::Contains("lost.txt:13: the trace lost events"));
  CHECK_THAT(error_of("unknown-format.txt"),
             Catch::Contains("unknown-format.txt:1: expected a `perf script` line"));
  CHECK_THAT(error_of("no-sched.txt"), Catch::Contains("no sched_switch events"));
  CHECK_THAT(error_of("missing.txt"), Catch::Contains("no such trace file"));
  std::string sel;
  try {
    import_file("synthetic.perf-script.txt", ProgramSelector{4242, ""});
  } catch (const TraceError& e) {
    sel = e.what();
  }
  CHECK_THAT(sel, Catch::Contains("no thread of the selected program (pid 4242)"));
}

TEST_CASE("trace_import: group names strip numeric suffixes", "[trace]") {
  CHECK(base_name("worker-12") == "worker");
  CHECK(base_name("pool-1-thread-3") == "pool-1-thread");
  CHECK(base_name("kworker/0:1") == "kworker");
  CHECK(base_name("123") == "123");
}

namespace {
// When thread 7 goes on CPU again after sleeping on idle vCPU 1 with a sleep
// timer that expires at `expires` (the timer base's clock: trace time less
// 2 ms here) and next shows up running at 10.0019 s.
std::int64_t sleeper_back_at(const std::string& expires) {
  std::vector<Transition> out;
  TraceReader r("x", [&](const Transition& t) { out.push_back(t); });
  const std::vector<std::string> lines = {
      "w 5/7 [001] 10.000000000: timer:hrtimer_expire_entry: hrtimer=0xffff1 "
      "function=tick_nohz_handler now=9998000000",
      "w 5/7 [001] 10.000001000: timer:hrtimer_expire_exit: hrtimer=0xffff1",
      "w 5/7 [001] 10.000100000: timer:hrtimer_start: hrtimer=0xffff2 function=hrtimer_wakeup "
      "expires=" +
          expires + " softexpires=" + expires + " mode=ABS",
      "w 5/7 [001] 10.000110000: sched:sched_switch: prev_comm=w prev_pid=7 prev_prio=120 "
      "prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120",
      "w 5/7 [001] 10.001900000: sched:sched_waking: comm=x pid=9 prio=120 target_cpu=000"};
  for (std::size_t i = 0; i < lines.size(); ++i) r.feed(lines[i], static_cast<std::int64_t>(i + 1));
  r.finish(true);
  const auto on = std::find_if(out.begin() + 1, out.end(), [](const Transition& t) {
    return t.kind == Transition::Kind::on_cpu && t.tid == 7;
  });
  REQUIRE(on != out.end());
  return on->time;
}
}  // namespace

TEST_CASE("trace_reader: a sleep timer bounds a wake-up out of unrecorded idle", "[trace]") {
  // This VM's vCPU 1 records nothing while it idles: a thread woken there by
  // its nanosleep timer shows up running with no sched_waking and no switch
  // in. It cannot have run before its timer expired (hrtimer_start's
  // expires, in the monotonic base: trace time = now + offset, the offset
  // from hrtimer_expire_entry's now=): due at 9999600000 + 2 ms = 10.0016 s.
  CHECK(sleeper_back_at("9999600000") == 10'001'600'000);
  // A timer of another clock (CLOCK_REALTIME: expires far beyond the trace)
  // says nothing: the thread is taken to run since the CPU's last event.
  CHECK(sleeper_back_at("1764590000000000000") == 10'000'110'000);
}

TEST_CASE("trace_import: an unnamed shared-pipe pool separates clients and workers by CPU",
          "[trace]") {
  // examples/traced-server/pipe_pool.cpp, `pipe-pool 3 3 0.25` recorded here
  // (258 requests; each 800 us of CPU, usleep(1500), 300 us of CPU): every
  // thread is "pipe-pool", clients wake workers with requests and workers
  // wake clients with replies (and each other: pipe_read wakes the next
  // reader), so the wake graph alone gives them one colour; their CPU tells
  // them apart. In this recording one worker seldom blocked (woken twice,
  // 84 replies): by its shape alone it and the client it served were a pool
  // of their own, and the import found 2 workers and 171 requests. Workers on
  // vCPU 1 wake from usleep unrecorded: the sleep timer bounds those
  // wake-ups, so no wait is shorter than the usleep.
  const auto m = import_file("pipe-pool.perf-script.txt");
  const auto& b = m.groups[m.backend];
  CHECK(b.tids.size() == 3);
  REQUIRE(m.submitters.size() == 1);
  CHECK(m.groups[m.submitters[0]].tids.size() == 3);
  CHECK(m.closed);
  CHECK(m.clients == 3);
  CHECK(m.requests >= 250);
  CHECK(m.requests <= 258);
  const double cpu_per_request =
      static_cast<double>(std::accumulate(b.bursts.begin(), b.bursts.end(), std::int64_t{0})) /
      static_cast<double>(m.requests) * 1e-9;
  CHECK(cpu_per_request > 1.05e-3);
  CHECK(cpu_per_request < 1.25e-3);
  REQUIRE(!b.waits.empty());
  CHECK(*std::min_element(b.waits.begin(), b.waits.end()) >= 1'450'000);
}

TEST_CASE("trace_import: kernel costs the simulator charges again are netted out of the bursts",
          "[trace]") {
  // 2 requests, 2 bursts each (4 bursts of 110 us); the pool dispatched 6
  // times, migrated once and gave 2 wake-ups, one to another CPU; the
  // submitters' 20 us per request came with 2 dispatches and 2 wake-ups.
  ProgramModel m;
  m.requests = 2;
  m.groups.resize(1);
  m.groups[0].bursts = {110'000, 110'000, 110'000, 110'000};
  m.groups[0].burst_pos = {0, 1, 0, 1};
  m.backend_kernel = KernelEvents{6, 1, 2, 1};
  m.submit_kernel = KernelEvents{2, 0, 2, 0};
  m.submit_cpu_per_request = 20e-6;
  KernelCosts c;
  c.profile = "test";
  c.dispatch = 4'000;
  c.migration = 10'000;
  c.wake = 5'000;
  c.ipi = 30'000;
  c.noise_share = 0.1;
  c.timer_slack = 50'000;
  m.groups[0].waits = {2'000'000, 30'000};
  net_kernel_costs(m, c);
  // Each wait less the slack, never below 0.
  CHECK(m.groups[0].waits == std::vector<std::int64_t>{1'950'000, 0});
  CHECK(m.netted_wait == Approx(40e-6));
  // Per request: (6 x 4 + 10 + 2 x 5 + 30) / 2 = 37 us over 2 bursts; each
  // burst 110 / 1.1 = 100 us less 18.5 us.
  CHECK(m.groups[0].bursts == std::vector<std::int64_t>{81'500, 81'500, 81'500, 81'500});
  CHECK(m.netted_backend == Approx(57e-6));
  // Submitters: 20 / 1.1 - (2 x 4 + 2 x 5) / 2 = 18.18 - 9 us.
  CHECK(m.submit_cpu_per_request == Approx(20e-6 / 1.1 - 9e-6));
  CHECK(m.netted_profile == "test");
  // Never below zero: costs larger than a burst leave 0.
  c.dispatch = 1'000'000;
  net_kernel_costs(m, c);
  CHECK(m.groups[0].bursts == std::vector<std::int64_t>{0, 0, 0, 0});
  CHECK(m.submit_cpu_per_request == 0);
}

namespace {
// The hand-written trace, started through a launcher script: the program's
// first process runs as `bash`, starts two threads that it hands work
// to four times (1 ms of CPU per turn, more than the pool spends),
// then execs the program (`with_exec`) or, without the exec event, just
// carries on under the program's name (exec ends the other threads).
std::string launched_trace(bool with_exec) {
  std::ostringstream t;
  t << "perf 99/99 [000] 9.980000000: sched:sched_waking: comm=perf-exec pid=100 prio=120 "
       "target_cpu=000\n"
       "perf 99/99 [000] 9.980000100: sched:sched_switch: prev_comm=perf prev_pid=99 "
       "prev_prio=120 prev_state=S ==> next_comm=perf-exec next_pid=100 next_prio=120\n"
       "bash 100/100 [000] 9.980100000: sched:sched_process_fork: comm=bash pid=100 "
       "child_comm=bash child_pid=150\n"
       "bash 100/100 [000] 9.980200000: sched:sched_process_fork: comm=bash pid=100 "
       "child_comm=bash child_pid=151\n"
       "bash 100/100 [000] 9.980300000: sched:sched_switch: prev_comm=bash prev_pid=100 "
       "prev_prio=120 prev_state=S ==> next_comm=bash next_pid=150 next_prio=120\n";
  std::int64_t us = 9'980'300;
  auto at = [&] {
    char b[32];
    std::snprintf(b, sizeof b, "%lld.%06lld000", static_cast<long long>(us / 1'000'000),
                  static_cast<long long>(us % 1'000'000));
    return std::string(b);
  };
  int cur = 150;
  for (int turn = 0; turn < 8; ++turn) {
    const int next = cur != 100 ? 100 : turn % 4 == 1 ? 150 : 151;
    us += 1000;
    t << "bash 100/" << cur << " [000] " << at() << ": sched:sched_waking: comm=bash pid=" << next
      << " prio=120 target_cpu=000\n";
    us += 1;
    t << "bash 100/" << cur << " [000] " << at()
      << ": sched:sched_switch: prev_comm=bash prev_pid=" << cur
      << " prev_prio=120 prev_state=S ==> next_comm=bash next_pid=" << next << " next_prio=120\n";
    cur = next;
  }
  us += 10;
  t << "bash 100/" << cur << " [000] " << at()
    << ": sched:sched_waking: comm=bash pid=100 prio=120 target_cpu=000\n";
  us += 1;
  t << "bash 100/" << cur << " [000] " << at()
    << ": sched:sched_switch: prev_comm=bash prev_pid=" << cur
    << " prev_prio=120 prev_state=S ==> next_comm=bash next_pid=100 next_prio=120\n";
  us += 10;
  if (with_exec)
    t << "bash 100/100 [000] " << at()
      << ": sched:sched_process_exec: filename=/usr/bin/traced pid=100 old_pid=100\n";
  std::ifstream in(data("synthetic.perf-script.txt"));
  std::string line;
  for (int n = 0; std::getline(in, line); ++n)
    if (n >= 2) t << line << "\n";  // perf-exec is already running
  return t.str();
}
}  // namespace

TEST_CASE("trace_import: a launcher's processes before the program's exec are not the program",
          "[trace]") {
  // pyenv's `python3` is such a launcher (a bash script forking readlink and
  // basename, then exec); in 6 of 8 short recordings its processes were
  // taken for the pool.
  const auto plain = import_file("synthetic.perf-script.txt");
  TempDir tmp;
  for (const bool with_exec : {true, false}) {
    const auto path = tmp.dir / (with_exec ? "exec.txt" : "noexec.txt");
    std::ofstream(path) << launched_trace(with_exec);
    const auto m = import_trace(path.string(), {}, tmp.dir.string());
    const bool same = m.groups[m.backend].tids == plain.groups[plain.backend].tids &&
                      m.groups[m.backend].bursts == plain.groups[plain.backend].bursts &&
                      m.requests == plain.requests;
    CHECK(same == with_exec);
  }
}
