// The GPU stage on device-resident batches (Batch::set_device_resident, as a GPU ring hands
// them over): metadata already in device memory, packets scattered over a larger slot area in
// another order. The stage uploads nothing, runs classify, G-NET's S_d (firewall, IPsec growing
// packets, NIDS, router) and the switch over the slots in place, and downloads metadata only;
// every field egress and collect() read, every NF result and every frame byte (read back from
// its slot) equals the CPU backend's; also while a GPU ring's persistent kernel spins beside the
// stage. Skipped where no CUDA device is present.
#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "chain/batch_shape.h"
#include "chain/processing_stage.h"
#include "chain/ring_batch_transfer.h"
#include "config/config.h"
#include "gpu/device.h"
#include "gpu/device_buffer.h"
#include "gpu/device_preflight.h"
#include "gpu/persistent_kernel_guard.h"
#include "io/gpuring/loops/gpu_ring_batch_runner.h"
#include "io/gpuring/loops/hang_watchdog.h"
#include "io/gpuring/loops/ring_batches.h"
#include "io/gpuring/ring/ring_set.h"
#include "tests/chain/batch_pairs.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::read_batch_pairs;
using testing::run_all_on_stage;
using testing::source_dir;
using testing::temp_dir;
using testing::write_file;

std::string sd_config() { return testing::write_sd_chain_config("stage-resident", 512); }

// One batch as a GPU ring holds it: metadata in device memory in the ring batches' layout
// (stride 64: its own data area unused), packets in a slot area twice the batch, in reverse
// order on odd slots; and its host handle.
struct ResidentBatch {
  DeviceBuffer<uint8_t> meta, slots;
  DeviceBuffer<uint32_t> slot_index;
  std::vector<uint32_t> slot_of;
  std::unique_ptr<Batch> handle;
};

ResidentBatch make_resident(const Batch& src, const BatchShape& shape, uint64_t batch_seq) {
  ResidentBatch r;
  const uint32_t cap = shape.capacity, stride = shape.stride, n = src.count();
  r.handle = std::make_unique<Batch>(cap, 64, MemoryKind::host_pinned, shape.result_stride);
  Batch& h = *r.handle;
  h.set_count(n);
  // What the rx loop writes; the rest of the image is junk the chain must overwrite.
  std::memset(h.base(), 0xA5, h.layout().bytes);
  const BatchView s = src.view(), hv = h.layout().view(h.base(), n);
  for (uint32_t i = 0; i < n; ++i) {
    hv.len[i] = s.len[i];
    hv.port[i] = s.port[i];
    hv.seq[i] = s.seq[i];
    hv.rx_ns[i] = s.rx_ns[i];
    hv.wire_ns[i] = s.wire_ns[i];
  }
  r.meta.allocate(h.layout().bytes);
  GPUNFV_CUDA(cudaMemcpy(r.meta.data(), h.base(), h.layout().bytes, cudaMemcpyHostToDevice));
  std::memset(h.base(), 0, h.layout().bytes);  // the download must bring everything back
  std::vector<uint8_t> area(size_t(2) * cap * stride, 0xEE);
  r.slot_of.assign(cap, 0);
  for (uint32_t i = 0; i < n; ++i) {
    r.slot_of[i] = 2 * (cap - 1 - i) + 1;
    std::memcpy(area.data() + size_t(r.slot_of[i]) * stride, s.data.framework_data() + size_t(i) * stride, stride);
  }
  r.slots.upload(area);
  r.slot_index.upload(r.slot_of);
  BatchView dv = h.layout().view(r.meta.data(), n);
  dv.stride = stride;
  dv.data = r.slots.span();
  dv.slot_index = r.slot_index.span();
  BatchView host = hv;
  host.stride = stride;
  host.data = IsoSpan<uint8_t>();  // no packet bytes on the host
  h.set_external(host);
  h.set_device_resident(dv);
  h.device_base = r.meta.data();
  h.batch_seq = batch_seq;
  h.chain = 0;
  return r;
}

