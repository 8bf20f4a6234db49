// worker_pool.cpp: see worker_pool.hpp.
#include "validate/worker_pool.hpp"

#include <fmt/format.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace poolsim::validate {

std::size_t run_workers(std::size_t workers, const std::function<void()>& body,
                        const std::function<void(const std::string&)>& on_note) {
  std::vector<std::thread> threads;
  if (workers > 1) {
    try {
      threads.reserve(workers - 1);
      for (std::size_t k = 1; k < workers; ++k) threads.emplace_back(body);
    } catch (const std::system_error& e) {
      if (on_note)
        on_note(fmt::format("could start only {} of {} workers ({}); continuing with {}",
                            threads.size() + 1, workers, e.what(), threads.size() + 1));
    } catch (const std::bad_alloc&) {
      if (on_note)
        on_note(fmt::format("could start only {} of {} workers (out of memory); continuing with {}",
                            threads.size() + 1, workers, threads.size() + 1));
    }
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
