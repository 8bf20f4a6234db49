// worker_pool.cpp: see worker_pool.hpp.
#include "validate/worker_pool.hpp"

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace poolsim::validate {

std::size_t run_workers(std::size_t workers, const std::function<void()>& body,
                        const std::function<void(const std::string&)>& on_note) {
  // The started threads wait at a gate until creation is over: when it
  // stopped at the system's limit (the address space of `ulimit -v` is then
  // full of their stacks), a quarter of them leave without running, so that
  // the rest have room for what running needs (glibc's malloc arenas, its
  // TLS destructor list: a full address space aborted the process in
  // __cxa_thread_atexit_impl, "failed to register TLS destructor").
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool open = false;
  std::size_t keep = 0;  // threads [0, keep) run the body once open
  std::vector<std::thread> threads;
  const auto worker = [&](std::size_t k) {
    {
      std::unique_lock lk(gate_mu);
      gate_cv.wait(lk, [&] { return open; });
      if (k >= keep) return;
    }
    body();
  };
  std::string failure;
  if (workers > 1) {
    try {
      threads.reserve(workers - 1);
      for (std::size_t k = 0; k + 1 < workers; ++k) threads.emplace_back(worker, k);
    } catch (const std::system_error& e) {
      failure = e.what();
    } catch (const std::bad_alloc&) {
      failure = "out of memory";
    }
  }
  keep = failure.empty() ? threads.size() : threads.size() - threads.size() / 4;
  {
    const std::lock_guard lk(gate_mu);
    open = true;
  }
  gate_cv.notify_all();
  if (!failure.empty()) {
    const std::size_t started = threads.size() + 1;  // the caller is a worker too
    for (std::size_t k = keep; k < threads.size(); ++k) threads[k].join();
    threads.resize(keep);
    if (on_note)
      on_note(fmt::format("could start only {} of {} workers ({}); continuing with {}", started,
                          workers, failure, keep + 1));
  }
  body();
  for (auto& t : threads) t.join();
  return threads.size() + 1;
}

void for_each_index(int n, std::size_t workers, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::mutex failed_mu;
  std::exception_ptr failed;  // the first index that threw
  run_workers(workers, [&] {
    for (int i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard lock(failed_mu);
        if (!failed) failed = std::current_exception();
        next = n;  // hand out no more
      }
    }
  });
  if (failed) std::rethrow_exception(failed);
}

}  // namespace poolsim::validate
