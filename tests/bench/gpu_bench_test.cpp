// nf_bench's GPU side: kernel-only passes over device copies of a packet set (restored from a
// pristine copy before every pass) give the CPU backend's output bit for bit, pass after pass;
// and the device description names the device and its PCIe link. The GPU parts skip without a
// device; without one the description is empty.
#include <gtest/gtest.h>

#include "bench_util.h"
#include "gpu/device.h"
#include "gpu_info.h"

namespace gpunfv::bench {
namespace {

TEST(GpuBench, KernelPassesOverDeviceCopiesEqualTheCpu) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
  RuntimeConfig rc = load_runtime_config(GPUNFV_SOURCE_DIR "/bench/nf_bench/router.yaml");
  set_generator_size(rc, 64);
  const BatchShape shape = plan_batch_shape(rc);
  for (auto& nf : rc.nfs) nf->prepare(Backend::cpu), nf->prepare(Backend::gpu);
  Batches in = make_batches(3, shape, MemoryKind::host_pinned);
  ASSERT_EQ(fill(*rc.ports[rc.chains[0].from], in, 3 * uint64_t(shape.capacity)),
            3 * uint64_t(shape.capacity));
  const size_t used = used_batches(in);
  Batches ref = make_batches(3, shape, MemoryKind::host), out = make_batches(3, shape, MemoryKind::host);
  copy_batches(in, ref, used);
  run_cpu(rc, ref, used, 1);

  GpuBench gb(rc, shape, 3);
  gb.upload(in, used, 4);
  EXPECT_EQ(gb.kernel_copies(), 4u);
  for (uint32_t copies : {1u, 4u, 4u}) {
    EXPECT_GT(gb.kernel_pass(copies), 0.0) << copies;
    gb.download(out, used);
    // The router rewrites TTLs in place: a pass over unrestored copies would differ.
    const Check c = compare_batches(ref, out, used, 1);
    EXPECT_EQ(c.compared, used * shape.capacity);
    EXPECT_EQ(c.mismatches, 0u) << c.first << " (" << copies << " copies)";
  }
}

TEST(GpuInfo, DescribesTheDeviceOrNothing) {
  const nlohmann::json dev = gpu_device_json();
  if (!cuda_device_available()) {
    EXPECT_TRUE(dev.is_null() || dev.empty());
    EXPECT_EQ(gpu_device_line(dev), "GPU: none");
    EXPECT_TRUE(gpu_clocks_json().is_null());
    return;
  }
  EXPECT_FALSE(dev.value("name", std::string()).empty());
  EXPECT_FALSE(dev.value("pci_bus_id", std::string()).empty());
  ASSERT_TRUE(dev.contains("pcie_sysfs"));
  const std::string line = gpu_device_line(dev);
  EXPECT_NE(line.find("PCIe"), std::string::npos) << line;
  if (dev.value("nvml", false)) {
    EXPECT_GT(dev["clocks"]["sm_mhz"].get<unsigned>(), 0u) << line;
    EXPECT_GT(dev["pcie"]["gen"].get<unsigned>(), 0u) << line;
    EXPECT_GT(dev["pcie"]["width"].get<unsigned>(), 0u) << line;
  }
}

}  // namespace
}  // namespace gpunfv::bench
