// exit_work.cpp: the kernel work thread exits leave behind (design comment in
// exit_work.hpp): grace periods and their kthread's runs.
#include <cmath>

#include "models/assert.hpp"
#include "sim/kernel.hpp"

namespace poolsim::sim {

void Kernel::exit_work_note() {
  if (!xw_.on) return;
  // The exit's call_rcu: a grace period starts now when none runs, else the
  // next one starts at its end.
  if (xw_.gp_active)
    xw_.gp_again = true;
  else
    exit_work_start_gp();
}

void Kernel::exit_work_start_gp() {
  POOLSIM_ASSERT(!xw_.gp_active, "a grace period started while one runs");
  xw_.gp_active = true;
  const Duration len = m_.rcu_gp_length;
  if (m_.rcu_gp_interval > Duration{0})
    xw_.gp_credit +=
        static_cast<double>(len.count()) / static_cast<double>(m_.rcu_gp_interval.count());
  // Whole runs; the fraction carries over to the next grace period.
  const double whole = std::floor(xw_.gp_credit + 1e-9);
  xw_.gp_credit = std::max(0.0, xw_.gp_credit - whole);
  const auto runs = static_cast<std::int64_t>(whole);
  for (std::int64_t i = 0; i < runs; ++i) engine_.after(len * i / runs, &Kernel::on_gp_run, this);
  engine_.after(len, &Kernel::on_gp_end, this);
}

// The grace-period kthread wakes on its last CPU (its own timer): it runs
// there if that CPU is idle, on another idle CPU of the machine if there is
// one (and the host does not pack the wake onto its CPU), else it preempts
// the thread running there.
void Kernel::on_gp_run(void* self, std::uint64_t) {
  auto& k = *static_cast<Kernel*>(self);
  const int cpu = k.xw_.gp_cpu;
  if (cpu < 0) return;  // on a CPU outside the cpuset: nothing of the scenario's there
  if (k.cpus_[static_cast<std::size_t>(cpu)].state != CpuState::running) return;
  if (k.machine_cpu_idle(cpu) && !k.packs_wakes_onto(cpu)) {
    // An idle CPU of the scenario's (the load index's idle level, as wake-up
    // placement finds one), else one outside its cpuset (-1).
    k.xw_.gp_cpu = k.load_idx_.first_from(0, (cpu + 1) % k.cpu_count());
    return;
  }
  k.kthread_takes(cpu);
}

// The end of a grace period: exits during it start the next one.
void Kernel::on_gp_end(void* self, std::uint64_t) {
  auto& k = *static_cast<Kernel*>(self);
  k.xw_.gp_active = false;
  if (k.xw_.gp_again) {
    k.xw_.gp_again = false;
    k.exit_work_start_gp();
  }
}

// A kernel thread runs on CPU `idx`: the thread running there makes no
// progress for the kthread's run and the two switches, and counts an
// involuntary switch; an idle CPU runs it in its idle time.
void Kernel::kthread_takes(int idx) {
  Cpu& c = cpus_[static_cast<std::size_t>(idx)];
  if (c.state != CpuState::running) return;
  account(c);
  ++xw_.runs;
  stall(c, m_.kthread_run + 2 * m_.switch_cost, true);
}

}  // namespace poolsim::sim
