// mpi_sweep.cpp: the manager/worker sweep over MPI ranks (see mpi_sweep.hpp).
#include "app/mpi_sweep.hpp"

#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "app/common.hpp"
#include "validate/sweep_part.hpp"

#ifdef POOLSIM_WITH_MPI
#include <mpi.h>
#endif

namespace poolsim::app::mpi {

#ifndef POOLSIM_WITH_MPI

bool launched() { return false; }
bool built_in() { return false; }
Session::Session() { throw Refused("this poolsim was built without MPI (POOLSIM_WITH_MPI=OFF)"); }
Session::~Session() = default;
validate::SweepResult run_distributed(const validate::SweepOptions&, Session&) {
  throw Refused("this poolsim was built without MPI (POOLSIM_WITH_MPI=OFF)");
}

#else

namespace {

using Json = nlohmann::ordered_json;

// Message tags: a worker's request (with the previous result, if any), and
// the manager's answer (a grid index, or one of the k* values below).
constexpr int kTagAsk = 1;
constexpr int kTagGive = 2;
constexpr long long kPhaseOver = -1;  // no more points in this phase
constexpr long long kStop = -2;       // a point failed: run nothing more
constexpr long long kNone = -3;       // no failing index (validation)

// Waits for a message without Open MPI's busy-polling receive: probe, then
// sleep 1 ms, so idle ranks (and the manager) leave the CPUs to the ranks
// that run points.
MPI_Status wait_for(int source, int tag) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &st);
    if (flag) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string recv_text(int source, int tag, int* from) {
  const MPI_Status st = wait_for(source, tag);
  int n = 0;
  MPI_Get_count(&st, MPI_CHAR, &n);
  std::string s(static_cast<std::size_t>(n), '\0');
  MPI_Recv(s.data(), n, MPI_CHAR, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (from) *from = st.MPI_SOURCE;
  return s;
}

void send_text(const std::string& s, int dest, int tag) {
  MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

long long recv_index() {
  wait_for(0, kTagGive);
  long long v = 0;
  MPI_Recv(&v, 1, MPI_LONG_LONG, 0, kTagGive, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return v;
}

void send_index(long long v, int dest) {
  MPI_Send(&v, 1, MPI_LONG_LONG, dest, kTagGive, MPI_COMM_WORLD);
}

// A failed point travels as "!<exit code> <index> <what()>".
std::string failure(int code, std::size_t index, const std::string& what) {
  return "!" + std::to_string(code) + " " + std::to_string(index) + " " + what;
}

// Worker side of one phase: ask, run, answer, until the manager says over.
// Returns false when the manager said stop.
bool work_phase(const validate::SweepOptions& opt, bool measure) {
  std::string answer;  // empty: the first request
  for (;;) {
    send_text(answer, 0, kTagAsk);
    const long long i = recv_index();
    if (i == kPhaseOver) return true;
    if (i == kStop) return false;
    const auto index = static_cast<std::size_t>(i);
    try {
      const Scenario s = validate::load_point(opt, validate::grid_point(opt.axes, index));
      validate::SweepPoint p = validate::make_point(opt, index, s);
      if (measure)
        validate::measure_point(opt, s, p);
      else
        validate::simulate_point(opt, s, p);
      answer = validate::point_json(p).dump();
    } catch (const ScenarioError& e) {
      answer = failure(kExitBadInput, index, e.what());
    } catch (const std::invalid_argument& e) {
      answer = failure(kExitBadInput, index, e.what());
    } catch (const real::MachineRefused& e) {
      answer = failure(kExitRefused, index, std::string("the machine refused: ") + e.what());
    } catch (const std::exception& e) {
      answer = failure(kExitRefused, index, e.what());
    }
  }
}

struct Failure {
  std::size_t index = 0;
  int code = 0;
  std::string what;
};

// Manager side of one phase over `workers` participating ranks: hands out
// `indices` in order, stores each answer at its grid index in r.points
// (position = grid index / stride order of `slot`).
std::optional<Failure> manage_phase(const validate::SweepOptions& opt,
                                    const std::vector<std::size_t>& indices, int workers,
                                    bool measure, std::vector<validate::SweepPoint>& slots,
                                    const std::map<std::size_t, std::size_t>& slot_of) {
  std::size_t next = 0;
  std::optional<Failure> failed;
  int active = workers;
  while (active > 0) {
    int from = 0;
    const std::string msg = recv_text(MPI_ANY_SOURCE, kTagAsk, &from);
    if (!msg.empty() && msg[0] == '!') {
      Failure f;
      std::size_t used = 0;
      f.code = std::stoi(msg.substr(1), &used);
      const std::string rest = msg.substr(1 + used + 1);
      f.index = std::stoull(rest, &used);
      f.what = rest.substr(used + 1);
      if (!failed || f.index < failed->index) failed = f;
    } else if (!msg.empty()) {
      validate::SweepPoint p = validate::point_from_json(Json::parse(msg));
      validate::SweepPoint& slot = slots.at(slot_of.at(p.index));
      if (measure)
        slot.measured = p.measured;
      else
        slot = std::move(p);
      if (opt.on_point) opt.on_point(validate::point_label(opt.axes, slot.values));
    }
    if (!failed && next < indices.size()) {
      send_index(static_cast<long long>(indices[next++]), from);
    } else {
      send_index(failed ? kStop : kPhaseOver, from);
      --active;
    }
  }
  return failed;
}

// Validates a strided share of `indices` on every rank; every rank rethrows
// the lowest failing point's error (the same text everywhere).
void validate_all(const validate::SweepOptions& opt, const std::vector<std::size_t>& indices,
                  const Session& s) {
  long long bad = std::numeric_limits<long long>::max();
  for (std::size_t j = static_cast<std::size_t>(s.rank()); j < indices.size();
       j += static_cast<std::size_t>(s.size())) {
    try {
      (void)validate::load_point(opt, validate::grid_point(opt.axes, indices[j]));
    } catch (const std::exception&) {
      bad = static_cast<long long>(j);
      break;
    }
  }
  long long lowest = 0;
  MPI_Allreduce(&bad, &lowest, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  if (lowest != std::numeric_limits<long long>::max())
    (void)validate::load_point(
        opt, validate::grid_point(opt.axes, indices[static_cast<std::size_t>(lowest)]));
}

// Whether this rank measures: the lowest rank other than 0 among the ranks
// that share this host's memory.
bool is_measurer(const Session& s) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s.rank(), MPI_INFO_NULL, &node);
  const int candidate = s.rank() == 0 ? std::numeric_limits<int>::max() : s.rank();
  int lowest = 0;
  MPI_Allreduce(&candidate, &lowest, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  return s.rank() == lowest;
}

[[noreturn]] void report(const Failure& f) {
  if (f.code == kExitBadInput) throw std::invalid_argument(f.what);
  throw Refused(f.what);
}

// The manager's whole run: both phases, then the final word to every rank.
validate::SweepResult manage(const validate::SweepOptions& opt,
                             const std::vector<std::size_t>& indices, validate::SweepResult r,
                             const Session& s, int measurers) {
  std::map<std::size_t, std::size_t> slot_of;
  for (std::size_t i : indices) {
    slot_of[i] = r.points.size();
    r.points.push_back(validate::SweepPoint{});
    r.points.back().index = i;
    r.points.back().values = validate::grid_point(opt.axes, i);
  }
  if (opt.on_phase) opt.on_phase("simulate", indices.size());
  auto failed = manage_phase(opt, indices, s.size() - 1, false, r.points, slot_of);
  if (!failed && opt.measure) {
    if (opt.on_phase) opt.on_phase("measure", indices.size());
    failed = manage_phase(opt, indices, measurers, true, r.points, slot_of);
  }
  if (failed) report(*failed);
  return r;
}

}  // namespace

bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (const char* e = std::getenv(v); e && *e) return true;
  return false;
}

bool built_in() { return true; }

Session::Session() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Session::~Session() { MPI_Finalize(); }

validate::SweepResult run_distributed(const validate::SweepOptions& opt, Session& s) {
  const auto started = std::chrono::steady_clock::now();
  validate::SweepResult r = validate::sweep_header(opt);
  const auto indices =
      validate::shard_indices(r.grid_points, opt.shard.value_or(validate::Shard{1, 1}));
  validate_all(opt, indices, s);
  const bool measurer = is_measurer(s);
  int measurers = 0;
  const int mine = measurer ? 1 : 0;
  MPI_Allreduce(&mine, &measurers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (s.rank() == 0) {
    r = manage(opt, indices, std::move(r), s, measurers);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return r;
  }
  if (work_phase(opt, false) && opt.measure && measurer) work_phase(opt, true);
  return {};
}

#endif

}  // namespace poolsim::app::mpi
