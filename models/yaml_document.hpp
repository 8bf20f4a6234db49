// yaml_document.hpp: YAML text -> one yaml-cpp tree, or a located ScenarioError.
//
// Before yaml-cpp builds nodes: nesting is bounded (yaml-cpp parses and
// destroys nodes recursively, so deep nesting would overflow the stack), and
// the documents are counted with an event handler (multi-document files are
// refused; a parser that stops making progress, as yaml-cpp 0.7 does on a
// stray top-level ',', is a syntax error at that place). A parser exception
// becomes a ScenarioError at its mark; a tab in the indentation is named as
// such instead of yaml-cpp's "illegal map value".
//
// Left out: YAML anchors/merge keys get no special treatment beyond what
// yaml-cpp does.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace poolsim::loader {

// "display:line:col" (1-based line and column).
std::string location(const std::string& display, int line, int col);

// Parses `text` (named `display` in errors); an empty text is a null node.
YAML::Node parse_yaml(const std::string& text, const std::string& display);

}  // namespace poolsim::loader
