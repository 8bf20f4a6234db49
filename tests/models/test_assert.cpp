// POOLSIM_ASSERT (models/assert.hpp): in a build without NDEBUG (Debug, and
// the sanitizer builds of scripts/test) a broken invariant prints
// file:line, the condition and the message, then aborts; with NDEBUG it is
// compiled out. The failing check runs in a forked child.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <string>

#include "models/assert.hpp"

namespace {

// Runs a failing POOLSIM_ASSERT in a child; returns its stderr and how it ended.
std::string failing_assert_in_child(int& status) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    [[maybe_unused]] const int live = 3, max_threads = 2;
    POOLSIM_ASSERT(live <= max_threads, "more live workers than max_threads");
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  waitpid(pid, &status, 0);
  return out;
}

}  // namespace

TEST_CASE("assert: POOLSIM_ASSERT names file:line and the condition and aborts unless NDEBUG",
          "[assert]") {
  int status = 0;
  const std::string err = failing_assert_in_child(status);
#ifdef NDEBUG
  CHECK(WIFEXITED(status));
  CHECK(err.empty());
#else
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK_THAT(err, Catch::Contains("test_assert.cpp:"));
  CHECK_THAT(err,
             Catch::Contains(
                 "invariant failed: live <= max_threads (more live workers than max_threads)"));
#endif
}
