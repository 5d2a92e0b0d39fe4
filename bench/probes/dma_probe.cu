// dma_probe: what one step of the NIC emulator's DMA costs on this GPU, op by op. The emulator
// (src/io/gpuring/nic_emulator*.cpp) moves every byte into and out of ring memory with the
// GPU's copy engine; its end-to-end latency is bounded by how long such a step takes from
// issue to the host seeing it complete. This probe times the step's building blocks alone, with
// one op chain outstanding at a time (latency) and back to back (rate), on an idle GPU and beside
// persistent kernels that poll as the ring loops do, to show where the emulator's time goes.
//
// Usage: dma_probe [iterations]   (prints a markdown table; needs a CUDA device)
#include <cuda.h>
#include <cstring>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include "io/gpuring/ring/descriptors.h"
#include "io/gpuring/nic_emu/dma_engine.h"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "dma_probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}
#define CK(x) check((x), #x)

uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Polls a device word and a host-mapped word until told to stop, as the rx/tx ring loops poll
// descriptors in device memory and registers in mapped host memory.
__global__ void poller(const volatile uint32_t* stop_host, const volatile uint64_t* dev_word, uint64_t* sink) {
  uint64_t acc = 0;
  while (*stop_host == 0) {
    for (int i = 0; i < 32; ++i) acc += dev_word[threadIdx.x & 7];
    __nanosleep(64);
  }
  if (acc == 42) *sink = acc;
}

struct Stats {
  double p50, p99, issue_us;
};

Stats summarize(std::vector<uint64_t>& lat, uint64_t issue_ns) {
  std::sort(lat.begin(), lat.end());
  auto at = [&](double q) { return lat[std::min(lat.size() - 1, size_t(q * lat.size()))] / 1e3; };
  return Stats{at(0.5), at(0.99), double(issue_ns) / lat.size() / 1e3};
}

