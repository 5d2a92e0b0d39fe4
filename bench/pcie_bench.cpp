// PCIe copy rate beside host-memory writers (what bounds S_d at 1518 B). S_d at 1518 B
// uploads 37 GB/s while its download moves about as much the other way and the generator
// threads write 35 GB/s of frames into host memory; a copy-only probe reached 47 GB/s each way.
// This measures whether host-memory traffic alone explains the gap: the copy engines move
// batches between pinned host buffers (as many and as large as the chain's batch pool) and the
// device, one stream per direction, while 0..N threads write other host memory the way the
// generator writes frames (streaming stores, or plain stores).
//
//   pcie_bench [--buffer-mb 52] [--buffers 64] [--seconds 2] [--writers 0,4,8]
//              [--store stream|plain] [--writer-mb 256]
// Prints one row per (direction, writers): GB/s each way, the writers' GB/s, and the ratio to
// the same direction's first row (--writers starts at 0: no writers, the peer measured in the
// same run).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "core/host_memory.h"
#endif

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One writer: fills its buffer over and over until told to stop; counts bytes written.
void write_loop(uint8_t* buf, size_t bytes, bool stream, const std::atomic<bool>& stop,
                std::atomic<uint64_t>& written) {
  uint64_t done = 0;
  uint8_t v = 1;
  while (!stop.load(std::memory_order_relaxed)) {
#if defined(__SSE2__)
    if (stream) {
      const __m128i x = _mm_set1_epi8(static_cast<char>(v));
      for (size_t k = 0; k + 16 <= bytes; k += 16) _mm_stream_si128(reinterpret_cast<__m128i*>(buf + k), x);
      _mm_sfence();
    } else {
      std::memset(buf, v, bytes);
    }
#else
    (void)stream;
    std::memset(buf, v, bytes);
#endif
    done += bytes;
    ++v;
  }
  written.fetch_add(done);
}

#if GPUNFV_HAVE_CUDA

struct Direction {
  const char* name;
  bool h2d, d2h;
};

struct Rates {
  double h2d_gbs = 0, d2h_gbs = 0, writers_gbs = 0;
};

// Copies whole buffers for `seconds` in each direction asked, cycling through the host buffers
// (so the host side is never one cached buffer), keeping `depth` copies queued per stream.
Rates measure(const Direction& d, std::vector<uint8_t*>& up_src, std::vector<uint8_t*>& down_dst,
              uint8_t* dev_up, uint8_t* dev_down, size_t bytes, double seconds, int writers,
              bool stream_stores, size_t writer_bytes) {
  std::vector<uint8_t*> wbuf(writers);
  for (auto& b : wbuf) b = static_cast<uint8_t*>(std::aligned_alloc(64, writer_bytes));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < writers; ++i)
    threads.emplace_back(write_loop, wbuf[i], writer_bytes, stream_stores, std::cref(stop), std::ref(written));
  cudaStream_t up{}, down{};
  GPUNFV_CUDA(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
  GPUNFV_CUDA(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
  constexpr int depth = 4;
  std::vector<cudaEvent_t> up_ev(depth), down_ev(depth);
  for (auto& e : up_ev) GPUNFV_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (auto& e : down_ev) GPUNFV_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  std::this_thread::sleep_for(std::chrono::milliseconds(writers ? 200 : 0));  // writers at pace
  const double t0 = now_s();
  uint64_t n_up = 0, n_down = 0;
  while (now_s() - t0 < seconds) {
    // Two device halves per direction: consecutive copies never write one region.
    if (d.h2d) {
      cudaEvent_t e = up_ev[n_up % depth];
      if (n_up >= depth) GPUNFV_CUDA(cudaEventSynchronize(e));
      GPUNFV_CUDA(cudaMemcpyAsync(dev_up + (n_up % 2) * bytes, up_src[n_up % up_src.size()], bytes,
                                  cudaMemcpyHostToDevice, up));
      GPUNFV_CUDA(cudaEventRecord(e, up));
      ++n_up;
    }
    if (d.d2h) {
      cudaEvent_t e = down_ev[n_down % depth];
      if (n_down >= depth) GPUNFV_CUDA(cudaEventSynchronize(e));
      GPUNFV_CUDA(cudaMemcpyAsync(down_dst[n_down % down_dst.size()], dev_down + (n_down % 2) * bytes,
                                  bytes, cudaMemcpyDeviceToHost, down));
      GPUNFV_CUDA(cudaEventRecord(e, down));
      ++n_down;
    }
  }
  GPUNFV_CUDA(cudaStreamSynchronize(up));
  GPUNFV_CUDA(cudaStreamSynchronize(down));
  const double t = now_s() - t0;
  stop = true;
  for (auto& th : threads) th.join();
  Rates r;
  r.h2d_gbs = n_up * double(bytes) / t / 1e9;
  r.d2h_gbs = n_down * double(bytes) / t / 1e9;
  // Writers count whole passes when they stop: their bytes over the warm-up and copy window.
  r.writers_gbs = writers ? written.load() / (t + 0.2) / 1e9 : 0;
  for (auto& e : up_ev) GPUNFV_CUDA(cudaEventDestroy(e));
  for (auto& e : down_ev) GPUNFV_CUDA(cudaEventDestroy(e));
  GPUNFV_CUDA(cudaStreamDestroy(up));
  GPUNFV_CUDA(cudaStreamDestroy(down));
  for (auto& b : wbuf) std::free(b);
  return r;
}

#endif  // GPUNFV_HAVE_CUDA

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"PCIe copy rate beside host-memory writers (what bounds S_d at 1518 B)"};
  size_t buffer_mb = 52, writer_mb = 256;
  int buffers = 64;
  double seconds = 2;
  std::vector<int> writers{0, 4, 8};
  std::string store = "stream";
  app.add_option("--buffer-mb", buffer_mb, "MB per copy (S_d's 32768 x 1600-byte batch: 52)")->check(CLI::Range(1, 4096));
  app.add_option("--buffers", buffers, "pinned host buffers per direction, copied in turn")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", seconds, "seconds per row")->check(CLI::PositiveNumber);
  app.add_option("--writers", writers, "host threads writing memory beside the copies")->delimiter(',');
  app.add_option("--store", store, "the writers' stores: stream (non-temporal, as the generator "
                                   "writes frames of 256 B or more) or plain")
      ->check(CLI::IsMember({"stream", "plain"}));
  app.add_option("--writer-mb", writer_mb, "MB each writer cycles over")->check(CLI::Range(1, 65536));
  CLI11_PARSE(app, argc, argv);
