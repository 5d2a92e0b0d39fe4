#include "io/gpuring/nic_emu/dma_engine.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "io/gpuring/ring/descriptors.h"
#include "io/gpuring/ring/ring_sync.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"
#endif

namespace gpunfv::gpuring {

namespace {

class HostDmaEngine final : public DmaEngine {
 public:
  void write_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                    std::span<const size_t> sizes) override {
    for (size_t i = 0; i < dsts.size(); ++i) std::memcpy(dsts[i], srcs[i], sizes[i]);
  }
  void read_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                   std::span<const size_t> sizes) override {
    write_gather(dsts, srcs, sizes);
  }
  void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                 size_t rows) override {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    for (size_t i = 0; i < rows; ++i) std::memcpy(d + i * dst_pitch, s + i * src_pitch, width);
  }
  void write_descriptors(void* ring_dst, const void* host_src, size_t count) override {
    auto* dst = static_cast<uint64_t*>(ring_dst);
    const auto* src = static_cast<const uint64_t*>(host_src);
    for (size_t i = 0; i < count; ++i) {
      __atomic_store_n(&dst[2 * i], src[2 * i], __ATOMIC_RELAXED);
      store_release(&dst[2 * i + 1], src[2 * i + 1]);  // DD last: the poller acquires it
    }
  }
  void read(void* host_dst, const void* ring_src, size_t bytes) override {
    // Descriptors the driver published before a release store of a tail register, which the
    // caller has load-acquired: plain reads see them.
    std::memcpy(host_dst, ring_src, bytes);
  }
  void read_async(void* host_dst, const void* ring_src, size_t bytes) override { read(host_dst, ring_src, bytes); }
  bool fetch_tx_frames(const TxFetch& f) override {
    const uint32_t mask = f.ring_size - 1;
    const auto* ring = static_cast<const TxDesc*>(f.ring);
    auto* mirror = static_cast<TxDesc*>(f.mirror);
    for (uint32_t k = 0; k < f.count; ++k) {
      const uint32_t at = (f.first + k) & mask;
      mirror[at] = ring[at];
      const uint32_t len = std::min(mirror[at].read.cmd_type_len & kTxLenMask, f.slot_bytes);
      std::memcpy(f.staging + (f.entry_base + at) * f.pitch, reinterpret_cast<const void*>(mirror[at].read.buffer_addr), len);
    }
    return true;
  }
  void wait() override {}
  uint64_t mark() override { return ++issued_; }
  bool reached(uint64_t) override { return true; }
  void wait_for(uint64_t) override {}
  const char* name() const override { return "memcpy"; }
  void* alloc_staging(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void free_staging(void* p) override { std::free(p); }
  std::unique_ptr<DmaEngine> make_peer() const override { return std::make_unique<HostDmaEngine>(); }

 private:
  uint64_t issued_ = 0;
};

