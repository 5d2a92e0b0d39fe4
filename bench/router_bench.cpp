// Router benchmark and GPU-equals-CPU check.
//
// Generates packets with the configured generator port, runs the chain on the CPU backend
// (1 thread and all threads) and on the GPU backend (kernel-only on device-resident batches,
// and end to end: pinned host batches copied in, processed, copied out), compares every GPU
// output packet and its metadata with the CPU's bit for bit, and prints a table.
//
//   router_bench [--config bench/router_bench.yaml] [--packets N] [--threads T] [--json FILE]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "chain/processing_stage.h"
#include "chain/runtime_config.h"
#include "core/clock.h"
#include "core/error.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#include "gpu/device_buffer.h"
#endif

using namespace gpunfv;

namespace {

using Batches = std::vector<std::unique_ptr<Batch>>;

Batches make_batches(uint32_t n, uint32_t cap, uint32_t stride, MemoryKind kind) {
  Batches v;
  for (uint32_t i = 0; i < n; ++i) v.push_back(std::make_unique<Batch>(cap, stride, kind));
  return v;
}

// Fills batches from the port; returns packets generated (stops at `limit`).
uint64_t fill(Port& port, Batches& bs, uint64_t limit) {
  uint64_t total = 0;
  for (auto& b : bs) {
    b->set_count(0);
    while (b->count() < b->capacity() && total + b->count() < limit && !port.rx_done()) {
      uint32_t want = static_cast<uint32_t>(
          std::min<uint64_t>(b->capacity() - b->count(), limit - total - b->count()));
      port.rx_burst(*b, want);
    }
    total += b->count();
  }
  return total;
}

void copy_batch(const Batch& from, Batch& to) {
  std::memcpy(to.base(), from.base(), from.layout().bytes);
  to.set_count(from.count());
  to.chain = from.chain;
  to.batch_seq = from.batch_seq;
}

double run_cpu(const RuntimeConfig& rc, Batches& bs, size_t n_batches, unsigned threads) {
  std::atomic<size_t> next{0};
  uint64_t t0 = monotonic_ns();
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n_batches;)
        run_chain_cpu(rc, rc.chains[0], bs[i]->view());
    });
  for (auto& t : ts) t.join();
  return (monotonic_ns() - t0) / 1e9;
}

// Compares everything egress and later NFs read: bytes, length, verdict, position, egress
// port, headers and flow hash.
uint64_t count_mismatches(const Batch& a, const Batch& b, std::string* first) {
  BatchView x = a.view(), y = b.view();
  uint64_t bad = 0;
  for (uint32_t i = 0; i < x.count; ++i) {
    bool same = x.len[i] == y.len[i] && x.verdict[i] == y.verdict[i] &&
                x.next_nf[i] == y.next_nf[i] && x.out_port[i] == y.out_port[i] &&
                x.flow_hash[i] == y.flow_hash[i] &&
                std::memcmp(&x.headers[i], &y.headers[i], sizeof(PacketHeaders)) == 0 &&
                std::memcmp(x.data.framework_data() + size_t(i) * x.stride,
                            y.data.framework_data() + size_t(i) * y.stride,
                            std::min<uint32_t>(x.len[i], x.stride)) == 0;
    if (!same && bad++ == 0 && first)
      *first = fmt::format("packet {}: cpu verdict {} port {} / gpu verdict {} port {}", i,
                           x.verdict[i], x.out_port[i], y.verdict[i], y.out_port[i]);
  }
  return bad;
}

struct Row {
  std::string path;
  uint64_t packets = 0;
  double seconds = 0;
  double mpps() const { return seconds > 0 ? packets / seconds / 1e6 : 0; }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpunfv router benchmark: CPU vs GPU throughput, GPU output checked against CPU"};
  std::string config = "bench/router_bench.yaml", json_out;
  uint64_t packets = 10'000'000;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  app.add_option("--config", config, "Chain configuration with a generator port")->capture_default_str();
  app.add_option("--packets", packets, "Packets to generate and compare")->capture_default_str();
  app.add_option("--threads", threads, "CPU threads for the all-cores row")->capture_default_str();
  app.add_option("--json", json_out, "Also write the table as JSON");
  CLI11_PARSE(app, argc, argv);

