// Nothing may be set up for the first time once a GPU ring's persistent kernel spins (a
// chain's first batch then hung an H200: gpu/device_preflight.h). These checks run on the host,
// against the source tree and the kernel registry the CUDA build fills at static
// initialisation: every kernel in src/ is registered, so the preflight loads it and sizes local
// memory for it before the ring kernel starts; streams and events are only made through the
// counted helpers of gpu/stream.h; the chain's per-batch path issues no runtime memset (CUDA's
// own kernel; the chain zeroes its counters with a kernel of ours). The device side (every
// registered kernel loads) is in tests/io/gpuring/loops/gpu_ring_batch_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/device_preflight.h"
#include "gpu/kernel_registry.h"
#include "gpu/persistent_kernel_guard.h"
#include "tests/chain/chain_test_util.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/device.h"
#include "gpu/stream.h"
#endif

namespace gpunfv {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Source files under src/ with one of `exts`, by path from the source root ("src/...").
std::map<std::string, std::string> sources(const std::vector<std::string>& exts) {
  std::map<std::string, std::string> out;
  const fs::path root = testing::source_dir();
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    for (const std::string& want : exts)
      if (ext == want) out[fs::relative(e.path(), root).generic_string()] = read(e.path());
  }
  return out;
}

std::string without_spaces(std::string s) {
  s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
          s.end());
  return s;
}

std::string base_name(const std::string& registered) { return registered.substr(0, registered.find('<')); }

// The names of the __global__ functions defined in `text`.
std::vector<std::string> kernels_defined(const std::string& text) {
  static const std::regex def(R"(__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\()");
  std::vector<std::string> names;
  for (std::sregex_iterator it(text.begin(), text.end(), def), end; it != end; ++it) names.push_back((*it)[1]);
  return names;
}

// The GPUNFV_REGISTER_KERNEL arguments in `text`, without spaces.
std::set<std::string> registrations_in(const std::string& text) {
  static const std::regex reg(R"(GPUNFV_REGISTER_KERNEL\s*\(([^;]*)\)\s*;)");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), reg), end; it != end; ++it) {
    const std::string arg = without_spaces((*it)[1]);
    if (arg != "...") out.insert(arg);  // the macro's own definition
  }
  // A per-packet NF's registration line registers its kernel (nf/per_packet_nf.h).
  static const std::regex nf(R"(^GPUNFV_PER_PACKET_NF\s*\([^,]*,\s*(\w+)\s*\)\s*;)", std::regex::multiline);
  for (std::sregex_iterator it(text.begin(), text.end(), nf), end; it != end; ++it) {
    const std::string c = (*it)[1];
    out.insert("::gpunfv::per_packet_kernel<" + c + "::ViewType," + c + "::LogicType>");
  }
  return out;
}

bool has_base(const std::set<std::string>& regs, const std::string& name) {
  for (const std::string& r : regs)
    if (base_name(r) == name) return true;
  return false;
}

// Every .cu file registers every kernel it defines, and every kernel instance it launches
// (checked on the source: a file the test binary does not link, such as the profiler's, must
// register its kernels too).
TEST(KernelRegistry, EveryKernelDefinedInACuFileIsRegisteredThere) {
  size_t checked = 0;
  for (const auto& [file, text] : sources({".cu"})) {
    const std::set<std::string> regs = registrations_in(text);
    for (const std::string& name : kernels_defined(text)) {
      EXPECT_TRUE(has_base(regs, name)) << name << " (" << file << ") is not registered: add GPUNFV_REGISTER_KERNEL("
                                        << name << ") so it is loaded before a persistent kernel runs "
                                        << "(gpu/device_preflight.h)";
      ++checked;
    }
  }
  EXPECT_GE(checked, 20u);  // the scan found the kernels (chain steps, NFs, rings, ...)
}

// A kernel template defined in a .cuh (the ring loops' kernels, the per-packet kernel) is
// compiled by the .cu files that include it with their own types: one of them registers it.
TEST(KernelRegistry, EveryKernelDefinedInAHeaderIsRegisteredInACuFile) {
  std::set<std::string> regs;
  for (const auto& [file, text] : sources({".cu"}))
    for (const std::string& r : registrations_in(text)) regs.insert(r);
  size_t checked = 0;
  for (const auto& [file, text] : sources({".cuh"}))
    for (const std::string& name : kernels_defined(text)) {
      EXPECT_TRUE(has_base(regs, name)) << name << " (" << file << ") is registered by no .cu file";
      ++checked;
    }
  EXPECT_GE(checked, 3u);  // ring pairs, forward pairs, per packet
}

