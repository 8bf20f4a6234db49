#include "validate/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <sstream>

namespace poolsim::validate {
namespace {
// Display width of a UTF-8 string (counts code points, enough for our cells).
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}
}  // namespace

Table::Table(std::vector<std::string> header, std::vector<bool> right_aligned)
    : header_(std::move(header)), right_(std::move(right_aligned)) {
  right_.resize(header_.size(), false);
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> w(header_.size());
  for (std::size_t i = 0; i < header_.size(); ++i) w[i] = width(header_[i]);
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string pad(w[i] - width(cells[i]), ' ');
      if (i) s += "  ";
      s += right_[i] ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : "");
    }
    out << s << '\n';
  };
  line(header_);
  std::size_t total = 0;
  for (auto x : w) total += x;
  out << std::string(total + 2 * (w.empty() ? 0 : w.size() - 1), '-') << '\n';
  for (const auto& r : rows_) line(r);
}

std::string Table::str() const {
  std::ostringstream o;
  print(o);
  return o.str();
}

}  // namespace poolsim::validate
