// Packets sent to an NF whose process was lost are dropped as nf_process_lost.
#pragma once

#include "core/batch.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/stream.h"
#endif

namespace gpunfv::nf_process {

#if GPUNFV_HAVE_CUDA
// On the batch's stream: the packets at `position` that are alive.
void drop_lost_packets_gpu(const BatchView& device_batch, uint8_t position, const GpuStream& s);
#endif

}  // namespace gpunfv::nf_process
