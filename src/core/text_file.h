// Line-oriented text files (route files, firewall rule files): read whole through zlib, so a
// file may be gzipped or plain (zlib passes a plain file through unchanged), then walked line by
// line with the 1-based line numbers error messages name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpunfv {

// The whole (decompressed) file. `kind` names it in errors ("route file", "rule file"):
// ConfigError "PATH: cannot open KIND: reason" or "PATH: cannot read KIND: reason".
std::string read_text_file(const std::string& path, const std::string& kind);

// Removes a '#' comment, then splits what is left at spaces, tabs and carriage returns.
std::vector<std::string_view> split_fields(std::string_view line);

// Calls fn(line_number, line) for every line of `text` (without its '\n'), numbered from 1.
template <typename Fn>
void for_each_line(std::string_view text, Fn fn) {
  long line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    fn(++line_no, line);
  }
}

// Calls fn(line_number, fields) for every line that has fields (see split_fields).
template <typename Fn>
void for_each_field_line(std::string_view text, Fn fn) {
  for_each_line(text, [&](long line_no, std::string_view line) {
    std::vector<std::string_view> fields = split_fields(line);
    if (!fields.empty()) fn(line_no, fields);
  });
}

}  // namespace gpunfv
