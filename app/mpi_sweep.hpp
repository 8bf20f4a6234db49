// mpi_sweep.hpp: `mpirun -n R poolsim sweep ...`: the grid's points spread
// over R MPI ranks by a manager/worker scheme, gathered on rank 0, which
// writes the outputs a single-process sweep writes.
//
// Mechanism (app/mpi_sweep.cpp):
//   - Detection: MPI is initialised only when an MPI launcher started this
//     process (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE in the
//     environment), never as a singleton: Open MPI's singleton init starts a
//     helper daemon, which is slow and fails in some containers. Without a
//     launcher, or in a build without MPI (POOLSIM_WITH_MPI=OFF, or no MPI
//     found), sweep runs in one process as before.
//   - Validation: every rank loads (validates) a strided share of the points
//     before anything runs; the lowest failing index is agreed
//     (MPI_Allreduce MIN) and every rank reports that point's error, so the
//     message is the one a single process gives.
//   - Distribution: rank 0 is the manager and runs no point; each worker asks
//     for work, runs one point, sends its result (the shard file's point
//     JSON, sweep_part.hpp) and gets the next index, so a slow point holds
//     only its own rank. Results are stored by grid index, so the output does
//     not depend on which rank ran what. A failed point is reported as its
//     exit code and message; the manager hands out no more work and rank 0
//     reports the lowest failing index's error.
//   - --measure: after all points are simulated, measured runs go only to one
//     rank per host (ranks grouped by MPI_Comm_split_type SHARED; the lowest
//     non-manager rank of each group measures), since measured runs must not
//     share CPUs. Every waiting rank polls with a 1 ms sleep instead of Open
//     MPI's busy-waiting receive, so idle ranks leave the CPUs alone.
//   - The grid cap applies per process: a distributed grid may hold
//     kMaxGridPoints x (R - 1) points (grid_cap, sweep_grid.hpp).
//
// Left out: threads inside a rank (one point at a time per rank; start more
// ranks instead), fault tolerance (a lost rank ends the job, as mpirun does).
#pragma once

#include <cstddef>
#include <memory>

#include "validate/sweep.hpp"

namespace poolsim::app::mpi {

// Built with MPI and started by an MPI launcher.
bool launched();
// Built with MPI at all (for --version/--help text and docs).
bool built_in();

// MPI_Init_thread on construction, MPI_Finalize on destruction; one per process.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

// Runs the sweep over the session's ranks (size >= 2). Rank 0 returns the
// whole result (in grid order, like run_sweep); the other ranks return an
// empty one. Errors of the input are thrown on every rank; errors of a point
// on rank 0 only (std::invalid_argument for bad input, else Refused).
validate::SweepResult run_distributed(const validate::SweepOptions& opt, Session& s);

}  // namespace poolsim::app::mpi
