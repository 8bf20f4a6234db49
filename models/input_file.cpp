// input_file.cpp: read_input (see the header).
#include "models/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace poolsim::loader {

namespace fs = std::filesystem;

std::optional<std::string> read_input(const fs::path& p, std::int64_t max_bytes,
                                      std::string& error) {
  const std::string name = p.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      error = "no such file " + name;
    else if (err == ELOOP)
      error = name + " is a symbolic link loop (too many levels of symbolic links)";
    else
      error = "cannot open " + name + ": " + std::strerror(err);
    return std::nullopt;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = "cannot read " + name + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    error = name + " is " + kind + ", expected a regular file";
    return std::nullopt;
  }
  if (st.st_size > max_bytes) {
    error = name + " is " + std::to_string(st.st_size) + " bytes, more than the maximum of " +
            std::to_string(max_bytes >> 20) + " MiB for this input";
    return std::nullopt;
  }
  ::fcntl(fd, F_SETFL, 0);  // a regular file: plain blocking reads
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  // Read at most max_bytes even if the file grows while being read.
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = "cannot read " + name + ": " + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace poolsim::loader
