// The IPsec NF's GPU backend equals its CPU backend bit for bit: ESP bytes, lengths, verdicts,
// results records, headers. All batches are in flight on the GPU at once, so the test also
// checks that sequence numbers and replay windows follow batch order across streams.
// Skipped where no CUDA device is present; scripts/gpu-check.sh runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "gpu/device.h"
#include <pcap/pcap.h>

#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "chain/processing_stage.h"
#include "config/config.h"
#include "tests/chain/batch_pairs.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/scoped_env.h"
#include "tests/nf/ipsec/ipsec_test_util.h"

namespace gpunfv {
namespace {

using testing::BatchPairs;
using testing::expect_pairs_equal;
using testing::read_batch_pairs;
using testing::run_all_on_stage;
using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

bool have_device() { return cuda_device_available(); }

const char* kSas = R"(
      - {spi: 0x1001, enc_key: 4a0e7ef1c6b2d9a0135f7e8c2b91d4a6c0ffee01, auth_key: 7f3c9a2e5b8d1f4a6c0e2b9d8f7a1c3e5b2d4f60, local: 198.51.100.1, remote: 203.0.113.1, match: 200.57.7.192/27}
      - {spi: 0x1002, enc_key: 91b3d5f7092b4d6f8193a5c7e9fb1d3fc0ffee02, auth_key: 0d1c2b3a49586776859a4b3c2d1e0f1a2b3c4d5e, local: 198.51.100.1, remote: 203.0.113.1, match: 0.0.0.0/0}
)";

std::string config(const std::string& name, const std::string& rx, const std::string& nfs,
                   const std::string& path) {
  auto dir = temp_dir(name);
  return write_file(dir / "c.yaml", "ports:\n  - {name: in, type: pcap, rx: " + rx +
                                        "}\n  - {name: out, type: discard}\nnfs:\n" + nfs +
                                        "chains:\n  - {from: in, path: " + path +
                                        ", to: out}\nsettings: {batch_size: 512, batches: 4}\n");
}

std::string nf(const std::string& name, const std::string& direction, bool bypass,
               const std::string& sas = kSas) {
  return "  - name: " + name + "\n    type: ipsec\n    direction: " + direction +
         "\n    bypass: " + (bypass ? "true" : "false") + "\n    sas:" + sas;
}

// More SAs than the numbering pass selects for itself (kSelectInNumberingSas): the selection
// kernel runs first. Eleven prefixes of the trace's addresses, most specific first, then all.
std::string many_sas() {
  std::string sas = "\n";
  for (int k = 0; k < 11; ++k) {
    const std::string prefix = k < 10 ? fmt::format("200.57.7.{}/{}", 192 + 2 * k, 31) : "0.0.0.0/0";
    sas += fmt::format("      - {{spi: 0x{:x}, enc_key: 4a0e7ef1c6b2d9a0135f7e8c2b91d4a6c0ffee{:02x}, "
                       "auth_key: 7f3c9a2e5b8d1f4a6c0e2b9d8f7a1c3e5b2d4f{:02x}, local: 198.51.100.1, "
                       "remote: 203.0.113.{}, match: {}}}\n",
                       0x2001 + k, k, k, k + 1, prefix);
  }
  return sas;
}

// Reads the whole input into batches (ingress numbers in seq, as the executor sets them), runs
// them through run_chain_cpu in order and through the GPU stage all at once, and compares.
// `adjust` runs on the NFs once both backends are prepared.
void compare_backends(const std::string& cfg_path,
                      const std::function<void(RuntimeConfig&)>& adjust = {}) {
  RuntimeConfig rc = load_runtime_config(cfg_path);
  const BatchShape shape = plan_batch_shape(rc);
  auto stage = make_gpu_stage(rc, shape);
  for (auto& n : rc.nfs) {
    n->prepare(Backend::cpu);
    n->prepare(Backend::gpu);
  }
  if (adjust) adjust(rc);
  Port& port = *rc.ports[0];
  BatchPairs pairs = read_batch_pairs(port, shape);
  ASSERT_GT(pairs.cpu.size(), size_t(rc.settings.gpu_in_flight));  // more than in flight at once
  for (auto& c : pairs.cpu) run_chain_cpu(rc, rc.chains[0], c->view());
  run_all_on_stage(*stage, pairs.gpu);
  const uint64_t compared = expect_pairs_equal(pairs);
  EXPECT_GT(compared, 0u);
}

const std::string kTrace = GPUNFV_SOURCE_DIR "/data/traces/SIP_CALL_RTP_G711.pcap";

TEST(IpsecGpu, OutboundEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  compare_backends(
      config("ipsec-gpu-out", kTrace + ", repeat: 4", nf("enc", "outbound", false), "[enc]"));
}

TEST(IpsecGpu, OutboundManySasEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  compare_backends(config("ipsec-gpu-many-sas", kTrace + ", repeat: 4",
                          nf("enc", "outbound", false, many_sas()), "[enc]"));
}

// Every lane count the outbound kernel has (one lane a packet, as large batches run; two to
// eight sharing a packet's AES blocks, as small ones do), on RTP frames whose ciphertext spans
// up to 14 blocks: several rounds of G blocks, and a partial last block.
TEST(IpsecGpu, OutboundEveryLaneCountEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (const char* lanes : {"1", "2", "4", "8"}) {
    SCOPED_TRACE(std::string(lanes) + " lanes a packet");
    testing::ScopedEnv env("GPUNFV_IPSEC_LANES", lanes);
    compare_backends(config(std::string("ipsec-gpu-lanes-") + lanes, kTrace + ", repeat: 4",
                            nf("enc", "outbound", true), "[enc]"));
  }
}

// Both SAs run out of sequence numbers part way through the run (RFC 4303 3.3.3): the GPU's
// numbering marks the same packets exhausted as the CPU's.
TEST(IpsecGpu, SequenceExhaustionEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  compare_backends(
      config("ipsec-gpu-exhaust", kTrace + ", repeat: 4", nf("enc", "outbound", false), "[enc]"),
      [](RuntimeConfig& rc) {
        auto& ipsec = dynamic_cast<IpsecGateway&>(*rc.nfs[0]);
        IsoSpan<esp::SaState> host = ipsec.host_state();
        for (size_t k = 0; k < host.size(); ++k) host[k].next_seq = 0xFFFFFFFFull - 700;
        IsoSpan<esp::SaState> device = ipsec.device_state();  // prepare() made it fresh
        ASSERT_EQ(cudaMemcpy(device.framework_data(), host.framework_data(),
                             host.size() * sizeof(esp::SaState), cudaMemcpyHostToDevice),
                  cudaSuccess);
      });
}

// SAs added and deleted between batches (gpunfv ctl ipsec sa add|del): each backend carries its
// own per-SA state (host array, device array) across the versions, so the GPU numbers and
// checks the same packets as the CPU; the middle third of the batches goes through the added,
// more specific SA. Each stage runs its third to the end before the change, as the ordered
// passes of the old version's batches have when a live change lands.
TEST(IpsecGpu, LiveSaChangesEqualCpuWithTheDeviceStateCarried) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  RuntimeConfig rc = load_runtime_config(config("ipsec-gpu-live", kTrace + ", repeat: 3",
                                                nf("enc", "outbound", true) + nf("dec", "inbound", true),
                                                "[enc, dec]"));
  const BatchShape shape = plan_batch_shape(rc);
  for (auto& n : rc.nfs) {
    n->prepare(Backend::cpu);
    n->prepare(Backend::gpu);
  }
  BatchPairs pairs = read_batch_pairs(*rc.ports[0], shape);
  const size_t third = pairs.cpu.size() / 3;
  ASSERT_GT(third, size_t(rc.settings.gpu_in_flight));
  auto& enc = dynamic_cast<IpsecGateway&>(*rc.nfs[0]);
  auto& dec = dynamic_cast<IpsecGateway&>(*rc.nfs[1]);
  auto run_part = [&](size_t from, size_t to) {
    std::vector<std::unique_ptr<Batch>> gpu;
    for (size_t k = from; k < to; ++k) {
      run_chain_cpu(rc, rc.chains[0], pairs.cpu[k]->view());
      gpu.push_back(std::move(pairs.gpu[k]));
      gpu.back()->batch_seq = k - from;  // a fresh stage's queues start at batch 0
    }
    auto stage = make_gpu_stage(rc, shape);
    run_all_on_stage(*stage, gpu);
    for (size_t k = from; k < to; ++k) pairs.gpu[k] = std::move(gpu[k - from]);
  };
  run_part(0, third);
  esp::SaConfig added = ipsec_test::sa_config(0x1003, 9, "200.57.7.192/28");
  ASSERT_EQ(enc.add_sa(added, "add"), 2u);
  added.local = 0xCB007101, added.remote = 0xC6336401;
  ASSERT_EQ(dec.add_sa(added, "add"), 2u);
  run_part(third, 2 * third);
  ASSERT_EQ(enc.delete_sa(0x1003, "del"), 3u);
  ASSERT_EQ(dec.delete_sa(0x1003, "del"), 3u);
  run_part(2 * third, pairs.cpu.size());
  EXPECT_GT(expect_pairs_equal(pairs), 0u);

