// noise.cpp: the OS-noise source (design comment in noise.hpp).
#include "sim/noise.hpp"

#include <cmath>

namespace poolsim::sim {
namespace {

// Stream numbers of Rng::derive for noise: far above any workload stream
// (classes, clients, graph nodes count from 0), one per CPU.
constexpr std::uint64_t kNoiseStreamBase = std::uint64_t{1} << 48;

// Noise is off without an interval or a stolen time (the idealised profiles).
bool noise_on(const MachineProfile& m) {
  return m.noise_interval > Duration{0} && m.noise_median > Duration{0};
}

// The time one interruption steals: lognormal from the median and the 99th
// percentile, or the median itself when they do not spread. With a measured
// mean, the lognormal has that mean and the p99 instead (its median follows):
// on this VM the stolen times are bimodal (many ~5-10 us interrupts, a share
// of ~40 us exits), so a lognormal through the median and the p99 had a
// third of the measured mean (12 us against 26 us per interruption, 4% of a
// busy CPU against 8%), and the share a busy CPU loses is what moves CPU
// time, quotas and makespans.
Distribution stolen_time(const MachineProfile& m) {
  if (m.noise_mean > Duration{0} && m.noise_p99 > m.noise_mean)
    return Distribution::lognormal(lognormal_median_of(m.noise_mean, m.noise_p99), m.noise_p99);
  if (m.noise_mean > Duration{0}) return Distribution::fixed(m.noise_mean);
  return m.noise_p99 > m.noise_median ? Distribution::lognormal(m.noise_median, m.noise_p99)
                                      : Distribution::fixed(m.noise_median);
}

}  // namespace

double noise_share(const MachineProfile& m) {
  if (!noise_on(m)) return 0;
  return stolen_time(m).mean_seconds() / to_seconds(m.noise_interval);
}

NoiseSource::NoiseSource(const MachineProfile& m, std::uint64_t seed, int cpus)
    : on_(noise_on(m)),
      interval_(m.noise_interval),
      preempt_(m.noise_preempt),
      preempt_idle_(m.noise_preempt_idle) {
  if (!on_) return;
  stolen_ = stolen_time(m);
  rng_.reserve(static_cast<std::size_t>(cpus));
  for (int c = 0; c < cpus; ++c)
    rng_.push_back(Rng::derive(seed, kNoiseStreamBase + static_cast<std::uint64_t>(c)));
}

Duration NoiseSource::next_gap(int cpu) {
  Rng& r = rng_[static_cast<std::size_t>(cpu)];
  const double gap = -std::log(r.uniform_open0()) * static_cast<double>(interval_.count());
  return Duration{std::max<std::int64_t>(1, std::llround(gap))};
}

Interruption NoiseSource::draw(int cpu, bool other_idle) {
  Rng& r = rng_[static_cast<std::size_t>(cpu)];
  Interruption i;
  i.stolen = stolen_.sample(r);
  i.preempts = r.uniform() < (other_idle ? preempt_idle_ : preempt_);
  return i;
}

}  // namespace poolsim::sim
