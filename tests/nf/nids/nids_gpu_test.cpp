// The NIDS's GPU kernel (a warp per packet, chunks with run-on, shared-memory bitmap) equals the
// CPU's single pass bit for bit: verdicts, chain positions and the 32-byte results record of
// every packet, over every bundled trace and payloads that fire many rules, with all ET rules.
// Skipped where no CUDA device is present; scripts/gpu-check.sh runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpu/device.h"

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "chain/executor.h"
#include "config/config.h"
#include "gpu/device_buffer.h"
#include "nf/nids/nids.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/gpu_equals_cpu.h"
#include "tests/fixtures/scoped_env.h"
#include "tests/nf/nids/nids_test_util.h"
#include "nf/nids/nids_logic.h"

namespace gpunfv {
namespace {

using namespace nids_testing;
using testing::temp_dir;
using testing::write_file;

bool have_device() { return cuda_device_available(); }

std::unique_ptr<Nids> make_nids(const std::vector<std::string>& files, const std::string& action) {
  std::string list;
  for (const std::string& f : files) list += (list.empty() ? "" : ", ") + f;
  return Nids::from_config(ConfigNode(
      YAML::Load("name: ids\ntype: nids\naction: " + action + "\nrules: [" + list + "]\n"),
      kEtDir + "/c.yaml"));
}

// Frames from every trace, then TCP packets whose payloads hold several real rules' contents
// (many rules fire: the 7-lowest merge and the total count are exercised).
std::vector<std::vector<uint8_t>> test_frames(const Nids& nids) {
  std::vector<std::vector<uint8_t>> frames;
  for (const std::string& trace : trace_files())
    for (auto& f : read_frames(trace)) frames.push_back(std::move(f));
  std::mt19937 rng(5);
  const auto& rules = nids.rules().rules;
  for (int n = 0; n < 2000; ++n) {
    std::string payload;
    for (int k = 0; k < n % 15; ++k) {
      const Rule& r = rules[rng() % rules.size()];
      for (const RuleContent& c : r.contents) payload += c.bytes + " ";
    }
    if (payload.size() > 1400) payload.resize(1400);
    frames.push_back(tcp_frame(payload, (n % 3) * 4, n % 2 ? 10 : 0));
  }
  return frames;
}

// Runs `nids` over `frames` on both backends, batch by batch, and compares every packet.
void compare_backends(Nids& nids, const std::vector<std::vector<uint8_t>>& frames,
                      const GpuStream& launch) {
  nids.prepare(Backend::cpu);
  nids.prepare(Backend::gpu);
  const uint32_t cap = 2048, stride = 2048;
  uint64_t compared = 0, fired = 0;
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  GpuStream gs = launch;
  gs.stream = stream;
  for (size_t first = 0; first < frames.size(); first += cap) {
    std::vector<std::vector<uint8_t>> part(frames.begin() + first,
                                           frames.begin() + std::min(frames.size(), first + cap));
    Batch cpu(cap, stride, MemoryKind::host, kNidsResultBytes);
    fixtures::fill_frames(cpu, part);
    BatchView cv = cpu.view();
    // Stale bytes in every results slot, and some packets not at this NF: both backends must
    // leave those alone.
    std::memset(cv.results.framework_data(), 0xAB, size_t(cap) * kNidsResultBytes);
    for (uint32_t i = 0; i < cpu.count(); i += 17)
      if (cv.verdict[i] == 0) cv.next_nf[i] = 1;
    const uint64_t equal = fixtures::expect_gpu_equals_cpu(nids, cpu, 0, gs, first);
    ASSERT_EQ(equal, cpu.count());
    compared += equal;
    const BatchView a = cpu.view();
    for (uint32_t i = 0; i < a.count; ++i) {
      const uint8_t* ra = a.results.framework_data() + size_t(i) * kNidsResultBytes;
      const bool processed = a.next_nf[i] == 1 || a.verdict[i] == uint8_t(drop_reason(NidsDrop::nids_match));
      if (processed && i % 17 != 0) fired += NidsResult::load(ra).fired;
    }
  }
  nids.release_gpu_lane(stream);  // as the GPU stage does before a stream goes
  cudaStreamDestroy(stream);
  EXPECT_EQ(compared, frames.size());
  EXPECT_GT(fired, 0u);
}

TEST(GpuNids, AllEtRulesOnTracesAndPlantedPayloadsEqualCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto nids = make_nids(all_et_files(), "alert");
  compare_backends(*nids, test_frames(*nids), GpuStream{nullptr, 0, 256});
}

// Every group size the kernel has, on a rule set whose bitmap's words a lane's summary word
// names one to a bit (S_d's three files: 74 words) and on all ET rules, where past 32 G words a
// bit stands for several (nids.cu).
TEST(GpuNids, EveryGroupSizeEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::vector<std::vector<std::string>> sets = {
      {et("web_server"), et("user_agents"), et("policy")}, all_et_files()};
  for (const auto& files : sets)
    for (const char* lanes : {"4", "8", "16", "32"}) {
      SCOPED_TRACE(std::string(lanes) + " lanes, " + std::to_string(files.size()) + " files");
      testing::ScopedEnv env("GPUNFV_NIDS_LANES", lanes);
      auto nids = make_nids(files, "alert");
      compare_backends(*nids, test_frames(*nids), GpuStream{nullptr, 0, 256});
    }
}

// Every chunk size the kernel may take (GPUNFV_NIDS_CHUNK; by default 16 bytes for small
// batches, 32 for large ones), with the default group size.
TEST(GpuNids, EveryChunkSizeEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (const char* chunk : {"8", "16", "32", "64"}) {
    SCOPED_TRACE(std::string(chunk) + "-byte chunks");
    testing::ScopedEnv env("GPUNFV_NIDS_CHUNK", chunk);
    auto nids = make_nids({et("web_server"), et("user_agents"), et("policy")}, "alert");
    compare_backends(*nids, test_frames(*nids), GpuStream{nullptr, 0, 256});
  }
}

TEST(GpuNids, DropActionSmallBlocksAndCappedGridEqualCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto nids = make_nids({et("web_server"), et("user_agents"), et("exploit")}, "drop");
  // 2 warps a block, at most 3 blocks: each warp walks many packets (grid-stride).
  compare_backends(*nids, test_frames(*nids), GpuStream{nullptr, 3, 64});
}

// A replaced rule set scans on the device as on the host (rule indices global over the versions
// on both), and launches whose packets the host does not know (GpuStream::packets 0, as under
// gpu_pipeline: fused) are counted on the device against the version they used.
TEST(GpuNids, ReplacedRulesEqualCpuAndCountPerVersionOnTheDevice) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto nids = make_nids({et("web_server")}, "alert");
  compare_backends(*nids, test_frames(*nids), GpuStream{nullptr, 0, 256});
  ASSERT_EQ(nids->replace_rules({et("user_agents"), et("exploit")}, {}), 2u);
  EXPECT_GT(nids->host_view().rule_base, 0u);
  compare_backends(*nids, test_frames(*nids), GpuStream{nullptr, 0, 256});
  nids->finish();
  // Each batch was counted twice: by process() on the host and by the device count.
  const nlohmann::json v = nids->table_versions()->json();
  ASSERT_EQ(v.size(), 2u);
  for (const auto& x : v) {
    EXPECT_GT(x["packets"].get<uint64_t>(), 0u);
    EXPECT_EQ(x["packets"].get<uint64_t>() % 2, 0u);
  }
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(GpuNids, ExecutorAlertLogsEqualCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto dir = temp_dir("nids-gpu-exec");
  auto config = [&](const std::string& log) {
    return write_file(dir / (log + ".yaml"), R"(
ports:
  - {name: in, type: pcap, rx: )" + kTraceDir + R"(/http_with_jpegs.cap, repeat: 3}
  - {name: out, type: discard}
nfs:
  - name: ids
    type: nids
    rules: [)" + et("web_server") + ", " + et("user_agents") + ", " + et("hunting") + R"(]
    alerts: )" + log + R"(.json
chains:
  - {from: in, path: [ids], to: out}
settings: {batch_size: 256, batches: 8}
)");
  };
  RuntimeConfig a = load_runtime_config(config("cpu")), b = load_runtime_config(config("gpu"));
  RunStats cpu = run(a, RunOptions{Backend::cpu, 0, nullptr});
  RunStats gpu = run(b, RunOptions{Backend::gpu, 0, nullptr});
  EXPECT_EQ(gpu.accounting_errors(), "");
  EXPECT_EQ(cpu.nf_reports[0]["alerts"], gpu.nf_reports[0]["alerts"]);
  EXPECT_EQ(cpu.nf_reports[0]["alerts_by_sid"], gpu.nf_reports[0]["alerts_by_sid"]);
  EXPECT_GT(cpu.nf_reports[0]["alerts"].get<uint64_t>(), 0u);
  const std::string cpu_log = slurp((dir / "cpu.json").string());
  EXPECT_FALSE(cpu_log.empty());
  EXPECT_EQ(cpu_log, slurp((dir / "gpu.json").string()));
}

}  // namespace
}  // namespace gpunfv
#endif
