// The Firewall's GPU backend: the same FirewallLogic as process(), as a kernel over a device
// batch, one thread per packet.
#include "gpu/kernel_registry.h"
#include "gpu/per_packet_kernel.cuh"
#include "nf/firewall/firewall.h"
#include "nf/firewall/firewall_logic.h"

namespace gpunfv {

void Firewall::process_gpu(const BatchView& device_batch, uint8_t position,
                           const GpuStream& stream) const {
  FirewallView view{device_classifier_, device_rule_drops_.span(), result_offset(),
                    no_match_action_ == FirewallAction::drop};
  launch_per_packet(device_batch, position, view, FirewallLogic{}, stream);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<FirewallView, FirewallLogic>);

}  // namespace gpunfv
