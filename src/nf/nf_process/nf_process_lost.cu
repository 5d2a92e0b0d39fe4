// A lost NF process's packets on the GPU: those sent to its NF are dropped as nf_process_lost,
// on the batch's stream, by the Manager.
#include "gpu/kernel_registry.h"
#include "nf/nf_process/internal/lost_packets.h"
#include "nf/per_packet_kernel.cuh"

namespace gpunfv::nf_process {

namespace {

struct LostView {
  uint8_t unused;
};

struct LostLogic {
  GPUNFV_HD NfVerdict operator()(const LostView&, PacketReader) const { return DropReason::nf_process_lost; }
};

}  // namespace

void drop_lost_packets_gpu(const BatchView& device_batch, uint8_t position, const GpuStream& s) {
  const LostView view{0};
  launch_per_packet(device_batch, position, view, LostLogic{}, NfSlot(0), s);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<LostView, LostLogic>);

}  // namespace gpunfv::nf_process