#if !GPUNFV_HAVE_CUDA
  std::fprintf(stderr, "pcie_bench: built without CUDA\n");
  return 2;
#else
  using namespace gpunfv;
  if (!cuda_device_available()) {
    std::fprintf(stderr, "pcie_bench: no CUDA device\n");
    return 2;
  }
  const size_t bytes = buffer_mb << 20;
  std::vector<uint8_t*> up_src(buffers), down_dst(buffers);
  for (auto& b : up_src) {
    b = static_cast<uint8_t*>(host_alloc_pinned(bytes));
    std::memset(b, 0x5a, bytes);
  }
  for (auto& b : down_dst) {
    b = static_cast<uint8_t*>(host_alloc_pinned(bytes));
    std::memset(b, 0, bytes);
  }
  uint8_t *dev_up = nullptr, *dev_down = nullptr;
  GPUNFV_CUDA(cudaMalloc(&dev_up, 2 * bytes));
  GPUNFV_CUDA(cudaMalloc(&dev_down, 2 * bytes));
  GPUNFV_CUDA(cudaMemset(dev_down, 0x33, 2 * bytes));
  cudaDeviceProp prop{};
  GPUNFV_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s; %d pinned buffers of %zu MB per direction (%.1f GB each way), %.1f s per row, "
              "writers: %s stores over %zu MB each\n",
              prop.name, buffers, buffer_mb, buffers * double(bytes) / 1e9, seconds, store.c_str(), writer_mb);
  const Direction dirs[] = {{"up", true, false}, {"down", false, true}, {"both", true, true}};
  std::printf("| copies | writers | up GB/s | down GB/s | writers GB/s | up vs no writers | down vs no writers |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Direction& d : dirs) {
    Rates base;
    for (size_t i = 0; i < writers.size(); ++i) {
      Rates r = measure(d, up_src, down_dst, dev_up, dev_down, bytes, seconds, writers[i],
                        store == "stream", writer_mb << 20);
      if (i == 0) base = r;
      auto ratio = [](double a, double b) { return b > 0 ? fmt::format("{:.2f}", a / b) : std::string("-"); };
      std::printf("| %s | %d | %.1f | %.1f | %.1f | %s | %s |\n", d.name, writers[i], r.h2d_gbs,
                  r.d2h_gbs, r.writers_gbs, ratio(r.h2d_gbs, base.h2d_gbs).c_str(),
                  ratio(r.d2h_gbs, base.d2h_gbs).c_str());
      std::fflush(stdout);
    }
  }
  GPUNFV_CUDA(cudaFree(dev_up));
  GPUNFV_CUDA(cudaFree(dev_down));
  for (auto* b : up_src) host_free_pinned(b);
  for (auto* b : down_dst) host_free_pinned(b);
  return 0;
#endif
}
