// The framework's steps around a chain's NFs, shared by the executor, tests and benchmarks:
// entering the chain (classify + first switch) and running one node (its NF, then the switch
// that sends its survivors on). CPU versions run on the calling thread; GPU versions launch on
// a stream and return at once. Both count packets sent to each node in the batch's
// node_packets, which the host reads to size NF queues in packets.
#pragma once

#include "chain/runtime_config.h"
#include "core/batch.h"

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/stream.h"
#endif

namespace gpunfv {

void enter_chain_cpu(const Chain& c, const BatchView& b);
// Runs node k's NF over the packets sent to it (none: nothing runs) and switches them on; a
// quarantined NF does not run, and its packets are dropped as nf_isolation_fault.
void run_node_cpu(const RuntimeConfig& rc, const Chain& c, const BatchView& b, uint8_t k);
// The packets sent to node k are dropped there: its input queue was full (nf_queue_full), or
// its NF is quarantined (nf_isolation_fault).
void drop_at_node_cpu(const BatchView& b, uint8_t k, DropReason reason = DropReason::nf_queue_full);

#if GPUNFV_HAVE_CUDA
// The device batch's node_packets must be zero before enter (the host zeroes its copy at
// ingress and the counters travel with the batch's device prefix, or launch_zero_node_packets
// zeroes them on the device).
void launch_zero_node_packets(const BatchView& device_batch, cudaStream_t stream);
void launch_enter_chain(const Chain& c, const BatchView& device_batch, cudaStream_t stream);
// NF kernel(s) on `s` (its SM share), then the switch kernel on the same stream unless the NF's
// last kernel ran the switch itself (nf/node_exit.h: offered unless `offer_switch` is false); for
// a quarantined NF, the drop of its packets instead.
void launch_node_gpu(const RuntimeConfig& rc, const Chain& c, const BatchView& device_batch,
                     uint8_t k, const GpuStream& s, bool offer_switch = true);
void launch_drop_at_node(const BatchView& device_batch, uint8_t k, cudaStream_t stream,
                         DropReason reason = DropReason::nf_queue_full);
// Writes the device batch's node_packets into `host_counts` (pinned host memory) from a kernel:
// the host learns every NF queue's occupancy without a copy-engine transfer, which would wait
// behind the batches egress is downloading on the same engine.
void launch_publish_node_packets(const BatchView& device_batch, uint32_t* host_counts,
                                 cudaStream_t stream);
#endif

}  // namespace gpunfv
