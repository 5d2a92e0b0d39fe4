// The Firewall's GPU backend: the same FirewallLogic as process(), as a kernel over a device
// batch, one thread per packet.
#include "gpu/count_kernel.cuh"
#include "gpu/kernel_registry.h"
#include "nf/per_packet_kernel.cuh"
#include "nf/firewall/firewall.h"
#include "nf/firewall/firewall_logic.h"

namespace gpunfv {

namespace {

// collect_range()'s slot on the device: the rule, then no match, then not IPv4.
struct FirewallCountSlot {
  uint8_t position;
  uint32_t result_offset, rules;
  __device__ bool operator()(const BatchView& b, uint32_t i, uint32_t& slot) const {
    if (!reached_node(b, i, position)) return false;
    const uint32_t rule = result_word(b, i, result_offset, 0);
    slot = rule < rules ? rule : rule == kNoRule ? rules : rules + 1;
    return true;
  }
};

}  // namespace

void Firewall::process_gpu(const BatchView& device_batch, uint8_t position,
                           const GpuStream& stream) const {
  FirewallView view{device_classifier_, device_rule_drops_.span(), result_offset(),
                    no_match_action_ == FirewallAction::drop};
  launch_per_packet(device_batch, position, view, FirewallLogic{}, stream);
  if (device_counts_)
    launch_count_packets(device_batch, device_counts_->ref(),
                         FirewallCountSlot{position, result_offset(), uint32_t(rules_.size())}, stream);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<FirewallView, FirewallLogic>);
GPUNFV_REGISTER_KERNEL(count_packets_kernel<FirewallCountSlot>);

}  // namespace gpunfv
