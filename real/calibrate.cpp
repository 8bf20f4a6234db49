// calibrate.cpp: `poolsim calibrate`: runs the experiments of
// calibrate_experiments.hpp in order (later ones use earlier results: the
// slice check uses the tick, thread_exit and wakeup_latency on one CPU use
// switch_cost, the stack mapping uses stack_reserve), measures `cores`
// (online CPUs, sysconf), fills every field of the profile from the
// measurement of that name (models/machine_fields.hpp) and writes it.
#include "real/calibrate.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>

#include "models/assert.hpp"
#include "models/machine_fields.hpp"
#include "models/scenario_loader.hpp"
#include "real/backend.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/cpu_busy.hpp"
#include "real/cpu_work.hpp"
#include "real/speed_check.hpp"

namespace poolsim::real {

using namespace calib;

namespace {

// How far the work loop may drift from its speed at the start of a
// calibration before the measurement is refused: the run check's default
// band (run.speed_band, docs/validation.md).
constexpr double kCalibrateSpeedBand = 0.25;

double get_reserve(const std::vector<Measurement>& ms) { return field_value(ms, "stack_reserve"); }

// The experiments whose cost depends on what the other vCPU or the host is
// doing (mapping a stack while a thread of the process runs on CPU 1, a
// queue's cache lines crossing to CPU 1, a timer interrupt's exit to the
// hypervisor) now and then read far from their usual value, with the work
// loop at its usual speed: stack_map_remote 2.9 us once where it read 26-32
// in the calibrations around it, queue_handover_remote 34 ns once against
// 241-301 in seven, timer_irq 50 and 8 us against 17-25 in five
// (2026-12-03). So they run in blocks spread over the calibration, and each
// field is the median of the blocks' values: one block taken in such a
// state does not decide the profile (docs/calibration.md, "Blocks").
Measurement median_of_blocks(const std::vector<Measurement>& blocks) {
  POOLSIM_ASSERT(!blocks.empty(), "median_of_blocks: no block");
  Measurement m = blocks.front();
  std::vector<double> med, mean, p10, p90;
  std::string seen;
  m.samples = 0;
  for (const Measurement& b : blocks) {
    POOLSIM_ASSERT(b.field == m.field, "median_of_blocks: blocks of different fields");
    med.push_back(b.median);
    mean.push_back(b.mean);
    p10.push_back(b.p10);
    p90.push_back(b.p90);
    m.samples += b.samples;
    seen += (seen.empty() ? "" : ", ") + format_value(m, b.median);
  }
  m.median = quantile(med, 0.5);
  m.mean = quantile(mean, 0.5);
  m.p10 = quantile(p10, 0.5);
  m.p90 = quantile(p90, 0.5);
  if (blocks.size() > 1)
    m.method += fmt::format("; the median of {} blocks spread over the calibration ({})",
                            blocks.size(), seen);
  return m;
}

// The kernel release (uname) and the CPU model (/proc/cpuinfo) for the report.
void describe_machine(CalibrationReport& rep) {
  struct utsname u {};
  uname(&u);
  rep.kernel = u.release;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      rep.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
}

}  // namespace

namespace {
// Other work on the CPUs would be measured as this machine's costs and noise.
void require_quiet(const CalibrateOptions& opt, const char* when) {
  if (opt.allow_busy) return;
  const auto busy = sample_busy_fraction(1.0);
  if (busy && *busy > opt.max_busy)
    throw MachineRefused(fmt::format(
        "calibrate: the machine is busy {}: its CPUs were {:.0f}% busy over 1 s with other work "
        "(at most {:.0f}% allowed), which calibrate would measure as this machine's costs and OS "
        "noise; no profile written. Run it when the machine is quiet, or pass --allow-busy "
        "(docs/calibration.md)",
        when, 100 * *busy, 100 * opt.max_busy));
}
}  // namespace

std::string format_value(const Measurement& m, double v) {
  if (m.unit == "s") return format_seconds(v);
  if (m.unit == "B") return format_bytes(v);
  if (m.unit == "fraction") return fmt::format("{:g}%", 100 * v);
  return fmt::format("{:g}", v);
}

// Long because it is the calibration's sequence: a step line and a call per experiment,
// in the order they must run (the noise spinners last, after unpinning).
CalibrationReport calibrate(const CalibrateOptions& opt) {
  const int scale = opt.quick ? 1 : 5;
  require_quiet(opt, "before the measurement");
  CalibrationReport rep;
  describe_machine(rep);
  // The work loop first: every later step is bracketed by the speed canary
  // (real/speed_check.hpp) against it, and a profile measured while the
  // machine ran at another speed is refused rather than written.
  const CpuWorkCalibration loop = calibrate_cpu_work();
  set_units_per_ns(loop.units_per_ns);
  std::string disturbed;
  // The kernel's page-table paths beside it, before every step: the profile
  // states the median, the speed at which its thread and stack costs were
  // measured (real/speed_check.hpp).
  std::vector<double> kernel_rounds;
  const auto check_speed = [&](const std::string& when) {
    kernel_rounds.push_back(to_seconds(kernel_round_time()));
    const double speed = canary_speed();
    if (disturbed.empty() && !within_band(speed, kCalibrateSpeedBand))
      disturbed = fmt::format("the work loop ran at {} of its calibrated speed {}",
                              format_speed(speed), when);
  };
  const std::function<void(const char*)> step = [&](const char* what) {
    check_speed(fmt::format("before '{}'", what));
    if (!opt.quiet) std::cerr << "calibrate: " << what << "...\n";
  };
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  auto& ms = rep.measurements;
  ms.push_back(summarize("cores", {static_cast<double>(cpus)}, "online CPUs (sysconf)"));
  ms.push_back(summarize(
      "work_loop", {static_cast<double>(kWorkLoopUnits) / loop.units_per_ns * 1e-9},
      fmt::format("90th percentile speed of {} ~55 us trials of the loop (undisturbed), scaled to "
                  "2^20 iterations",
                  loop.trials)));
  // Memory first: a forked child inherits the stacks and malloc arenas of
  // the threads its parent ran, and would reuse them (calibrate_memory.cpp).
  step("malloc arenas (forked children, before any thread of calibrate)");
  const std::vector<Measurement> arenas = measure_malloc_arenas(3);
  const double malloc_arena = arenas.front().median;  // then malloc_arenas_per_cpu
  ms.insert(ms.end(), arenas.begin(), arenas.end());
  step("runtime memory (real pool, virtual threads, event loop, oneTBB; worker stacks)");
  const RuntimeMemoryRuns memory_runs = run_runtime_memory(opt.quick ? 3 : 5);
  step("scheduler tick");
  ms.push_back(measure_tick(opt.quick ? 2 : 5));
  const double tick = ms.back().median;
  step("scheduler slice");
  ms.push_back(measure_slice(tick, opt.quick ? 0.5 : 2.0, cpus));
  step("context switch (pipe ping-pong)");
  ms.push_back(measure_switch(5 * scale, 4000));
  const double switch_cost = ms.back().median;
  step("sched_yield and oneTBB's pause");
  auto [yield_cost, tbb_pause] = measure_spin_costs(5 * scale);
  ms.push_back(yield_cost);
  ms.push_back(tbb_pause);
  const WakeLatencies wakes = measure_wake_latency(cpus, scale, switch_cost, step);
  ms.push_back(wakes.wakeup_latency);
  ms.push_back(wakes.idle_exit);
  step("timer slack");
  // 500 sleeps of each kind (1.7 s): timer_program is the difference of two
  // medians of the awake sleeps' CPU, split about 3:1 by where the tick
  // fell, and the sleeps ahead of the tick spread from 13 to 23 us here; with
  // 100 (74 ahead, 24 behind) it read 5.6-12.0 us in the calibrations of
  // 2026-12-07, with 1,000 each 6.2 and 6.4 us.
  SleepCpu sleep_cpu, idle_sleep_cpu;
  for (Measurement& m : measure_timer_slack(cpus, 500 * scale, tick, &sleep_cpu, &idle_sleep_cpu))
    ms.push_back(std::move(m));
  // Timers the host holds back: three blocks of a third of the sleeps spread
  // over the calibration (timer_stall_fields takes the median block's).
  const int stall_sleeps = (opt.quick ? 3000 : 6000) / 3;
  std::vector<std::vector<Measurement>> stall_blocks;
  const auto stall_block = [&](const char* what) {
    step(what);
    stall_blocks.push_back(measure_timer_stalls(cpus, stall_sleeps));
  };
  stall_block("timers held back on an idle CPU (1 of 3)");
  step("timer interrupts on a busy CPU (1 of 3)");
  const int irq_bursts = 30 * scale, handover_rounds = opt.quick ? 5 : 15;
  std::vector<Measurement> timer_irq{measure_timer_irq(irq_bursts)}, handover_remote;
  step("a CPU's caches after it idled (1 of 3)");
  std::vector<IdleSleeps> idle_sleeps{measure_idle_sleeps(cpus, opt.quick)};
  // task_remote: three blocks too (each 3 runs, 1 with --quick, of the
  // event loop on 1 and on 2 loops): it moves with the minute on this VM
  // (1.8-3.1 us in three calibrations within an hour, 2026-12-04).
  std::vector<Measurement> task_remote;
  const int remote_trials = opt.quick ? 1 : 3;
  const auto remote_block = [&] {
    unpin_self(cpus);
    task_remote.push_back(measure_task_remote(remote_trials, 20000, cpus));
  };
  // A lone spinner's preemptions, three blocks of a third of the noise
  // window each (a burst of kernel work, as in the minutes after a boot,
  // once read 30 switches in 1.5 s where the blocks around it read 2-4).
  const Duration noise_window = opt.quick ? std::chrono::seconds(3) : std::chrono::seconds(10);
  std::vector<Measurement> preempt_idle;
  const auto preempt_idle_block = [&](const char* what) {
    if (cpus < 2) return;
    step(what);
    unpin_self(cpus);
    preempt_idle.push_back(measure_noise_preempt_idle(noise_window / 3));
  };
  preempt_idle_block("a lone spinner's preemptions (1 of 3)");
  // OS noise on every CPU, three blocks of a third of the window spread over
  // the calibration; the profile takes every noise field from the block
  // whose lost share is the median (noise_block_fields): one disturbed
  // minute read twice the noise of the blocks around it (2026-12-05).
  std::vector<std::vector<Measurement>> noise_blocks;
  const auto noise_block = [&](const char* what) {
    step(what);
    unpin_self(cpus);  // the experiments pin this thread; the spinners take every CPU
    noise_blocks.push_back(measure_noise(noise_window / 3));
  };
  noise_block("OS noise (fixed work quanta on every CPU, 1 of 3)");
  step("thread create/exit");
  auto [create, exit_cost] = measure_thread_costs(300 * scale, switch_cost);
  ms.push_back(create);
  ms.push_back(exit_cost);
  ms.push_back(measure_exit_unaccounted(5 * scale, 1000));
  step("cache refill and migration");
  auto [refill, migrate] = measure_cache(20 * scale, cpus);
  ms.push_back(refill);
  ms.push_back(migrate);
  ms.push_back(measure_cache_hot_time());
  ms.push_back(measure_newidle_random());
  ms.push_back(measure_sis_util());
  ms.push_back(measure_cv_quiesce());
  step("thread stacks");
  auto [reserve, touch] = measure_stacks(3 * scale);
  ms.push_back(reserve);
  ms.push_back(touch);
  step("page faults (first touch of fresh memory)");
  ms.push_back(measure_page_fault(opt.quick ? 5 : 15, 256));

  // Three blocks of the stack-mapping experiment: here, after the wake-up
  // costs and after the runtime costs (median_of_blocks).
  step("thread stacks outside glibc's cache (1 of 3)");
  const int map_rounds = 40 * scale;
  const double reserve_bytes = get_reserve(ms);
  std::vector<std::vector<Measurement>> mapping{
      measure_stack_mapping(map_rounds, cpus, reserve_bytes)};
  step("a queue taken from the other CPU (1 of 3)");
  handover_remote.push_back(measure_queue_handover_remote(handover_rounds, cpus));
  unpin_self(cpus);
  step("a task's state taken from the other CPU (1 of 3)");
  remote_block();
  // Kernel thread stacks beyond the CPU's cache: three blocks of a third of
  // the rounds spread over the calibration (median_of_blocks). Three
  // calibrations of 2026-12-07 read 15.4, 18.7 and 4.7 us, and a probe
  // between them 14 us in two runs: the 4.7 predicted thread-per-task churn
  // 128 ms against 181-209 measured (186 with 18.7).
  const int kstack_rounds = (100 * scale + 2) / 3;
  std::vector<Measurement> kstack_blocks;
  const auto kstack_block = [&](const char* what) {
    step(what);
    auto [cached, alloc] = measure_kernel_stacks(kstack_rounds);
    if (kstack_blocks.empty()) ms.push_back(cached);
    kstack_blocks.push_back(alloc);
  };
  kstack_block("kernel thread stacks (1 of 3)");
  step("thread start");
  for (Measurement& m : measure_thread_start(10 * scale, cpus)) ms.push_back(std::move(m));
  // Creations no exit made room for: three blocks spread over the
  // calibration, each made into the field at the end (median_of_blocks).
  // The field is a mean over creations with a long tail (p90 3x the
  // median), which one slow minute of this VM moves by several us.
  std::vector<std::vector<FreshCreation>> fresh;
  const auto fresh_block = [&](const char* what) {
    step(what);
    fresh.push_back(measure_fresh_creations(10 * scale, cpus, reserve_bytes));
  };
  fresh_block("creations no exit made room for (1 of 3)");
  // The run's first creation: three blocks spread over the calibration
  // (median_of_blocks). One calibration read 17.7 us where the ones around
  // it read 35-40, its second creations 33 us against 20-21 (2026-12-05,
  // 10:24 UTC), and the runs measured minutes later created their first
  // threads as before: re-predicted with that value, 509 of 584 metrics of
  // its pass within tolerance, 516 with 37 us.
  std::vector<Measurement> first_creation;
  const auto first_creation_block = [&](const char* what) {
    step(what);
    first_creation.push_back(measure_first_creation(8 * scale, reserve_bytes));
  };
  first_creation_block("the run's first creation (1 of 3)");
  step("wake-up packing");
  ms.push_back(measure_wake_packing(cpus, 60 * scale));
  ForkCosts fork_costs;
  ms.push_back(measure_fork_packing(cpus, 2 * scale, &fork_costs));
  preempt_idle_block("a lone spinner's preemptions (2 of 3)");
  noise_block("OS noise (fixed work quanta on every CPU, 2 of 3)");
  step("wake-up costs to the waker");
  auto [wake_cost, wake_ipi] = measure_wake_costs(cpus, 200 * scale);
  ms.push_back(wake_cost);
  ms.push_back(wake_ipi);
  const Measurement fork_activate = fork_activate_field(fork_costs, wake_ipi.median);
  ms.push_back(fork_activate);
  const Measurement futex_call = measure_futex_call(20 * scale);
  ms.push_back(futex_call);
  ms.push_back(measure_futex_wait_check(cpus, 1000 * scale, futex_call.median));
  first_creation_block("the run's first creation (2 of 3)");
  step("the submitter's utilization at the origin");
  ms.push_back(measure_origin_util(8 * scale));
  fresh_block("creations no exit made room for (2 of 3)");
  kstack_block("kernel thread stacks (2 of 3)");
  step("thread stacks outside glibc's cache (2 of 3)");
  mapping.push_back(measure_stack_mapping(map_rounds, cpus, reserve_bytes));
  step("timer interrupts on a busy CPU (2 of 3)");
  timer_irq.push_back(measure_timer_irq(irq_bursts));
  stall_block("timers held back on an idle CPU (2 of 3)");
  step("a CPU's caches after it idled (2 of 3)");
  idle_sleeps.push_back(measure_idle_sleeps(cpus, opt.quick));
  step("a queue taken from the other CPU (2 of 3)");
  handover_remote.push_back(measure_queue_handover_remote(handover_rounds, cpus));
  unpin_self(cpus);
  step("a task's state taken from the other CPU (2 of 3)");
  remote_block();
  require_quiet(opt, "before the OS-noise step");
  noise_block("OS noise (fixed work quanta on every CPU, 3 of 3)");
  for (Measurement& m : noise_block_fields(noise_blocks)) ms.push_back(std::move(m));
  step("kernel threads' work after thread exits (spinners on every CPU)");
  for (Measurement& m : measure_exit_work(cpus)) ms.push_back(std::move(m));
  preempt_idle_block("a lone spinner's preemptions (3 of 3)");
  if (!preempt_idle.empty()) ms.push_back(median_of_blocks(preempt_idle));
  {  // CFS bandwidth slice: a kernel setting, read (5 ms where the file is absent)
    std::ifstream f("/proc/sys/kernel/sched_cfs_bandwidth_slice_us");
    double us = 0;
    const bool ok = static_cast<bool>(f >> us) && us > 0;
    ms.push_back(summarize("cfs_bandwidth_slice", {ok ? us * 1e-6 : 0.005},
                           ok ? "/proc/sys/kernel/sched_cfs_bandwidth_slice_us"
                              : "kernel default 5 ms (no sched_cfs_bandwidth_slice_us)"));
  }
  step("runtime costs (real pool, work stealing, oneTBB, virtual threads, event loop)");
  // The experiments above pinned this thread; the backends' threads inherit its mask.
  unpin_self(cpus);
  for (Measurement& m : measure_runtime_costs(opt.quick ? 3 : 9, 20000, cpus))
    ms.push_back(std::move(m));
  step("a task's state taken from the other CPU (3 of 3)");
  remote_block();
  ms.push_back(median_of_blocks(task_remote));
  first_creation_block("the run's first creation (3 of 3)");
  fresh_block("creations no exit made room for (3 of 3)");
  kstack_block("kernel thread stacks (3 of 3)");
  const Measurement kstack_alloc = median_of_blocks(kstack_blocks);
  ms.push_back(kstack_alloc);
  ms.push_back(median_of_blocks(first_creation));
  step("a queue taken from the other CPU (3 of 3)");
  handover_remote.push_back(measure_queue_handover_remote(handover_rounds, cpus));
  ms.push_back(median_of_blocks(handover_remote));
  ms.push_back(measure_queue_lock_hold(opt.quick ? 3 : 15));  // on CPU 0, as the step before
  step("thread stacks outside glibc's cache (3 of 3)");
  mapping.push_back(measure_stack_mapping(map_rounds, cpus, reserve_bytes));
  step("timer interrupts on a busy CPU (3 of 3)");
  timer_irq.push_back(measure_timer_irq(irq_bursts));
  ms.push_back(median_of_blocks(timer_irq));
  stall_block("timers held back on an idle CPU (3 of 3)");
  for (Measurement& m : timer_stall_fields(stall_blocks)) ms.push_back(std::move(m));
  for (std::size_t f = 0; f < mapping.front().size(); ++f) {
    std::vector<Measurement> blocks;
    for (const auto& b : mapping) blocks.push_back(b[f]);
    ms.push_back(median_of_blocks(blocks));
  }
  {
    auto [sleep_cost, timer_program] = sleep_cost_fields(sleep_cpu, switch_cost, refill.median);
    ms.push_back(sleep_cost);
    ms.push_back(timer_program);
  }
  ms.push_back(timer_idle_run_field(sleep_cpu, idle_sleep_cpu));
  step("a CPU's caches after it idled (3 of 3)");
  idle_sleeps.push_back(measure_idle_sleeps(cpus, opt.quick));
  {
    auto [idle_refill, idle_evict_time] = idle_refill_fields(idle_sleeps, cpus);
    // thread_start_idle's threads start on a CPU idle since the one before,
    // kIdleStreamGapUs earlier: the model now charges that idle's refill
    // besides, so it comes off.
    MachineProfile fit;
    fit.idle_refill = from_seconds(idle_refill.median);
    fit.idle_evict_time = from_seconds(idle_evict_time.median);
    const double stream_refill =
        to_seconds(idle_refill_cost(fit, std::chrono::microseconds(kIdleStreamGapUs)));
    for (Measurement& m : ms) {
      if (m.field != "thread_start_idle" || stream_refill <= 0) continue;
      for (double* v : {&m.median, &m.mean, &m.p10, &m.p90}) *v = std::max(0.0, *v - stream_refill);
      m.method += fmt::format(", less idle_refill's {} for its {} ms idle",
                              format_seconds(stream_refill), kIdleStreamGapUs / 1000);
    }
    ms.push_back(idle_refill);
    ms.push_back(idle_evict_time);
    net_woken_charges(ms, {.dispatch = switch_cost + refill.median,
                           .timer_idle_run = field_value(ms, "timer_idle_run")});
    auto [late, late_time] = timer_idle_late_fields(idle_sleeps, cpus);
    ms.push_back(late);
    ms.push_back(late_time);
    auto [exit_late, exit_late_time] = idle_exit_late_fields(wakes, fit, cpus);
    ms.push_back(exit_late);
    ms.push_back(exit_late_time);
  }
  // Less the parts the model charges besides, as this calibration measured them.
  {
    std::vector<Measurement> blocks;
    for (const auto& samples : fresh)
      blocks.push_back(fresh_creation_field(samples, create.median, field_value(ms, "stack_map"),
                                            kstack_alloc.median,
                                            wake_ipi.median + fork_activate.median));
    ms.push_back(median_of_blocks(blocks));
  }
  unpin_self(cpus);
  {  // the runtime-memory fields from the runs taken first
    const double page = 4096, stack_touch = std::round(touch.median / page) * page;
    for (Measurement& m :
         runtime_memory_fields(memory_runs, stack_touch, std::round(malloc_arena / page) * page))
      ms.push_back(std::move(m));
  }
  for (Measurement& m : tbb_start_fields(memory_runs, field_value(ms, "thread_start") +
                                                          field_value(ms, "stack_fault") +
                                                          field_value(ms, "arena_create")))
    ms.push_back(std::move(m));

  check_speed("at the end");
  // The kernel's paths may drift for a step or two (a reading 30% slow for
  // ~15 s after heavy work here); a profile whose steps saw them at two
  // speeds for more than a tenth of the steps is refused like a slowed loop.
  const double kernel_median = quantile(kernel_rounds, 0.5);
  for (const double q : {0.1, 0.9}) {
    const double speed = kernel_median / quantile(kernel_rounds, q);
    if (disturbed.empty() && !within_band(speed, kCalibrateSpeedBand))
      disturbed = fmt::format(
          "the kernel's paths ran at {} of their median speed for a tenth of the steps (a stack "
          "map, touch and unmap round: {} median, {} at the {:.0f}th percentile)",
          format_speed(speed), format_seconds(kernel_median),
          format_seconds(quantile(kernel_rounds, q)), q * 100);
  }
  ms.push_back(summarize(
      "kernel_canary", kernel_rounds,
      fmt::format("median over the {} calibration steps of the median of 101 rounds of mapping an "
                  "8 MiB stack with its guard, touching its top two pages and unmapping it "
                  "(wall time)",
                  kernel_rounds.size())));
  unpin_self(cpus);
  if (!disturbed.empty())
    throw MachineRefused("calibrate: the machine's speed changed during the measurement (" +
                         disturbed +
                         "): no profile written; wait a minute and run calibrate again "
                         "(docs/calibration.md)");
  refuse_flooded_noise(ms);
  rep.profile = profile_from_measurements(ms);
  return rep;
}

void refuse_flooded_noise(const std::vector<Measurement>& ms) {
  // Interruptions closer than a CPU period's smallest (100 us, the profile's
  // range for noise_interval) are tens of thousands a second on each CPU: a
  // machine busy with something else for the whole noise benchmark (seen in
  // CI right after its builds: 22,272 of 93,499 quanta interrupted, 6.4-6.8%
  // lost in all three blocks), not a host to describe. Refused as a
  // disturbed measurement, not as a value out of range.
  const auto it = std::find_if(ms.begin(), ms.end(),
                               [](const Measurement& m) { return m.field == "noise_interval"; });
  if (it == ms.end()) return;
  const double interval = it->median;
  if (interval <= 0 || interval >= kPeriodOrOffRange.min) return;
  throw MachineRefused(fmt::format(
      "calibrate: the machine was disturbed during the measurement (the OS interrupted the "
      "noise benchmark's spinners every {} of busy time: {}; a quiet machine, every few "
      "milliseconds): no profile written; wait a minute and run calibrate again "
      "(docs/calibration.md)",
      format_seconds(interval), it->method));
}

MachineProfile profile_from_measurements(const std::vector<Measurement>& ms) {
  MachineProfile p;
  p.name = "host";
  p.source = "poolsim calibrate";
  for (const MachineField& f : kMachineFields) {
    const auto it =
        std::find_if(ms.begin(), ms.end(), [&](const Measurement& m) { return m.field == f.name; });
    if (it == ms.end())
      throw std::logic_error("calibrate: no measurement of " + std::string(f.name));
    // A measurement outside the field's range (machine_fields.hpp) would give
    // a profile the loader refuses: refuse it here, before anything is written.
    if (!std::isfinite(it->median))
      throw MachineRefused("calibrate: the measurement of " + std::string(f.name) +
                           " failed (not a number); no profile written");
    set_machine_field_si(f, p, it->median);
    if (const std::string e = machine_field_range_error(f, p); !e.empty())
      throw MachineRefused("calibrate measured a value a machine profile cannot hold: " + e + " (" +
                           it->method + "); no profile written");
  }
  // Resident memory comes in whole pages.
  constexpr double kPage = 4096;
  p.stack_touch = static_cast<Bytes>(std::llround(p.stack_touch / kPage) * kPage);
  p.malloc_arena = static_cast<Bytes>(std::llround(p.malloc_arena / kPage) * kPage);
  return p;
}

namespace {

[[noreturn]] void profile_error(const std::filesystem::path& path, const std::string& why) {
  const std::string named = path.empty() ? "" : " " + path.string();
  throw ProfileWriteError("cannot write the machine profile" + named + ": " + why);
}

// A temporary file next to `path` (same directory, so rename is atomic):
// its name, and an open descriptor.
std::pair<std::string, int> temp_beside(const std::filesystem::path& path) {
  std::string name = path.string() + ".XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    profile_error(path,
                  std::string("cannot create a file in its directory: ") + std::strerror(errno));
  return {name, fd};
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void check_profile_path(const std::filesystem::path& path, bool create_parent) {
  namespace fs = std::filesystem;
  if (path.empty()) profile_error(path, "the path is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) profile_error(path, "it is a directory, expected a file path");
  if (fs::exists(st) && !fs::is_regular_file(st))
    profile_error(path, "it is not a regular file (a device, FIFO or socket)");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (create_parent && !fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) profile_error(path, "cannot create its directory: " + ec.message());
  }
  if (!fs::is_directory(dir, ec))
    profile_error(path, "its directory " + dir.string() + " does not exist");
  // Creating (and removing) a file is the one test that also covers a
  // read-only file system and root, for whom permission bits do not apply.
  const auto [tmp, fd] = temp_beside(path);
  ::close(fd);
  ::unlink(tmp.c_str());
}

void write_profile(const CalibrationReport& r, const std::filesystem::path& path,
                   bool create_parent) {
  check_profile_path(path, create_parent);
  std::string comment =
      fmt::format("Measured by `poolsim calibrate` on {} (kernel {}).\n", r.cpu_model, r.kernel);
  for (const auto& m : r.measurements) comment += fmt::format("{}: {}\n", m.field, m.method);
  const std::string text = machine_profile_yaml(r.profile, comment);
  const auto [tmp, fd] = temp_beside(path);
  const bool written = write_all(fd, text) && ::fsync(fd) == 0;
  const int saved = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    ::unlink(tmp.c_str());
    profile_error(path, std::string("writing failed: ") + std::strerror(written ? errno : saved));
  }
  // mkstemp creates 0600; a profile is as readable as any file the user writes.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmp.c_str(), 0666 & ~mask);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    profile_error(path,
                  std::string("renaming the written file into place failed: ") + std::strerror(e));
  }
}

}  // namespace poolsim::real
