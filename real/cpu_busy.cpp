// cpu_busy.cpp: see cpu_busy.hpp.
#include "real/cpu_busy.hpp"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace poolsim::real {

namespace {
struct Jiffies {
  double busy = 0, total = 0;
};

// The aggregate line: "cpu  user nice system idle iowait irq softirq steal ...".
std::optional<Jiffies> read_jiffies(const std::string& text) {
  std::istringstream in(text);
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  std::vector<double> v;
  double x = 0;
  while (v.size() < 8 && in >> x) v.push_back(x);
  if (v.size() < 5) return std::nullopt;
  Jiffies j;
  for (std::size_t i = 0; i < v.size(); ++i) {
    j.total += v[i];
    if (i != 3 && i != 4) j.busy += v[i];  // idle, iowait
  }
  return j;
}

std::string read_stat() {
  std::ifstream f("/proc/stat");
  std::string line;
  std::getline(f, line);
  return line;
}
}  // namespace

std::optional<double> busy_fraction(const std::string& stat_before, const std::string& stat_after) {
  const auto a = read_jiffies(stat_before), b = read_jiffies(stat_after);
  if (!a || !b || b->total <= a->total || b->busy < a->busy) return std::nullopt;
  return (b->busy - a->busy) / (b->total - a->total);
}

std::optional<double> sample_busy_fraction(double seconds) {
  const std::string before = read_stat();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return busy_fraction(before, read_stat());
}

}  // namespace poolsim::real
