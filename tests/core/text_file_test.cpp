// read_text_file's limit on the bytes one input file may hold, decompressed.
#include "core/text_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "core/error.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::temp_dir;
using testing::write_file;

std::string write_gz(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb9");
  gzwrite(out, text.data(), unsigned(text.size()));
  gzclose(out);
  return path;
}

std::string read_error(const std::string& path, const ReadLimit& limit) {
  try {
    read_text_file(path, "route file", limit);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(TextFile, ReadsUpToTheLimitAndNoFurther) {
  auto dir = temp_dir("text-file-limit");
  const std::string path = write_file(dir / "r.txt", std::string(1000, 'x'));
  EXPECT_EQ(read_text_file(path, "route file", ReadLimit{1000, ""}).size(), 1000u);
  EXPECT_EQ(read_error(path, ReadLimit{999, ""}),
            path + ": route file holds more than 999 bytes (decompressed); settings: "
                   "max_input_file_mb raises the limit");
}

TEST(TextFile, ErrorLeadsWithTheConfigLineThatNamedTheFile) {
  auto dir = temp_dir("text-file-named-at");
  const std::string path = write_file(dir / "r.txt", std::string(3 << 20, '\n'));
  const std::string m = read_error(path, ReadLimit{2 << 20, "c.yaml:7"});
  EXPECT_EQ(m.rfind("c.yaml:7: " + path + ": route file holds more than 2 MiB", 0), 0u) << m;
}

// 64 MiB of zeros compresses to ~64 KiB: the limit applies to what decompression yields.
TEST(TextFile, GzipBombStopsAtTheLimit) {
  auto dir = temp_dir("text-file-bomb");
  const std::string path = write_gz((dir / "bomb.gz").string(), std::string(64 << 20, '\0'));
  EXPECT_NE(read_error(path, ReadLimit{1 << 20, ""}).find("holds more than 1 MiB"), std::string::npos);
}

// An endless input ends in the error, not in std::bad_alloc.
TEST(TextFile, EndlessFileStopsAtTheLimit) {
  EXPECT_EQ(read_error("/dev/zero", ReadLimit{1 << 20, "c.yaml:3"}).rfind("c.yaml:3: /dev/zero: ", 0), 0u);
}

}  // namespace
}  // namespace gpunfv