#if GPUNFV_HAVE_CUDA
class CudaDmaEngine final : public DmaEngine {
 public:
  explicit CudaDmaEngine(bool batched) : batched_(batched) {
    stream_ = create_stream();
    events_.resize(kMaxTicketsInFlight);
    for (cudaEvent_t& e : events_) e = create_event(cudaEventDisableTiming);
  }
  ~CudaDmaEngine() override {
    cudaStreamSynchronize(stream_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    destroy_stream(stream_);
  }

  void write_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                    std::span<const size_t> sizes) override {
    gather(dsts, srcs, sizes);
  }
  void read_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                   std::span<const size_t> sizes) override {
    gather(dsts, srcs, sizes);
  }
  void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                 size_t rows) override {
    if (rows == 0 || width == 0) return;
    cudaError_t e;
    if (rows == 1 || (dst_pitch == src_pitch && 2 * width >= dst_pitch)) {
      // Rows filling at least half their pitch: one linear span is cheaper for the engine than
      // a pitched copy, and the gaps between rows are the caller's too (see the header).
      e = cudaMemcpyAsync(dst, src, (rows - 1) * dst_pitch + width, cudaMemcpyDefault, stream_);
    } else {
      e = cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDefault, stream_);
    }
    if (e != cudaSuccess)  // the copy's shape, for finding which side was out of its memory
      throw GpuError(fmt::format("DMA copy of {} rows of {} bytes, {} -> {} (pitches {}, {}): {}", rows,
                                 width, src, dst, src_pitch, dst_pitch, cudaGetErrorString(e)));
  }
  void write_descriptors(void* ring_dst, const void* host_src, size_t count) override {
    // One copy; the copy engine writes each 16-byte descriptor no narrower than 8-byte aligned
    // words, and the poller reads DD, length and VLAN in one 64-bit load.
    GPUNFV_CUDA(cudaMemcpyAsync(ring_dst, host_src, count * 16, cudaMemcpyDefault, stream_));
  }
  void read(void* host_dst, const void* ring_src, size_t bytes) override {
    GPUNFV_CUDA(cudaMemcpyAsync(host_dst, ring_src, bytes, cudaMemcpyDefault, stream_));
    GPUNFV_CUDA(cudaStreamSynchronize(stream_));
  }
  void read_async(void* host_dst, const void* ring_src, size_t bytes) override {
    GPUNFV_CUDA(cudaMemcpyAsync(host_dst, ring_src, bytes, cudaMemcpyDefault, stream_));
  }
  void wait() override {
    GPUNFV_CUDA(cudaStreamSynchronize(stream_));
    completed_ = issued_;
  }
  uint64_t mark() override {
    // The event slot of ticket t is reused by t + kMaxTicketsInFlight: that one must be done.
    if (issued_ + 1 > completed_ + kMaxTicketsInFlight) wait_for(issued_ + 1 - kMaxTicketsInFlight);
    ++issued_;
    GPUNFV_CUDA(cudaEventRecord(events_[issued_ % kMaxTicketsInFlight], stream_));
    return issued_;
  }
  bool reached(uint64_t ticket) override {
    if (ticket <= completed_) return true;
    // Copies on one stream complete in order: the ticket's own event says it all.
    const cudaError_t e = cudaEventQuery(events_[ticket % kMaxTicketsInFlight]);
    if (e == cudaErrorNotReady) return false;
    GPUNFV_CUDA(e);
    completed_ = ticket;
    return true;
  }
  void wait_for(uint64_t ticket) override {
    // Spins on the event (the emulator's threads own their cores, as a NIC's engines would):
    // a blocking synchronization would add the scheduler's wake-up to every DMA.
    while (!reached(ticket)) {
    }
  }
  const char* name() const override {
    return batched_ ? "cuda copy engine (cudaMemcpyBatchAsync)" : "cuda copy engine (cudaMemcpyAsync)";
  }
  void* alloc_staging(size_t bytes) override {
    note_cuda_setup("cudaMallocHost");
    void* p = nullptr;
    GPUNFV_CUDA(cudaMallocHost(&p, bytes));
    return p;
  }
  void free_staging(void* p) override { cudaFreeHost(p); }
  std::unique_ptr<DmaEngine> make_peer() const override { return std::make_unique<CudaDmaEngine>(batched_); }

 private:
  void gather(std::span<void* const> dsts, std::span<const void* const> srcs,
              std::span<const size_t> sizes) {
    if (dsts.empty()) return;
    if (batched_ && dsts.size() > 1) {
      cudaMemcpyAttributes attr{};
      attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
      attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
      size_t attr_index = 0;
      const cudaError_t e =
          cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), dsts.size(), &attr,
                               &attr_index, 1, stream_);
      if (e == cudaSuccess) return;
      // Not supported on this driver/device: fall back to single copies from now on.
      (void)cudaGetLastError();
      batched_ = false;
    }
    for (size_t i = 0; i < dsts.size(); ++i)
      GPUNFV_CUDA(cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream_));
  }

  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;
  uint64_t issued_ = 0, completed_ = 0;
  bool batched_;
};
#endif

}  // namespace

const char* nic_dma_name(NicDma d) {
  switch (d) {
    case NicDma::batch: return "batch";
    case NicDma::single: return "single";
    case NicDma::sm: return "sm";
  }
  return "?";
}

std::unique_ptr<DmaEngine> make_host_dma_engine() { return std::make_unique<HostDmaEngine>(); }

std::unique_ptr<DmaEngine> make_device_dma_engine(NicDma kind) {
  return kind == NicDma::sm ? make_sm_dma_engine() : make_cuda_dma_engine(kind == NicDma::batch);
}

#if !GPUNFV_HAVE_CUDA
std::unique_ptr<DmaEngine> make_sm_dma_engine() {
  throw std::runtime_error("gpuring: dma: sm needs a build with CUDA");
}
#endif

std::unique_ptr<DmaEngine> make_cuda_dma_engine(bool batched) {
#if GPUNFV_HAVE_CUDA
  return std::make_unique<CudaDmaEngine>(batched);
#else
  (void)batched;
  throw std::runtime_error("gpuring: the CUDA copy engine needs a build with CUDA");
#endif
}

}  // namespace gpunfv::gpuring
