// The measurements of `gpunfv profile` (see profiler.h for what is timed and how it is scaled).
#include <algorithm>
#include <cstring>
#include <string>

#include "chain/batch_shape.h"
#include "chain/chain_steps.h"
#include "chain/classify.h"
#include "core/error.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/device_buffer.h"
#include "gpu/kernel_registry.h"
#include "gpu/sm_partition.h"
#include "gpu/stream.h"
#include "sched/profiler.h"

namespace gpunfv {

namespace {

__global__ void profile_classify_kernel(BatchView b) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < b.count; i += gridDim.x * blockDim.x)
    classify_packet(b, i);
}

// CUDA events on one stream; the median of several timed runs.
class Timer {
 public:
  Timer() {
    start_ = create_event(cudaEventDefault);
    stop_ = create_event(cudaEventDefault);
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void start(cudaStream_t s) { GPUNFV_CUDA(cudaEventRecord(start_, s)); }
  double stop_seconds(cudaStream_t s) {
    GPUNFV_CUDA(cudaEventRecord(stop_, s));
    GPUNFV_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    GPUNFV_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

uint32_t round64(uint32_t x) { return (x + 63) / 64 * 64; }

void make_primary_current(const SmPartition& p) {
  SmPartition primary = p;
  primary.green = false;
  primary.make_current();
}

// One copy in and one copy out of a batch's device prefix, as the GPU stage moves a batch,
// per batch size: samples (packets, seconds). The same for every NF (one batch layout).
std::vector<Sample> time_transfers(const ProfileOptions& o, const SmPartition& part,
                                   const BatchLayout& layout, const Batch& host,
                                   DeviceBuffer<uint8_t>& work) {
  std::vector<Sample> out;
  Timer t;
  part.make_current();
  for (uint32_t b : o.batches) {
    const uint32_t n = b * static_cast<uint32_t>(part.sms > 0 ? part.sms : 1);
    const size_t bytes = layout.device_prefix_bytes(n);
    std::vector<double> runs;
    for (int r = -1; r < o.repeats; ++r) {
      t.start(part.stream);
      GPUNFV_CUDA(cudaMemcpyAsync(work.data(), host.base(), bytes, cudaMemcpyHostToDevice, part.stream));
      GPUNFV_CUDA(cudaMemcpyAsync(host.base(), work.data(), bytes, cudaMemcpyDeviceToHost, part.stream));
      const double s = t.stop_seconds(part.stream);
      if (r >= 0) runs.push_back(s);
    }
    out.push_back({double(n), median(runs)});
  }
  make_primary_current(part);
  return out;
}

}  // namespace

ProfileResult run_profile(const ProfileOptions& o, RuntimeConfig& rc, const SizedPortOf& sized_port,
                          std::FILE* log) {
  validate_profile_options(o);
  if (!cuda_device_available()) throw GpuError("gpunfv profile needs a CUDA device; none is available");
  if (rc.nfs.empty()) throw ConfigError(rc.file, "no NFs to profile");
  sized_port(o.sizes.front());  // fails early when the ingress port is no generator

  GPUNFV_CUDA(cudaSetDevice(0));
  cudaDeviceProp prop{};
  GPUNFV_CUDA(cudaGetDeviceProperties(&prop, 0));
  const std::string device = prop.name;
  const SmInfo info = query_sm_info(0);
  const bool green = o.green && info.green_contexts;
  const int want = o.sms > 0 ? o.sms : (green ? info.min_sms : 1);
  for (auto& nf : rc.nfs) nf->prepare(Backend::gpu);  // NF streams live in the primary context
  // Each NF of the first chain is profiled on the packets it gets there: the NFs before it run
  // first, on the CPU backend (the reference), so NIDS after IPsec scans ESP packets as it will
  // in the chain. An NF in no chain sees the generator's packets at position 0.
  const Chain* chain = rc.chains.empty() ? nullptr : &rc.chains[0];
  std::vector<int> node_of(rc.nfs.size(), -1);
  if (chain) {
    for (auto& nf : rc.nfs) nf->prepare(Backend::cpu);
    for (size_t k = chain->path.size(); k-- > 0;) node_of[chain->path[k]] = int(k);
  }
  SmPartitions parts({want}, o.green, 0);
  const SmPartition& part = parts[0];
  const int n_sms = part.sms;
  // (No fmt in .cu files: nvcc's C++20 host pass cannot compile fmt's constexpr parts.)
  const std::string sms_text = std::to_string(n_sms);
  const std::string how = "partition: " + parts.describe() + "; per-SM batch B ran as B x " +
                          sms_text + " packets on " + sms_text + " SMs; kernel samples are (B, "
                          "time), transfer samples (B x " + sms_text + ", time); median of " +
                          std::to_string(o.repeats) + " runs";
  if (log) std::fprintf(log, "gpunfv profile: %s on %s\n  %s\n", o.config.c_str(), device.c_str(), how.c_str());

  // Result offsets as the executor assigns them; slots sized for the largest profiled frame.
  BatchShape shape = plan_batch_shape(rc);
  uint32_t headroom = 0;
  for (const auto& nf : rc.nfs) headroom = std::max(headroom, nf->headroom_bytes());
  const uint32_t max_b = *std::max_element(o.batches.begin(), o.batches.end());
  const uint32_t capacity = max_b * static_cast<uint32_t>(n_sms);

  ProfileResult res;
  res.device = device;
  // As the executor plans (sched/gpu_sharing.cpp): with one chain, and unless the settings say
  // otherwise, gnet folds the SMs below a step into one NF.
  res.budget = green ? GpuBudget{info.total_sms, info.min_sms, info.align_sms,
                                 rc.settings.sched_fold_remainder && rc.chains.size() == 1}
                     : GpuBudget{info.total_sms, 1, 1};
  ModelStore& store = res.models;
  for (uint32_t size : o.sizes) {
    const uint32_t stride = round64(size + headroom);
    const BatchLayout layout = BatchLayout::make(capacity, stride, shape.result_stride);
    Batch host(capacity, stride, MemoryKind::host_pinned, shape.result_stride);
    auto port = sized_port(size);
    if (fill_batch(*port, host, capacity) < capacity)
      throw ConfigError(rc.file, "the generator ended before " + std::to_string(capacity) + " packets");
    BatchView hv = host.view();
    for (uint32_t i = 0; i < hv.count; ++i) hv.seq[i] = i;
    DeviceBuffer<uint8_t> pristine(layout.bytes), work(layout.bytes);
    GPUNFV_CUDA(cudaMemcpy(pristine.data(), host.base(), layout.bytes, cudaMemcpyHostToDevice));
    // The input of every chain node, in device memory: the batch as the chain hands it on.
    std::vector<DeviceBuffer<uint8_t>> node_input;
    if (chain) {
      Batch staged(capacity, stride, MemoryKind::host, shape.result_stride);
      std::memcpy(staged.base(), host.base(), layout.bytes);
      staged.set_count(host.count());
      const BatchView sv = staged.view();
      for (uint32_t k = 0; k < kMaxChainNodes; ++k) sv.node_packets[k] = 0;
      enter_chain_cpu(*chain, sv);
      for (size_t k = 0; k < chain->path.size(); ++k) {
        node_input.emplace_back(layout.bytes);
        GPUNFV_CUDA(cudaMemcpy(node_input.back().data(), staged.base(), layout.bytes,
                               cudaMemcpyHostToDevice));
        run_node_cpu(rc, *chain, sv, static_cast<uint8_t>(k));
      }
      for (auto& f : rc.nfs) f->rewind(Backend::cpu);  // e.g. IPsec's SA state back to the start
    }
    const std::vector<Sample> transfer = time_transfers(o, part, layout, host, work);

    for (size_t k = 0; k < rc.nfs.size(); ++k) {
      const NetworkFunction& nf = *rc.nfs[k];
      ModelEntry e;
      e.device = device;
      e.nf_name = nf.name();
      e.nf_type = std::string(nf.type());
      e.packet_bytes = size;
      e.profile_sms = n_sms;
      const int node = node_of[k];
      e.note = "traffic: " + port->describe() +
               (node > 0 ? " after the first chain's NFs before node " + std::to_string(node) : "") +
               "; " + how;
      const uint8_t position = node >= 0 ? static_cast<uint8_t>(node) : 0;
      const uint8_t* input = node >= 0 ? node_input[size_t(node)].data() : pristine.data();
      for (uint32_t b : o.batches) {
        const uint32_t n = b * static_cast<uint32_t>(n_sms);
        const BatchView dv = layout.view(work.data(), n);
        // The fallback's one block per SM must fill the SM: 1024 threads, as G-NET's blocks.
        const GpuStream gs{part.stream, part.max_blocks, part.max_blocks > 0 ? 1024 : 256};
        int blocks = static_cast<int>((n + 255) / 256);
        if (part.max_blocks > 0) blocks = std::min(blocks, part.max_blocks);
        std::vector<double> kernel;
        Timer t;
        part.make_current();
        for (int r = -1; r < o.repeats; ++r) {  // run -1 warms up (caches, lazy state)
          // Fresh packets every run: NFs rewrite them (IPsec encrypts and grows them).
          GPUNFV_CUDA(cudaMemcpyAsync(work.data(), input, layout.device_prefix_bytes(n),
                                      cudaMemcpyDeviceToDevice, part.stream));
          if (node < 0) {  // chain nodes' inputs were classified (and switched) on the host
            profile_classify_kernel<<<blocks, 256, 0, part.stream>>>(dv);
            GPUNFV_CUDA(cudaGetLastError());
          }
          t.start(part.stream);
          nf.process_gpu(dv, position, gs);
          const double s = t.stop_seconds(part.stream);
          if (r >= 0) kernel.push_back(s);
        }
        make_primary_current(part);
        e.kernel_samples.push_back({double(b), median(kernel)});
      }
      e.transfer_samples = transfer;
      fit_entry(e);
      if (log)
        std::fprintf(log, "  %s (%s) %u B: k1 %.3f ns/pkt, b1 %.2f us, R2 %.4f\n", e.nf_name.c_str(),
                     e.nf_type.c_str(), size, e.model.k1 * 1e9, e.model.b1 * 1e6, e.kernel_fit.r2);
      store.add(std::move(e));
      for (auto& f : rc.nfs) f->rewind(Backend::gpu);  // e.g. IPsec's SA state back to the start
    }
  }
  SchedParams params;
  params.transfer_once = true;  // as the executor plans (sched/gpu_sharing.cpp)
  params.max_batch = rc.settings.batch_size;
  params.latency_bound_s = rc.settings.latency_bound_us * 1e-6;
  params.P = rc.settings.sched_p;
  params.C_s = rc.settings.sched_c_us * 1e-6;
  res.allocations = allocation_table(rc, store, device, res.budget, params, o.sizes);
  return res;
}

// Loaded before any persistent kernel runs (gpu/device_preflight.h).
GPUNFV_REGISTER_KERNEL(profile_classify_kernel);

}  // namespace gpunfv
