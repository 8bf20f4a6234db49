// scenario_overrides.hpp: `--set key.path=value`, --machine and --seed, applied
// to the YAML tree before it is read.
//
// Each "key.path=value" (keys, and [N] list indices) parses `value` as a YAML
// node (scalar, flow map or flow list) and stores it at the path, creating
// missing maps (and a new list's element [0]); then --machine (a relative path
// made absolute against the working directory) and --seed. The Source records
// each overridden path, so a later error inside it names the override instead
// of a file position: overrides are checked exactly like the file's own keys.
#pragma once

#include <yaml-cpp/yaml.h>

#include "models/scenario_loader.hpp"
#include "models/yaml_reader.hpp"

namespace poolsim::loader {

// Applies opts.sets in order, then opts.machine and opts.seed, to `root`.
void apply_overrides(YAML::Node& root, yaml::Source& src, const LoadOptions& opts);

}  // namespace poolsim::loader
