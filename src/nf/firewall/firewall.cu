// The Firewall's GPU backend: the same FirewallLogic as process(), as a kernel over a device
// batch, one thread per packet.
#include "gpu/cuda_check.h"
#include "gpu/graph_launch_gate.h"
#include "gpu/kernel_registry.h"
#include "gpu/device_counters.h"
#include "nf/per_packet_kernel.cuh"
#include "nf/firewall/firewall.h"
#include "nf/firewall/firewall_logic.h"

namespace gpunfv {

namespace {

// collect_range()'s slot on the device (Firewall's slots: no match, not IPv4, the rules).
struct FirewallCountSlot {
  uint32_t rules;
  __device__ bool operator()(const NfPackets<>& p, uint32_t i, uint32_t& slot) const {
    if (!p.reached(i)) return false;
    const uint32_t rule = p.result_word(i, 0);
    slot = rule < rules ? Firewall::kFirstRuleSlot + rule
           : rule == kNoRule ? Firewall::kNoMatchSlot : Firewall::kNotIpv4Slot;
    return true;
  }
};

}  // namespace

void FirewallTables::upload() {
  if (classifier.on_device()) return;
  classifier.upload_to_device();
  device_drops.upload(drops);
  device_classifier = classifier.device_ref();
  device_packets.allocate();
}

// The old tables' device memory goes once the streams that launched over them are done.
void Firewall::retire(LiveSnapshot<FirewallTables>::Pinned old) {
  // Batches recorded into graphs that noted a stream here are launched first.
  std::unique_lock<std::shared_mutex> launched(graph_launch_gate());
  device_users_.wait(old.version);
  old.tables->device_packets.take(old.packets);
}

void Firewall::process_gpu(const BatchView& device_batch, uint8_t position,
                           const GpuStream& stream) const {
  // Noted before the pin ends: a replacement then waits for this launch.
  const auto t = tables_.pin();
  device_users_.note(t.version, stream.stream);
  t->device_packets.count(device_batch, position, stream, t.packets);
  FirewallView view{t->device_classifier, t->device_drops.span(), result_offset(),
                    no_match_action_ == FirewallAction::drop};
  const uint8_t first_drop = first_drop_code<FirewallDrop>();
  if (device_counts_)
    launch_per_packet_counted(device_batch, position, view, FirewallLogic{}, slot(first_drop), stream,
                              device_counts_->ref(), FirewallCountSlot{uint32_t(t->rules.size())});
  else
    launch_per_packet(device_batch, position, view, FirewallLogic{}, slot(first_drop), stream);
  t.count(stream.packets);
}

DevicePacketUse Firewall::device_packet_use() const {
  const auto t = tables_.pin();
  const FirewallView view{t->device_classifier, t->device_drops.span(), result_offset(),
                          no_match_action_ == FirewallAction::drop};
  return {DevicePacketFn::of(DevicePacketFnKind::firewall, view, slot(first_drop_code<FirewallDrop>())),
          [t](uint32_t packets) { t.count(packets); }};
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<FirewallView, FirewallLogic>);
GPUNFV_REGISTER_KERNEL(per_packet_counted_kernel<FirewallView, FirewallLogic, FirewallCountSlot>);

}  // namespace gpunfv