// Every field egress and collect() read, every NF result and every frame (read back from its
// slot) of the device-resident `handles` equal the CPU's `cpu` batches.
void expect_equal_to_cpu(const RuntimeConfig& cpu_rc, const BatchShape& shape,
                         const std::vector<std::unique_ptr<Batch>>& cpu,
                         const std::vector<std::unique_ptr<Batch>>& handles, const std::vector<ResidentBatch>& resident) {
  const uint32_t rs = shape.result_stride, stride = shape.stride;
  uint64_t compared = 0, drops = 0;
  std::vector<uint8_t> slot(stride);
  for (size_t k = 0; k < handles.size(); ++k) {
    const BatchView a = cpu[k]->view(), b = handles[k]->view();
    ASSERT_EQ(a.count, b.count);
    for (uint32_t i = 0; i < a.count; ++i, ++compared) {
      ASSERT_EQ(a.len[i], b.len[i]) << k << ":" << i;
      ASSERT_EQ(a.verdict[i], b.verdict[i]) << k << ":" << i;
      ASSERT_EQ(a.next_nf[i], b.next_nf[i]) << k << ":" << i;
      ASSERT_EQ(a.visited[i], b.visited[i]) << k << ":" << i;
      ASSERT_EQ(a.out_port[i], b.out_port[i]) << k << ":" << i;
      ASSERT_EQ(a.flow_hash[i], b.flow_hash[i]) << k << ":" << i;
      ASSERT_EQ(a.seq[i], b.seq[i]) << k << ":" << i;
      ASSERT_EQ(a.rx_ns[i], b.rx_ns[i]) << k << ":" << i;
      ASSERT_EQ(0, std::memcmp(&a.headers[i], &b.headers[i], sizeof(PacketHeaders))) << k << ":" << i;
      // Results: each NF's slice, where the NF saw the packet (elsewhere the record holds
      // whatever the slot's earlier batches left, as in a ring, and collect() never reads it).
      const Chain& chain = cpu_rc.chains[0];
      for (size_t node = 0; node < chain.path.size(); ++node) {
        if (!reached_node(a, i, static_cast<uint8_t>(node))) continue;
        const NetworkFunction& nf = *cpu_rc.nfs[chain.path[node]];
        const size_t off = size_t(i) * rs + nf.result_offset();
        ASSERT_EQ(0, std::memcmp(a.results.framework_data() + off, b.results.framework_data() + off,
                                 nf.result_bytes()))
            << k << ":" << i << " " << nf.name();
      }
      drops += a.verdict[i] != 0;
      // The frame, read back from its slot. The device view's slot_index lies in device memory:
      // the slot comes from the host's copy of it.
      const BatchView dv = handles[k]->device_view();
      const size_t at = size_t(resident[k].slot_of[i]) * dv.stride;
      GPUNFV_CUDA(cudaMemcpy(slot.data(), dv.data.framework_data() + at, stride, cudaMemcpyDeviceToHost));
      ASSERT_EQ(0, std::memcmp(a.data.framework_data() + size_t(i) * stride, slot.data(),
                               std::min<uint32_t>(a.len[i], stride)))
          << k << ":" << i;
    }
  }
  EXPECT_GT(compared, 4000u);
  EXPECT_GT(drops, 0u);
}

// Both backends set up over the same input: the CPU's batches run, the GPU's made resident.
struct Setup {
  RuntimeConfig cpu_rc, gpu_rc;
  BatchShape shape;
  testing::BatchPairs pairs;
  std::unique_ptr<ProcessingStage> stage;
  std::vector<ResidentBatch> resident;
  std::vector<std::unique_ptr<Batch>> handles;
};

