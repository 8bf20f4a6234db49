// sweep_part.cpp: shard files and their merge (see sweep_part.hpp).
#include "validate/sweep_part.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "validate/output.hpp"

namespace poolsim::validate {

namespace {

using Json = nlohmann::ordered_json;

Json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double number_from(const Json& j) {
  if (j.is_number()) return j.get<double>();
  const auto s = j.get<std::string>();
  if (s == "nan") return std::nan("");
  if (s == "inf") return HUGE_VAL;
  if (s == "-inf") return -HUGE_VAL;
  throw std::invalid_argument("a metric is neither a number nor nan/inf: '" + s + "'");
}

Json header_json(const SweepResult& r) {
  Json h;
  h["scenario"] = r.scenario;
  h["source"] = r.source;
  h["arrival"] = static_cast<int>(r.arrival);
  h["graph"] = r.graph;
  h["measured"] = r.measured;
  h["replications"] = r.replications;
  h["grid_points"] = r.grid_points;
  h["axes"] = Json::array();
  for (const auto& a : r.axes) h["axes"].push_back({{"key", a.key}, {"values", a.values}});
  return h;
}

SweepResult header_from(const Json& h) {
  SweepResult r;
  r.scenario = h.at("scenario").get<std::string>();
  r.source = h.at("source").get<std::string>();
  r.arrival = static_cast<ArrivalKind>(h.at("arrival").get<int>());
  r.graph = h.at("graph").get<bool>();
  r.measured = h.at("measured").get<bool>();
  r.replications = h.at("replications").get<int>();
  r.grid_points = h.at("grid_points").get<std::size_t>();
  for (const auto& a : h.at("axes"))
    r.axes.push_back(
        {a.at("key").get<std::string>(), a.at("values").get<std::vector<std::string>>()});
  return r;
}

std::string shard_name(Shard s) { return fmt::format("{}/{}", s.k, s.n); }

}  // namespace

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;  // FNV-1a 64 prime
  }
  return fmt::format("{:016x}", h);
}

Json point_json(const SweepPoint& p) {
  Json j;
  j["index"] = p.index;
  j["values"] = p.values;
  j["backend"] = p.backend_json.is_null() ? backend_json(p.backend) : p.backend_json;
  j["predicted"] = Json::array();
  for (double v : p.predicted.values) j["predicted"].push_back(number(v));
  if (p.measured) {
    j["measured"] = Json::array();
    for (const auto& s : *p.measured)
      j["measured"].push_back({number(s.mean), number(s.sd), number(s.min), number(s.max), s.n});
  }
  if (p.spread) {
    j["spread"] = Json::array();
    for (const auto& s : *p.spread)
      j["spread"].push_back({number(s.mean), number(s.sd), number(s.min), number(s.max), s.n});
  }
  j["warnings"] = Json::array();
  for (const auto& w : p.warnings) j["warnings"].push_back({w.kind, w.message});
  return j;
}

SweepPoint point_from_json(const Json& j) {
  SweepPoint p;
  p.index = j.at("index").get<std::size_t>();
  p.values = j.at("values").get<std::vector<std::string>>();
  p.backend_json = j.at("backend");
  const auto& pred = j.at("predicted");
  if (pred.size() != kMetricCount)
    throw std::invalid_argument(
        fmt::format("a point has {} metrics, this poolsim has {}", pred.size(), kMetricCount));
  for (std::size_t m = 0; m < kMetricCount; ++m) p.predicted.values[m] = number_from(pred[m]);
  // Per-metric statistics: [mean, sd, min, max, n] each.
  const auto stats = [&](const char* key) {
    std::array<MetricStats, kMetricCount> st{};
    const auto& a = j.at(key);
    if (a.size() != kMetricCount)
      throw std::invalid_argument(fmt::format("a point's {} metrics are cut", key));
    for (std::size_t m = 0; m < kMetricCount; ++m)
      st[m] = {number_from(a[m][0]), number_from(a[m][1]), number_from(a[m][2]),
               number_from(a[m][3]), a[m][4].get<int>()};
    return st;
  };
  if (j.contains("measured")) p.measured = stats("measured");
  if (j.contains("spread")) p.spread = stats("spread");
  for (const auto& w : j.at("warnings"))
    p.warnings.push_back({w.at(0).get<std::string>(), w.at(1).get<std::string>()});
  return p;
}

