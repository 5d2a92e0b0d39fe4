// The NIC emulator's DMA engine played by GPU threads (dma: sm; see dma_engine.h). The host
// appends commands to a ring of 64-byte lines in pinned host memory and publishes its head; one
// persistent block per engine polls that head over PCIe (a system-scope load-acquire), takes up
// to 64 lines per round into shared memory, runs the commands in order and writes the highest
// completed ticket back into host memory, where reached() reads it with a plain load. Small
// copies from host memory (up to 2 KiB: a burst of 32 minimum-size frames, descriptor
// write-backs) ride inline in the lines, so a step's commands and bytes cross PCIe in one round
// trip; larger ones the block reads from pinned memory itself. A tx step chains the descriptor
// fetch into the frames' copies (fetch_tx_frames), as a NIC's DMA engine does on its own.
// Why: the copy engine's path costs 2-4 us of CPU per CUDA call and 7-10 us from issue to
// completion seen (bench/probes/dma_probe.cu); on an H200 host this engine completes an rx step
// in about 6 us p50 with 0.1 us of CPU, against 11-17 us and 3-6 us for the copy engine, and a
// chained tx step in 6 us against 16-19 us (bench/results/gpuring-h200-2026-11-24).
//
// Ordering, as a NIC gives it: commands run one after another (a barrier between them); a
// descriptor write comes after a fence, each descriptor's lower quadword before its upper one
// (DD), so a poller that acquires DD sees the frame and the descriptor's other fields; a signal
// after writes to host memory fences at system scope first. Each of those fences is thread 0's,
// after a barrier: cumulative, it publishes the whole block's writes.
//
// Errors: GpuError when CUDA fails, or when a ticket or room in the ring is not reached within
// 10 s (the block not resident, say); std::invalid_argument for host memory the block cannot
// reach (a destination that is not pinned, a source too large to ride inline).
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/kernel_registry.h"
#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"
#include "io/gpuring/ring/descriptors.h"
#include "io/gpuring/nic_emu/dma_engine.h"
#include "io/gpuring/loops/persistent_kernel.cuh"

