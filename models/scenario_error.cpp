// scenario_error.cpp: ScenarioError and did_you_mean (see the header).
#include "models/scenario_error.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "models/yaml_reader.hpp"

namespace poolsim {

ScenarioError::ScenarioError(std::string where, std::string key, std::string message)
    : std::runtime_error(where + ": " + (key.empty() ? std::string() : key + ": ") + message),
      where_(std::move(where)),
      key_(std::move(key)),
      message_(std::move(message)) {}

std::optional<std::string> did_you_mean(const std::string& word,
                                        const std::vector<std::string>& candidates) {
  // Close enough: at most a third of the word's letters wrong (at least one),
  // and not a complete rewrite. Ties go to the first candidate.
  const std::size_t limit = std::max<std::size_t>(1, (word.size() + 2) / 3);
  std::optional<std::string> best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t d = yaml::edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (best && best_d <= limit && best_d < word.size() && best_d < best->size()) return best;
  // Else a unique candidate the word abbreviates ("switch" -> "switch_cost").
  constexpr std::size_t kMinPrefix = 3;  // shorter prefixes match too much
  std::optional<std::string> prefix;
  if (word.size() < kMinPrefix) return std::nullopt;
  for (const auto& c : candidates)
    if (c.size() > word.size() && yaml::edit_distance(c.substr(0, word.size()), word) == 0) {
      if (prefix) return std::nullopt;
      prefix = c;
    }
  return prefix;
}

}  // namespace poolsim
