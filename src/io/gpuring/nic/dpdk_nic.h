// DpdkNic: a real Intel 82599 (X520, ixgbe) driving a gpuring port's rings in GPU memory, in
// place of the NIC emulator (`nic: 0000:03:00.0` on the port; gpuring_config.h). Written to
// compile and to fail clearly; it has never run: no machine it was tested on has such a NIC
// next to a GPU with peer-to-peer DMA (docs/architecture.md lists what the platform needs).
//
// attach(), in order, each step undone by the destructor in reverse:
//   1. precheck (also callable alone, before any GPU memory exists): this build has DPDK and
//      CUDA; the PCI address names an 82599 bound to vfio-pci, in an IOMMU group, whose BAR0
//      covers the registers the plan writes (nic_precheck.h, from sysfs);
//   2. DPDK's EAL (io/dpdk_eal.h, the port's eal: list), the device probed by the ixgbe PMD and
//      set up as an ethdev (reset, link, RSS over the rings, CRC strip, promiscuous) with
//      `rings` rx/tx queues configured but not started (deferred start): DPDK's own tiny rings
//      are never enabled;
//   3. BAR0 mapped (sysfs resource0) and registered with CUDA as I/O memory
//      (cudaHostRegisterIoMemory | cudaHostRegisterMapped): RingSetView::bar then points at the
//      real registers, and the GPU's RDT/TDT writes and TDH reads go to the NIC across PCIe;
//   4. the ring memory in GPU memory registered with EAL as external memory and DMA-mapped for
//      the device at IOVA = its virtual address (rte_extmem_register, rte_dev_dma_map): the
//      NIC reaches descriptors and slots at those IOVAs, RingSetView::bus_base becomes the
//      IOVA of slot 0 and the rx descriptors are re-armed with them (RingSet::bind_nic);
//   5. the queue registers programmed per nic_82599_plan.h (rings' IOVAs, SRRCTL, enables,
//      RXEN last). The destructor runs the teardown plan first, once the loops have exited.
//
// Errors: every failure throws ConfigError at the port's nic: line, naming the step and what
// is missing: no DPDK or no CUDA in this build; no such PCI device, not an 82599, not bound to
// vfio-pci, no IOMMU group, BAR0 too small; EAL not starting (hugepages, permissions); the
// PMD not probing it; IOVA not VA; the GPU unable to map the BAR (no peer MMIO); GPU memory
// not DMA-mappable (VFIO pins CPU pages; GPU memory needs nvidia-peermem or dma-buf support
// the IOMMU path accepts); a queue enable that does not read back.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/gpuring/gpuring_config.h"
#include "io/gpuring/nic/internal/nic_82599_plan.h"
#include "io/gpuring/ring/ring_set.h"

namespace gpunfv::gpuring {

// Where the rings lie for the NIC when the ring memory is at bus address `bus_of_memory`.
ixgbe::NicRingLayout nic_ring_layout(const RingSet& rings, uint64_t bus_of_memory);

// The page-aligned span covering [va, va + bytes) that is registered and DMA-mapped (its edges
// may hold bytes of neighbouring allocations; the NIC is only ever given addresses inside).
struct DmaWindow {
  uint64_t va = 0;
  uint64_t bytes = 0;
};
DmaWindow dma_window(uint64_t va, uint64_t bytes, uint64_t page_bytes);
inline constexpr uint64_t kGpuPageBytes = 64 * 1024;  // GPU memory's page: the mapping's grain

class DpdkNic {
 public:
  // Step 1 only; sysfs_root is "/sys" but for tests.
  static void precheck(const GpuRingConfig& cfg, const std::string& sysfs_root = "/sys");
  // Steps 1-5, for device-placed rings whose loops have not started.
  static std::unique_ptr<DpdkNic> attach(const GpuRingConfig& cfg, RingSet& rings);
  ~DpdkNic();
  DpdkNic(const DpdkNic&) = delete;
  DpdkNic& operator=(const DpdkNic&) = delete;

  // One line: the device, its mappings and the tx completion mode.
  std::string describe() const;

 private:
  DpdkNic();
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace gpunfv::gpuring