namespace gpunfv::gpuring {

namespace {

enum SmDmaOp : uint32_t { kOpCopy = 1, kOpDescriptors = 2, kOpSignal = 3, kOpExit = 4, kOpTxFetch = 5 };

// The command ring is made of 64-byte lines in pinned host memory: a command's header line,
// then its inline payload lines, if any (small copies and descriptor write-backs carry their
// bytes with them, so the block fetches a step's commands and data in one PCIe round trip).
struct alignas(64) SmDmaLine {
  uint64_t w[8];
};
struct SmDmaHeader {
  uint32_t op, inline_lines;     // inline_lines: payload lines after the header
  uint32_t dst_host, pad;        // copy: dst is host memory (the next signal fences system-wide)
  uint64_t dst, src;             // src: host or device address, unused when inline
  uint32_t width, rows;          // copy: rows of width bytes; descriptors: count in rows
  uint32_t dst_pitch, src_pitch; // inline payload rows are packed (pitch = width)
  uint64_t ticket;               // signal: every command before it has completed
};
static_assert(sizeof(SmDmaHeader) <= sizeof(SmDmaLine));
// kOpTxFetch's line (DmaEngine::TxFetch): the same first two words as every header.
struct SmDmaTxFetch {
  uint32_t op, inline_lines;
  uint64_t ring, mirror, staging, pitch;
  uint32_t ring_size, first, count, entry_base, slot_bytes;
};
static_assert(sizeof(SmDmaTxFetch) <= sizeof(SmDmaLine));
constexpr uint32_t kMaxTxFetch = 512;  // descriptors per kOpTxFetch (the host splits)

// Control words in pinned host memory, each on its own line.
struct SmDmaControl {
  alignas(64) uint64_t head;      // lines published (host)
  alignas(64) uint64_t consumed;  // lines the block has taken into shared memory (GPU)
  alignas(64) uint64_t done;      // highest ticket completed (GPU)
};

constexpr uint32_t kRingLines = 4096;
constexpr uint32_t kRoundLines = 64;       // lines fetched per round (4 KiB of shared memory)
constexpr uint32_t kMaxInlineLines = 32;   // a command with its payload fits in one round
constexpr unsigned kThreads = 512;
constexpr unsigned kUnroll = 4;  // 16-byte loads each thread keeps in flight (PCIe latency)

// Rows of width bytes; 16-byte pieces where every address and pitch allows, bytes otherwise.
// Global loads fetch again every time (__ldcv): host memory the host rewrites between steps,
// and device memory other blocks or the GPU side wrote. An inline payload is in shared memory.
template <bool kSrcShared>
__device__ void copy_rows(uint8_t* dst, uint32_t dst_pitch, const uint8_t* src, uint32_t src_pitch,
                          uint32_t width, uint32_t rows) {
  const bool aligned =
      ((reinterpret_cast<uint64_t>(dst) | reinterpret_cast<uint64_t>(src) | dst_pitch | src_pitch) & 15) == 0;
  const uint32_t chunks = aligned ? width / 16 : 0;  // 16-byte pieces per row
  const uint32_t rest = width - chunks * 16;         // bytes after them, copied one by one
  const uint64_t total = uint64_t(rows) * chunks;
  for (uint64_t base = threadIdx.x; base < total; base += uint64_t(kThreads) * kUnroll) {
    uint4 v[kUnroll];
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const uint64_t i = base + uint64_t(u) * kThreads;
      const uint8_t* at = src + (i / chunks) * src_pitch + (i % chunks) * 16;
      if (i < total) v[u] = kSrcShared ? *reinterpret_cast<const uint4*>(at) : __ldcv(reinterpret_cast<const uint4*>(at));
    }
#pragma unroll
    for (unsigned u = 0; u < kUnroll; ++u) {
      const uint64_t i = base + uint64_t(u) * kThreads;
      if (i < total) *reinterpret_cast<uint4*>(dst + (i / chunks) * dst_pitch + (i % chunks) * 16) = v[u];
    }
  }
  if (rest) {
    const uint64_t bytes = uint64_t(rows) * rest;
    for (uint64_t i = threadIdx.x; i < bytes; i += kThreads) {
      const uint64_t row = i / rest, at = chunks * 16 + i % rest;
      dst[row * dst_pitch + at] = *static_cast<const volatile uint8_t*>(src + row * src_pitch + at);
    }
  }
}

// 16-byte descriptors, each's lower quadword before its upper one (DD), all after the frames.
__device__ void write_descriptors(const SmDmaHeader& h, const SmDmaLine* payload) {
  // Everything this block wrote before (the frames) is visible before any DD: the command
  // loop's barrier orders the block's writes before thread 0's fence, which is cumulative (the
  // pattern of cooperative groups' grid sync), and the next barrier orders it before every
  // thread's descriptor writes. One fence instead of one per thread.
  if (threadIdx.x == 0) __threadfence();
  __syncthreads();
  auto* dst = reinterpret_cast<volatile uint64_t*>(h.dst);
  for (uint32_t d = threadIdx.x; d < h.rows; d += kThreads) {
    uint64_t lower, upper;
    if (h.inline_lines) {
      lower = reinterpret_cast<const uint64_t*>(payload)[2 * d];
      upper = reinterpret_cast<const uint64_t*>(payload)[2 * d + 1];
    } else {
      const uint4 v = __ldcv(reinterpret_cast<const uint4*>(h.src) + d);
      lower = uint64_t(v.y) << 32 | v.x;
      upper = uint64_t(v.w) << 32 | v.z;
    }
    dst[2 * d] = lower;
    __threadfence();
    dst[2 * d + 1] = upper;
  }
}

// Descriptors into the host's mirror, then each one's frame into its staging entry, a warp per
// frame; the frame lengths round up to 16 bytes (the entries are the emulator's own).
__device__ void tx_fetch(const SmDmaTxFetch& c) {
  __shared__ uint64_t addr[kMaxTxFetch];
  __shared__ uint32_t len[kMaxTxFetch];
  const uint32_t mask = c.ring_size - 1;
  for (uint32_t d = threadIdx.x; d < c.count; d += kThreads) {
    const uint32_t at = (c.first + d) & mask;
    const uint4 v = __ldcv(reinterpret_cast<const uint4*>(c.ring) + at);
    reinterpret_cast<uint4*>(c.mirror)[at] = v;
    addr[d] = uint64_t(v.y) << 32 | v.x;
    len[d] = min(v.z & kTxLenMask, c.slot_bytes);
  }
  __syncthreads();
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (uint32_t d = warp; d < c.count; d += kThreads / 32) {
    const auto* src = reinterpret_cast<const uint4*>(addr[d]);
    auto* dst = reinterpret_cast<uint4*>(c.staging + uint64_t(c.entry_base + ((c.first + d) & mask)) * c.pitch);
    const uint32_t chunks = (len[d] + 15) / 16;
    for (uint32_t k = lane; k < chunks; k += 32) dst[k] = __ldcv(src + k);
  }
}

__global__ void __launch_bounds__(kThreads) sm_dma_kernel(const SmDmaLine* ring, SmDmaControl* ctl,
                                                          uint64_t tail) {
  __shared__ SmDmaLine lines[kRoundLines];
  __shared__ uint64_t head;
  bool wrote_host = false;  // since the last signal (every thread walks the same commands)
  for (;;) {
    if (threadIdx.x == 0) {
      // Acquire at system scope: the lines are read after the head that published them (a
      // load-acquire, not a full fence, which would cost another PCIe round trip).
      cuda::atomic_ref<uint64_t, cuda::thread_scope_system> published(ctl->head);
      uint64_t h;
      while ((h = published.load(cuda::memory_order_acquire)) == tail) {
      }
      head = h;
    }
    __syncthreads();
    const uint64_t waiting = head - tail;
    const uint32_t n = waiting < kRoundLines ? uint32_t(waiting) : kRoundLines;
    auto* words = reinterpret_cast<uint64_t*>(lines);
    for (uint32_t i = threadIdx.x; i < n * 8; i += kThreads)
      words[i] = reinterpret_cast<const volatile uint64_t*>(ring + (tail + i / 8) % kRingLines)[i % 8];
    __syncthreads();
    // Whole commands only: one cut by the round's end is fetched again with the next round.
    uint32_t k = 0;
    bool exit = false;
    while (k < n && !exit) {
      const SmDmaHeader h = *reinterpret_cast<const SmDmaHeader*>(&lines[k]);
      if (k + 1 + h.inline_lines > n) break;
      const SmDmaLine* payload = &lines[k + 1];
      switch (h.op) {
        case kOpCopy:
          wrote_host |= h.dst_host != 0;
          if (h.inline_lines)
            copy_rows<true>(reinterpret_cast<uint8_t*>(h.dst), h.dst_pitch, reinterpret_cast<const uint8_t*>(payload),
                      h.width, h.width, h.rows);
          else
            copy_rows<false>(reinterpret_cast<uint8_t*>(h.dst), h.dst_pitch, reinterpret_cast<const uint8_t*>(h.src),
                      h.src_pitch, h.width, h.rows);
          break;
        case kOpDescriptors: write_descriptors(h, payload); break;
        case kOpTxFetch:
          tx_fetch(*reinterpret_cast<const SmDmaTxFetch*>(&lines[k]));
          wrote_host = true;
          break;
        case kOpSignal:
          // Host-memory writes (frames read out of the rings) reach the host before the ticket;
          // writes to device memory only need to be visible on the GPU (a cheaper fence).
          // The command loop's barrier has ordered every thread's writes before this; thread
          // 0's fence (system scope when host memory was written) publishes them all.
          if (threadIdx.x == 0) {
            if (wrote_host)
              __threadfence_system();
            else
              __threadfence();
            *reinterpret_cast<volatile uint64_t*>(&ctl->done) = h.ticket;
          }
          wrote_host = false;
          break;
        case kOpExit: exit = true; break;
        default: break;
      }
      k += 1 + h.inline_lines;
      __syncthreads();  // one command after another
    }
    tail += k;
    if (threadIdx.x == 0) *reinterpret_cast<volatile uint64_t*>(&ctl->consumed) = tail;
    if (exit) return;
  }
}

GPUNFV_REGISTER_KERNEL(sm_dma_kernel);

class SmDmaEngine final : public DmaEngine {
 public:
  SmDmaEngine() {
    // Loaded now, while no persistent kernel runs (persistent_kernel.cuh says why).
    load_and_check_residency(sm_dma_kernel, 1, kThreads, "sm DMA engine");
    GPUNFV_CUDA(cudaGetDevice(&device_));  // the kernel starts later, from the emulator's thread
    stream_ = create_stream();
    note_cuda_setup("cudaHostAlloc");
    GPUNFV_CUDA(cudaHostAlloc(&ring_, sizeof(SmDmaLine) * kRingLines, cudaHostAllocMapped));
    GPUNFV_CUDA(cudaHostAlloc(&ctl_, sizeof(SmDmaControl), cudaHostAllocMapped));
    std::memset(static_cast<void*>(ring_), 0, sizeof(SmDmaLine) * kRingLines);
    std::memset(static_cast<void*>(ctl_), 0, sizeof(SmDmaControl));
  }
  ~SmDmaEngine() override {
    bool stopped = true;
    try {
      stopped = stop_kernel();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpunfv: sm DMA engine: %s\n", e.what());
      stopped = false;
    }
    if (!stopped) {
      // Freeing what a running kernel reads would wait for it for ever: leave it.
      std::fprintf(stderr, "gpunfv: sm DMA engine: its kernel did not exit; its memory is left allocated\n");
      return;
    }
    cudaFreeHost(ring_);
    cudaFreeHost(ctl_);
    destroy_stream(stream_);
  }