// True when `args` (e.g. "<Step>") is one name that `text` declares as a template parameter
// (typename/class Step): a launch inside a helper template, whose instances its callers name.
bool names_template_parameter(const std::string& text, const std::string& args) {
  const std::string name = args.substr(1, args.size() - 2);
  if (!std::regex_match(name, std::regex(R"(\w+)"))) return false;
  return std::regex_search(text, std::regex("(typename|class)\\s+" + name + "\\s*[>,=]"));
}

TEST(KernelRegistry, EveryConcreteLaunchIsRegistered) {
  // kernel<args><<<: a template instance named at its launch (nids_kernel<8>); instances made
  // inside a launch helper's template (ring_pairs_kernel<Hook>) are covered by the helper's
  // callers' registrations and by their base name above.
  static const std::regex launch(R"((\w+)\s*(<[^<>;()]*>)?\s*<<<)");
  // gpu::launch(kernel<args>, ...) (gpu/gpu_calls.h) and launch_nf_kernel(kernel<args>, ...)
  // (nf/nf_kernel.h), as NF code launches.
  static const std::regex call(R"((?:gpu::launch|launch_nf_kernel)\(\s*(\w+)\s*(<[^<>;()]*>)?\s*,)");
  // launch_per_packet(..., LogicType{}, ...): per_packet_kernel<View, LogicType> (per_packet_kernel.cuh).
  static const std::regex per_packet(R"(launch_per_packet\s*\([^;]*?([A-Za-z_][\w:]*)\s*\{\})");
  size_t checked = 0;
  for (const auto& [file, text] : sources({".cu"})) {
    const std::set<std::string> regs = registrations_in(text);
    for (const std::regex* form : {&launch, &call})
      for (std::sregex_iterator it(text.begin(), text.end(), *form), end; it != end; ++it) {
        const std::string name = (*it)[1];
        const std::string args = without_spaces((*it)[2]);
        if (args.empty())
          EXPECT_TRUE(has_base(regs, name)) << name << " launched in " << file;
        else if (args.find("View") == std::string::npos && !names_template_parameter(text, args))
          EXPECT_TRUE(regs.count(name + args)) << name + args << " launched in " << file;
        ++checked;
      }
    for (std::sregex_iterator it(text.begin(), text.end(), per_packet), end; it != end; ++it) {
      const std::string logic = without_spaces((*it)[1]);
      bool found = false;
      for (const std::string& r : regs)
        found = found || (base_name(r) == "per_packet_kernel" && r.size() > logic.size() + 1 &&
                          r.compare(r.size() - logic.size() - 1, logic.size() + 1, logic + ">") == 0);
      EXPECT_TRUE(found) << "per_packet_kernel<..., " << logic << "> (launched in " << file << ") is not registered there";
      ++checked;
    }
  }
  EXPECT_GE(checked, 20u);
}

bool cuda_build() { return GPUNFV_HAVE_CUDA != 0; }

// What the registry holds at run time: for every source file linked into this binary, exactly
// what its source registers; the files of the gpuring chain path are all linked.
TEST(KernelRegistry, HoldsWhatTheLinkedSourcesRegister) {
  if (!cuda_build()) GTEST_SKIP() << "a build without CUDA registers no kernels";
  std::map<std::string, std::set<std::string>> held;
  std::set<const void*> functions;
  for (const KernelEntry& k : registered_kernels()) {
    EXPECT_NE(k.function, nullptr) << k.name;
    EXPECT_TRUE(functions.insert(k.function).second) << k.name << " registered twice";
    EXPECT_TRUE(held[k.file].insert(without_spaces(k.name)).second) << k.name << " registered twice";
  }
  const auto src = sources({".cu"});
  for (const auto& [file, names] : held) {
    ASSERT_TRUE(src.count(file)) << "a registration names " << file << ", which is not a source file";
    EXPECT_EQ(names, registrations_in(src.at(file))) << file;
  }
  for (const char* f : {"src/chain/chain_steps.cu", "src/chain/ring_egress_copy.cu",
                        "src/io/gpuring/loops/gpu_ring_batch_kernels.cu", "src/io/gpuring/ring/ring_clock.cu",
                        "src/gpu/device_preflight.cu", "src/nf/router/router.cu", "src/nf/firewall/firewall.cu",
                        "src/nf/ipsec/ipsec.cu", "src/nf/nids/nids.cu"})
    EXPECT_TRUE(held.count(f)) << f << " registered nothing in this binary";
  for (const char* name : {"zero_node_packets_kernel", "enter_chain_kernel", "switch_kernel",
                           "publish_node_packets_kernel", "drop_at_node_kernel"})
    EXPECT_TRUE(held["src/chain/chain_steps.cu"].count(name)) << name;
}

