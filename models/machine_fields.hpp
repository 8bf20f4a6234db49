// machine_fields.hpp: the one table of machine-profile fields.
//
// Mechanism: kMachineFields lists every field of MachineProfile (but `name`
// and `source`) once, in the order profile files, JSON and reports show
// them, with
//   - its name in files, JSON and reports,
//   - the member it is stored in; the member's type is the field's kind:
//     int = a count, Duration = a duration (JSON: seconds), Bytes = a size
//     (JSON: bytes), double = a fraction (0.7 or 70% in files),
//   - when a profile file may leave it out: `required`, or `from_default`
//     (added after the first profiles were written: a file without it takes
//     the shipped `default` profile's value),
//   - its one-line meaning and how `poolsim calibrate` measures it.
// Everything that reads, writes or shows a profile iterates this table: the
// loader and the profile writer (models/scenario_loader.cpp), the JSON
// (validate/output.cpp), the HTML report (validate/html_report.cpp) and
// calibrate (real/calibrate*.cpp), which names the field of each measurement
// with MachineFieldName: a consteval lookup, so a misspelt name does not
// compile. A field added to MachineProfile is added here, once.
//
// Invariants: names are unique and each member appears once (tested in
// tests/models/test_machine_fields.cpp, with the shipped default profile's
// keys equal to the table's names in order).
// Source: the machine section of docs/scenarios.md; what each field models is
// in docs/simulator.md, how it is measured in docs/calibration.md.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <variant>

#include "models/machine.hpp"

namespace poolsim {

enum class FieldKind { count, duration, size, fraction };
std::string_view to_string(FieldKind k);

// When a profile file may leave the field out.
enum class FieldPresence {
  required,      // every profile file gives it (or names a `base:` profile)
  from_default,  // missing: the shipped `default` profile's value
};

struct MachineField {
  using Member = std::variant<int MachineProfile::*, Duration MachineProfile::*,
                              Bytes MachineProfile::*, double MachineProfile::*>;
  std::string_view name;
  Member member;
  FieldPresence presence;
  std::string_view meaning;   // one line
  std::string_view measured;  // how `poolsim calibrate` measures it, one line