struct Bufs {
  uint8_t *h_frames, *h_desc, *h_read;  // pinned
  uint8_t *d_slots, *d_desc;
};

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 3000;
  CK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# dma_probe: %s, %d SMs, %d copy engines (asyncEngineCount), %d iterations per cell\n\n",
              prop.name, prop.multiProcessorCount, prop.asyncEngineCount, iters);

  Bufs b{};
  CK(cudaMallocHost(&b.h_frames, 32 * 2048));
  CK(cudaMallocHost(&b.h_desc, 32 * 16));
  CK(cudaMallocHost(&b.h_read, 32 * 2048));
  CK(cudaMalloc(&b.d_slots, 32 * 2048));
  CK(cudaMalloc(&b.d_desc, 512 * 16));
  std::fill(b.h_frames, b.h_frames + 32 * 2048, 0xab);
  uint32_t* stop = nullptr;
  CK(cudaHostAlloc(&stop, 64, cudaHostAllocMapped));
  uint64_t* sink = nullptr;
  CK(cudaMalloc(&sink, 8));
  uint64_t* dev_word = nullptr;
  CK(cudaMalloc(&dev_word, 64));
  CK(cudaMemset(dev_word, 0, 64));

  cudaStream_t s, s2, bg;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&bg, cudaStreamNonBlocking));
  cudaEvent_t ev, ev2;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&ev2, cudaEventDisableTiming));
  CUstream cs = reinterpret_cast<CUstream>(s);
  // The driver API through the runtime, so the probe links no libcuda (as the product does).
  using WriteValue64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  WriteValue64 write_value64 = nullptr;
  {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue64", &fn, 12000, cudaEnableDefault, &q));
    write_value64 = reinterpret_cast<WriteValue64>(fn);
  }

  auto spin = [](cudaEvent_t e) {
    cudaError_t r;
    while ((r = cudaEventQuery(e)) == cudaErrorNotReady) {
    }
    check(r, "cudaEventQuery");
  };
  // Ops chains, each issued on stream s; a chain with a dependent read waits inside itself.
  struct Chain {
    const char* name;
    std::function<void()> issue;
  };
  const auto h2d = cudaMemcpyHostToDevice, d2h = cudaMemcpyDeviceToHost;
  std::vector<Chain> chains = {
      {"h2d 64 B", [&] { CK(cudaMemcpyAsync(b.d_slots, b.h_frames, 64, h2d, s)); }},
      {"h2d 2 KB", [&] { CK(cudaMemcpyAsync(b.d_slots, b.h_frames, 2048, h2d, s)); }},
      {"h2d 64 KB (32 slots)", [&] { CK(cudaMemcpyAsync(b.d_slots, b.h_frames, 32 * 2048, h2d, s)); }},
      {"h2d 2D 32 x 64 B, pitch 2 KB",
       [&] { CK(cudaMemcpy2DAsync(b.d_slots, 2048, b.h_frames, 2048, 64, 32, h2d, s)); }},
      {"rx step: h2d 64 B + 16 B desc",
       [&] {
         CK(cudaMemcpyAsync(b.d_slots, b.h_frames, 64, h2d, s));
         CK(cudaMemcpyAsync(b.d_desc, b.h_desc, 16, h2d, s));
       }},
      {"rx step: h2d 64 B + desc by cuStreamWriteValue64 x2",
       [&] {
         CK(cudaMemcpyAsync(b.d_slots, b.h_frames, 64, h2d, s));
         write_value64(cs, CUdeviceptr(b.d_desc), 1, CU_STREAM_WRITE_VALUE_DEFAULT);
         write_value64(cs, CUdeviceptr(b.d_desc + 8), 2, CU_STREAM_WRITE_VALUE_DEFAULT);
       }},
      {"d2h 16 B", [&] { CK(cudaMemcpyAsync(b.h_read, b.d_desc, 16, d2h, s)); }},
      {"d2h 64 B", [&] { CK(cudaMemcpyAsync(b.h_read, b.d_slots, 64, d2h, s)); }},
      {"tx step: d2h 16 B desc | d2h 64 B + h2d 16 B wb", [&] {
         CK(cudaMemcpyAsync(b.h_read, b.d_desc, 16, d2h, s));
         CK(cudaEventRecord(ev2, s));
         spin(ev2);
         CK(cudaMemcpyAsync(b.h_read + 64, b.d_slots, 64, d2h, s));
         CK(cudaMemcpyAsync(b.d_desc, b.h_desc, 16, h2d, s));
       }}};

  // Latency: one chain outstanding, issue -> event seen complete. Rate: chains back to back.
  auto measure = [&](const Chain& c) {
    std::vector<uint64_t> lat;
    lat.reserve(iters);
    uint64_t issue_ns = 0;
    for (int i = 0; i < iters + 50; ++i) {
      const uint64_t t0 = now_ns();
      c.issue();
      CK(cudaEventRecord(ev, s));
      const uint64_t t1 = now_ns();
      spin(ev);
      const uint64_t t2 = now_ns();
      if (i >= 50) {
        lat.push_back(t2 - t0);
        issue_ns += t1 - t0;
      }
    }
    Stats st = summarize(lat, issue_ns);
    const uint64_t r0 = now_ns();
    for (int i = 0; i < iters; ++i) {
      c.issue();
      CK(cudaEventRecord(ev, s));
    }
    CK(cudaStreamSynchronize(s));
    const double rate = iters / ((now_ns() - r0) / 1e9);
    std::printf("| %s | %.1f | %.1f | %.1f | %.0f |\n", c.name, st.p50, st.p99, st.issue_us, rate / 1e3);
  };

  auto table = [&](const char* title) {
    std::printf("## %s\n\n| chain | latency p50 us | p99 us | issue us (CPU) | back to back, k chains/s |\n"
                "|---|---|---|---|---|\n", title);
    for (const Chain& c : chains) measure(c);
    std::printf("\n");
    std::fflush(stdout);
  };

  table("idle GPU");

  *stop = 0;
  poller<<<2, 32, 0, bg>>>(stop, dev_word, sink);
  CK(cudaGetLastError());
  table("beside 2 polling blocks (the ring loops' shape)");

  // A second host thread doing tx steps on its own stream, as the emulator's tx engine does.
  std::atomic<bool> tx_stop{false};
  std::thread tx([&] {
    CK(cudaSetDevice(0));
    cudaEvent_t e;
    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    while (!tx_stop.load()) {
      CK(cudaMemcpyAsync(b.h_read + 4096, b.d_desc + 256, 16, d2h, s2));
      CK(cudaEventRecord(e, s2));
      spin(e);
      CK(cudaMemcpyAsync(b.h_read + 8192, b.d_slots + 4096, 64, d2h, s2));
      CK(cudaMemcpyAsync(b.d_desc + 1024, b.h_desc, 16, h2d, s2));
      CK(cudaEventRecord(e, s2));
      spin(e);
    }
    cudaEventDestroy(e);
  });
  table("beside 2 polling blocks and a tx thread looping tx steps on its own stream");
  tx_stop = true;
  tx.join();

  *stop = 1;
  CK(cudaDeviceSynchronize());

  // The emulator's engines (io/gpuring/nic_emu/dma_engine.h) doing an rx step and a tx step, on an idle
  // GPU: the floor under the emulator's rx and tx DMA latency.
  std::printf("## The emulator's DMA engines, one step outstanding (idle GPU)\n\n"
              "| engine | step | latency p50 us | p99 us | issue us (CPU) | back to back, k steps/s |\n"
              "|---|---|---|---|---|---|\n");
  using gpunfv::gpuring::NicDma;
  for (NicDma kind : {NicDma::batch, NicDma::sm}) {
    auto e = gpunfv::gpuring::make_device_dma_engine(kind);
    auto* staging = static_cast<uint8_t*>(e->alloc_staging(32 * 2048));
    auto* wb = static_cast<uint8_t*>(e->alloc_staging(32 * 16));
    std::memset(staging, 0x5a, 32 * 2048);
    std::memset(wb, 0, 32 * 16);
    struct Step {
      const char* name;
      std::function<void()> run;  // issues and waits
      std::function<void()> issue;  // issues only (for the rate)
    };
    auto rx_issue = [&](uint32_t frames) {
      e->copy_rows(b.d_slots, 2048, staging, 2048, 64, frames);
      e->write_descriptors(b.d_desc, wb, frames);
      return e->mark();
    };
    auto tx_run = [&](uint32_t frames) {
      e->read_async(b.h_read, b.d_desc, 16 * frames);
      e->wait_for(e->mark());
      e->copy_rows(staging, 2048, b.d_slots, 2048, 64, frames);
      e->write_descriptors(b.d_desc + 4096, wb, frames);
      e->wait_for(e->mark());
    };
    // A chained tx step (fetch_tx_frames: descriptors and frames in one step, where the engine
    // can), over 32 descriptors at d_desc + 6144 naming 64-byte frames in d_slots.
    auto tx_chain = [&](uint32_t frames) {
      const bool chained = e->fetch_tx_frames(gpunfv::gpuring::DmaEngine::TxFetch{
          b.d_desc + 6144, b.h_read + 8192, 32, 0, frames, staging, 2048, 0, 2048});
      if (chained) e->wait_for(e->mark());
      return chained;
    };
    {
      std::vector<gpunfv::gpuring::TxDesc> ring(32);
      for (uint32_t i = 0; i < 32; ++i) {
        ring[i].read.buffer_addr = reinterpret_cast<uint64_t>(b.d_slots + i * 2048);
        ring[i].read.cmd_type_len = gpunfv::gpuring::tx_cmd_type_len(64, true);
      }
      CK(cudaMemcpy(b.d_desc + 6144, ring.data(), 32 * 16, cudaMemcpyHostToDevice));
    }
    std::vector<Step> steps = {
        {"rx: 2 x 64 B + 2 descriptors", [&] { e->wait_for(rx_issue(2)); }, [&] { rx_issue(2); }},
        {"rx: 32 x 64 B + 32 descriptors", [&] { e->wait_for(rx_issue(32)); }, [&] { rx_issue(32); }},
        {"tx: 2 descriptors fetched | 2 x 64 B out + DD", [&] { tx_run(2); }, [&] { tx_run(2); }},
        {"tx: 32 descriptors fetched | 32 x 64 B out + DD", [&] { tx_run(32); }, [&] { tx_run(32); }}};
    if (tx_chain(2))
      steps.push_back({"tx chained: 32 descriptors and their 64 B frames in one step", [&] { tx_chain(32); },
                       [&] { tx_chain(32); }});
    for (const Step& st : steps) {
      std::vector<uint64_t> lat;
      for (int i = 0; i < iters + 50; ++i) {
        const uint64_t t0 = now_ns();
        st.run();
        if (i >= 50) lat.push_back(now_ns() - t0);
      }
      const uint64_t t_issue = now_ns();
      for (int i = 0; i < 200; ++i) st.issue();
      const double issue_us = (now_ns() - t_issue) / 200.0 / 1e3;
      e->wait();
      const uint64_t r0 = now_ns();
      for (int i = 0; i < iters; ++i) st.issue();
      e->wait();
      const double rate = iters / ((now_ns() - r0) / 1e9);
      Stats x = summarize(lat, 0);
      std::printf("| %s | %s | %.1f | %.1f | %.1f | %.0f |\n", gpunfv::gpuring::nic_dma_name(kind), st.name, x.p50,
                  x.p99, issue_us, rate / 1e3);
      std::fflush(stdout);
    }
    e->park();
    e->free_staging(staging);
    e->free_staging(wb);
  }
  return 0;
}
