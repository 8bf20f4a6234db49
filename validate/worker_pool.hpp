// worker_pool.hpp: run one loop body on up to N threads, degrading to fewer
// when the system will not create more.
//
// Mechanism: the calling thread is worker 0 and N - 1 std::threads are
// started; each runs `body`, which is expected to draw work from a shared
// counter until none is left, so any number of workers >= 1 finishes the
// same work. A thread that cannot be created (std::system_error: EAGAIN
// under `ulimit -u`, ENOMEM under `ulimit -v` for its stack) is not an
// error: creation stops there, `on_note` is told how many run, and the
// workers already started (plus the caller) carry on. Every started thread
// is joined before run_workers returns, also when `body` throws (the body's
// exceptions are the caller's business: it must catch them itself).
//
// Left out: growing back when resources free up, per-worker stack sizes.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace poolsim::validate {

// Returns the number of workers that ran (>= 1).
std::size_t run_workers(std::size_t workers, const std::function<void()>& body,
                        const std::function<void(const std::string&)>& on_note = {});

// Calls fn(i) once for every i in [0, n), on up to `workers` threads
// (run_workers), each drawing the next index from a shared counter. The
// first exception fn throws stops the handing out of indices and is
// rethrown here once every worker has finished the index it was running.
void for_each_index(int n, std::size_t workers, const std::function<void(int)>& fn);

}  // namespace poolsim::validate
