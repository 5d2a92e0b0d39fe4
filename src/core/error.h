// User-facing errors. ConfigError names the file and line of the bad input; the CLI prints it
// and exits with status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace gpunfv {

class ConfigError : public std::runtime_error {
 public:
  // `where` is "file:line" (or just "file"); the message reads "file:line: what".
  ConfigError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what) {}
};

inline std::string where(const std::string& file, long line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

}  // namespace gpunfv
