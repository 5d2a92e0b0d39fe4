// A gpuring port's real NIC without the NIC: what is checked before DPDK's EAL starts, against
// a fake sysfs tree (device absent, not an 82599, unbound or bound to ixgbe, no IOMMU group,
// BAR0 too small, all well), DpdkNic::precheck's ConfigError at the nic: line, and the pure
// pieces of attach (ring bus addresses, the DMA window).
#include "io/gpuring/nic/nic_precheck.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/io/port_test_util.h"
#include "core/error.h"
#include "io/gpuring/nic/dpdk_nic.h"

namespace gpunfv::gpuring {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::yaml_node;

constexpr const char* kAddr = "0000:03:00.0";

// /sys/bus/pci/devices/ADDR with the files and links the check reads.
struct FakeSysfs {
  TempDir tmp;
  fs::path sys = tmp.file("sys");
  fs::path dev = sys / "bus/pci/devices" / kAddr;

  FakeSysfs(const char* vendor = "0x8086", const char* device = "0x10fb", const char* driver = "vfio-pci",
            bool iommu = true, uint64_t bar0 = 512 * 1024) {
    fs::create_directories(dev);
    fs::create_directories(sys / "bus/pci/drivers/vfio-pci");
    fs::create_directories(sys / "bus/pci/drivers/ixgbe");
    fs::create_directories(sys / "kernel/iommu_groups/7");
    std::ofstream(dev / "vendor") << vendor << "\n";
    std::ofstream(dev / "device") << device << "\n";
    std::ofstream(dev / "resource") << fmt_bar(bar0) << "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
    if (driver) fs::create_directory_symlink(sys / "bus/pci/drivers" / driver, dev / "driver");
    if (iommu) fs::create_directory_symlink(sys / "kernel/iommu_groups/7", dev / "iommu_group");
  }
  static std::string fmt_bar(uint64_t bytes) {
    char line[128];
    std::snprintf(line, sizeof line, "0x00000000fb000000 0x%016llx 0x0000000000140204\n",
                  static_cast<unsigned long long>(0xfb000000ull + bytes - 1));
    return line;
  }
  std::string check(uint64_t need = 0x10000) const { return check_nic_sysfs(kAddr, need, sys.string()); }
};

void expect_has(const std::string& msg, const std::string& fragment) {
  EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
}

TEST(NicPrecheck, WellSetUpDevicePasses) { EXPECT_EQ(FakeSysfs().check(), ""); }

TEST(NicPrecheck, AbsentDevice) {
  TempDir empty;
  expect_has(check_nic_sysfs(kAddr, 0x10000, empty.file("sys")), "no PCI device 0000:03:00.0");
}

TEST(NicPrecheck, NotAn82599) {
  expect_has(FakeSysfs("0x10de", "0x2330").check(), "not an Intel 82599");
  expect_has(FakeSysfs("0x8086", "0x10c6").check(), "8086:10c6, not an Intel 82599");  // an 82598
  EXPECT_EQ(FakeSysfs("0x8086", "0x154d").check(), "");  // X520 SF2
}

TEST(NicPrecheck, DriverMustBeVfioPci) {
  expect_has(FakeSysfs("0x8086", "0x10fb", nullptr).check(), "bound to no driver: bind it to vfio-pci");
  expect_has(FakeSysfs("0x8086", "0x10fb", "ixgbe").check(), "bound to ixgbe, not vfio-pci");
}

TEST(NicPrecheck, IommuGroupAndBarSize) {
  expect_has(FakeSysfs("0x8086", "0x10fb", "vfio-pci", false).check(), "no IOMMU group");
  expect_has(FakeSysfs("0x8086", "0x10fb", "vfio-pci", true, 16 * 1024).check(), "BAR0 is 16384 bytes");
}

TEST(NicPrecheck, DpdkNicPrecheckNamesTheNicLine) {
  const GpuRingConfig cfg = GpuRingConfig::parse(yaml_node("name: gr\ntype: gpuring\nnic: 0000:03:00.0\nrings: 100"));
  try {
    TempDir empty;
    DpdkNic::precheck(cfg, empty.file("sys"));
    FAIL() << "no error for an absent device";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    expect_has(msg, "/tmp/cfg.yaml:3: nic:");
#if GPUNFV_HAVE_DPDK_PORT && GPUNFV_HAVE_CUDA
    expect_has(msg, "no PCI device 0000:03:00.0");
#elif GPUNFV_HAVE_DPDK_PORT
    expect_has(msg, "no CUDA");
#else
    expect_has(msg, "no DPDK");
#endif
  }
#if GPUNFV_HAVE_DPDK_PORT && GPUNFV_HAVE_CUDA
  // 100 rings reach RXDCTL(99) in the second rx bank: BAR0 must cover 0x0D8EC.
  FakeSysfs small("0x8086", "0x10fb", "vfio-pci", true, 0xD000);
  EXPECT_THROW(DpdkNic::precheck(cfg, small.sys.string()), ConfigError);
  FakeSysfs enough;
  EXPECT_NO_THROW(DpdkNic::precheck(cfg, enough.sys.string()));
#endif
  // A port without nic: has nothing to check.
  EXPECT_NO_THROW(DpdkNic::precheck(GpuRingConfig::parse(yaml_node("name: gr\ntype: gpuring\nsource: g"))));
}

TEST(NicPrecheck, RingBusAddressesFollowTheMemory) {
  RingParams p;
  p.rings = 3;
  p.ring_size = 64;
  p.slot_bytes = 2048;
  RingSet rs(p, Placement::host);
  const uint64_t bus = 0x40'0000'0000ull;
  const ixgbe::NicRingLayout l = nic_ring_layout(rs, bus);
  const uint8_t* base = rs.memory();
  EXPECT_EQ(l.rings, 3u);
  EXPECT_EQ(l.ring_size, 64u);
  EXPECT_EQ(l.rx_desc_bus, bus + uint64_t(reinterpret_cast<const uint8_t*>(rs.view().rx_desc) - base));
  EXPECT_EQ(l.tx_desc_bus, bus + uint64_t(reinterpret_cast<const uint8_t*>(rs.view().tx_desc) - base));
  EXPECT_EQ(l.rx_desc_bus % 128, 0u);
  EXPECT_EQ(l.tx_desc_bus % 128, 0u);
  EXPECT_TRUE(l.tx_writeback);
  EXPECT_NO_THROW(ixgbe::plan_82599_rings(l));
  EXPECT_THROW(rs.bind_nic(bus, nullptr, nullptr), std::logic_error);  // host rings: no NIC DMA
}

TEST(NicPrecheck, DmaWindowCoversTheAllocationInWholePages) {
  const DmaWindow w = dma_window(0x7f00'0001'2300ull, 0x30000, kGpuPageBytes);
  EXPECT_EQ(w.va, 0x7f00'0001'0000ull);
  EXPECT_EQ(w.bytes, 0x40000u);
  const DmaWindow exact = dma_window(0x20'0000, 0x20'0000, kGpuPageBytes);
  EXPECT_EQ(exact.va, 0x20'0000u);
  EXPECT_EQ(exact.bytes, 0x20'0000u);
}

}  // namespace
}  // namespace gpunfv::gpuring
