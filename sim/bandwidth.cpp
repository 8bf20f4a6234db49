// bandwidth.cpp: CFS bandwidth control (design and sources in bandwidth.hpp).
#include "sim/bandwidth.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/tick_grid.hpp"

namespace poolsim::sim {

Bandwidth::Bandwidth(Engine& engine, const BandwidthParams& p, int cpus, Hook hook, void* ctx)
    : engine_(engine), p_(p), hook_(hook), ctx_(ctx), cpus_(static_cast<std::size_t>(cpus)) {
  if (p_.period.count() <= 0) throw std::invalid_argument("limits.period must be positive");
  if (p_.quota.count() <= 0) throw std::invalid_argument("limits.cpus must be positive");
  if (p_.slice.count() <= 0)
    throw std::invalid_argument("machine.cfs_bandwidth_slice must be positive");
  if (p_.burst.count() < 0) throw std::invalid_argument("limits.burst must not be negative");
  if (p_.phase.count() < 0 || p_.phase >= p_.period)
    throw std::invalid_argument("the period's phase must lie in [0, period)");
  // tg_set_cfs_bandwidth refills the pool when the quota is written.
  pool_ = p_.quota;
  snap_ = pool_;
  lane0_ = engine_.add_lanes(static_cast<std::uint32_t>(cpus));  // c.check, one per CPU
  // The phase of the period timer against the scheduler ticks is arbitrary
  // on a machine (the quota is written whenever the group is set up); the
  // tick grid here starts at 0, so the periods end half a tick before the
  // multiples of the period (the mean phase). Aligned, a CPU-bound thread
  // at the quota would find its runtime gone exactly at the refill.
  period_active_ = true;
  grid_ = p_.period - p_.tick / 2 - p_.phase;
  while (grid_.count() <= 0) grid_ += p_.period;
  period_at_ = grid_;
  period_ev_ = engine_.at(period_at_, &Bandwidth::on_period, this);
}

Duration Bandwidth::runtime_of(int cpu) const {
  const Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  return c.running ? c.remaining - (engine_.now() - c.since) : c.remaining;
}

Bandwidth::~Bandwidth() {
  for (Cpu& c : cpus_) engine_.cancel(c.check);
  engine_.cancel(period_ev_);
  engine_.cancel(slack_ev_);
}

// update_curr -> account_cfs_rq_runtime: the time run since the last charge.
void Bandwidth::charge(Cpu& c) {
  if (!c.running) return;
  const Duration now = engine_.now();
  c.remaining -= now - c.since;
  c.since = now;
}

// __assign_cfs_rq_runtime: top the CPU up towards `target` from the pool,
// starting the period timer if it is not running (start_cfs_bandwidth).
bool Bandwidth::assign(Cpu& c, Duration target) {
  if (!period_active_) {
    period_active_ = true;
    // hrtimer_forward_now: the next expiry on the timer's own grid.
    const std::int64_t per = p_.period.count(), phase = grid_.count();
    period_at_ = Duration{((engine_.now().count() - phase) / per + 1) * per + phase};
    period_ev_ = engine_.at(period_at_, &Bandwidth::on_period, this);
  }
  const Duration want = target - c.remaining;
  if (pool_.count() > 0 && want.count() > 0) {
    const Duration amount = std::min(pool_, want);
    pool_ -= amount;
    c.remaining += amount;
    idle_ = false;
  }
  return c.remaining.count() > 0;
}

// The next accounting of a running CPU that finds its runtime gone: the
// first tick at or after the instant it runs out.
void Bandwidth::arm_check(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  engine_.cancel(c.check);
  std::int64_t at = c.since.count() + std::max<std::int64_t>(0, c.remaining.count());
  const std::int64_t tick = p_.tick.count();
  if (tick > 0) at = tick_grid_ceil(Duration{at}, p_.tick, p_.tick_offset).count();
  c.check = engine_.at_lane(lane0_ + static_cast<std::uint32_t>(cpu), at, &Bandwidth::on_check,
                            this, static_cast<std::uint64_t>(cpu));
}

bool Bandwidth::start(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  if (c.throttled) return false;
  // check_enqueue_throttle / put_prev_entity -> check_cfs_rq_runtime: a CPU
  // owing runtime asks for a slice first, and is throttled if it gets none.
  if (c.remaining.count() <= 0 && !assign(c, p_.slice)) {
    throttle(cpu);
    return false;
  }
  c.running = true;
  c.since = engine_.now();
  arm_check(cpu);
  return true;
}

void Bandwidth::stop(int cpu, bool empty) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  charge(c);
  c.running = false;
  engine_.cancel(c.check);
  if (c.throttled) return;
  // update_curr at the dequeue asks for a slice; put_prev_entity throttles
  // the CPU if there is none, even with no thread left on it.
  if (c.remaining.count() <= 0 && !assign(c, p_.slice)) {
    throttle(cpu);
    return;
  }
  if (!empty) return;
  // return_cfs_rq_runtime: keep min_cfs_rq_runtime, return the rest.
  const Duration slack = c.remaining - kMinCfsRqRuntime;
  if (slack.count() <= 0) return;
  pool_ += slack;
  c.remaining -= slack;
  // start_cfs_slack_bandwidth: worth it only with more than a slice to
  // hand out, someone throttled, and the refill not within 7 ms.
  if (pool_ > p_.slice && !throttled_list_.empty() && !slack_started_ &&
      !refresh_within(kCfsSlackPeriod + kMinBandwidthExpiration)) {
    slack_started_ = true;
    slack_ev_ = engine_.after(kCfsSlackPeriod, &Bandwidth::on_slack, this);
  }
}

