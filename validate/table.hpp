// table.hpp: plain-text tables for the terminal.
//
// Debian packages no C++ table library (tabulate, libfort and
// variadic_table are not in the archive), and fmt already does the padding,
// so this is a few lines over fmt: columns sized to their widest cell,
// numbers right-aligned, a rule under the header. docs/cli.md says so.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace poolsim::validate {

class Table {
 public:
  explicit Table(std::vector<std::string> header, std::vector<bool> right_aligned = {});
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out) const;
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace poolsim::validate
