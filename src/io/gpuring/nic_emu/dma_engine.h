// The NIC emulator's DMA engine: how it reaches ring memory. On the GPU build it is the GPU's
// copy engine by default (cudaMemcpyAsync / cudaMemcpy2DAsync / cudaMemcpyBatchAsync on the
// engine's own stream), which is what stands in for the NIC's PCIe DMA, or GPU threads (dma: sm,
// sm_dma_engine.cu: one persistent block runs copy commands the host posts in pinned memory,
// with no CUDA call per step, closer to a NIC's microsecond DMA); in host memory it is memcpy.
// Copies run in the order issued. Completion is tracked two ways: wait() returns when
// everything issued has completed; mark() hands out a ticket for everything issued so far,
// which reached() polls and wait_for() waits on, so a caller can keep several steps of copies
// in flight (an event per ticket on the GPU; the memcpy engine completes every copy at once).
// One engine serves one thread; make_peer() gives another thread an engine of its own (its own
// stream), so the emulator's rx and tx sides never wait for each other's copies.
//
// Errors: GpuError from the CUDA engines when a copy fails; the sm engine also throws
// std::invalid_argument for host memory that is not pinned where its threads would touch it;
// make_cuda_dma_engine and make_sm_dma_engine throw std::runtime_error in a build without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace gpunfv::gpuring {

class DmaEngine {
 public:
  virtual ~DmaEngine() = default;
  // dsts[i] <- srcs[i], sizes[i] bytes, for every i (host -> ring memory, or ring -> host).
  virtual void write_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                            std::span<const size_t> sizes) = 0;
  virtual void read_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                           std::span<const size_t> sizes) = 0;
  // `rows` blocks of `width` bytes, the i-th from src + i * src_pitch to dst + i * dst_pitch,
  // as one operation (a pitched copy: the copy engine moves a run of adjacent packet slots in
  // one go). Either side may be ring memory. The engine may also move the bytes between the
  // rows (one linear span when the rows fill most of their pitch), so both whole spans must be
  // the caller's.
  virtual void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                         size_t rows) = 0;
  // `count` 16-byte descriptors into ring memory, each's upper quadword (DD) visible no earlier
  // than its lower one, and after every copy issued before.
  virtual void write_descriptors(void* ring_dst, const void* host_src, size_t count) = 0;
  // Synchronous: returns with the bytes in host_dst (and every copy issued before completed).
  virtual void read(void* host_dst, const void* ring_src, size_t bytes) = 0;
  // Asynchronous: the bytes are in host_dst once a ticket marked after it is reached.
  virtual void read_async(void* host_dst, const void* ring_src, size_t bytes) = 0;
  virtual void wait() = 0;
  // A ticket covering every copy issued so far (tickets increase from 1). At most
  // kMaxTicketsInFlight may be outstanding: mark() waits for the oldest beyond that.
  virtual uint64_t mark() = 0;
  // Whether every copy the ticket covers has completed (never blocks).
  virtual bool reached(uint64_t ticket) = 0;
  virtual void wait_for(uint64_t ticket) = 0;
  virtual const char* name() const = 0;
  // Staging memory the engine copies from/to fastest (pinned on the GPU build).
  virtual void* alloc_staging(size_t bytes) = 0;
  virtual void free_staging(void* p) = 0;
  // Another engine of the same kind with its own ordered queue (stream), for another thread.
  virtual std::unique_ptr<DmaEngine> make_peer() const = 0;
  // A tx step chained as a NIC's DMA engine chains it, with no host in between: `count` tx
  // descriptors (16 bytes each) from ring[first..] (wrapping at ring_size) into mirror at the
  // same indices, then each one's frame (buffer_addr, DTALEN bytes capped at slot_bytes; up to
  // 15 bytes more may be written) into staging + (entry_base + index) * pitch. DD is not
  // written back: the caller does that once it has read the descriptors. Complete once a ticket
  // marked after it is reached. Returns false, issuing nothing, where the engine cannot chain
  // (the copy engine: the host must read the descriptors before it can name the frames); the
  // caller then fetches and copies in two steps.
  struct TxFetch {
    const void* ring;
    void* mirror;
    uint32_t ring_size, first, count;
    uint8_t* staging;
    size_t pitch;
    uint32_t entry_base, slot_bytes;
  };
  virtual bool fetch_tx_frames(const TxFetch&) { return false; }
  // Waits for every copy issued, then lets a background worker exit (the sm engine's kernel),
  // so that nothing of the engine runs when the device must go idle (cudaFree, say). The next
  // copy starts it again. The emulator parks its engines when its threads end. Engines with no
  // background worker only wait.
  virtual void park() { wait(); }

  static constexpr uint32_t kMaxTicketsInFlight = 256;
};

// How the emulator moves bytes on the GPU (a gpuring port's `dma:` key).
enum class NicDma : uint8_t {
  batch,   // the copy engine, a gather as one cudaMemcpyBatchAsync
  single,  // the copy engine, one cudaMemcpyAsync per piece
  sm,      // GPU threads: one persistent block per engine (make_sm_dma_engine)
};
const char* nic_dma_name(NicDma d);

std::unique_ptr<DmaEngine> make_host_dma_engine();
// `batched`: one cudaMemcpyBatchAsync per gather instead of one cudaMemcpyAsync per packet.
std::unique_ptr<DmaEngine> make_cuda_dma_engine(bool batched = true);
// GPU threads as the DMA engine; std::runtime_error in a build without CUDA.
std::unique_ptr<DmaEngine> make_sm_dma_engine();
// The engine for rings in device memory, of the kind asked for.
std::unique_ptr<DmaEngine> make_device_dma_engine(NicDma kind);

}  // namespace gpunfv::gpuring
