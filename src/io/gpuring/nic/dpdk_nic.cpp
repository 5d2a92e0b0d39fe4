#include "io/gpuring/nic/dpdk_nic.h"

#include <fmt/core.h>

#include "core/error.h"
#include "io/gpuring/nic/nic_precheck.h"

#if GPUNFV_HAVE_DPDK_PORT && GPUNFV_HAVE_CUDA
// rte_dev_dma_map (DMA-mapping memory EAL did not allocate) is still experimental in 22.11.
#define ALLOW_EXPERIMENTAL_API 1
#include <cuda_runtime.h>
#include <fcntl.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_mempool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "io/dpdk_eal.h"
#endif

namespace gpunfv::gpuring {

ixgbe::NicRingLayout nic_ring_layout(const RingSet& rings, uint64_t bus_of_memory) {
  const RingSetView& v = rings.view();
  const auto* base = rings.memory();
  ixgbe::NicRingLayout l;
  l.rings = v.p.rings;
  l.ring_size = v.p.ring_size;
  l.slot_bytes = v.p.slot_bytes;
  l.rx_desc_bus = bus_of_memory + uint64_t(reinterpret_cast<const uint8_t*>(v.rx_desc) - base);
  l.tx_desc_bus = bus_of_memory + uint64_t(reinterpret_cast<const uint8_t*>(v.tx_desc) - base);
  l.tx_writeback = v.p.tx_writeback;
  return l;
}

DmaWindow dma_window(uint64_t va, uint64_t bytes, uint64_t page_bytes) {
  DmaWindow w;
  w.va = va / page_bytes * page_bytes;
  w.bytes = (va + bytes + page_bytes - 1) / page_bytes * page_bytes - w.va;
  return w;
}

namespace {

[[noreturn]] void fail(const GpuRingConfig& cfg, const std::string& what) {
  throw ConfigError(cfg.nic_where, "nic: " + cfg.nic + ": " + what);
}

uint32_t bar_bytes_needed(const GpuRingConfig& cfg) {
  ixgbe::NicRingLayout l;
  l.rings = cfg.rings.rings;
  l.ring_size = cfg.rings.ring_size;
  l.slot_bytes = cfg.rings.slot_bytes;
  return ixgbe::plan_extent(ixgbe::plan_82599_rings(l));
}

}  // namespace

#if GPUNFV_HAVE_DPDK_PORT && GPUNFV_HAVE_CUDA

struct DpdkNic::State {
  std::string address, line;
  uint16_t port = 0;
  bool port_started = false;
  rte_mempool* pool = nullptr;
  int bar_fd = -1;
  void* bar = MAP_FAILED;
  size_t bar_bytes = 0;
  bool bar_registered = false;
  rte_device* dev = nullptr;
  DmaWindow dma;
  bool extmem = false, dma_mapped = false;
  RingSet* rings = nullptr;  // set once bound
  ixgbe::NicRingLayout layout;
  bool programmed = false;
};

namespace {

// Applies a register plan to the mapped BAR0; a polled bit that does not read back within
// 10 ms ends the plan with the register and the reason.
std::string apply_plan(uint8_t* bar, const std::vector<ixgbe::RegOp>& ops) {
  for (const ixgbe::RegOp& op : ops) {
    auto* reg = reinterpret_cast<volatile uint32_t*>(bar + op.offset);
    const uint32_t v = op.mask == ~0u ? op.value : ((*reg & ~op.mask) | op.value);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // descriptors before the register
    *reg = v;
    if (!op.wait) continue;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
    while ((*reg & op.mask) != op.value) {
      if (std::chrono::steady_clock::now() > deadline)
        return fmt::format("{} did not read back within 10 ms (register {:#07x} = {:#010x})", op.why, op.offset,
                           uint32_t(*reg));
      std::this_thread::sleep_for(std::chrono::microseconds(10));
    }
  }
  return "";
}

}  // namespace

DpdkNic::DpdkNic() : s_(std::make_unique<State>()) {}

void DpdkNic::precheck(const GpuRingConfig& cfg, const std::string& sysfs_root) {
  if (!cfg.real_nic()) return;
  const std::string err = check_nic_sysfs(cfg.nic, bar_bytes_needed(cfg), sysfs_root);
  if (!err.empty()) throw ConfigError(cfg.nic_where, "nic: " + err);
}

std::unique_ptr<DpdkNic> DpdkNic::attach(const GpuRingConfig& cfg, RingSet& rings) {
  precheck(cfg);
  if (rings.placement() != Placement::device) fail(cfg, "the NIC's DMA goes to rings in GPU memory (placement: device)");
  std::unique_ptr<DpdkNic> nic(new DpdkNic());
  State& s = *nic->s_;
  s.address = cfg.nic;
  const uint32_t n = cfg.rings.rings;

  // 2. EAL and the ethdev, queues configured, none started.
  init_dpdk_eal_once(*cfg.port_node);
  if (rte_eth_dev_get_port_by_name(s.address.c_str(), &s.port) != 0 &&
      (rte_dev_probe(s.address.c_str()) != 0 || rte_eth_dev_get_port_by_name(s.address.c_str(), &s.port) != 0))
    fail(cfg, fmt::format("DPDK did not probe it ({}): is this binary's DPDK built with net_ixgbe, and does EAL "
                          "see the device (an eal: -a/--allow list must include it)?",
                          rte_strerror(rte_errno)));
  if (rte_eal_iova_mode() != RTE_IOVA_VA)
    fail(cfg, "EAL runs with IOVA as physical addresses: the GPU ring memory is mapped for the NIC at IOVAs the "
              "IOMMU translates; give eal: [--iova-mode=va] with vfio-pci and the IOMMU on");
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(s.port, &info) != 0) fail(cfg, "cannot query the ethdev");
  if (std::string(info.driver_name).find("ixgbe") == std::string::npos)
    fail(cfg, fmt::format("driven by DPDK's {}, not net_ixgbe: the ring plan programs 82599 registers", info.driver_name));
  if (n > info.max_rx_queues || n > info.max_tx_queues)
    fail(cfg, fmt::format("rings: {} exceeds the device's {} rx / {} tx queues", n, info.max_rx_queues, info.max_tx_queues));
  s.dev = info.device;
  rte_eth_conf conf{};
  if (n > 1 && info.flow_type_rss_offloads != 0) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP & info.flow_type_rss_offloads;
  }
  if (rte_eth_dev_configure(s.port, uint16_t(n), uint16_t(n), &conf) != 0)
    fail(cfg, fmt::format("rte_eth_dev_configure: {}", rte_strerror(rte_errno)));
  const int socket = rte_eth_dev_socket_id(s.port);
  // DPDK's queues need a pool and rings of their own; with deferred start neither is used.
  constexpr uint16_t kDpdkDesc = 64;
  s.pool = rte_pktmbuf_pool_create(("gpunfv_nic_" + s.address).c_str(), 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
  if (!s.pool) fail(cfg, fmt::format("mbuf pool for DPDK's set-up: {}", rte_strerror(rte_errno)));
  rte_eth_rxconf rxc = info.default_rxconf;
  rxc.rx_deferred_start = 1;
  rte_eth_txconf txc = info.default_txconf;
  txc.tx_deferred_start = 1;
  for (uint16_t q = 0; q < n; ++q) {
    if (rte_eth_rx_queue_setup(s.port, q, kDpdkDesc, socket, &rxc, s.pool) != 0 ||
        rte_eth_tx_queue_setup(s.port, q, kDpdkDesc, socket, &txc) != 0)
      fail(cfg, fmt::format("queue {} set-up: {}", q, rte_strerror(rte_errno)));
  }
  if (rte_eth_dev_start(s.port) != 0) fail(cfg, fmt::format("rte_eth_dev_start: {}", rte_strerror(rte_errno)));
  s.port_started = true;
  rte_eth_promiscuous_enable(s.port);  // best effort: a port that refuses still receives its own MAC

  // 3. BAR0 for the host and the GPU. DPDK's own mapping (rte_pci_device::mem_resource[0]) is
  // behind a driver-only header (bus_pci_driver.h) that distributions do not install; sysfs
  // resource0 maps the same registers.
  const std::string res0 = "/sys/bus/pci/devices/" + s.address + "/resource0";
  s.bar_fd = open(res0.c_str(), O_RDWR | O_SYNC);
  struct stat st {};
  if (s.bar_fd < 0 || fstat(s.bar_fd, &st) != 0) fail(cfg, fmt::format("cannot open {}: {}", res0, std::strerror(errno)));
  s.bar_bytes = size_t(st.st_size);
  s.bar = mmap(nullptr, s.bar_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s.bar_fd, 0);
  if (s.bar == MAP_FAILED) fail(cfg, fmt::format("cannot map {}: {}", res0, std::strerror(errno)));
  if (cudaError_t e = cudaHostRegister(s.bar, s.bar_bytes, cudaHostRegisterIoMemory | cudaHostRegisterMapped);
      e != cudaSuccess)
    fail(cfg, fmt::format("cudaHostRegister(BAR0, cudaHostRegisterIoMemory) failed: {}. The GPU cannot map the NIC's "
                          "registers for peer-to-peer writes on this platform (GPU and NIC need a PCIe path that "
                          "forwards peer MMIO: ACS redirect off on the switch ports between them, the IOMMU "
                          "passing it; docs/architecture.md)",
                          cudaGetErrorString(e)));
  s.bar_registered = true;
  void* bar_dev = nullptr;
  if (cudaError_t e = cudaHostGetDevicePointer(&bar_dev, s.bar, 0); e != cudaSuccess)
    fail(cfg, fmt::format("cudaHostGetDevicePointer(BAR0): {}", cudaGetErrorString(e)));

  // 4. GPU ring memory for the NIC's DMA, at IOVA = VA.
  s.dma = dma_window(reinterpret_cast<uint64_t>(rings.memory()), rings.memory_bytes(), kGpuPageBytes);
  void* dma_va = reinterpret_cast<void*>(s.dma.va);
  if (rte_extmem_register(dma_va, s.dma.bytes, nullptr, 0, kGpuPageBytes) != 0)
    fail(cfg, fmt::format("rte_extmem_register of the GPU ring memory ({} bytes at {:#x}): {}", s.dma.bytes, s.dma.va,
                          rte_strerror(rte_errno)));
  s.extmem = true;
  if (rte_dev_dma_map(s.dev, dma_va, s.dma.va, s.dma.bytes) != 0)
    fail(cfg, fmt::format(
                  "rte_dev_dma_map of the GPU ring memory ({} bytes at {:#x}) failed: {}. The NIC cannot DMA into GPU "
                  "memory here: VFIO's IOMMU mapping pins the CPU pages behind an address, and cudaMalloc memory has "
                  "none. It needs GPU memory exported for peer DMA in a form this path accepts: nvidia-peermem "
                  "(GPUDirect RDMA; serves NICs driven through ib_core, not VFIO), a dma-buf of the allocation "
                  "(cuMemGetHandleForAddressRange, open NVIDIA kernel modules) imported by the IOMMU layer, or the "
                  "GPU memory mapped through its BAR1 (GDRCopy) so VFIO maps those PCI pages; see docs/architecture.md",
                  s.dma.bytes, s.dma.va, rte_strerror(rte_errno)));
  s.dma_mapped = true;
  const uint64_t bus_of_memory = s.dma.va + (reinterpret_cast<uint64_t>(rings.memory()) - s.dma.va);
  rings.bind_nic(bus_of_memory, static_cast<uint8_t*>(bar_dev), static_cast<uint8_t*>(s.bar));
  s.rings = &rings;

  // 5. The queue registers.
  s.layout = nic_ring_layout(rings, bus_of_memory);
  const std::vector<ixgbe::RegOp> plan = ixgbe::plan_82599_rings(s.layout);
  if (ixgbe::plan_extent(plan) > s.bar_bytes)
    fail(cfg, fmt::format("BAR0 maps {} bytes, the plan writes up to {}", s.bar_bytes, ixgbe::plan_extent(plan)));
  s.programmed = true;  // from the first write on, teardown has something to undo
  if (std::string err = apply_plan(static_cast<uint8_t*>(s.bar), plan); !err.empty()) fail(cfg, "bring-up: " + err);
  s.line = fmt::format("nic {} (82599, DPDK port {}, BAR0 {} KiB mapped for the GPU, {} rings, GPU ring memory {} KiB "
                       "at IOVA {:#x}; {})",
                       s.address, s.port, s.bar_bytes / 1024, n, s.dma.bytes / 1024, s.dma.va,
                       ixgbe::tx_completion_82599(s.layout.tx_writeback).describe());
  return nic;
}

