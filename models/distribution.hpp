// distribution.hpp: duration distributions of the scenario format.
//
// A distribution is a duration (fixed) or a map: exponential{mean},
// uniform{min,max}, lognormal{median,p99}, normal{mean,sd} truncated at 0, or
// empirical{file} (samples drawn uniformly from a CSV column of durations).
// Lognormal is parameterised as users think of latencies: median = e^mu and
// p99 = e^(mu + z99*sigma), z99 = 2.3263478740408408.
// Sampling uses only Rng::uniform() and <cmath>, so it is reproducible.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "models/rng.hpp"
#include "models/units.hpp"

namespace poolsim {

struct FixedDist {
  Duration value;
};
struct ExponentialDist {
  Duration mean;
};
struct UniformDist {
  Duration min, max;
};
struct LognormalDist {
  Duration median, p99;
  double mu = 0, sigma = 0;
};
struct NormalDist {
  Duration mean, sd;
};
struct EmpiricalDist {
  std::string file;
  std::vector<Duration> samples;
};

class Distribution {
 public:
  using Variant = std::variant<FixedDist, ExponentialDist, UniformDist, LognormalDist, NormalDist,
                               EmpiricalDist>;

  Distribution() : v_(FixedDist{Duration{0}}) {}
  explicit Distribution(Variant v);
  static Distribution fixed(Duration d) { return Distribution(FixedDist{d}); }
  static Distribution exponential(Duration mean) { return Distribution(ExponentialDist{mean}); }
  static Distribution uniform(Duration lo, Duration hi) {
    return Distribution(UniformDist{lo, hi});
  }
  static Distribution lognormal(Duration median, Duration p99);
  static Distribution normal(Duration mean, Duration sd) {
    return Distribution(NormalDist{mean, sd});
  }

  Duration sample(Rng& rng) const;
  // Exact mean in seconds (for normal: of the truncated distribution).
  double mean_seconds() const;
  // Quantile q in (0,1), in seconds (empirical: of the sample set).
  double quantile_seconds(double q) const;
  bool is_fixed() const { return std::holds_alternative<FixedDist>(v_); }
  bool is_zero() const;
  const Variant& variant() const { return v_; }
  // "2ms", "exponential(mean 2ms)", ... for tables and errors.
  std::string describe() const;

 private:
  Variant v_;
};

// The standard normal quantile of 0.99.
inline constexpr double kZ99 = 2.3263478740408408;
// Inverse of the standard normal CDF (Acklam's rational approximation refined
// by one Halley step; |error| < 1e-12).
double normal_quantile(double p);

// The median of the lognormal with this mean and 99th percentile
// (mean < p99): sigma is the smaller root of sigma^2/2 - z99 sigma +
// ln(p99/mean) = 0, so mean = median e^(sigma^2/2) exactly. A p99 beyond
// e^(z99^2/2) = 14.9 means lies past every lognormal's reach; sigma = z99,
// the one of that p99 with the least mean, is taken.
Duration lognormal_median_of(Duration mean, Duration p99);
// The 99th percentile of the lognormal with this median and mean (0 < median
// < mean): sigma^2 = 2 ln(mean/median), p99 = median e^(z99 sigma). For a
// distribution known by a handful of samples, whose median and mean are
// usable where a p99 is not (MachineProfile::timer_stall_*).
Duration lognormal_p99_of(Duration median, Duration mean);

}  // namespace poolsim
