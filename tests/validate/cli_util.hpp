// cli_util.hpp: running the poolsim binary (and shell lines) from the
// validate layer's end-to-end tests, and their temporary directories.
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

}  // namespace poolsim::test