void Bandwidth::parked(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  if (!c.throttled || c.clock_on) return;
  c.clock_on = true;
  c.clock = engine_.now();
}

void Bandwidth::throttle(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  c.throttled = true;
  throttled_list_.push_back(cpu);
}

// A running CPU's accounting found its runtime gone: ask for a slice, else
// throttle it and have the kernel stop its thread.
void Bandwidth::on_check(void* self, std::uint64_t arg) {
  auto& b = *static_cast<Bandwidth*>(self);
  const int cpu = static_cast<int>(arg);
  Cpu& c = b.cpus_[arg];
  c.check = {};
  b.charge(c);
  if (b.assign(c, b.p_.slice)) {
    b.arm_check(cpu);
    return;
  }
  b.throttle(cpu);
  b.hook_(b.ctx_, cpu, true);  // the kernel stops the thread: stop(cpu, ...)
}

// runtime_refresh_within: the period timer fires within d (or is not armed).
bool Bandwidth::refresh_within(Duration d) const {
  if (!period_active_) return true;
  return period_at_ - engine_.now() < d;
}

// distribute_cfs_runtime: each throttled CPU in throttle order gets its debt
// plus 1 ns while the pool lasts; those that become positive are unthrottled
// (their hooks run after the walk, as the kernel unthrottles remote CPUs
// asynchronously).
void Bandwidth::distribute() {
  std::vector<int> freed;
  std::vector<int> still;
  for (int cpu : throttled_list_) {
    Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
    if (pool_.count() > 0) {
      const Duration amount = std::min(pool_, Duration{1} - c.remaining);
      pool_ -= amount;
      c.remaining += amount;
    }
    if (c.remaining.count() > 0)
      freed.push_back(cpu);
    else
      still.push_back(cpu);
  }
  throttled_list_ = std::move(still);
  const Duration now = engine_.now();
  for (int cpu : freed) {
    Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
    c.throttled = false;
    if (c.clock_on) st_.throttled_time += now - c.clock;  // unthrottle_cfs_rq
    c.clock_on = false;
  }
  for (int cpu : freed) hook_(ctx_, cpu, false);
}

// do_sched_cfs_period_timer.
void Bandwidth::on_period(void* self, std::uint64_t) {
  auto& b = *static_cast<Bandwidth*>(self);
  b.period_ev_ = {};
  const bool throttled = !b.throttled_list_.empty();
  ++b.st_.nr_periods;
  // __refill_cfs_bandwidth_runtime, with the burst statistics.
  b.pool_ += b.p_.quota;
  const Duration over = b.snap_ - b.pool_;
  if (over.count() > 0) {
    ++b.st_.nr_bursts;
    b.st_.burst_time += over;
  }
  b.pool_ = std::min(b.pool_, b.p_.quota + b.p_.burst);
  b.snap_ = b.pool_;
  if (b.idle_ && !throttled) {
    b.period_active_ = false;  // out_deactivate
    return;
  }
  b.period_at_ += b.p_.period;
  b.period_ev_ = b.engine_.at(b.period_at_, &Bandwidth::on_period, self);
  if (!throttled) {
    b.idle_ = true;  // potentially idle for the coming period
    return;
  }
  ++b.st_.nr_throttled;
  b.distribute();
  b.idle_ = false;
}

// do_sched_cfs_slack_timer.
void Bandwidth::on_slack(void* self, std::uint64_t) {
  auto& b = *static_cast<Bandwidth*>(self);
  b.slack_ev_ = {};
  b.slack_started_ = false;
  if (b.refresh_within(kMinBandwidthExpiration)) return;
  if (b.pool_ <= b.p_.slice) return;
  b.distribute();
}

void Bandwidth::finish() {
  const Duration now = engine_.now();
  for (Cpu& c : cpus_) {
    charge(c);
    if (c.clock_on) st_.throttled_time += now - c.clock;
    c.clock_on = false;
    c.clock = now;
  }
}

}  // namespace poolsim::sim