  void write_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                    std::span<const size_t> sizes) override {
    for (size_t i = 0; i < dsts.size(); ++i) copy_rows(dsts[i], sizes[i], srcs[i], sizes[i], sizes[i], 1);
  }
  void read_gather(std::span<void* const> dsts, std::span<const void* const> srcs,
                   std::span<const size_t> sizes) override {
    write_gather(dsts, srcs, sizes);
  }
  void copy_rows(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width,
                 size_t rows) override {
    if (rows == 0 || width == 0) return;
    SmDmaHeader h{};
    h.op = kOpCopy;
    h.dst = reinterpret_cast<uint64_t>(dst);
    h.src = reinterpret_cast<uint64_t>(src);
    h.width = static_cast<uint32_t>(width);
    h.rows = static_cast<uint32_t>(rows);
    h.dst_pitch = static_cast<uint32_t>(dst_pitch);
    h.src_pitch = static_cast<uint32_t>(src_pitch);
    // The block writes the destination and reads a source too large to ride inline: host
    // memory it cannot reach is refused here rather than faulting the kernel (and the context).
    const MemoryKind dst_kind = memory_kind(dst), src_kind = memory_kind(src);
    if (dst_kind == MemoryKind::unpinned)
      throw std::invalid_argument("sm DMA engine: copy into host memory that is not pinned (use alloc_staging)");
    if (src_kind == MemoryKind::unpinned && uint64_t(rows) * width > kMaxInlineLines * sizeof(SmDmaLine))
      throw std::invalid_argument("sm DMA engine: " + std::to_string(uint64_t(rows) * width) +
                                  " bytes from host memory that is not pinned (at most " +
                                  std::to_string(kMaxInlineLines * sizeof(SmDmaLine)) + " ride inline)");
    h.dst_host = dst_kind != MemoryKind::device ? 1 : 0;
    // Bytes from host memory ride inline when small; from ring memory the block reads them.
    push(h, src_kind != MemoryKind::device ? src : nullptr, src_pitch);
  }
  void write_descriptors(void* ring_dst, const void* host_src, size_t count) override {
    // Large runs of write-backs go in pieces small enough to ride inline.
    constexpr size_t kPerCommand = kMaxInlineLines * sizeof(SmDmaLine) / 16;
    for (size_t done = 0; done < count; done += kPerCommand) {
      SmDmaHeader h{};
      h.op = kOpDescriptors;
      h.dst = reinterpret_cast<uint64_t>(ring_dst) + done * 16;
      h.src = reinterpret_cast<uint64_t>(host_src) + done * 16;
      h.rows = static_cast<uint32_t>(std::min(kPerCommand, count - done));
      h.width = 16;
      push(h, reinterpret_cast<const void*>(h.src), 16);
    }
  }
  void read(void* host_dst, const void* ring_src, size_t bytes) override {
    read_async(host_dst, ring_src, bytes);
    wait();
  }
  bool fetch_tx_frames(const TxFetch& f) override {
    // The block moves 16-byte pieces: staging entries must start on 16 bytes.
    if (((reinterpret_cast<uint64_t>(f.staging) | f.pitch) & 15) != 0 || f.slot_bytes % 16 != 0) return false;
    if (memory_kind(f.mirror) == MemoryKind::unpinned || memory_kind(f.staging) == MemoryKind::unpinned)
      throw std::invalid_argument("sm DMA engine: tx mirror and staging must be pinned host memory");
    for (uint32_t done = 0; done < f.count; done += kMaxTxFetch) {
      SmDmaTxFetch c{};
      c.op = kOpTxFetch;
      c.ring = reinterpret_cast<uint64_t>(f.ring);
      c.mirror = reinterpret_cast<uint64_t>(f.mirror);
      c.staging = reinterpret_cast<uint64_t>(f.staging);
      c.pitch = f.pitch;
      c.ring_size = f.ring_size;
      c.first = (f.first + done) & (f.ring_size - 1);
      c.count = std::min(kMaxTxFetch, f.count - done);
      c.entry_base = f.entry_base;
      c.slot_bytes = f.slot_bytes;
      push_line(&c, sizeof(c));
    }
    return true;
  }
  void read_async(void* host_dst, const void* ring_src, size_t bytes) override {
    copy_rows(host_dst, bytes, ring_src, bytes, bytes, 1);
  }
  void wait() override {
    if (pushed_ == signalled_at_ && issued_ == completed_) return;
    wait_for(mark());
  }
  uint64_t mark() override {
    SmDmaHeader h{};
    h.op = kOpSignal;
    h.ticket = ++issued_;
    push(h, nullptr, 0);
    signalled_at_ = pushed_;
    return issued_;
  }
  bool reached(uint64_t ticket) override {
    if (ticket <= completed_) return true;
    completed_ = __atomic_load_n(&ctl_->done, __ATOMIC_ACQUIRE);
    return ticket <= completed_;
  }
  void wait_for(uint64_t ticket) override {
    // Spins, as the copy engine's wait does; a kernel that makes no progress for this long is
    // an error, not a hang (another persistent kernel holding every SM, say).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStallLimitS);
    uint32_t n = 0;
    while (!reached(ticket)) {
      if ((++n & 0xfff) == 0 && std::chrono::steady_clock::now() > deadline) {
        const cudaError_t e = cudaStreamQuery(stream_);
        if (e != cudaErrorNotReady && e != cudaSuccess) GPUNFV_CUDA(e);
        throw GpuError("sm DMA engine: ticket " + std::to_string(ticket) + " not reached in " +
                       std::to_string(kStallLimitS) + " s (done " + std::to_string(completed_) +
                       "; is its block resident?)");
      }
    }
  }
  void park() override {
    if (!running_) return;
    wait();
    stop_kernel();
  }
  const char* name() const override { return "GPU threads (one persistent block; dma: sm)"; }
  void* alloc_staging(size_t bytes) override {
    note_cuda_setup("cudaMallocHost");
    void* p = nullptr;
    GPUNFV_CUDA(cudaMallocHost(&p, bytes));  // mapped: the block reaches it at the same address
    return p;
  }
  void free_staging(void* p) override { cudaFreeHost(p); }
  std::unique_ptr<DmaEngine> make_peer() const override { return std::make_unique<SmDmaEngine>(); }

