// result_codec.cpp: flat binary encoding of a RunResult (see the header).
#include "real/result_codec.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace poolsim::real {
namespace {

static_assert(std::is_trivially_copyable_v<TaskRecord>);
static_assert(std::is_trivially_copyable_v<TraceSpan>);
static_assert(std::is_trivially_copyable_v<Sample>);
static_assert(std::is_trivially_copyable_v<RunCounters>);
static_assert(std::is_trivially_copyable_v<SpeedCheck>);

class Writer {
 public:
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void str(const std::string& s) {
    pod<std::uint64_t>(s.size());
    out_.append(s);
  }
  template <class T>
  void array(const std::vector<T>& v) {
    pod<std::uint64_t>(v.size());
    if (!v.empty()) out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class T>
  T pod() {
    T v;
    need(sizeof(T));
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    need(n);
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  template <class T>
  std::vector<T> array() {
    const auto n = pod<std::uint64_t>();
    if (n > in_.size() / sizeof(T) + 1) throw std::runtime_error("result payload: bad array size");
    need(n * sizeof(T));
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  void need(std::size_t n) const {
    if (in_.size() - pos_ < n) throw std::runtime_error("result payload truncated");
  }
  std::string_view in_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string encode_result(const RunResult& r) {
  Writer w;
  w.str(r.mode);
  w.pod(r.cpus_available);
  w.array(r.records);
  w.pod(r.counters);
  w.pod<std::uint64_t>(r.extra.size());
  for (const auto& [k, v] : r.extra) {
    w.str(k);
    w.pod(v);
  }
  w.array(r.threads_series);
  w.array(r.runnable_series);
  w.pod<std::uint64_t>(r.trace.tracks.size());
  for (const auto& t : r.trace.tracks) {
    w.str(t.name);
    w.pod<std::uint8_t>(t.is_cpu ? 1 : 0);
  }
  w.array(r.trace.spans);
  w.pod(r.speed);
  return w.take();
}

RunResult decode_result(std::string_view bytes) {
  Reader rd(bytes);
  RunResult r;
  r.mode = rd.str();
  r.cpus_available = rd.pod<double>();
  r.records = rd.array<TaskRecord>();
  r.counters = rd.pod<RunCounters>();
  const auto n_extra = rd.pod<std::uint64_t>();
  for (std::uint64_t i = 0; i < n_extra; ++i) {
    auto k = rd.str();
    r.extra[k] = rd.pod<double>();
  }
  r.threads_series = rd.array<Sample>();
  r.runnable_series = rd.array<Sample>();
  const auto n_tracks = rd.pod<std::uint64_t>();
  if (n_tracks > bytes.size()) throw std::runtime_error("result payload: bad track count");
  r.trace.tracks.reserve(n_tracks);
  for (std::uint64_t i = 0; i < n_tracks; ++i) {
    TraceTrack t;
    t.name = rd.str();
    t.is_cpu = rd.pod<std::uint8_t>() != 0;
    r.trace.tracks.push_back(std::move(t));
  }
  r.trace.spans = rd.array<TraceSpan>();
  r.speed = rd.pod<SpeedCheck>();
  if (!rd.at_end()) throw std::runtime_error("result payload: trailing bytes");
  return r;
}

bool write_frame(int fd, ChildStatus status, std::string_view payload) {
  char header[9];
  header[0] = static_cast<char>(status);
  const std::uint64_t n = payload.size();
  std::memcpy(header + 1, &n, sizeof n);
  auto put = [fd](const char* p, std::size_t len) {
    while (len > 0) {
      const ssize_t k = ::write(fd, p, len);
      if (k < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      p += k;
      len -= static_cast<std::size_t>(k);
    }
    return true;
  };
  return put(header, sizeof header) && put(payload.data(), payload.size());
}

bool parse_frame(std::string_view bytes, Frame& out) {
  if (bytes.size() < 9) return false;
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data() + 1, sizeof n);
  if (bytes.size() - 9 < n) return false;
  out.status = static_cast<ChildStatus>(static_cast<std::uint8_t>(bytes[0]));
  out.payload.assign(bytes.data() + 9, n);
  return true;
}

}  // namespace poolsim::real