Json part_json(const SweepResult& r, Shard s, const Json& identity) {
  Json j;
  j["poolsim_sweep_part"] = kSweepPartVersion;
  j["shard"] = {{"k", s.k}, {"n", s.n}};
  j["fingerprint"] = fnv1a_hex(identity.dump() + header_json(r).dump());
  j["identity"] = identity;
  j["sweep"] = header_json(r);
  j["seconds"] = r.seconds;
  j["points"] = Json::array();
  for (const auto& p : r.points) j["points"].push_back(point_json(p));
  return j;
}

SweepPart read_part(const std::string& text, const std::string& path) {
  const auto bad = [&](const std::string& why) { return std::invalid_argument(path + ": " + why); };
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw bad(
        "not a sweep part (not JSON; parts are written by poolsim sweep --shard K/N --json PATH)");
  }
  if (!j.is_object() || !j.contains("poolsim_sweep_part"))
    throw bad(
        "not a sweep part (no 'poolsim_sweep_part'; parts are written by poolsim sweep "
        "--shard K/N --json PATH)");
  if (j["poolsim_sweep_part"] != kSweepPartVersion)
    throw bad(fmt::format("sweep part format {} (this poolsim reads format {})",
                          j["poolsim_sweep_part"].dump(), kSweepPartVersion));
  try {
    SweepPart p;
    p.path = path;
    p.shard = {j.at("shard").at("k").get<std::size_t>(), j.at("shard").at("n").get<std::size_t>()};
    p.fingerprint = j.at("fingerprint").get<std::string>();
    p.identity = j.at("identity");
    p.result = header_from(j.at("sweep"));
    p.result.seconds = j.at("seconds").get<double>();
    for (const auto& pj : j.at("points")) p.result.points.push_back(point_from_json(pj));
    if (p.fingerprint != fnv1a_hex(p.identity.dump() + header_json(p.result).dump()))
      throw bad("the part's fingerprint does not match its content (edited by hand?)");
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("a damaged sweep part: ") + e.what());
  }
}

namespace {

// The first identity field on which two parts differ, for the message.
std::string first_difference(const Json& a, const Json& b) {
  for (auto it = a.begin(); it != a.end(); ++it)
    if (!b.contains(it.key()) || b.at(it.key()) != it.value())
      return fmt::format("{}: {} vs {}", it.key(), abbreviate(it.value().dump()),
                         b.contains(it.key()) ? abbreviate(b.at(it.key()).dump()) : "none");
  return "the grid (axes or size)";
}

void check_parts(const std::vector<SweepPart>& parts) {
  if (parts.empty()) throw std::invalid_argument("merge: no parts given");
  const SweepPart& first = parts.front();
  std::map<std::size_t, const SweepPart*> by_k;
  for (const auto& p : parts) {
    if (p.fingerprint != first.fingerprint)
      throw std::invalid_argument(fmt::format(
          "merge: {} and {} are parts of different sweeps (fingerprint {} vs {}; {})", first.path,
          p.path, first.fingerprint, p.fingerprint, first_difference(first.identity, p.identity)));
    if (p.shard.n != first.shard.n)
      throw std::invalid_argument(
          fmt::format("merge: {} is shard {} but {} is shard {}: the same "
                      "sweep split in different numbers of shards",
                      first.path, shard_name(first.shard), p.path, shard_name(p.shard)));
    if (auto [it, fresh] = by_k.emplace(p.shard.k, &p); !fresh)
      throw std::invalid_argument(fmt::format("merge: {} and {} are both shard {}",
                                              it->second->path, p.path, shard_name(p.shard)));
    const auto want = shard_indices(p.result.grid_points, p.shard);
    std::vector<std::size_t> have;
    for (const auto& pt : p.result.points) have.push_back(pt.index);
    if (have != want)
      throw std::invalid_argument(
          fmt::format("merge: {} (shard {}) holds {} points, not the {} of its shard", p.path,
                      shard_name(p.shard), have.size(), want.size()));
  }
  std::string missing;
  for (std::size_t k = 1; k <= first.shard.n; ++k)
    if (!by_k.count(k)) missing += (missing.empty() ? "" : ", ") + shard_name({k, first.shard.n});
  if (!missing.empty())
    throw std::invalid_argument(fmt::format("merge: missing shard{} {} (given {} of {})",
                                            missing.find(',') == std::string::npos ? "" : "s",
                                            missing, by_k.size(), first.shard.n));
}

}  // namespace

SweepResult merge_parts(const std::vector<SweepPart>& parts) {
  check_parts(parts);
  SweepResult r = parts.front().result;
  r.points.assign(r.grid_points, SweepPoint{});
  r.seconds = 0;
  for (const auto& p : parts) {
    r.seconds += p.result.seconds;
    for (const auto& pt : p.result.points) r.points[pt.index] = pt;
  }
  return r;
}

}  // namespace poolsim::validate