DpdkNic::~DpdkNic() {
  State& s = *s_;
  if (s.programmed) {
    const std::string err = apply_plan(static_cast<uint8_t*>(s.bar), ixgbe::plan_82599_teardown(s.layout));
    if (!err.empty()) std::fprintf(stderr, "gpunfv: nic %s: teardown: %s\n", s.address.c_str(), err.c_str());
  }
  if (s.rings) s.rings->unbind_nic();
  if (s.dma_mapped) rte_dev_dma_unmap(s.dev, reinterpret_cast<void*>(s.dma.va), s.dma.va, s.dma.bytes);
  if (s.extmem) rte_extmem_unregister(reinterpret_cast<void*>(s.dma.va), s.dma.bytes);
  if (s.bar_registered) cudaHostUnregister(s.bar);
  if (s.bar != MAP_FAILED) munmap(s.bar, s.bar_bytes);
  if (s.bar_fd >= 0) close(s.bar_fd);
  if (s.port_started) rte_eth_dev_stop(s.port);
  if (s.pool) rte_mempool_free(s.pool);
}

std::string DpdkNic::describe() const { return s_->line; }

#else  // no DPDK or no CUDA in this build: the type parses, running it says what is missing.

struct DpdkNic::State {};

DpdkNic::DpdkNic() : s_(std::make_unique<State>()) {}
DpdkNic::~DpdkNic() = default;

void DpdkNic::precheck(const GpuRingConfig& cfg, const std::string& sysfs_root) {
  (void)sysfs_root;
  (void)bar_bytes_needed;
  if (!cfg.real_nic()) return;
  if (!GPUNFV_HAVE_DPDK_PORT)
    fail(cfg, "this build has no DPDK (libdpdk's static archives were not found at build time: "
              "cmake/live_ports.cmake); a real NIC is set up through DPDK's ixgbe driver");
  fail(cfg, "this build has no CUDA (nvcc was not found at build time); a real NIC DMAs into GPU memory");
}

std::unique_ptr<DpdkNic> DpdkNic::attach(const GpuRingConfig& cfg, RingSet&) {
  precheck(cfg);
  fail(cfg, "not in this build");
}

std::string DpdkNic::describe() const { return ""; }

#endif

}  // namespace gpunfv::gpuring
