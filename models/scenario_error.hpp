// scenario_error.hpp: the loader's one error type, and did-you-mean.
//
// Every problem the loader finds in a scenario, a machine profile or an
// override is a ScenarioError carrying where it is ("file:line:col", or the
// "--set key.path=value" that caused it), the key path ("backend.threads") and
// what was expected. The CLI maps it to exit code 2. did_you_mean picks the
// suggestion of "unknown key 'x'; did you mean 'y'?" messages.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace poolsim {

class ScenarioError : public std::runtime_error {
 public:
  // `where` is "file:line:col" (or "--set backend.threads=x"); `key` the key
  // path; `message` what was expected. what() is "where: key: message".
  ScenarioError(std::string where, std::string key, std::string message);
  const std::string& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  std::string where_, key_, message_;
};

// The closest candidate by edit distance, if it is close enough to suggest.
std::optional<std::string> did_you_mean(const std::string& word,
                                        const std::vector<std::string>& candidates);

}  // namespace poolsim
