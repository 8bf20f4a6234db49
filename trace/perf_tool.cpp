// perf_tool.cpp: see perf_tool.hpp.
#include "trace/perf_tool.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace poolsim::trace {
namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile pid_t g_child = 0;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];

void on_signal(int s) {
  g_signal = s;
  if (g_child > 0) ::kill(g_child, s);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The end of perf's stderr, without its "'trace' not valid for ... events"
// notes (perf script -F ...,trace prints one per non-tracepoint event type).
std::string tail(const std::string& s, std::size_t n = 1200) {
  std::string kept, line;
  std::istringstream in(s);
  while (std::getline(in, line))
    if (line.find("not valid for") == std::string::npos) kept += line + "\n";
  return kept.size() <= n ? kept : "..." + kept.substr(kept.size() - n);
}

// fork + execvp with stdout to `out_fd` (-1: inherit) and stderr to a file.
pid_t spawn(const std::vector<std::string>& argv, int out_fd, const std::string& stderr_file) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (err < 0) throw PerfRefused("cannot create " + stderr_file + ": " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(err);
    throw PerfRefused(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    for (int s : kSignals) ::signal(s, SIG_DFL);
    if (out_fd >= 0) ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(err);
  g_child = pid;
  return pid;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  return status;
}

}  // namespace

SignalForwarder::SignalForwarder() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_old[i]);
}
SignalForwarder::~SignalForwarder() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_old[i], nullptr);
}
int SignalForwarder::pending() { return g_signal; }
void SignalForwarder::reraise(int s) {
  ::signal(s, SIG_DFL);
  ::raise(s);
  std::_Exit(128 + s);
}

std::string perf_binary() {
  if (const char* e = std::getenv("POOLSIM_PERF"); e && *e)
    return ::access(e, X_OK) == 0 ? std::string(e) : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    const std::string p = (dir.empty() ? "." : dir) + "/perf";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

bool is_perf_data(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in.gcount() == 8 && std::memcmp(magic, "PERFILE2", 8) == 0;
}

void ensure_tracefs() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists("/sys/kernel/tracing/events/sched", ec)) return;
  if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0 &&
      !fs::exists("/sys/kernel/tracing/events/sched", ec))
    throw PerfRefused(std::string("the sched tracepoints are not reachable and mounting tracefs "
                                  "failed (") +
                      std::strerror(errno) +
                      "): run as root, or `mount -t tracefs nodev /sys/kernel/tracing`");
}

int perf_sched_record(const std::vector<std::string>& command, const std::string& data,
                      const std::string& stderr_file) {
  const std::string perf = perf_binary();
  if (perf.empty())
    throw PerfRefused(
        "perf is not installed (or not on PATH): install linux-perf (Debian) or "
        "linux-tools (Ubuntu)");
  // What `perf sched record` runs (perf record -a -R -m 1024 -c 1, see
  // tools/perf/builtin-sched.c __cmd_record) with only the events the import
  // reads: its sched_stat_* events are left out (sched_stat_runtime fires on
  // every CLOCK_THREAD_CPUTIME_ID read and floods the buffer), and the
  // interrupt-context markers are added, so a timer's wake-up is not a hand-off,
  // and so is hrtimer_start: a sleep timer's expiry bounds a wake-up the
  // trace did not record (TraceReader::context); sched_process_exec tells a
  // launcher script's processes from the program it execs.
  std::vector<std::string> argv = {perf, "record", "-a", "-R", "-m", "1024", "-c", "1", "-o", data};
  for (const char* e :
       {"sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup_new",
        "sched:sched_process_fork", "sched:sched_process_exit", "sched:sched_process_exec",
        "irq:irq_handler_entry", "irq:irq_handler_exit", "irq:softirq_entry", "irq:softirq_exit",
        "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit", "timer:hrtimer_start"}) {
    argv.push_back("-e");
    argv.push_back(e);
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  const pid_t pid = spawn(argv, -1, stderr_file);
  const int status = reap(pid);
  if (SignalForwarder::pending()) throw Interrupted(SignalForwarder::pending());
  const std::string err = read_all(stderr_file);
  // perf 6.1: "Failed to collect '...' for the 'CMD' workload: No such file
  // or directory"; older perf: "Workload failed: ...".
  for (const char* what : {"workload: ", "Workload failed"})
    if (const auto p = err.find(what); p != std::string::npos) {
      const auto start = err.rfind('\n', p);
      const auto line = err.substr(start == std::string::npos ? 0 : start + 1);
      throw TraceError("cannot run the command `" + command.front() +
                       "`: " + line.substr(0, line.find('\n')));
    }
  std::error_code ec;
  const bool have = std::filesystem::exists(data, ec) && std::filesystem::file_size(data, ec) > 0;
  if (!have || (WIFEXITED(status) && WEXITSTATUS(status) == 127 && err.empty())) {
    const bool perm = err.find("ermission") != std::string::npos ||
                      err.find("perf_event_paranoid") != std::string::npos;
    throw PerfRefused(std::string(perm ? "perf has no permission to record scheduler events "
                                         "(run as root, or lower kernel.perf_event_paranoid)"
                                       : "perf sched record failed") +
                      ": " + tail(err));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// perf script's output is read from a pipe, line by line, into the reader.
void read_perf_data(const std::string& data, TraceReader& reader, const std::string& stderr_file) {
  const std::string perf = perf_binary();
  if (perf.empty())
    throw PerfRefused(data +
                      " is a perf.data file and reading it needs perf, which is not "
                      "installed; or give `perf script` text");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw PerfRefused(std::string("pipe: ") + std::strerror(errno));
  const std::vector<std::string> argv = {perf,   "script",
                                         "-i",   data,
                                         "--ns", "--show-lost-events",
                                         "-F",   "comm,pid,tid,cpu,time,event,trace"};
  pid_t pid = 0;
  try {
    pid = spawn(argv, fds[1], stderr_file);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  FILE* in = ::fdopen(fds[0], "r");
  std::string line;
  std::int64_t n = 0;
  bool complete = true;
  char buf[1 << 16];
  try {
    while (std::fgets(buf, sizeof buf, in)) {
      line += buf;
      if (line.empty() || line.back() != '\n') continue;
      line.pop_back();
      reader.feed(line, ++n);
      line.clear();
      if (SignalForwarder::pending()) break;
    }
    complete = line.empty();
  } catch (...) {
    ::kill(pid, SIGTERM);
    std::fclose(in);
    reap(pid);
    throw;
  }
  std::fclose(in);
  const int status = reap(pid);
  if (SignalForwarder::pending()) throw Interrupted(SignalForwarder::pending());
  const std::string err = read_all(stderr_file);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw TraceError(data +
                     ": perf script failed (a truncated or damaged perf.data?): " + tail(err));
  for (const char* bad : {"lost", "LOST"})
    if (const auto p = err.find(bad); p != std::string::npos) {
      const auto s = err.rfind('\n', p);
      const auto e = err.find('\n', p);
      throw TraceError(data + ": the recording lost events (" +
                       err.substr(s == std::string::npos ? 0 : s + 1,
                                  e == std::string::npos ? std::string::npos : e - s - 1) +
                       "): record again with a larger buffer (-m) or a shorter run");
    }
  for (const char* bad : {"data size field is 0", "truncated", "Corrupted", "corrupted"})
    if (err.find(bad) != std::string::npos)
      throw TraceError(data + ": perf.data is truncated or damaged: " + tail(err));
  reader.finish(complete, line);
}

}  // namespace poolsim::trace
