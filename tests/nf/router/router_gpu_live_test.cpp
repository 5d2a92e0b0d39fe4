// The Router's live updates on the GPU: after each transaction of route adds and deletes, the
// device copy a batch runs with (written by the scatter kernel, only the entries that changed)
// routes every probe packet as the host table does. Skipped where no CUDA device is present;
// scripts/gpu-check.sh runs it on a GPU machine.
#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/parse.h"
#include "gpu/device.h"
#include "gpu/device_buffer.h"
#include "nf/router/router.h"
#include "route_sequence.h"
#include "tests/fixtures/gpu_equals_cpu.h"
#include "tests/nf/firewall/firewall_test_util.h"

namespace gpunfv {
namespace {

// Runs `router` over one batch of frames to `addrs` on the device and on the host; returns
// mismatches in verdict or egress port.
// `stream` lives for the whole test: the router waits on the streams that last launched over a
// table copy before it writes that copy again, as a run's NF streams live for the run.
size_t gpu_vs_cpu(const Router& router, const std::vector<uint32_t>& addrs, bool count_known,
                  cudaStream_t stream) {
  const uint32_t n = uint32_t(addrs.size());
  Batch cpu(n, 128, MemoryKind::host);
  cpu.set_count(n);
  BatchView v = cpu.view();
  for (uint32_t i = 0; i < n; ++i) {
    FiveTuple t{0xC0000201u, addrs[i], 1234, 80, 17};
    const std::vector<uint8_t> f = fwtest::ipv4_frame(t, 0);
    std::memcpy(v.data.framework_data() + size_t(i) * v.stride, f.data(), f.size());
    v.len[i] = uint16_t(f.size());
    v.out_port[i] = kNoPort;
    v.next_nf[i] = 0;
    v.verdict[i] = uint8_t(parse_headers(PacketRef(v, i).frame(), v.headers[i]));
  }
  GpuStream gs{stream, 0, 256};
  gs.packets = count_known ? n : 0;  // 0: the router counts them on the device
  const std::unique_ptr<Batch> gpu = fixtures::run_on_gpu(router, cpu, 0, gs);
  router.process(v, 0, n, 0);
  const BatchView g = gpu->view();
  size_t bad = 0;
  for (uint32_t i = 0; i < n; ++i)
    bad += v.verdict[i] != g.verdict[i] || v.out_port[i] != g.out_port[i];
  return bad;
}

TEST(GpuRouterLive, UpdatedDeviceTablesRouteAsTheHost) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  std::vector<uint16_t> ports = {0, 1, 2, 3, 4, 5, 6};
  std::vector<std::string> names = {"a", "b", "c", "d", "e", "f", "g"};
  Router router("r1", {}, ports, names, 1024);
  router.prepare(Backend::gpu);
  const std::vector<RouteOp> ops = random_route_ops(5, 3000, true);
  const std::vector<uint32_t> addrs = route_probe_addresses(5);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  size_t at = 0, round = 0;
  while (at < ops.size()) {
    const size_t to = std::min(ops.size(), at + 1 + (round++ * 53) % 300);
    std::vector<Router::RouteUpdate> changes;
    for (size_t i = at; i < to; ++i)
      changes.push_back({ops[i].prefix,
                         ops[i].next_hop ? std::optional<uint16_t>(uint16_t(*ops[i].next_hop)) : std::nullopt,
                         ops[i].next_hop ? names[*ops[i].next_hop] : ""});
    router.update(changes, "test");
    at = to;
    ASSERT_EQ(gpu_vs_cpu(router, addrs, round % 2 == 0, stream), 0u) << "after " << at << " operations";
  }
  // Every packet of every batch was counted against the one version it ran with (the device's
  // counts join theirs by finish()).
  router.finish();
  cudaStreamDestroy(stream);
  EXPECT_EQ(router.live().log().packets(), 2 * round * addrs.size());
}

}  // namespace
}  // namespace gpunfv

#endif  // GPUNFV_HAVE_CUDA
