// Line-oriented text files (route files, firewall rule files): read whole through zlib, so a
// file may be gzipped or plain (zlib passes a plain file through unchanged), then walked line by
// line with the 1-based line numbers error messages name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpunfv {

// settings.max_input_file_mb's default: far above any bundled rule or route set (the largest,
// decompressed, is a few MiB), far below what a gzip bomb or /dev/zero would make us hold.
inline constexpr uint64_t kDefaultMaxInputFileMb = 256;

// How many bytes of one file may be read (after decompression), and the config line that
// named the file ("config.yaml:12"; empty: none), which the error then leads with.
struct ReadLimit {
  uint64_t max_bytes = kDefaultMaxInputFileMb << 20;
  std::string named_at;
};

// The whole (decompressed) file. `kind` names it in errors ("route file", "rule file"):
// ConfigError "PATH: cannot open KIND: reason" or "PATH: cannot read KIND: reason", and for a
// file holding more than limit.max_bytes "NAMED_AT: PATH: KIND holds more than N MiB ...",
// raised as soon as the reading passes the limit (a gzip bomb is never expanded whole).
std::string read_text_file(const std::string& path, const std::string& kind,
                           const ReadLimit& limit = {});

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
