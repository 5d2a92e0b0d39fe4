// What NF code may reach, checked on the sources of every NF folder under src/nf/: the GPU only
// through gpu/gpu_calls.h (an NF in an NF process has no GPU of its own: the Manager performs
// those calls for it), never the CUDA runtime or a <<<>>> launch; its own kernels only through
// launch_nf_kernel(), whose compile-time check admits no parameter but the NF's NfPackets and
// views (nf/nf_kernel.h); and memory only through its views, never framework_data() or
// framework_view() or framework_finish(), nor NfPackets but through packets_at() (isoPointer).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

namespace fs = std::filesystem;

// Every folder of src/nf/ holds one NF (nf/nf_registry.h) but nf_process/, the framework's NF
// processes; the framework's own NF code sits in src/nf/ itself.
const std::set<std::string> kFrameworkFolders = {"nf_process"};

template <typename Check>
size_t for_each_nf_source(Check check) {
  size_t files = 0;
  const fs::path root = testing::source_dir();
  for (const auto& folder : fs::directory_iterator(root / "src" / "nf")) {
    if (!folder.is_directory() || kFrameworkFolders.count(folder.path().filename().string())) continue;
    for (const auto& e : fs::recursive_directory_iterator(folder.path())) {
      if (!e.is_regular_file()) continue;
      std::ifstream f(e.path());
      std::stringstream text;
      text << f.rdbuf();
      check(fs::relative(e.path(), root).generic_string(), text.str());
      ++files;
    }
  }
  return files;
}

TEST(NfSources, ReachTheGpuOnlyThroughGpuCalls) {
  static const std::regex runtime_call(R"(\bcuda[A-Z][A-Za-z]*\s*\()");
  const size_t files = for_each_nf_source([](const std::string& file, const std::string& text) {
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, runtime_call))
        << file << " calls the CUDA runtime (" << m.str() << "): use gpu/gpu_calls.h";
    EXPECT_EQ(text.find("<<<"), std::string::npos) << file << " launches with <<<>>>: use launch_nf_kernel";
    EXPECT_EQ(text.find("gpu::launch("), std::string::npos)
        << file << " launches with gpu::launch, which checks no parameter: use launch_nf_kernel";
  });
  EXPECT_GE(files, 30u);  // the scan found the NFs' sources
}

TEST(NfSources, ReachMemoryOnlyThroughTheirViews) {
  for_each_nf_source([](const std::string& file, const std::string& text) {
    for (const char* call : {"framework_data(", "framework_view(", "framework_run<", "framework_packets_at<",
                             "framework_finish("})
      EXPECT_EQ(text.find(call), std::string::npos)
          << file << " reaches memory through " << call << "): use the NF's views (IsoSpan, NfPackets)";
  });
}

}  // namespace
}  // namespace gpunfv
