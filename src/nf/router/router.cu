// The Router's GPU backend: the same RouterLogic as process(), as a kernel over a device batch.
// Both copies of the live table have a device twin; an update writes the idle copy's twin (only
// the entries it changed) after the streams that last launched over it are done.
#include "gpu/kernel_registry.h"
#include "gpu/per_packet_kernel.cuh"
#include "gpu/stream.h"
#include "nf/router/router.h"
#include "nf/router/router_logic.h"

namespace gpunfv {

void Router::prepare_gpu_updates() {
  if (device_next_hop_ports_.size()) return;
  device_next_hop_ports_.upload(next_hop_ports_);
  for (int s = 0; s < 2; ++s) {
    auto& t = const_cast<Dir24_8&>(live_.slot_table(s));
    t.upload_to_device();
    device_views_[s] = RouterView{t.device_ref(), device_next_hop_ports_.span()};
  }
  update_stream_ = create_stream();
  live_.before_write = [this](int slot) {
    std::set<cudaStream_t> streams;
    {
      std::lock_guard<std::mutex> lk(use_m_);
      streams.swap(device_users_[slot]);
    }
    for (cudaStream_t s : streams) GPUNFV_CUDA(cudaStreamSynchronize(s));
  };
  live_.after_write = [this](int slot, const Dir24_8::Touched& touched) {
    const_cast<Dir24_8&>(live_.slot_table(slot)).sync_to_device(touched, update_stream_);
  };
}

void Router::note_device_use(int slot, cudaStream_t s) const {
  std::lock_guard<std::mutex> lk(use_m_);
  device_users_[slot].insert(s);
}

void Router::process_gpu(const BatchView& device_batch, uint8_t position,
                         const GpuStream& stream) const {
  // The stream is noted before the pin ends: an update that then takes this copy waits for it.
  LiveRouteTable::Pin pin = live_.pin();
  const int slot = live_.slot_index(pin);
  note_device_use(slot, stream.stream);
  launch_per_packet(device_batch, position, device_views_[slot], RouterLogic{}, stream);
  pin.count(stream.packets);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<RouterView, RouterLogic>);

}  // namespace gpunfv
