#include "core/text_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/error.h"

namespace gpunfv {

namespace {

[[noreturn]] void fail_too_large(const std::string& path, const std::string& kind,
                                 const ReadLimit& limit) {
  const std::string size = limit.max_bytes % (1 << 20) == 0
                               ? std::to_string(limit.max_bytes >> 20) + " MiB"
                               : std::to_string(limit.max_bytes) + " bytes";
  const std::string what = kind + " holds more than " + size +
                           " (decompressed); settings: max_input_file_mb raises the limit";
  if (limit.named_at.empty()) throw ConfigError(path, what);
  throw ConfigError(limit.named_at, path + ": " + what);
}

}  // namespace

std::string read_text_file(const std::string& path, const std::string& kind,
                           const ReadLimit& limit) {
  errno = 0;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(path.c_str(), "rb"), gzclose);
  if (!in) {
    throw ConfigError(path, "cannot open " + kind + ": " +
                                (errno ? std::strerror(errno) : "out of memory"));
  }
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    int n = gzread(in.get(), chunk, sizeof chunk);
    if (n < 0) {
      int zerr = 0;
      const char* msg = gzerror(in.get(), &zerr);
      if (zerr == Z_ERRNO) msg = std::strerror(errno);
      throw ConfigError(path, "cannot read " + kind + ": " + msg);
    }
    if (n == 0) break;
    if (uint64_t(n) > limit.max_bytes - text.size()) fail_too_large(path, kind, limit);
    text.append(chunk, size_t(n));
  }
  return text;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> out;
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace gpunfv