  try {
    RuntimeConfig rc = load_runtime_config(config);
    Port& port = *rc.ports[rc.chains[0].from];
    if (!port.has_rx()) throw ConfigError(config, "first chain's port has no rx side");
    for (auto& nf : rc.nfs) nf->prepare(Backend::cpu);
    const uint32_t cap = rc.settings.batch_size, n_batches = rc.settings.batches;
    const uint32_t stride = std::max<uint32_t>(64, (port.max_frame_bytes() + 63) / 64 * 64);
    bool gpu = false;
#if GPUNFV_HAVE_CUDA
    int devices = 0;
    gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    if (!gpu) cudaGetLastError();
    if (gpu) for (auto& nf : rc.nfs) nf->prepare(Backend::gpu);
#endif
    MemoryKind mem = gpu ? MemoryKind::host_pinned : MemoryKind::host;
    Batches in = make_batches(n_batches, cap, stride, mem);
    Batches cpu_out = make_batches(n_batches, cap, stride, MemoryKind::host);
    Batches gpu_out = make_batches(n_batches, cap, stride, mem);
    uint64_t frame_bytes = 0;

    Row cpu1{"gpunfv CPU, 1 thread"}, cpun{fmt::format("gpunfv CPU, {} threads", threads)};
    Row gpu_kernel{"gpunfv GPU, kernel only"}, gpu_e2e{"gpunfv GPU, end to end"};
    uint64_t compared = 0, mismatches = 0;
    std::string first_mismatch;
    fmt::print(stderr, "router_bench: {} packets, batches of {} x {} B slots, GPU: {}\n", packets,
               cap, stride, gpu ? "yes" : "no");

#if GPUNFV_HAVE_CUDA
    std::unique_ptr<ProcessingStage> stage;
    std::mutex m;
    std::condition_variable cv;
    size_t finished = 0;
    DeviceBuffer<uint8_t> dev;  // device-resident copies of one round, for kernel-only timing
    std::vector<size_t> dev_off;
    if (gpu) {
      stage = make_gpu_stage(rc, cap, stride);
      stage->start([&](Batch*) {
        std::lock_guard<std::mutex> lk(m);
        ++finished;
        cv.notify_one();
      });
      dev.allocate(in[0]->layout().bytes * n_batches);
    }
#endif

    uint64_t done = 0;
    for (int round = 0; done < packets; ++round) {
      uint64_t n = fill(port, in, packets - done);
      if (n == 0) break;
      size_t used = 0;
      for (auto& b : in) {
        if (b->count() == 0) break;
        BatchView v = b->view();
        for (uint32_t i = 0; i < v.count; ++i) frame_bytes += v.len[i];
        ++used;
      }
      for (size_t i = 0; i < used; ++i) copy_batch(*in[i], *cpu_out[i]);
      cpun.seconds += run_cpu(rc, cpu_out, used, threads);
      cpun.packets += n;
      if (round == 0) {  // single-thread row on the first round only (it is slow)
        Batches one = make_batches(static_cast<uint32_t>(used), cap, stride, MemoryKind::host);
        for (size_t i = 0; i < used; ++i) copy_batch(*in[i], *one[i]);
        cpu1.seconds += run_cpu(rc, one, used, 1);
        cpu1.packets += n;
      }
#if GPUNFV_HAVE_CUDA
      if (gpu) {
        for (size_t i = 0; i < used; ++i) copy_batch(*in[i], *gpu_out[i]);
        finished = 0;
        uint64_t t0 = monotonic_ns();
        for (size_t i = 0; i < used; ++i) stage->submit(gpu_out[i].get());
        {
          std::unique_lock<std::mutex> lk(m);
          cv.wait(lk, [&] { return finished == used; });
        }
        gpu_e2e.seconds += (monotonic_ns() - t0) / 1e9;
        gpu_e2e.packets += n;
        for (size_t i = 0; i < used; ++i) {
          compared += gpu_out[i]->count();
          mismatches += count_mismatches(*cpu_out[i], *gpu_out[i], first_mismatch.empty() ? &first_mismatch : nullptr);
        }
        // Kernel only: the same input already in device memory, one stream per batch slot.
        const BatchLayout& L = in[0]->layout();
        for (size_t i = 0; i < used; ++i)
          GPUNFV_CUDA(cudaMemcpy(dev.data() + i * L.bytes, in[i]->base(), L.bytes, cudaMemcpyHostToDevice));
        std::vector<cudaStream_t> streams(8);
        for (auto& s : streams) GPUNFV_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        cudaEvent_t e0, e1;
        GPUNFV_CUDA(cudaEventCreate(&e0));
        GPUNFV_CUDA(cudaEventCreate(&e1));
        GPUNFV_CUDA(cudaDeviceSynchronize());
        GPUNFV_CUDA(cudaEventRecord(e0));
        for (auto& s : streams) GPUNFV_CUDA(cudaStreamWaitEvent(s, e0));
        for (size_t i = 0; i < used; ++i)
          launch_chain_gpu(rc, rc.chains[0], L.view(dev.data() + i * L.bytes, in[i]->count()),
                           streams[i % streams.size()]);
        for (auto& s : streams) {
          cudaEvent_t e;
          GPUNFV_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
          GPUNFV_CUDA(cudaEventRecord(e, s));
          GPUNFV_CUDA(cudaStreamWaitEvent(nullptr, e));
          GPUNFV_CUDA(cudaEventDestroy(e));
        }
        GPUNFV_CUDA(cudaEventRecord(e1));
        GPUNFV_CUDA(cudaEventSynchronize(e1));
        float ms = 0;
        GPUNFV_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        gpu_kernel.seconds += ms / 1e3;
        gpu_kernel.packets += n;
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        for (auto& s : streams) cudaStreamDestroy(s);
      }
#endif
      done += n;
    }
#if GPUNFV_HAVE_CUDA
    if (stage) stage->stop();
#endif

    double avg_frame = done ? double(frame_bytes) / done : 0;
    std::vector<Row> rows{cpu1, cpun};
    if (gpu) rows.insert(rows.end(), {gpu_kernel, gpu_e2e});
    fmt::print("\nrouter_bench: {} ({} packets, mean frame {:.0f} B)\n\n", config, done, avg_frame);
    fmt::print("| {:<32} | {:>10} | {:>10} | {:>16} |\n", "path", "Mpps", "Gbit/s", "vs CPU all thr.");
    fmt::print("|{:-<34}|{:->12}|{:->12}|{:->18}|\n", "", "", "", "");
    nlohmann::json j;
    j["config"] = config;
    j["packets"] = done;
    j["mean_frame_bytes"] = avg_frame;
    for (const Row& r : rows) {
      double gbps = r.mpps() * 1e6 * avg_frame * 8 / 1e9;
      double ratio = cpun.mpps() > 0 ? r.mpps() / cpun.mpps() : 0;
      fmt::print("| {:<32} | {:>10.2f} | {:>10.2f} | {:>15.2f}x |\n", r.path, r.mpps(), gbps, ratio);
      j["rows"].push_back({{"path", r.path}, {"packets", r.packets}, {"seconds", r.seconds},
                           {"mpps", r.mpps()}, {"gbps", gbps}, {"vs_cpu_all_threads", ratio}});
    }
    if (gpu) {
      fmt::print("\nGPU output vs CPU output: {} packets compared, {} mismatches{}\n", compared,
                 mismatches, mismatches ? " (first: " + first_mismatch + ")" : "");
      j["gpu_vs_cpu"] = {{"compared", compared}, {"mismatches", mismatches}};
    } else {
      fmt::print("\nno CUDA device: GPU rows and the GPU-vs-CPU comparison were skipped\n");
    }
    if (!json_out.empty()) std::ofstream(json_out) << j.dump(2) << "\n";
    return mismatches ? 1 : 0;
  } catch (const ConfigError& e) {
    fmt::print(stderr, "router_bench: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "router_bench: error: {}\n", e.what());
    return 1;
  }
}
