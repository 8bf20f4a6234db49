// yaml_document.cpp: parse_yaml and its checks before yaml-cpp (see the
// header).
#include "models/yaml_document.hpp"

#include <yaml-cpp/eventhandler.h>

#include <cstddef>
#include <optional>
#include <sstream>
#include <vector>

#include "models/scenario.hpp"
#include "models/scenario_error.hpp"

namespace poolsim::loader {

std::string location(const std::string& display, int line, int col) {
  return display + ":" + std::to_string(line) + ":" + std::to_string(col);
}

namespace {

// Refuses nesting deeper than kMaxYamlNesting before yaml-cpp (which parses
// and destroys nodes recursively) sees the text. The depth counted is an upper
// bound of the YAML depth: the open indentation levels of block lines, plus
// the `- ` and `key: ` items opening on the same line, plus open brackets of
// flow collections. Quoted strings and comments are skipped.
void check_nesting(const std::string& text, const std::string& display) {
  std::vector<std::size_t> indents;  // open block indentation levels
  int flow = 0;                      // open [ and { (they may span lines)
  int line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t col = 0;
    while (i < text.size() && text[i] == ' ') ++i, ++col;
    const bool blank = i >= text.size() || text[i] == '\n' || text[i] == '#' || text[i] == '\r';
    int depth = 0;
    if (!blank && flow == 0) {
      while (!indents.empty() && indents.back() > col) indents.pop_back();
      if (indents.empty() || indents.back() < col) indents.push_back(col);
      depth = static_cast<int>(indents.size());
    }
    char quote = 0;
    bool item_start = true;  // at the start of a line's content or after "- "
    for (; i < text.size() && text[i] != '\n'; ++i) {
      const char c = text[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
        while (i < text.size() && text[i] != '\n') ++i;
        break;
      }
      if ((c == '"' || c == '\'') && item_start) {
        quote = c;
        continue;
      }
      if (c == '[' || c == '{') ++flow;
      if ((c == ']' || c == '}') && flow > 0) --flow;
      const bool space_after = i + 1 >= text.size() || text[i + 1] == ' ' || text[i + 1] == '\n';
      if ((c == '-' || c == ':' || c == '?') && space_after) ++depth;
      item_start = c == ' ' || c == '-' || c == '[' || c == '{' || c == ',' || c == ':';
      if (depth + flow > kMaxYamlNesting)
        throw ScenarioError(location(display, line, static_cast<int>(col) + 1), "",
                            "the YAML nests deeper than " + std::to_string(kMaxYamlNesting) +
                                " levels (indentation steps plus brackets); a scenario needs "
                                "fewer than 10");
    }
    ++i;
    ++line;
  }
}

// A tab in a line's indentation: yaml-cpp reports it as some other syntax
// error ("illegal map value"), so the loader names the real mistake.
std::optional<std::string> tab_indent(const std::string& text, const std::string& display) {
  int line = 1;
  bool at_start = true;
  int col = 1;
  for (char c : text) {
    if (c == '\n') {
      ++line;
      col = 1;
      at_start = true;
      continue;
    }
    if (at_start && c == '\t') return location(display, line, col);
    if (c != ' ') at_start = false;
    ++col;
  }
  return std::nullopt;
}

// Counts the documents of a YAML text without building nodes. yaml-cpp 0.7
// loops forever (LoadAll keeps returning empty documents) on a stray ',' at
// the top level, so a document that starts where the previous one started is
// a syntax error at that place, not another document. Found by fuzz_scenario.
struct DocumentCounter : YAML::EventHandler {
  int documents = 0;
  std::optional<YAML::Mark> stuck;  // where the parser stopped making progress
  std::size_t last_start = std::string::npos;
  void OnDocumentStart(const YAML::Mark& m) override {
    if (documents > 0 && static_cast<std::size_t>(m.pos) == last_start) stuck = m;
    last_start = static_cast<std::size_t>(m.pos);
    ++documents;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& display) {
  check_nesting(text, display);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentCounter counter;
    // Every document consumes text, so this ends; a stuck parser stops it.
    while (!counter.stuck && parser.HandleNextDocument(counter)) {
    }
    if (counter.stuck) {
      const auto pos = static_cast<std::size_t>(counter.stuck->pos);
      const char c = pos < text.size() ? text[pos] : ' ';
      throw ScenarioError(location(display, counter.stuck->line + 1, counter.stuck->column + 1), "",
                          "YAML syntax error: unexpected '" + std::string(1, c) +
                              "' (a ',' belongs inside [...] or {...})");
    }
    if (counter.documents > 1)
      throw ScenarioError(display, "",
                          "expected one YAML document, found " + std::to_string(counter.documents) +
                              " (separated by ---)");
    if (counter.documents == 0) return YAML::Node();
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    if (auto tab = tab_indent(text, display))
      throw ScenarioError(*tab, "",
                          "YAML indents with spaces, not tabs (a tab starts this line; yaml-cpp "
                          "says: " +
                              e.msg + ")");
    const std::string where =
        e.mark.is_null() ? display : location(display, e.mark.line + 1, e.mark.column + 1);
    throw ScenarioError(where, "", "YAML syntax error: " + e.msg);
  }
}

}  // namespace poolsim::loader