std::unique_ptr<Setup> set_up() {
  auto s = std::make_unique<Setup>();
  const std::string cfg = sd_config();
  s->cpu_rc = load_runtime_config(cfg);
  s->gpu_rc = load_runtime_config(cfg);
  for (auto& nf : s->cpu_rc.nfs) nf->prepare(Backend::cpu);
  s->shape = plan_batch_shape(s->cpu_rc);
  plan_batch_shape(s->gpu_rc);
  s->pairs = read_batch_pairs(*s->cpu_rc.ports[0], s->shape);
  s->stage = make_gpu_stage(s->gpu_rc, s->shape);
  for (auto& nf : s->gpu_rc.nfs) nf->prepare(Backend::gpu);
  for (auto& c : s->pairs.cpu) run_chain_cpu(s->cpu_rc, s->cpu_rc.chains[0], c->view());
  for (size_t k = 0; k < s->pairs.gpu.size(); ++k) {
    s->resident.push_back(make_resident(*s->pairs.gpu[k], s->shape, k));
    s->handles.push_back(std::move(s->resident.back().handle));
  }
  return s;
}

// Nothing went up; exactly the metadata of each batch came down.
void expect_metadata_only(ProcessingStage& stage, const std::vector<std::unique_ptr<Batch>>& handles) {
  nlohmann::json j;
  stage.report(j);
  const BatchLayout ring_layout = handles[0]->layout();
  EXPECT_EQ(j["pcie"]["h2d_bytes"].get<uint64_t>(), 0u) << j.dump();
  EXPECT_EQ(j["pcie"]["device_resident_batches"].get<uint64_t>(), handles.size());
  EXPECT_EQ(j["pcie"]["d2h_bytes"].get<uint64_t>(), handles.size() * metadata_download_bytes(ring_layout));
}

TEST(GpuStageDeviceResident, SdChainEqualsCpuWithoutMovingPackets) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  auto s = set_up();
  ASSERT_GT(s->pairs.cpu.size(), 4u);
  run_all_on_stage(*s->stage, s->handles);
  expect_equal_to_cpu(s->cpu_rc, s->shape, s->pairs.cpu, s->handles, s->resident);
  expect_metadata_only(*s->stage, s->handles);
}

// The same chain while a GPU ring's persistent batch kernel spins beside it (no NIC emulator:
// its rings stay empty), prepared as the executor prepares it: the stage's streams, events and
// lanes made first, the device preflight run, then the ring kernel launched. This is the chain
// half of a gpuring-fed run without the NIC emulator; a hang here (the watchdog ends the
// process with exit 3) points at the chain's GPU work beside the persistent kernel.
TEST(GpuStageDeviceResident, SdChainCompletesBesideARunningRingKernel) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  auto s = set_up();
  ASSERT_GT(s->pairs.cpu.size(), 4u);
  s->stage->prepare_for_persistent_kernels({});
  const PreflightReport pre = prepare_device_for_persistent_kernels();
  std::printf("preflight: %s\n", pre.line().c_str());
  gpuring::RingParams p;
  p.rings = 1;
  p.ring_size = 256;
  gpuring::RingSet rings(p, gpuring::Placement::device);
  gpuring::RingBatches batches(rings, 64, 2, 50'000);
  const uint64_t late_before = late_cuda_setup().calls;
  {
    gpuring::HangWatchdog watchdog([&] {
      const LateCudaSetup late = late_cuda_setup();
      return "the GPU stage's batches did not complete beside the ring kernel; CUDA set-up calls since it "
             "started: " + std::to_string(late.calls - late_before) + (late.first.empty() ? "" : " (first: " + late.first + ")");
    });
    auto runner = gpuring::launch_gpu_ring_batch_runner(rings, batches, 0);
    watchdog.arm("the chain beside the ring kernel", 60);
    run_all_on_stage(*s->stage, s->handles);
    watchdog.arm("the ring kernel's exit", 30);
    rings.request_stop();
    ASSERT_TRUE(runner->wait(20)) << "the ring kernel did not stop";
    watchdog.disarm();
  }
  EXPECT_EQ(late_cuda_setup().calls, late_before) << "first: " << late_cuda_setup().first;
  expect_equal_to_cpu(s->cpu_rc, s->shape, s->pairs.cpu, s->handles, s->resident);
  expect_metadata_only(*s->stage, s->handles);
}

}  // namespace
}  // namespace gpunfv
#endif
