// The Router's GPU backend: the same RouterLogic as process(), as a kernel over a device batch.
#include "gpu/kernel_registry.h"
#include "nf/per_packet_kernel.cuh"
#include "nf/router/router.h"
#include "nf/router/router_logic.h"

namespace gpunfv {

void Router::process_gpu(const BatchView& device_batch, uint8_t position,
                         const GpuStream& stream) const {
  launch_per_packet(device_batch, position, device_view_, RouterLogic{}, stream);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(per_packet_kernel<RouterView, RouterLogic>);

}  // namespace gpunfv
