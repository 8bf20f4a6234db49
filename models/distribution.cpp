#include "models/distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace poolsim {
namespace {

double ns(Duration d) { return static_cast<double>(d.count()); }
Duration to_duration(double nanos) {
  if (!(nanos > 0)) return Duration{0};
  if (nanos > 9.0e18) nanos = 9.0e18;
  return Duration{static_cast<std::int64_t>(std::llround(nanos))};
}
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi); }
double Phi(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

}  // namespace

double normal_quantile(double p) {
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  // Peter Acklam's rational approximation (relative error 1.15e-9) ...
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double plow = 0.02425, phigh = 1 - plow;
  double x;
  if (p < plow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= phigh) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // ... refined by one Halley step on the exact CDF.
  const double e = Phi(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

Distribution::Distribution(Variant v) : v_(std::move(v)) {
  if (auto* l = std::get_if<LognormalDist>(&v_)) {
    if (l->median.count() <= 0 || l->p99 <= l->median)
      throw std::invalid_argument("lognormal needs 0 < median < p99");
    l->mu = std::log(ns(l->median));
    l->sigma = (std::log(ns(l->p99)) - l->mu) / kZ99;
  }
  if (auto* u = std::get_if<UniformDist>(&v_); u && u->max < u->min)
    throw std::invalid_argument("uniform needs min <= max");
  if (auto* e = std::get_if<EmpiricalDist>(&v_); e && e->samples.empty())
    throw std::invalid_argument("empirical distribution has no samples");
}

Duration lognormal_median_of(Duration mean, Duration p99) {
  if (mean.count() <= 0 || p99 <= mean)
    throw std::invalid_argument("lognormal_median_of needs 0 < mean < p99");
  const double k = std::log(ns(p99) / ns(mean));
  const double disc = kZ99 * kZ99 - 2 * k;
  const double sigma = disc > 0 ? kZ99 - std::sqrt(disc) : kZ99;
  const double median = ns(p99) / std::exp(kZ99 * sigma);
  return Duration{std::clamp<std::int64_t>(std::llround(median), 1, p99.count() - 1)};
}

Duration lognormal_p99_of(Duration median, Duration mean) {
  if (median.count() <= 0 || mean <= median)
    throw std::invalid_argument("lognormal_p99_of needs 0 < median < mean");
  const double sigma = std::sqrt(2 * std::log(ns(mean) / ns(median)));
  return Duration{std::llround(ns(median) * std::exp(kZ99 * sigma))};
}

Distribution Distribution::lognormal(Duration median, Duration p99) {
  return Distribution(LognormalDist{median, p99});
}

Duration Distribution::sample(Rng& rng) const {
  struct Visitor {
    Rng& rng;
    Duration operator()(const FixedDist& d) const { return d.value; }
    Duration operator()(const ExponentialDist& d) const {
      return to_duration(-ns(d.mean) * std::log(rng.uniform_open0()));
    }
    Duration operator()(const UniformDist& d) const {
      return to_duration(ns(d.min) + rng.uniform() * (ns(d.max) - ns(d.min)));
    }
    Duration operator()(const LognormalDist& d) const {
      const double z = normal_quantile(rng.uniform_open0() * (1 - 0x1.0p-53));
      return to_duration(std::exp(d.mu + d.sigma * z));
    }
    Duration operator()(const NormalDist& d) const {
      // Truncated at 0 by rejection; bounded so a nonsense mean cannot loop.
      for (int i = 0; i < 64; ++i) {
        const double z = normal_quantile(rng.uniform_open0() * (1 - 0x1.0p-53));
        const double x = ns(d.mean) + ns(d.sd) * z;
        if (x >= 0) return to_duration(x);
      }
      return Duration{0};
    }
    Duration operator()(const EmpiricalDist& d) const {
      return d.samples[rng.below(d.samples.size())];
    }
  };
  return std::visit(Visitor{rng}, v_);
}

double Distribution::mean_seconds() const {
  struct Visitor {
    double operator()(const FixedDist& d) const { return ns(d.value); }
    double operator()(const ExponentialDist& d) const { return ns(d.mean); }
    double operator()(const UniformDist& d) const { return (ns(d.min) + ns(d.max)) / 2; }
    double operator()(const LognormalDist& d) const {
      return std::exp(d.mu + d.sigma * d.sigma / 2);
    }
    double operator()(const NormalDist& d) const {
      if (d.sd.count() == 0) return std::max(0.0, ns(d.mean));
      const double a = -ns(d.mean) / ns(d.sd);
      return ns(d.mean) + ns(d.sd) * phi(a) / (1 - Phi(a));
    }
    double operator()(const EmpiricalDist& d) const {
      double s = 0;
      for (auto x : d.samples) s += ns(x);
      return s / static_cast<double>(d.samples.size());
    }
  };
  return std::visit(Visitor{}, v_) * 1e-9;
}

double Distribution::quantile_seconds(double q) const {
  struct Visitor {
    double q;
    double operator()(const FixedDist& d) const { return ns(d.value); }
    double operator()(const ExponentialDist& d) const { return -ns(d.mean) * std::log(1 - q); }
    double operator()(const UniformDist& d) const {
      return ns(d.min) + q * (ns(d.max) - ns(d.min));
    }
    double operator()(const LognormalDist& d) const {
      return std::exp(d.mu + d.sigma * normal_quantile(q));
    }
    double operator()(const NormalDist& d) const {
      // Quantile of the normal truncated at 0.
      if (d.sd.count() == 0) return std::max(0.0, ns(d.mean));
      const double p0 = Phi(-ns(d.mean) / ns(d.sd));
      return ns(d.mean) + ns(d.sd) * normal_quantile(p0 + q * (1 - p0));
    }
    double operator()(const EmpiricalDist& d) const {
      auto s = d.samples;
      std::sort(s.begin(), s.end());
      auto idx = static_cast<std::size_t>(std::ceil(q * static_cast<double>(s.size())));
      idx = std::clamp<std::size_t>(idx, 1, s.size()) - 1;
      return ns(s[idx]);
    }
  };
  return std::visit(Visitor{q}, v_) * 1e-9;
}

bool Distribution::is_zero() const {
  if (auto* f = std::get_if<FixedDist>(&v_)) return f->value.count() == 0;
  return false;
}

std::string Distribution::describe() const {
  struct Visitor {
    std::string operator()(const FixedDist& d) const { return format_duration(d.value); }
    std::string operator()(const ExponentialDist& d) const {
      return fmt::format("exponential(mean {})", format_duration(d.mean));
    }
    std::string operator()(const UniformDist& d) const {
      return fmt::format("uniform({}..{})", format_duration(d.min), format_duration(d.max));
    }
    std::string operator()(const LognormalDist& d) const {
      return fmt::format("lognormal(median {}, p99 {})", format_duration(d.median),
                         format_duration(d.p99));
    }
    std::string operator()(const NormalDist& d) const {
      return fmt::format("normal(mean {}, sd {})", format_duration(d.mean), format_duration(d.sd));
    }
    std::string operator()(const EmpiricalDist& d) const {
      return fmt::format("empirical({}, {} samples)", d.file, d.samples.size());
    }
  };
  return std::visit(Visitor{}, v_);
}

}  // namespace poolsim
