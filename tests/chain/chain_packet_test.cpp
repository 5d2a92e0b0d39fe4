// run_chain_on_packet (the persistent pipeline's per-packet chain, chain/chain_packet.h) against
// the CPU backend's chain, which takes the same steps node by node over the whole batch.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "chain/batch_shape.h"
#include "chain/chain_packet.h"
#include "chain/processing_stage.h"
#include "config/config.h"
#include "nf/firewall/firewall.h"
#include "nf/router/router.h"
#include "tests/chain/chain_test_util.h"
#include "tests/fixtures/gpu_equals_cpu.h"

namespace gpunfv {
namespace {

using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

// Routers r1..rN over one table (r2 and later spread their next hops the other way round), and
// a firewall fw dropping UDP to 10.0.0.0/12.
std::string router_config(const std::string& dir_name, const std::string& chain, int routers = 2) {
  auto dir = temp_dir(dir_name);
  write_file(dir / "fw.rules", "@10.0.0.0/12 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 drop\n");
  std::string nfs = "  - {name: fw, type: firewall, rules: fw.rules, action: drop, default: accept}\n";
  for (int k = 1; k <= routers; ++k)
    nfs += "  - {name: r" + std::to_string(k) + ", type: router, routes: {file: " + source_dir() +
           "/data/router/bart_ipv4_random5000.txt, spread: " + (k == 1 ? "[p1, p2]" : "[p2, p1]") + "}}\n";
  return write_file(dir / "c.yaml", R"(ports:
  - {name: in, type: generator, size: imix, flows: 2000, count: 20000, dst_from: r1, seed: 7}
  - {name: p1, type: discard}
  - {name: p2, type: discard}
nfs:
)" + nfs + R"(chains:
  - )" + chain + R"(
settings: {batch_size: 1024, batches: 4}
)");
}

// Every batch of the input both ways: each field egress reads, every frame byte and the
// per-node counts equal. Returns the packets compared.
uint64_t expect_per_packet_chain_equals_cpu(const std::string& cfg) {
  RuntimeConfig rc = load_runtime_config(cfg);
  for (auto& nf : rc.nfs) nf->prepare(Backend::cpu);
  const Chain& chain = rc.chains[0];
  std::vector<DevicePacketFn> fns;
  for (uint16_t nf : chain.path) {
    if (const auto* fw = dynamic_cast<const Firewall*>(rc.nfs[nf].get()))
      fns.push_back(DevicePacketFn::of(DevicePacketFnKind::firewall, fw->host_view(),
                                       fw->slot(first_drop_code<FirewallDrop>())));
    else
      fns.push_back(DevicePacketFn::of(DevicePacketFnKind::router,
                                       dynamic_cast<const Router&>(*rc.nfs[nf]).host_view(),
                                       first_drop_code<RouterDrop>()));
  }
  const BatchShape shape = plan_batch_shape(rc);
  Port& port = *rc.ports[0];
  uint64_t compared = 0;
  while (!port.rx_done()) {
    Batch a(shape.capacity, shape.stride, MemoryKind::host, shape.result_stride);
    while (a.count() < shape.capacity && !port.rx_done()) port.rx_burst(a, shape.capacity - a.count());
    if (a.count() == 0) break;
    Batch b(shape.capacity, shape.stride, MemoryKind::host, shape.result_stride);
    std::memcpy(b.base(), a.base(), a.layout().bytes);
    b.set_count(a.count());
    const BatchView va = a.view(), vb = b.view();
    for (uint32_t k = 0; k < kMaxChainNodes; ++k) va.node_packets[k] = vb.node_packets[k] = 0;
    run_chain_cpu(rc, chain, va);
    uint32_t sent[kMaxChainNodes] = {};
    for (uint32_t i = 0; i < vb.count; ++i)
      run_chain_on_packet(chain.view, vb, i, fns.data(), uint32_t(fns.size()), [&](uint8_t to) {
        if (to != kChainDone) ++sent[to];
      });
    for (uint32_t k = 0; k < chain.path.size(); ++k) EXPECT_EQ(va.node_packets[k], sent[k]) << k;
    compared += fixtures::expect_views_equal(va, vb, compared);
    if (::testing::Test::HasFailure()) break;  // the first difference is enough
  }
  return compared;
}

TEST(ChainPacket, RouterChainEqualsTheCpuBackend) {
  EXPECT_EQ(expect_per_packet_chain_equals_cpu(router_config("chain-packet-router", "{from: in, path: [r1]}")),
            20000u);
}

// Two routers with a branch and a routing-table entry: the switch's choices per packet, and
// the per-node counts, as the batch-wide steps make them.
TEST(ChainPacket, BranchyChainEqualsTheCpuBackend) {
  const std::string chain =
      "{from: in, path: [{nf: r1, next: [r2, done]}, r2], "
      "routes: [{dst: 0.0.0.0/1, at: r1, next: r2}]}";
  EXPECT_EQ(expect_per_packet_chain_equals_cpu(router_config("chain-packet-branchy", chain)), 20000u);
}

// The firewall's verdicts and its results slice (the matching rule) as well.
TEST(ChainPacket, FirewallAndRouterChainEqualsTheCpuBackend) {
  EXPECT_EQ(expect_per_packet_chain_equals_cpu(router_config("chain-packet-fw", "{from: in, path: [fw, r1]}")),
            20000u);
}

#if GPUNFV_HAVE_CUDA
// Which chains the persistent pipeline's kernel takes: every NF with a device packet function,
// at most kMaxChainPacketNodes of them.
TEST(ChainPacket, PersistentKernelTakesChainsOfItsNfsUpToItsLength) {
  const int n = int(kMaxChainPacketNodes) + 1;
  std::string path = "r1";
  for (int k = 2; k <= n; ++k) path += ", r" + std::to_string(k);
  RuntimeConfig rc = load_runtime_config(router_config("chain-packet-short", "{from: in, path: [r1, r2]}"));
  EXPECT_EQ(rc.nfs[0]->device_packet_kind(), DevicePacketFnKind::firewall);
  EXPECT_EQ(rc.nfs[1]->device_packet_kind(), DevicePacketFnKind::router);
  EXPECT_TRUE(chain_runs_per_packet(rc, rc.chains[0]));
  RuntimeConfig longer = load_runtime_config(router_config("chain-packet-long", "{from: in, path: [" + path + "]}", n));
  EXPECT_FALSE(chain_runs_per_packet(longer, longer.chains[0]));  // one NF too many
}
#endif

}  // namespace
}  // namespace gpunfv
