// group_share.cpp: two cgroups at the root of each CPU's run queue (design
// and sources in group_share.hpp).
#include "sim/group_share.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/tick_grid.hpp"

namespace poolsim::sim {

namespace {
constexpr std::int64_t kNice0Load = 1024;  // NICE_0_LOAD (scale_load_down)
constexpr std::int64_t kMinShares = 2;     // MIN_SHARES
}  // namespace

GroupShare::GroupShare(Engine& engine, const GroupShareParams& p, const std::vector<int>& hw,
                       int machine_cpus, Hook hook, Count count, Load load, void* ctx)
    : engine_(engine), p_(p), hook_(hook), count_(count), load_(load), ctx_(ctx), cpus_(hw.size()) {
  if (p_.slice.count() <= 0) throw std::invalid_argument("machine.slice must be positive");
  if (p_.shares < kMinShares || p_.neighbour_shares < kMinShares)
    throw std::invalid_argument("cpu.shares must be at least 2");
  if (p_.neighbour_threads < 1 || hw.empty() || machine_cpus < 1)
    throw std::invalid_argument("a neighbour needs a thread and a CPU");
  lane0_ = engine_.add_lanes(static_cast<std::uint32_t>(hw.size()));  // c.ev, one per CPU
  // The neighbour is another container, not confined by the scenario's
  // cpuset: its always-runnable threads sit one per machine CPU (the load
  // balancer keeps them spread; the real one pins them so). Those on CPUs
  // outside the cpuset are not simulated but count in its group's load.
  for (std::size_t i = 0; i < hw.size(); ++i)
    for (int k = 0; k < p_.neighbour_threads; ++k)
      if (k % machine_cpus == hw[i]) ++cpus_[i].threads;
  for (Cpu& c : cpus_) {
    if (c.threads == 0) continue;
    c.wn = std::clamp<std::int64_t>(
        std::int64_t{p_.neighbour_shares} * c.threads / p_.neighbour_threads, kMinShares,
        p_.neighbour_shares);
    c.dn = vslice(c.wn);
    c.prot = c.dn;
  }
}

GroupShare::~GroupShare() {
  for (Cpu& c : cpus_) engine_.cancel(c.ev);
}

Duration GroupShare::vslice(std::int64_t w) const { return p_.slice * kNice0Load / w; }

// calc_group_shares: shares * load here / the group's load everywhere,
// where the load here is the larger of its runnable weight and its PELT
// load average, and elsewhere each CPU's load average (tg->load_avg).
std::int64_t GroupShare::scenario_weight(int cpu) const {
  const double here = std::max<double>(std::max(1, count_(ctx_, cpu)), load_(ctx_, cpu));
  double total = here;
  for (int j = 0; j < static_cast<int>(cpus_.size()); ++j)
    if (j != cpu) total += load_(ctx_, j);
  const auto w = static_cast<std::int64_t>(static_cast<double>(p_.shares) * here / total);
  return std::clamp<std::int64_t>(w, kMinShares, p_.shares);
}

// update_curr of the running entity (calc_delta_fair).
void GroupShare::charge(Cpu& c) {
  const Duration now = engine_.now();
  const Duration ran = now - c.since;
  if (ran.count() <= 0) return;
  if (c.scenario_cur) {
    c.vs += ran * kNice0Load / c.ws;
  } else {
    const Duration from = c.since;
    const Duration v0 = c.vn;
    c.vn += ran * kNice0Load / c.wn;
    c.neighbour_ran += ran;
    if (!c.queued) {
      // Alone, the neighbour renews its deadline at every tick that finds it
      // passed (update_deadline); only the last renewal matters.
      const std::int64_t tick = p_.tick.count();
      if (tick <= 0) {
        while (c.vn >= c.dn) c.dn += vslice(c.wn);
      } else {
        const Duration last = tick_grid_floor(now, p_.tick, p_.tick_offset);
        if (last >= from) {
          const Duration v_last = v0 + (last - from) * kNice0Load / c.wn;
          if (v_last >= c.dn) c.dn = v_last + vslice(c.wn);
        }
      }
    }
  }
  c.since = now;
}

// avg_vruntime over the queued entities (the weighted mean).
Duration GroupShare::avg_v(const Cpu& c) const {
  if (!c.queued) return c.vn;
  return c.vn + (c.vs - c.vn) * c.ws / (c.ws + c.wn);
}

// reweight_eevdf: the scenario entity keeps its lag and its virtual slice in
// proportion to its weight.
void GroupShare::reweight(Cpu& c, std::int64_t w) {
  if (w == c.ws) return;
  if (c.queued) {
    const Duration v = avg_v(c);
    const Duration vs = v - (v - c.vs) * c.ws / w;
    c.ds = vs + (c.ds - c.vs) * c.ws / w;
    if (c.scenario_cur) c.prot = vs + (c.prot - c.vs) * c.ws / w;
    c.vs = vs;
  }
  c.ws = w;
}

// pick_eevdf between the two queued entities: the current one while it is
// eligible and protected (RUN_TO_PARITY; __pick_eevdf drops a current
// entity that is no longer eligible before it looks at the protection, so
// a woken entity whose lag pulled V below the current one takes the CPU),
// else the eligible one with the earlier deadline; on a tie the one that is
// not running. Until 2026-12-05 the protection held an ineligible current
// entity too (docs/containers.md, "The neighbour in each CPU's averages").
bool GroupShare::pick_scenario(const Cpu& c) const {
  const Duration v = avg_v(c);
  const bool s_ok = c.vs <= v, n_ok = c.vn <= v;
  const bool cur_ok = c.scenario_cur ? s_ok : n_ok;
  const Duration v_cur = c.scenario_cur ? c.vs : c.vn;
  if (cur_ok && v_cur < c.prot) return c.scenario_cur;
  if (s_ok != n_ok) return s_ok;
  if (c.scenario_cur) return c.ds < c.dn;
  return c.ds <= c.dn;
}

// The tick that will find the running entity past its deadline.
void GroupShare::arm(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  engine_.cancel(c.ev);
  c.ev = {};
  if (!c.queued || c.threads == 0) return;
  const std::int64_t w = c.scenario_cur ? c.ws : c.wn;
  const Duration left = (c.scenario_cur ? c.ds - c.vs : c.dn - c.vn);
  std::int64_t at = engine_.now().count() +
                    std::max<std::int64_t>(0, (left.count() * w + kNice0Load - 1) / kNice0Load);
  const std::int64_t tick = p_.tick.count();
  if (tick > 0) at = tick_grid_ceil(Duration{at}, p_.tick, p_.tick_offset).count();
  c.ev = engine_.at_lane(lane0_ + static_cast<std::uint32_t>(cpu), at, &GroupShare::on_tick, this,
                         static_cast<std::uint64_t>(cpu));
}

void GroupShare::on_tick(void* self, std::uint64_t arg) {
  auto& g = *static_cast<GroupShare*>(self);
  const int cpu = static_cast<int>(arg);
  Cpu& c = g.cpus_[arg];
  c.ev = {};
  g.charge(c);
  g.reweight(c, g.scenario_weight(cpu));  // update_cfs_group from entity_tick
  // update_deadline: a new deadline a slice on, then pick.
  if (c.scenario_cur && c.vs >= c.ds) c.ds = c.vs + g.vslice(c.ws);
  if (!c.scenario_cur && c.vn >= c.dn) c.dn = c.vn + g.vslice(c.wn);
  const bool s = g.pick_scenario(c);
  if (s != c.scenario_cur) {
    c.scenario_cur = s;
    c.prot = s ? c.ds : c.dn;  // set_protect_slice at the pick
    g.hook_(g.ctx_, cpu, s);
  }
  if (c.queued) g.arm(cpu);
}

bool GroupShare::enqueue(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  if (c.threads == 0) return true;
  if (c.queued) return c.scenario_cur;
  charge(c);
  c.ws = scenario_weight(cpu);
  // place_entity against V (the neighbour alone: its vruntime).
  const Duration v = c.vn;
  if (c.lag >= Duration{0})
    c.vs = v - c.lag * (c.wn + c.ws) / c.wn;
  else
    c.vs = std::max(c.vs, v);  // DELAY_DEQUEUE: still queued where it was
  c.ds = c.vs + vslice(c.ws);
  c.queued = true;
  // check_preempt_wakeup_fair: update_curr may find the neighbour past its
  // deadline (update_deadline gives it a new one and reschedules: a pick
  // follows, and a neighbour picked again is protected anew); else the pick
  // keeps it while it is eligible and has not run the slice it was picked
  // with (its protection), and an ineligible one is not protected.
  bool forced = false;
  if (c.vn >= c.dn) {
    c.dn = c.vn + vslice(c.wn);
    forced = true;
  }
  if (pick_scenario(c)) {
    run_scenario(c, cpu);
    return true;
  }
  if (forced) c.prot = c.dn;  // set_protect_slice at the neighbour's re-pick
  arm(cpu);
  return false;
}

// The real runner's submitter sleeps 1 ms right before the origin
// (real/runner.cpp, start_slice_afresh) and reads the origin once it runs
// again: its group's entity was placed at V on the wake (its lag from the
// setup spent while it slept, as a delayed dequeue completes when the
// entity is picked eligible) and picked (at the wake, or at the tick that
// ended the neighbour's protection), so it starts its slice at the origin.
void GroupShare::run_at_origin(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  if (c.threads == 0) return;
  charge(c);
  c.ws = scenario_weight(cpu);
  c.vs = avg_v(c);
  c.ds = c.vs + vslice(c.ws);
  c.queued = true;
  run_scenario(c, cpu);
}

// The scenario's entity, queued on `cpu`, is picked: it runs, protected to
// its deadline (set_protect_slice).
void GroupShare::run_scenario(Cpu& c, int cpu) {
  c.scenario_cur = true;
  c.prot = c.ds;
  c.since = engine_.now();
  arm(cpu);
}

void GroupShare::dequeue(int cpu) {
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  if (c.threads == 0 || !c.queued) return;
  charge(c);
  // update_entity_lag, clamped to a slice plus a tick of its virtual time
  // (6.18: cfs_rq_max_slice + TICK_NSEC).
  const Duration limit = (p_.slice + p_.tick) * kNice0Load / c.ws;
  c.lag = std::clamp(avg_v(c) - c.vs, -limit, limit);
  c.queued = false;
  engine_.cancel(c.ev);
  c.ev = {};
  if (c.scenario_cur) {
    c.scenario_cur = false;
    if (c.vn >= c.dn) c.dn = c.vn + vslice(c.wn);
    c.prot = c.dn;
    c.since = engine_.now();
  }
}

bool GroupShare::scenario_runs(int cpu) const {
  const Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  return c.threads == 0 || c.scenario_cur;
}

Duration GroupShare::neighbour_time() const {
  Duration t{};
  for (const Cpu& c : cpus_) {
    t += c.neighbour_ran;
    if (c.threads > 0 && !c.scenario_cur) t += engine_.now() - c.since;
  }
  return t;
}

}  // namespace poolsim::sim
