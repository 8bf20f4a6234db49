// neighbour.cpp: the noisy neighbour's spinning process (see the header).
#include "real/neighbour.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "real/backend.hpp"

namespace poolsim::real {

namespace {

[[noreturn]] void spin() {
  for (;;) asm volatile("" ::: "memory");
}

// Thread i of the neighbour spins on the i-th of the CPUs it is given (the
// runner's, before a cpuset confines the runner: the neighbour is another
// container), as the model has them sit (thread k on machine CPU k mod
// cores: sim/group_share.hpp; the same CPUs when the runner may use every
// CPU). Left to the kernel, a new thread on this VM starts on its
// creator's CPU (fork packing, docs/simulator.md "New threads' CPU") and
// two spinners shared one CPU until the load balancer moved one: a run of
// 120 ms on CPU 0 then got 85% of it instead of a third (runner.neighbour
// under TSan, 22:15 UTC).
void pin_to(int cpu) {
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  (void)::sched_setaffinity(0, sizeof one, &one);
}

[[noreturn]] void neighbour_main(const CpuCgroup& group, int threads, const std::vector<int>& cpus,
                                 int fd, pid_t parent) {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(0);
  const std::string err = group.join_self();
  if (!err.empty()) {
    const std::string msg = "cannot move the neighbour into its cgroup: " + err;
    (void)!::write(fd, msg.data(), msg.size());
    _exit(3);
  }
  // Thread i on cpus[i mod n]; unpinned (-1) if the mask could not be read.
  const auto nth = [&cpus](int i) {
    return cpus.empty() ? -1 : cpus[static_cast<std::size_t>(i) % cpus.size()];
  };
  try {
    for (int i = 1; i < threads; ++i)
      std::thread([cpu = nth(i)] {
        pin_to(cpu);
        spin();
      }).detach();
  } catch (const std::exception& e) {
    const std::string msg = std::string("cannot start the neighbour's threads: ") + e.what();
    (void)!::write(fd, msg.data(), msg.size());
    _exit(3);
  }
  pin_to(nth(0));
  (void)!::write(fd, "k", 1);
  ::close(fd);
  spin();
}

}  // namespace

NeighbourProcess::NeighbourProcess(const CpuCgroup& group, int threads,
                                   const std::vector<int>& cpus) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw MachineRefused(std::string("pipe2 for the neighbour: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw MachineRefused(std::string("fork of the neighbour failed: ") + std::strerror(e));
  }
  if (pid_ == 0) {
    ::close(fds[0]);
    neighbour_main(group, threads, cpus, fds[1], parent);
  }
  ::close(fds[1]);
  std::string reply;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
    if (reply == "k") break;
  }
  ::close(fds[0]);
  if (reply != "k") {
    stop();
    throw MachineRefused(reply.empty() ? "the neighbour process died before it started" : reply);
  }
}

void NeighbourProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

}  // namespace poolsim::real
