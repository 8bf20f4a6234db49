// profile_writer.hpp: a machine profile as YAML (what `poolsim calibrate`
// writes).
//
// The output is a comment header, `name:`, then one line per field of the
// machine-field table (models/machine_fields.hpp) in table order, each value
// written so that the profile loader reads back exactly the same profile.
#pragma once

#include <string>

#include "models/machine.hpp"

namespace poolsim {

// Write a profile as YAML; each line of `comment` becomes a '#' line on top.
std::string machine_profile_yaml(const MachineProfile& m, const std::string& comment = {});

}  // namespace poolsim
