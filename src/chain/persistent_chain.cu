#include "chain/persistent_chain.h"

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

#include <cuda/atomic>

#include "chain/chain_packet.h"
#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"

namespace gpunfv {

namespace {

constexpr int kThreads = 256;

// One batch in flight, in pinned host memory. The header (batch, fns) is read by the block
// only after the control word showed its ticket, and written by the host only after it saw the
// slot's previous done.
struct Slot {
  BatchView batch;
  DevicePacketFn fns[kMaxChainPacketNodes];
  alignas(64) uint32_t done;  // the device's release: the ticket of the batch that is back
};

// The host's word every block polls: the last ticket submitted (low 32 bits) and stop (bit 63).
// One word, so that a waiting block reads one PCIe line per poll.
struct Control {
  unsigned long long word;
};
constexpr unsigned long long kStop = 1ull << 63;

__device__ unsigned long long load_acquire(unsigned long long* p) {
  return cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(*p).load(cuda::memory_order_acquire);
}
__device__ void store_release(uint32_t* p, uint32_t v) {
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*p).store(v, cuda::memory_order_release);
}

// The header, copied into shared memory in 4-byte words by the whole block (a few PCIe round
// trips' worth of parallel reads instead of one thread reading a kilobyte).
constexpr size_t kHeaderWords = offsetof(Slot, done) / 4;
static_assert(offsetof(Slot, done) % 4 == 0);

__global__ void persistent_chain_kernel(Slot* slots, Control* control, ChainView c, uint32_t nodes) {
  __shared__ __align__(16) uint32_t header[kHeaderWords];
  __shared__ uint32_t counts[kMaxChainNodes];
  __shared__ int go;
  Slot* slot = &slots[blockIdx.x];
  // The batch view and the path's functions only.
  const uint32_t header_words = uint32_t((offsetof(Slot, fns) + nodes * sizeof(DevicePacketFn)) / 4);
  const BatchView& b = *reinterpret_cast<const BatchView*>(header);
  const DevicePacketFn* fns =
      reinterpret_cast<const DevicePacketFn*>(reinterpret_cast<const unsigned char*>(header) + offsetof(Slot, fns));
  for (uint32_t ticket = blockIdx.x + 1;; ticket += gridDim.x) {
    if (threadIdx.x == 0) {
      int g = 0;
      for (;;) {
        const unsigned long long w = load_acquire(&control->word);
        const int32_t ahead = int32_t(ticket - uint32_t(w));  // tickets before this block's turn
        if (ahead <= 0) {
          g = 1;
          break;
        }
        if (w & kStop) break;
        // The next ticket's block polls closely; the others, whose turn is further off, slowly:
        // every poll is a read across PCIe, beside the batches' own (with 16 blocks polling, a
        // router batch took three times as long on the GPU).
        __nanosleep(ahead == 1 ? 64 : 1024);
      }
      go = g;
    }
    for (uint32_t k = threadIdx.x; k < kMaxChainNodes; k += blockDim.x) counts[k] = 0;
    __syncthreads();
    if (!go) return;
    const uint32_t* src = reinterpret_cast<const uint32_t*>(slot);
    for (uint32_t w = threadIdx.x; w < header_words; w += blockDim.x) header[w] = src[w];
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < b.count; i += blockDim.x)
      run_chain_on_packet(c, b, i, fns, nodes, [&](uint8_t to) {
        if (to != kChainDone) atomicAdd(&counts[to], 1u);
      });
    __syncthreads();
    for (uint32_t k = threadIdx.x; k < kMaxChainNodes; k += blockDim.x) b.node_packets[k] = counts[k];
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();  // the batch's writes reach the host before done does
      store_release(&slot->done, ticket);
    }
  }
}

}  // namespace

struct PersistentChain::Impl {
  ChainView view;
  uint32_t nodes = 0, slots = 0;
  Slot* ring = nullptr;
  Control* control = nullptr;
  cudaStream_t stream = nullptr;
  bool running = false;
  uint64_t next_ticket = 0;
  mutable uint32_t polls = 0;
  std::unique_ptr<PersistentKernelScope> scope;
};

PersistentChain::PersistentChain(const RuntimeConfig& rc, const Chain& c, uint32_t slots)
    : impl_(std::make_unique<Impl>()) {
  if (!chain_runs_per_packet(rc, c))
    throw std::invalid_argument("chain '" + c.name + "' cannot run in a persistent kernel");
  Impl& m = *impl_;
  m.view = c.view;
  m.nodes = static_cast<uint32_t>(c.path.size());
  m.slots = slots;
  note_cuda_setup("cudaHostAlloc");
  GPUNFV_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&m.ring), sizeof(Slot) * slots, cudaHostAllocMapped));
  GPUNFV_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&m.control), sizeof(Control), cudaHostAllocMapped));
  std::memset(static_cast<void*>(m.ring), 0, sizeof(Slot) * slots);
  m.control->word = 0;
  m.stream = create_stream();
}

PersistentChain::~PersistentChain() {
  try {
    stop();
  } catch (...) {
  }
  destroy_stream(impl_->stream);
  cudaFreeHost(impl_->ring);
  cudaFreeHost(impl_->control);
}

void PersistentChain::start() {
  Impl& m = *impl_;
  if (m.running) return;
  persistent_chain_kernel<<<m.slots, kThreads, 0, m.stream>>>(m.ring, m.control, m.view, m.nodes);
  GPUNFV_CUDA(cudaGetLastError());
  m.scope = std::make_unique<PersistentKernelScope>();
  m.running = true;
}

uint64_t PersistentChain::submit(const BatchView& host_batch, const DevicePacketFn* fns) {
  Impl& m = *impl_;
  const uint64_t ticket = ++m.next_ticket;
  Slot& s = m.ring[(ticket - 1) % m.slots];
  s.batch = host_batch;
  for (uint32_t k = 0; k < m.nodes; ++k) s.fns[k] = fns[k];
  std::atomic_ref<unsigned long long>(m.control->word).store(uint32_t(ticket), std::memory_order_release);
  return ticket;
}

bool PersistentChain::done(uint64_t ticket) const {
  const Impl& m = *impl_;
  Slot& s = m.ring[(ticket - 1) % m.slots];
  if (std::atomic_ref<uint32_t>(s.done).load(std::memory_order_acquire) == static_cast<uint32_t>(ticket))
    return true;
  // Now and then: a kernel that failed (a bounds check's trap) or returned never writes done.
  if (++m.polls % 4096 == 0) {
    const cudaError_t e = cudaStreamQuery(m.stream);
    if (e == cudaSuccess) throw GpuError("the persistent chain kernel ended with batches out");
    if (e != cudaErrorNotReady) GPUNFV_CUDA(e);
  }
  return false;
}

void PersistentChain::stop() {
  Impl& m = *impl_;
  if (!m.running) return;
  std::atomic_ref<unsigned long long>(m.control->word).fetch_or(kStop, std::memory_order_release);
  m.running = false;
  const cudaError_t e = cudaStreamSynchronize(m.stream);
  m.scope.reset();
  GPUNFV_CUDA(e);
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(persistent_chain_kernel);

}  // namespace gpunfv
