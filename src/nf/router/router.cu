// The Router's GPU backend: the same RouterLogic as process(), as a kernel over a device batch.
// Both copies of the live table have a device twin; an update writes the idle copy's twin (only
// the entries it changed) after the streams that last launched over it are done.
#include <algorithm>

#include "gpu/cuda_check.h"
#include "gpu/graph_launch_gate.h"
#include "gpu/kernel_registry.h"
#include "nf/per_packet_kernel.cuh"
#include "gpu/stream.h"
#include "nf/router/router.h"
#include "nf/router/router_logic.h"

namespace gpunfv {

namespace {

// Packets at `position` that the router is about to process (alive, sent to it).
__global__ void router_count_at_node_kernel(BatchView b, uint8_t position, unsigned long long* out) {
  uint32_t n = 0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < b.count; i += gridDim.x * blockDim.x)
    n += b.verdict[i] == static_cast<uint8_t>(DropReason::none) && b.next_nf[i] == position;
  for (int offset = 16; offset > 0; offset >>= 1) n += __shfl_down_sync(0xFFFFFFFFu, n, offset);
  if ((threadIdx.x & 31u) == 0 && n) atomicAdd(out, (unsigned long long)n);
}

}  // namespace

void Router::take_device_packets(int slot) {
  unsigned long long n = 0;
  GPUNFV_CUDA(cudaMemcpyAsync(&n, device_packets_.data() + slot, sizeof n, cudaMemcpyDeviceToHost,
                              update_stream_));
  const unsigned long long zero = 0;
  GPUNFV_CUDA(cudaMemcpyAsync(device_packets_.data() + slot, &zero, sizeof zero,
                              cudaMemcpyHostToDevice, update_stream_));
  GPUNFV_CUDA(cudaStreamSynchronize(update_stream_));
  if (n) live_.slot_counter(slot)->fetch_add(n, std::memory_order_relaxed);
}

void Router::finish() {
  if (!device_packets_.size()) return;
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
  device_packets_.allocate(2);
  const unsigned long long zeros[2] = {0, 0};  // a copy: no memset kernel of CUDA's own
  GPUNFV_CUDA(cudaMemcpyAsync(device_packets_.data(), zeros, sizeof zeros, cudaMemcpyHostToDevice,
                              update_stream_));
  GPUNFV_CUDA(cudaStreamSynchronize(update_stream_));
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
  if (stream.packets == 0 && device_batch.count > 0) {  // the host does not know: count here
    const uint32_t blocks = std::min<uint32_t>((device_batch.count + 255) / 256, 64);
    router_count_at_node_kernel<<<blocks, 256, 0, stream.stream>>>(device_batch, position,
                                                                   device_packets_.data() + slot);
    GPUNFV_CUDA(cudaGetLastError());
  }
  launch_per_packet(device_batch, position, device_views_[slot], RouterLogic{}, stream);
  pin.count(stream.packets);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<RouterView, RouterLogic>);
GPUNFV_REGISTER_KERNEL(router_count_at_node_kernel);

}  // namespace gpunfv