TEST(PersistentKernelSetup, StreamsAndEventsAreMadeOnlyThroughTheCountedHelpers) {
  // A stream or event made beside the ring kernel must show up in the feed's count of late
  // set-up calls, and every live stream in the count against the hardware queues.
  static const std::regex raw(R"(cuda(StreamCreate|StreamDestroy|EventCreate)\w*\s*\()");
  for (const auto& [file, text] : sources({".cu", ".cpp", ".h", ".cuh"})) {
    if (file == "src/gpu/gpu_calls.cpp") continue;  // the helpers themselves
    EXPECT_FALSE(std::regex_search(text, raw)) << file << " creates a stream or event directly: use "
                                               << "create_stream() / destroy_stream() / create_event() (gpu/stream.h)";
  }
}

TEST(PersistentKernelSetup, TheChainsPerBatchPathIssuesNoRuntimeMemset) {
  // cudaMemset* runs a kernel of CUDA's own; the first one beside the ring kernel may need CUDA
  // to set it up. The per-batch path zeroes with zero_node_packets_kernel instead.
  for (const char* f : {"src/chain/gpu_stage.cpp", "src/chain/chain_steps.cu", "src/chain/ring_egress_copy.cu",
                        "src/chain/gpuring_feed.cpp", "src/nf/router/router.cu", "src/nf/firewall/firewall.cu",
                        "src/nf/ipsec/ipsec.cu", "src/nf/nids/nids.cu"}) {
    const std::string text = read(fs::path(testing::source_dir()) / f);
    ASSERT_FALSE(text.empty()) << f;
    EXPECT_EQ(text.find("cudaMemset"), std::string::npos) << f;
  }
}

TEST(PersistentKernelSetup, LateCallsAreCountedOnlyWhileAPersistentKernelRuns) {
  const LateCudaSetup before = late_cuda_setup();
  EXPECT_FALSE(persistent_kernel_running());
  note_cuda_setup("cudaMalloc");
  EXPECT_EQ(late_cuda_setup().calls, before.calls);
  {
    PersistentKernelScope ring;
    EXPECT_TRUE(persistent_kernel_running());
    note_cuda_setup("cudaEventCreate");
    note_cuda_setup("cudaEventCreate");
    note_cuda_setup("cudaStreamCreate");
    const LateCudaSetup during = late_cuda_setup();
    EXPECT_EQ(during.calls, before.calls + 3);
    if (before.calls == 0) {
      EXPECT_EQ(during.first, "cudaEventCreate");
    }
    ring.release();
    EXPECT_FALSE(persistent_kernel_running());
    note_cuda_setup("cudaFree");
    EXPECT_EQ(late_cuda_setup().calls, before.calls + 3);
  }
  EXPECT_FALSE(persistent_kernel_running());
}

TEST(PersistentKernelSetup, LiveStreamsAreCounted) {
  const uint64_t before = live_streams();
  note_stream_created();
  note_stream_created();
  EXPECT_EQ(live_streams(), before + 2);
  note_stream_destroyed();
  note_stream_destroyed();
  EXPECT_EQ(live_streams(), before);
}

#if GPUNFV_HAVE_CUDA
TEST(DevicePreflight, LoadsEveryRegisteredKernelAndSizesLocalMemory) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  const PreflightReport rep = prepare_device_for_persistent_kernels();
  std::printf("preflight: %s\n", rep.line().c_str());
  EXPECT_EQ(rep.kernels, registered_kernels().size());
  EXPECT_GE(rep.stack_limit, rep.max_local_bytes);
  EXPECT_GT(rep.max_local_bytes, 0u);  // its own kernel uses local memory
  // A second run on a stream of the caller's.
  cudaStream_t st = create_stream();
  EXPECT_NO_THROW(prepare_device_for_persistent_kernels(st));
  cudaStreamDestroy(st);
}
#endif

}  // namespace
}  // namespace gpunfv
