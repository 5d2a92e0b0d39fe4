// Helpers for chain tests: write a YAML configuration into a temporary folder.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace gpunfv::testing {

inline std::string source_dir() { return GPUNFV_SOURCE_DIR; }

// A fresh temporary folder per test.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gpunfv-test-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace gpunfv::testing