  // The added SA (slot 2) carried packets in the middle third only.
  auto through_added = [&](size_t from, size_t to) {
    uint64_t n = 0;
    for (size_t k = from; k < to; ++k) {
      const BatchView v = pairs.cpu[k]->view();
      for (uint32_t i = 0; i < v.count; ++i)
        n += v.verdict[i] == 0 && esp::read_record(v, i, enc.result_offset()).sa == 2;
    }
    return n;
  };
  EXPECT_EQ(through_added(0, third), 0u);
  EXPECT_GT(through_added(third, 2 * third), 0u);
  EXPECT_EQ(through_added(2 * third, pairs.cpu.size()), 0u);
  for (IpsecGateway* g : {&enc, &dec}) {
    g->finish();
    const nlohmann::json v = g->table_versions()->json();
    ASSERT_EQ(v.size(), 3u);
    for (const auto& x : v) EXPECT_GT(x["packets"].get<uint64_t>(), 0u);
  }
}

TEST(IpsecGpu, OutboundThenInboundEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  compare_backends(config("ipsec-gpu-rt", kTrace + ", repeat: 3",
                          nf("enc", "outbound", true) + nf("dec", "inbound", true), "[enc, dec]"));
}

// ESP with duplicates (inside the window and far behind it) and tampered packets, so the
// replay pass rejects packets across batch boundaries.
TEST(IpsecGpu, InboundReplayAndTamperEqualsCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // ESP frames from the CPU outbound side.
  std::string out_cfg =
      config("ipsec-gpu-src", kTrace + ", repeat: 2", nf("enc", "outbound", false), "[enc]");
  RuntimeConfig rc = load_runtime_config(out_cfg);
  const BatchShape shape = plan_batch_shape(rc);
  rc.nfs[0]->prepare(Backend::cpu);
  std::vector<std::vector<uint8_t>> esp;
  uint64_t seq = 0;
  while (!rc.ports[0]->rx_done()) {
    Batch b(shape.capacity, shape.stride, MemoryKind::host, shape.result_stride);
    while (b.count() < shape.capacity && !rc.ports[0]->rx_done())
      rc.ports[0]->rx_burst(b, shape.capacity - b.count());
    BatchView v = b.view();
    for (uint32_t i = 0; i < v.count; ++i) v.seq[i] = seq++;
    run_chain_cpu(rc, rc.chains[0], v);
    for (uint32_t i = 0; i < v.count; ++i)
      if (v.verdict[i] == 0) {
        const uint8_t* p = v.data.framework_data() + size_t(i) * v.stride;
        esp.emplace_back(p, p + v.len[i]);
      }
  }
  std::vector<std::vector<uint8_t>> mixed;
  for (size_t i = 0; i < esp.size(); ++i) {
    mixed.push_back(esp[i]);
    if (i % 7 == 3 && i >= 3) mixed.push_back(esp[i - 3]);        // replay inside the window
    if (i % 50 == 10 && i >= 300) mixed.push_back(esp[i - 300]);  // far left of it
    if (i % 13 == 5) {
      mixed.push_back(esp[i]);
      mixed.back()[mixed.back().size() / 2] ^= 0x40;  // tampered copy
    }
  }
  auto dir = temp_dir("ipsec-gpu-mixed");
  std::string pcap_path = (dir / "mixed.pcap").string();
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* d = pcap_dump_open(dead, pcap_path.c_str());
  ASSERT_NE(d, nullptr);
  for (const auto& f : mixed) {
    pcap_pkthdr h{};
    h.caplen = h.len = uint32_t(f.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, f.data());
  }
  pcap_dump_close(d);
  pcap_close(dead);
  compare_backends(config("ipsec-gpu-in", pcap_path, nf("dec", "inbound", false), "[dec]"));
}

}  // namespace
}  // namespace gpunfv
#endif
