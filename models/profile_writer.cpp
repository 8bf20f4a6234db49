// profile_writer.cpp: machine_profile_yaml (see the header).
#include "models/profile_writer.hpp"

#include <yaml-cpp/yaml.h>

#include <sstream>

#include "models/machine_fields.hpp"

namespace poolsim {

std::string machine_profile_yaml(const MachineProfile& m, const std::string& comment) {
  std::string out;
  std::istringstream lines(comment);
  std::string line;
  while (std::getline(lines, line)) out += line.empty() ? "#\n" : "# " + line + "\n";
  YAML::Emitter name;
  name << m.name;
  out += "name: " + std::string(name.c_str()) + "\n";
  for (const MachineField& f : kMachineFields)
    out += std::string(f.name) + ": " + machine_field_yaml(f, m) + "\n";
  return out;
}

}  // namespace poolsim
