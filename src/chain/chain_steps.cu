#include <algorithm>

#include "chain/chain_steps.h"
#include "chain/classify.h"
#include "core/chain_switch.h"
#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"

namespace gpunfv {

namespace {

constexpr int kThreads = 256;

// Per-block counts in shared memory, one atomic per node per block into the batch's
// node_packets: 2048 packets cost a few dozen global atomics, not 2048.
__device__ void count_sent(const BatchView& b, uint32_t* block_counts, uint8_t to) {
  if (to != kChainDone) atomicAdd(&block_counts[to], 1u);
}

__device__ void flush_counts(const BatchView& b, uint32_t* block_counts) {
  __syncthreads();
  for (uint32_t k = threadIdx.x; k < kMaxChainNodes; k += blockDim.x)
    if (block_counts[k]) atomicAdd(&b.node_packets[k], block_counts[k]);
}

__global__ void enter_chain_kernel(BatchView b, ChainView c) {
  __shared__ uint32_t counts[kMaxChainNodes];
  for (uint32_t k = threadIdx.x; k < kMaxChainNodes; k += blockDim.x) counts[k] = 0;
  __syncthreads();
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < b.count; i += gridDim.x * blockDim.x) {
    classify_packet(b, i);
    count_sent(b, counts, enter_chain(c, b, i));
  }
  flush_counts(b, counts);
}

__global__ void switch_kernel(BatchView b, ChainView c, uint8_t k) {
  __shared__ uint32_t counts[kMaxChainNodes];
  for (uint32_t j = threadIdx.x; j < kMaxChainNodes; j += blockDim.x) counts[j] = 0;
  __syncthreads();
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < b.count; i += gridDim.x * blockDim.x)
    count_sent(b, counts, switch_after_node(c, b, i, k));
  flush_counts(b, counts);
}

__global__ void drop_at_node_kernel(BatchView b, uint8_t k, DropReason reason) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < b.count; i += gridDim.x * blockDim.x)
    drop_at_node(b, i, k, reason);
  if (blockIdx.x == 0 && threadIdx.x == 0) b.node_packets[k] = 0;
}

// Zeroes the per-node counts before enter_chain_kernel adds to them. A kernel of ours rather than
// the runtime's memset (a kernel of CUDA's own): beside a GPU ring's persistent kernel nothing
// may need CUDA to set anything up (gpu/device_preflight.h).
__global__ void zero_node_packets_kernel(BatchView b) {
  for (uint32_t k = threadIdx.x; k < kMaxChainNodes; k += blockDim.x) b.node_packets[k] = 0;
}

// The per-node counts to the host's copy of the batch (pinned memory, reachable from kernels
// through unified addressing): written by the SMs over PCIe instead of a copy-engine transfer.
__global__ void publish_node_packets_kernel(BatchView b, uint32_t* host_counts) {
  for (uint32_t k = threadIdx.x; k < kMaxChainNodes; k += blockDim.x)
    host_counts[k] = b.node_packets[k];
}

int blocks_for(uint32_t count, int max_blocks) {
  int blocks = static_cast<int>((count + kThreads - 1) / kThreads);
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  return std::max(blocks, 1);
}

}  // namespace

void launch_enter_chain(const Chain& c, const BatchView& dv, cudaStream_t stream) {
  if (dv.count == 0) return;
  enter_chain_kernel<<<blocks_for(dv.count, 0), kThreads, 0, stream>>>(dv, c.view);
  GPUNFV_CUDA(cudaGetLastError());
}

void launch_node_gpu(const RuntimeConfig& rc, const Chain& c, const BatchView& dv, uint8_t k,
                     const GpuStream& s, bool offer_switch) {
  if (dv.count == 0) return;
  const NetworkFunction& nf = *rc.nfs[c.path[k]];
  if (nf.quarantined()) {
    launch_drop_at_node(dv, k, s.stream, DropReason::nf_isolation_fault);
    return;
  }
  // Offered to the NF's last kernel (nf/node_exit.h); an NF that takes it saves the launch below.
  const NodeSwitch at{c.view, k};
  bool taken = false;
  GpuStream offered = s;
  if (offer_switch) {
    offered.node_switch = &at;
    offered.switch_taken = &taken;
  }
  nf.process_gpu(dv, k, offered);
  if (taken) return;
  switch_kernel<<<blocks_for(dv.count, s.max_blocks), kThreads, 0, s.stream>>>(dv, c.view, k);
  GPUNFV_CUDA(cudaGetLastError());
}

void launch_zero_node_packets(const BatchView& dv, cudaStream_t stream) {
  zero_node_packets_kernel<<<1, kMaxChainNodes, 0, stream>>>(dv);
  GPUNFV_CUDA(cudaGetLastError());
}

void launch_publish_node_packets(const BatchView& dv, uint32_t* host_counts, cudaStream_t stream) {
  publish_node_packets_kernel<<<1, kMaxChainNodes, 0, stream>>>(dv, host_counts);
  GPUNFV_CUDA(cudaGetLastError());
}

void launch_drop_at_node(const BatchView& dv, uint8_t k, cudaStream_t stream, DropReason reason) {
  if (dv.count == 0) return;
  drop_at_node_kernel<<<blocks_for(dv.count, 0), kThreads, 0, stream>>>(dv, k, reason);
  GPUNFV_CUDA(cudaGetLastError());
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(enter_chain_kernel);
GPUNFV_REGISTER_KERNEL(switch_kernel);
GPUNFV_REGISTER_KERNEL(drop_at_node_kernel);
GPUNFV_REGISTER_KERNEL(publish_node_packets_kernel);
GPUNFV_REGISTER_KERNEL(zero_node_packets_kernel);

}  // namespace gpunfv