 private:
  static constexpr int kStallLimitS = 10;

  // Where p lies, remembered per 64 KiB region for device memory and pinned host memory (the
  // emulator copies between a handful of buffers); host memory not pinned is looked up each
  // time, so a pinned neighbour never vouches for it.
  enum class MemoryKind : uint8_t { device, pinned, unpinned };
  MemoryKind memory_kind(const void* p) {
    const uint64_t region = reinterpret_cast<uint64_t>(p) >> 16;
    for (const RegionKind& k : regions_)
      if (k.region == region) return k.kind;
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) cudaGetLastError();
    const MemoryKind kind = e != cudaSuccess || a.type == cudaMemoryTypeUnregistered ? MemoryKind::unpinned
                            : a.type == cudaMemoryTypeDevice                         ? MemoryKind::device
                                                                                     : MemoryKind::pinned;
    if (kind != MemoryKind::unpinned) regions_[next_region_++ % regions_.size()] = RegionKind{region, kind};
    return kind;
  }

  // Appends a command; its rows (h.rows x h.width bytes at `payload`, `pitch` apart) ride
  // inline when they fit, packed.
  // Appends one line holding `bytes` of a command (no payload).
  void push_line(const void* command, size_t bytes) {
    reserve(1);
    SmDmaLine l{};
    std::memcpy(&l, command, bytes);
    line(pushed_) = l;
    publish(1);
  }
  void push(SmDmaHeader h, const void* payload, size_t pitch) {
    const uint64_t bytes = uint64_t(h.rows) * h.width;
    const bool inline_payload = payload && bytes <= kMaxInlineLines * sizeof(SmDmaLine);
    h.inline_lines = inline_payload ? uint32_t((bytes + sizeof(SmDmaLine) - 1) / sizeof(SmDmaLine)) : 0;
    const uint32_t lines = 1 + h.inline_lines;
    reserve(lines);
    std::memcpy(&line(pushed_), &h, sizeof(h));
    if (inline_payload) {
      // Packed rows across consecutive lines, which may wrap around the ring's end.
      alignas(64) uint8_t packed[kMaxInlineLines * sizeof(SmDmaLine)];
      const auto* src = static_cast<const uint8_t*>(payload);
      for (uint32_t r = 0; r < h.rows; ++r) std::memcpy(packed + size_t(r) * h.width, src + r * pitch, h.width);
      for (uint32_t l = 0; l < h.inline_lines; ++l)
        std::memcpy(&line(pushed_ + 1 + l), packed + size_t(l) * sizeof(SmDmaLine), sizeof(SmDmaLine));
    }
    publish(lines);
  }
  // Room for `lines` lines at pushed_, the kernel started if it is not running.
  void reserve(uint32_t lines) {
    if (!running_) launch();
    wait_for_room(lines);
  }
  // The lines written at pushed_ handed to the block.
  void publish(uint32_t lines) {
    pushed_ += lines;
    __atomic_store_n(&ctl_->head, pushed_, __ATOMIC_RELEASE);
  }
  SmDmaLine& line(uint64_t index) { return ring_[index % kRingLines]; }
  void wait_for_room(uint32_t lines) {
    if (pushed_ + lines - consumed_ <= kRingLines) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStallLimitS);
    while ((consumed_ = __atomic_load_n(&ctl_->consumed, __ATOMIC_ACQUIRE)) + kRingLines < pushed_ + lines)
      if (std::chrono::steady_clock::now() > deadline)
        throw GpuError("sm DMA engine: its command ring stayed full for " + std::to_string(kStallLimitS) + " s");
  }
  void launch() {
    // The block starts at the lines not yet taken; the ring's indices carry on across parks.
    GPUNFV_CUDA(cudaSetDevice(device_));
    sm_dma_kernel<<<1, kThreads, 0, stream_>>>(ring_, ctl_, pushed_);
    GPUNFV_CUDA(cudaGetLastError());
    scope_ = std::make_unique<PersistentKernelScope>();
    running_ = true;
  }
  // Whether the kernel exited (true when none ran).
  bool stop_kernel() {
    if (!running_) return true;
    SmDmaHeader h{};
    h.op = kOpExit;
    push(h, nullptr, 0);
    const bool exited = wait_for_stream(stream_, kStallLimitS);
    if (exited) {
      running_ = false;
      scope_.reset();
    }
    return exited;
  }

  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  SmDmaLine* ring_ = nullptr;
  SmDmaControl* ctl_ = nullptr;
  uint64_t pushed_ = 0, consumed_ = 0, signalled_at_ = 0;
  uint64_t issued_ = 0, completed_ = 0;
  struct RegionKind {
    uint64_t region = ~0ull;
    MemoryKind kind = MemoryKind::unpinned;
  };
  std::array<RegionKind, 64> regions_{};
  uint32_t next_region_ = 0;
  bool running_ = false;
  std::unique_ptr<PersistentKernelScope> scope_;
};

}  // namespace

std::unique_ptr<DmaEngine> make_sm_dma_engine() { return std::make_unique<SmDmaEngine>(); }

}  // namespace gpunfv::gpuring
