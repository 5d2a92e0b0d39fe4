// The Router's GPU backend: the same RouterLogic as process(), as a kernel over a device batch.
// Both copies of the live table have a device twin; an update writes the idle copy's twin (only
// the entries it changed) after the streams that last launched over it are done.
#include <algorithm>
#include <memory>

#include "gpu/cuda_check.h"
#include "gpu/graph_launch_gate.h"
#include "gpu/kernel_registry.h"
#include "nf/per_packet_kernel.cuh"
#include "gpu/stream.h"
#include "nf/router/router.h"
#include "nf/router/router_logic.h"

namespace gpunfv {

void Router::take_device_packets(int slot) { device_packets_[slot].take(live_.slot_counter(slot)); }

void Router::finish() {
  if (!device_next_hop_ports_.size()) return;
  // The run is over: the stage has seen every launch over either copy complete, and the
  // streams that made them went with it (a gnet lane's with its green context).
  device_users_.clear();
  for (int s = 0; s < 2; ++s) take_device_packets(s);
}

void Router::prepare_gpu_updates() {
  if (device_next_hop_ports_.size()) return;
  device_next_hop_ports_.upload(next_hop_ports_);
  for (int s = 0; s < 2; ++s) {
    auto& t = const_cast<Dir24_8&>(live_.slot_table(s));
    t.upload_to_device();
    device_views_[s] = RouterView{t.device_ref(), device_next_hop_ports_.span()};
  }
  update_stream_ = create_stream();
  for (DevicePacketCount& c : device_packets_) c.allocate();
  live_.before_write = [this](int slot) {
    // Batches recorded into graphs that noted a stream here are launched first.
    std::unique_lock<std::shared_mutex> launched(graph_launch_gate());
    device_users_.wait(uint64_t(slot));
    take_device_packets(slot);  // final: no launch over this copy is left
  };
  live_.after_write = [this](int slot, const Dir24_8::Touched& touched) {
    const_cast<Dir24_8&>(live_.slot_table(slot)).sync_to_device(touched, update_stream_);
  };
}

void Router::note_device_use(int slot, cudaStream_t s) const {
  device_users_.note(uint64_t(slot), s);
}

void Router::process_gpu(const BatchView& device_batch, uint8_t position,
                         const GpuStream& stream) const {
  // The stream is noted before the pin ends: an update that then takes this copy waits for it.
  LiveRouteTable::Pin pin = live_.pin();
  const int slot = live_.slot_index(pin);
  note_device_use(slot, stream.stream);
  device_packets_[slot].count(device_batch, position, stream, pin.counter());  // where the host does not know
  launch_per_packet(device_batch, position, device_views_[slot], RouterLogic{},
                    first_drop_code<RouterDrop>(), stream);
  pin.count(stream.packets);
}

DevicePacketUse Router::device_packet_use() const {
  auto pin = std::make_shared<LiveRouteTable::Pin>(live_.pin());
  const int slot = live_.slot_index(*pin);
  return {DevicePacketFn::of(DevicePacketFnKind::router, device_views_[slot],
                             first_drop_code<RouterDrop>()),
          [pin](uint32_t packets) { pin->count(packets); }};
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<RouterView, RouterLogic>);

}  // namespace gpunfv