  constexpr FieldKind kind() const { return static_cast<FieldKind>(member.index()); }
};

inline constexpr MachineField kMachineFields[] = {
    // clang-format off
    {"cores", &MachineProfile::cores, FieldPresence::required,
     "logical CPUs", "online CPUs (sysconf)"},
    {"slice", &MachineProfile::slice, FieldPresence::required,
     "scheduler base slice of a CPU-bound thread sharing a CPU",
     "the kernel's base slice x (1 + ilog2 CPUs), checked against two CPU-bound threads on one CPU"},
    {"tick", &MachineProfile::tick, FieldPresence::required,
     "scheduler tick period 1/HZ (0 = ideal tickless model)",
     "jiffies per second, else timer interrupts of a busy CPU, else CONFIG_HZ"},
    {"switch_cost", &MachineProfile::switch_cost, FieldPresence::required,
     "direct cost of one context switch",
     "pipe ping-pong between two threads pinned to one CPU, half a round trip"},
    {"cache_refill", &MachineProfile::cache_refill, FieldPresence::required,
     "extra cost a thread pays after it was switched out (cold cache)",
     "a 256 KiB working set re-read after a 16 MiB buffer evicted it, minus a warm pass"},
    {"migration_cost", &MachineProfile::migration_cost, FieldPresence::required,
     "extra cost when a thread resumes on another CPU",
     "the same working set re-read right after moving to another CPU, minus a warm pass"},
    {"wakeup_latency", &MachineProfile::wakeup_latency, FieldPresence::required,
     "from a wake to the woken thread running on another, awake CPU",
     "condition-variable signal to running, on another CPU kept awake"},
    {"idle_exit", &MachineProfile::idle_exit, FieldPresence::required,
     "extra delay when that CPU was idle",
     "the same wake onto an idle CPU, minus wakeup_latency"},
    {"timer_slack", &MachineProfile::timer_slack, FieldPresence::required,
     "extra delay added to every timed sleep",
     "overshoot of a 1 ms clock_nanosleep on an awake CPU"},
    {"thread_create", &MachineProfile::thread_create, FieldPresence::required,
     "CPU cost of creating a thread, charged to the creator",
     "the creator's CPU time inside pthread_create"},
    {"thread_exit", &MachineProfile::thread_exit, FieldPresence::required,
     "CPU cost of ending a thread, charged to the exiting thread",
     "create-to-join wall time on one CPU, minus the creation and two switches"},
    {"stack_reserve", &MachineProfile::stack_reserve, FieldPresence::required,
     "virtual stack reserved per thread",
     "glibc's default thread stack (pthread_attr_getstacksize)"},
    {"stack_touch", &MachineProfile::stack_touch, FieldPresence::required,
     "memory a thread actually touches",
     "VmRSS added per blocked thread over 64 threads, rounded to 4 KiB pages"},
    {"queue_handover", &MachineProfile::queue_handover, FieldPresence::from_default,
     "one side (push or pop) of a hand-over through a locked queue",
     "the real pool, 1 worker, a batch of empty tasks: CPU per task / 2"},
    {"fiber_create", &MachineProfile::fiber_create, FieldPresence::from_default,
     "a user-level thread's creation, first mount and end",
     "real virtual threads on 1 carrier, 1,000 closed clients, empty requests: CPU per request "
     "less two queue_handover"},
    {"fiber_switch", &MachineProfile::fiber_switch, FieldPresence::from_default,
     "one user-level switch: an unmount or a remount",
     "the same with `wait: 1ms` requests: half the extra CPU per request"},
    {"timer_arm", &MachineProfile::timer_arm, FieldPresence::from_default,
     "an event loop's wait: arm a timer and dispatch its completion",
     "the real event loop, 1 loop, 1,000 closed clients: CPU per request with `wait: 1ms` less "
     "without"},
    {"stack_cache", &MachineProfile::stack_cache, FieldPresence::from_default,
     "bytes of ended threads' stacks glibc keeps for reuse",
     "glibc.pthread.stack_cache_size (ld.so --list-tunables), else glibc's default 40 MiB"},
    {"stack_map", &MachineProfile::stack_map, FieldPresence::from_default,
     "mapping a new stack the cache cannot give (charged to the creator)",
     "mmap PROT_NONE + mprotect all but the guard + touch two pages, on one CPU"},
    {"stack_unmap", &MachineProfile::stack_unmap, FieldPresence::from_default,
     "unmapping a stack the cache cannot keep, the process on one CPU (exiting thread)",
     "munmap of that stack, no other thread of the process running"},
    {"tlb_shootdown", &MachineProfile::tlb_shootdown, FieldPresence::from_default,
     "extra for that munmap when the process runs on several CPUs",
     "the same munmap while a thread of the process spins on CPU 1, minus stack_unmap"},
    {"wake_pack_util", &MachineProfile::wake_pack_util, FieldPresence::from_default,
     "the waker's CPU utilization below which a woken thread is kept on the waker's CPU "
     "(0 = mainline)",
     "where most wakes stop running on the waker's CPU as a load thread keeps it 0-90% busy"},
    {"wake_cost", &MachineProfile::wake_cost, FieldPresence::from_default,
     "the waker's CPU for waking a thread onto its own CPU",
     "the waker's thread CPU time across one FUTEX_WAKE of a thread on its own CPU"},
    {"wake_ipi", &MachineProfile::wake_ipi, FieldPresence::from_default,
     "the extra when the woken thread goes to another CPU (the inter-processor interrupt)",
     "the same with the waiting thread on the idle CPU 1, minus wake_cost"},
    {"noise_interval", &MachineProfile::noise_interval, FieldPresence::from_default,
     "mean busy time of a CPU between two interruptions by the OS (0 = no noise)",
     "fixed-work-quantum spinners on every CPU at once: busy time / interrupted quanta"},
    {"noise_median", &MachineProfile::noise_median, FieldPresence::from_default,
     "time an OS interruption takes from the running thread: median",
     "the same benchmark: median excess of an interrupted quantum over the fastest one"},
    {"noise_p99", &MachineProfile::noise_p99, FieldPresence::from_default,
     "time an OS interruption takes from the running thread: 99th percentile",
     "the same benchmark: 99th percentile of those excesses"},
    {"noise_preempt", &MachineProfile::noise_preempt, FieldPresence::from_default,
     "share of OS interruptions that switch to another task (an involuntary switch)",
     "the spinners' involuntary switches (getrusage) over their interrupted quanta"},
    {"work_loop", &MachineProfile::work_loop, FieldPresence::from_default,
     "thread CPU time of 2^20 iterations of the loop that runs cpu phases (0 = calibrate each run)",
     "the fastest of seven tick-spanning trials of the loop, scaled to 2^20 iterations"},
    {"cfs_bandwidth_slice", &MachineProfile::cfs_bandwidth_slice, FieldPresence::from_default,
     "runtime a CPU takes from its group's quota pool at a time (CFS bandwidth slice)",
     "read from /proc/sys/kernel/sched_cfs_bandwidth_slice_us"},
    {"runtime_touch", &MachineProfile::runtime_touch, FieldPresence::from_default,
     "one-time memory a runtime adds with its first thread, beyond that thread's stack_touch",
     "the real pool, 1 worker, 16 tasks: memory_peak less stack_touch, median of runs"},
    {"fiber_touch", &MachineProfile::fiber_touch, FieldPresence::from_default,
     "memory of a live user-level thread (a Boost.Fiber fiber: its stack's touched pages)",
     "real virtual threads, 1 carrier, 1,000 sleeping fibers less 1: memory_peak per fiber"},
    {"loop_task_touch", &MachineProfile::loop_task_touch, FieldPresence::from_default,
     "memory of a task alive in an event loop (its posted handler, its timer)",
     "the real event loop, 1 loop, 2,000 tasks asleep on timers less 1: memory_peak per task"},
    {"tbb_arena", &MachineProfile::tbb_arena, FieldPresence::from_default,
     "one-time memory of oneTBB with its first worker, beyond that worker's stack_touch",
     "real oneTBB, 1 thread, 16 tasks: memory_peak less stack_touch"},
    {"tbb_worker", &MachineProfile::tbb_worker, FieldPresence::from_default,
     "memory each further oneTBB worker adds beyond its stack_touch",
     "real oneTBB, 2 threads less 1 thread: memory_peak per extra worker less stack_touch"},
    {"tbb_task", &MachineProfile::tbb_task, FieldPresence::from_default,
     "memory of a task enqueued in a oneTBB arena and not yet started",
     "real oneTBB, 1 thread, a batch of 4,000 100 us tasks less a batch of 16: per task"},
    {"kstack_cache", &MachineProfile::kstack_cache, FieldPresence::from_default,
     "freed kernel thread stacks each CPU keeps for reuse (NR_CACHED_STACKS)",
     "the kernel's constant (kernel/fork.c NR_CACHED_STACKS = 2), not measured"},
    {"kstack_alloc", &MachineProfile::kstack_alloc, FieldPresence::from_default,
     "the creator's extra CPU time when its CPU has no cached kernel stack (vmalloc of a new one)",
     "creations of blocked threads on one CPU: beyond the cache, minus the first creation's cost"},
    // clang-format on
};
inline constexpr std::size_t kMachineFieldCount = std::size(kMachineFields);

// The index of the field called `name`; used only in constant evaluation, where
// the throw for an unknown name is a compile error.
consteval std::size_t machine_field_index(std::string_view name) {
  for (std::size_t i = 0; i < kMachineFieldCount; ++i)
    if (kMachineFields[i].name == name) return i;
  throw "no machine-profile field of this name (models/machine_fields.hpp)";
}

// A field named by a string literal, checked at compile time:
// `MachineFieldName f = "switch_cost";` compiles, `"swich_cost"` does not.
struct MachineFieldName {
  consteval MachineFieldName(const char* n) : index(machine_field_index(n)) {}
  const MachineField& field() const { return kMachineFields[index]; }
  std::size_t index;
};

// The field called `name` at run time (a file's key), or nullptr.
const MachineField* find_machine_field(std::string_view name);

// The value in SI base units as a double: a count, seconds, bytes or a fraction.
double machine_field_si(const MachineField& f, const MachineProfile& m);
// Stores an SI value (as machine_field_si gives it): durations rounded to the
// nanosecond, counts and sizes truncated.
void set_machine_field_si(const MachineField& f, MachineProfile& m, double v);
// Copies the field from `from` to `to`.
void copy_machine_field(const MachineField& f, MachineProfile& to, const MachineProfile& from);
// Field-by-field equality over the table.
bool same_machine_fields(const MachineProfile& a, const MachineProfile& b);
// The field table of docs/scenarios.md ("Machine profiles"), Markdown with a
// trailing newline (a test compares the two).
std::string machine_fields_markdown();
// The value as a profile file writes it, exactly: "2100us", "8MiB", "4",
// "0.7" (reads back to the same value).
std::string machine_field_yaml(const MachineField& f, const MachineProfile& m);

}  // namespace poolsim
