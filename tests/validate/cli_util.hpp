// cli_util.hpp: running the poolsim binary (and shell lines) from the
// validate layer's end-to-end tests, under the hostile-input contract's
// bounds, and their temporary directories.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace poolsim::test {

struct Result {
  int exit_code = -1;
  std::string out;  // stdout, with stderr where the command line sends it there
};

// Runs a command line through popen (sh), capturing its stdout.
inline Result shell(const std::string& cmd) {
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The poolsim binary with `args`; stderr joins stdout unless `both` is false
// (then it is dropped).
inline Result run(const std::string& args, bool both = true) {
  return shell(std::string(POOLSIM_BINARY) + " " + args + (both ? " 2>&1" : " 2>/dev/null"));
}

// A bash line (for $'..' quoting and ulimit), stdout and stderr together.
inline Result run_shell(const std::string& line) {
  std::string quoted;
  for (char c : line) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return shell("bash -c '" + quoted + "' 2>&1");
}

// A directory under /tmp removed with everything in it at the end of scope.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "poolsim-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // The path of `name` in it, written with `text` when that is not empty.
  std::string file(const std::string& name, const std::string& text = {}) const {
    const auto p = (path_ / name).string();
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The contract's bounds: 5 s and 1 GiB. `seconds` is larger only for a run
// whose point is to use most of its 5 s in a Release build (the event
// budget), which an instrumented build runs several times slower.
inline Result bounded(const std::string& args, int seconds = 5) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer reserves terabytes of shadow memory at start, which no
  // `ulimit -v` admits: sanitizer builds check the answers and the time
  // bound; the memory bound is checked by the Release build.
  return run_shell("timeout " + std::to_string(seconds) + " " + std::string(POOLSIM_BINARY) + " " +
                   args);
#else
  return run_shell("ulimit -v 1048576; timeout 5 " + std::string(POOLSIM_BINARY) + " " + args);
#endif
}

// The hostile-input tests' base scenario: Poisson 1000/s, 200 tasks of 1 ms
// on a 4-thread pool.
inline const char* const kPoissonBase =
    "name: base\n"
    "seed: 1\n"
    "workload:\n"
    "  arrival: {kind: poisson, rate: 1000/s, count: 200}\n"
    "  task: [{cpu: 1ms}]\n"
    "backend: {kind: pool, threads: 4}\n";

// The first line of the output (the error message, without CLI11's hint).
inline std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
// The first line that starts with "poolsim:" (after a table on stdout).
inline std::string error_line(const std::string& s) {
  const auto at = s.rfind("\npoolsim:");
  return first_line(s.compare(0, 8, "poolsim:") == 0 || at == std::string::npos ? s
                                                                                : s.substr(at + 1));
}

}  // namespace poolsim::test
