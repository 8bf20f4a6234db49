// calibrate_condvar.cpp: whether this C library's pthread_cond_signal waits
// for a waiter it woke earlier to run (machine field cv_quiesce;
// docs/calibration.md, docs/simulator.md "glibc's condition variable").
//
// glibc 2.25-2.40 (nptl/pthread_cond_common.c,
// __condvar_quiesce_and_switch_g1): a signal that finds every waiter of the
// group G1 signalled and a waiter in G2 first waits until no G1 waiter holds
// its group reference, which a waiter keeps from before it blocks until it
// runs again after its wake-up. glibc 2.41 removed the wait. The experiment
// makes that case and keeps the woken waiter off every CPU: waiter A, in a
// forked child sharing the condition variable (PTHREAD_PROCESS_SHARED), is
// stopped (SIGSTOP) while it waits; a first signal wakes it (it cannot run);
// waiter B, a thread of this process, then waits in the next group; a second
// signal is timed while a helper thread continues the child (SIGCONT) after
// kHold. A C library with the wait returns from it only then (>= kHold / 2),
// one without returns at once. Everything is undone on every path: the child
// is continued, released and reaped, B woken and joined.
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <new>
#include <stdexcept>
#include <thread>

#include "real/calibrate_experiments.hpp"

namespace poolsim::real::calib {

namespace {

using namespace std::chrono_literals;
constexpr auto kHold = 20ms;  // how long the stopped waiter stays stopped

struct Shared {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int waiting;   // waiters inside pthread_cond_wait (under mu)
  int released;  // set (under mu) to let the waiters leave
};

// Waits on the shared condition variable until released.
void wait_released(Shared& s) {
  pthread_mutex_lock(&s.mu);
  ++s.waiting;
  while (s.released == 0) pthread_cond_wait(&s.cv, &s.mu);
  --s.waiting;
  pthread_mutex_unlock(&s.mu);
}

int waiting(Shared& s) {
  pthread_mutex_lock(&s.mu);
  const int n = s.waiting;
  pthread_mutex_unlock(&s.mu);
  return n;
}

// Until `n` waiters are inside the wait (each has released the mutex in
// pthread_cond_wait, so it has blocked or is about to), then a little more
// so that it has.
bool await_waiters(Shared& s, int n) {
  for (int i = 0; i < 2000 && waiting(s) < n; ++i) std::this_thread::sleep_for(100us);
  std::this_thread::sleep_for(5ms);
  return waiting(s) >= n;
}

// The time the second signal took, in seconds; throws if the set-up failed.
double second_signal_time(Shared& s) {
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("cv_quiesce: fork failed");
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never left behind, even stopped
    wait_released(s);
    ::_exit(0);
  }
  std::thread b;
  bool stopped = false;
  const auto undo = [&] {
    if (stopped) ::kill(child, SIGCONT);
    pthread_mutex_lock(&s.mu);
    s.released = 1;
    pthread_mutex_unlock(&s.mu);
    pthread_cond_broadcast(&s.cv);
    if (b.joinable()) b.join();
    int status = 0;
    ::waitpid(child, &status, 0);
  };
  try {
    if (!await_waiters(s, 1)) throw std::runtime_error("cv_quiesce: the child never waited");
    if (::kill(child, SIGSTOP) != 0) throw std::runtime_error("cv_quiesce: SIGSTOP failed");
    stopped = true;
    int status = 0;
    if (::waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status))
      throw std::runtime_error("cv_quiesce: the child did not stop");
    pthread_cond_signal(&s.cv);  // wakes A, which cannot run
    b = std::thread([&s] { wait_released(s); });
    if (!await_waiters(s, 2))
      throw std::runtime_error("cv_quiesce: the second waiter never waited");
    std::thread cont([child] {
      std::this_thread::sleep_for(kHold);
      ::kill(child, SIGCONT);
    });
    const auto t0 = std::chrono::steady_clock::now();
    pthread_cond_signal(&s.cv);
    const auto t1 = std::chrono::steady_clock::now();
    cont.join();
    stopped = false;
    undo();
    return std::chrono::duration<double>(t1 - t0).count();
  } catch (...) {
    undo();
    throw;
  }
}

}  // namespace

namespace {
// The shared page: a process-shared mutex and condition variable, torn down
// and unmapped on every path.
class SharedPage {
 public:
  SharedPage() {
    mem_ =
        ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem_ == MAP_FAILED) throw std::runtime_error("cv_quiesce: mmap of the shared page failed");
    s_ = new (mem_) Shared{};
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&s_->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_cond_init(&s_->cv, &ca);
    pthread_condattr_destroy(&ca);
  }
  ~SharedPage() {
    pthread_cond_destroy(&s_->cv);
    pthread_mutex_destroy(&s_->mu);
    ::munmap(mem_, sizeof(Shared));
  }
  SharedPage(const SharedPage&) = delete;
  SharedPage& operator=(const SharedPage&) = delete;
  Shared& shared() { return *s_; }

 private:
  void* mem_ = nullptr;
  Shared* s_ = nullptr;
};
}  // namespace

Measurement measure_cv_quiesce() {
  SharedPage page;
  const double took = second_signal_time(page.shared());
  const bool waits = took >= std::chrono::duration<double>(kHold).count() / 2;
  return summarize("cv_quiesce", {waits ? 1.0 : 0.0},
                   fmt::format("a signal with a woken waiter kept stopped and one waiting: took "
                               "{:.1f} ms, {}",
                               took * 1e3, waits ? "so it waited" : "no wait"));
}

}  // namespace poolsim::real::calib
