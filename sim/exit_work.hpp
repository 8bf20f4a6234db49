// exit_work.hpp: the kernel work thread exits leave behind, as the RCU
// grace-period kthread whose runs preempt the process's threads
// (Kernel::exit_work_*, sim/exit_work.cpp).
//
// Mechanism (Linux 6.18, kernel/exit.c, kernel/rcu/tree.c): an exiting
// thread's task_struct is released through call_rcu
// (put_task_struct_rcu_user -> delayed_put_task_struct). A callback needs a
// grace period that starts after it was queued: when none runs, one starts
// (rcu_start_this_gp wakes the grace-period kthread, rcu_preempt here);
// callbacks queued during a grace period wait for the next, which starts as
// soon as that one ends (rcu_gp_cleanup sees them). The kthread runs
// several times in a grace period (its start, the force-quiescent-state
// scans on its timer, its cleanup): every rcu_gp_interval of its
// rcu_gp_length. A run on a CPU that runs a thread of the process takes
// that CPU for kthread_run plus two context switches (switch_cost each) and
// is an involuntary switch of that thread. The kthread is not bound to a
// CPU: woken on its last CPU by its own timer, it runs there when that CPU
// is idle, else on an idle CPU of the machine when there is one (a CPU
// outside the scenario's cpuset counts: it then stays there), unless the
// host packs wakes onto its CPU (wake_pack_util).
// Measured here (2 vCPUs, Linux 6.18, two spinners; docs/calibration.md,
// "Kernel work after thread exits"): an isolated exit costs 3.7 runs of the
// kthread over about 25 ms, and exits during every grace period keep it at
// about 150 runs a second against 3-10 without exits. That is most of the
// involuntary switches the thread-per-task quickstart had beyond the model
// (docs/validation.md).
// Determinism: no dice; the fraction of a run carries over from one grace
// period to the next.
// Left out: the callbacks' own softirq time (part of the exit cost the
// thread benchmarks measure); ksoftirqd and the kworkers that vfree kernel
// stacks the CPU's cache could not take (delayed_vfree_work): their runs
// grow with the exit rate but far from in proportion (per stack over the
// cache 0.33 kworker runs at 400 a second, 0.14 at 6,000: one run frees all
// its CPU's queued stacks), about a fifth of the exit-driven preemptions of
// the thread-per-task quickstart; a faster grace period under a flood of
// callbacks (about twice the kthread's runs a second at 20,000 exits a
// second).
#pragma once

#include "models/machine.hpp"

namespace poolsim::sim {

struct ExitWork {
  bool on = false;         // rcu_gp_length given
  bool gp_active = false;  // a grace period runs
  bool gp_again = false;   // exits came during it: the next starts at its end
  int gp_cpu = 0;          // the grace-period kthread's last CPU (-1: outside the cpuset)
  double gp_credit = 0;    // the fraction of a run carried to the next grace period
  long long runs = 0;      // kthread runs that preempted a thread (reported)

  static bool enabled(const MachineProfile& m) { return m.rcu_gp_length > Duration{0}; }
};

}  // namespace poolsim::sim
