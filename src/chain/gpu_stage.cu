// GPU processing stage: each batch is copied to the device once (pinned host memory, one
// stream per in-flight slot so copies of one batch overlap kernels of another), classified and
// run through its chain's NF kernels there, and copied back once. Only indices and metadata
// move between NFs; later issues keep batches resident across ingress and egress too.
#include <atomic>
#include <cstdio>
#include <deque>
#include <thread>

#include "chain/chain_steps.h"
#include "chain/processing_stage.h"
#include "core/blocking_queue.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/device_buffer.h"
#include "gpu/stream.h"

namespace gpunfv {

void launch_chain_gpu(const RuntimeConfig& rc, const Chain& chain, const BatchView& dv,
                      cudaStream_t st) {
  if (dv.count == 0) return;
  GPUNFV_CUDA(cudaMemsetAsync(dv.node_packets.framework_data(), 0, kMaxChainNodes * sizeof(uint32_t), st));
  launch_enter_chain(chain, dv, st);
  GpuStream gs{st, 0, 256};
  for (size_t k = 0; k < chain.path.size(); ++k)
    launch_node_gpu(rc, chain, dv, static_cast<uint8_t>(k), gs);
}

namespace {

class GpuStage final : public ProcessingStage {
 public:
  GpuStage(const RuntimeConfig& rc, const BatchShape& shape)
      : rc_(rc), layout_(BatchLayout::make(shape.capacity, shape.stride, shape.result_stride)) {
    if (!cuda_device_available()) throw GpuError("no CUDA device is available (use --backend cpu)");
    GPUNFV_CUDA(cudaSetDevice(0));
    cudaDeviceProp prop{};
    GPUNFV_CUDA(cudaGetDeviceProperties(&prop, 0));
    device_name_ = prop.name;
    slots_.resize(rc.settings.gpu_in_flight);
    for (Slot& s : slots_) {
      s.dev.allocate(layout_.bytes);
      GPUNFV_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
      GPUNFV_CUDA(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming));
    }
  }
  ~GpuStage() override {
    stop();
    for (Slot& s : slots_) {
      cudaEventDestroy(s.done);
      cudaStreamDestroy(s.stream);
    }
  }

  void start(Done done) override {
    done_ = std::move(done);
    launcher_ = std::thread([this] { launch_loop(); });
  }
  void submit(Batch* b) override { queue_.push(b); }
  void stop() override {
    queue_.close();
    if (launcher_.joinable()) launcher_.join();
  }
  std::string describe() const override {
    return "gpu backend on " + device_name_ + ", " + std::to_string(slots_.size()) +
           " batches in flight";
  }

 private:
  struct Slot {
    DeviceBuffer<uint8_t> dev;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    Batch* batch = nullptr;
  };

  // One copy in, the chain's kernels, one copy out: 2 transfers and 1 + NF-count launches a
  // batch, so per-batch API overhead stays small next to the bytes moved.
  void issue(Slot& s, Batch* b) {
    s.batch = b;
    const uint32_t n = b->count();
    const size_t bytes = layout_.device_prefix_bytes(n);
    GPUNFV_CUDA(cudaMemcpyAsync(s.dev.data(), b->base(), bytes, cudaMemcpyHostToDevice, s.stream));
    launch_chain_gpu(rc_, rc_.chains[b->chain], layout_.view(s.dev.data(), n), s.stream);
    GPUNFV_CUDA(cudaMemcpyAsync(b->base(), s.dev.data(), bytes, cudaMemcpyDeviceToHost, s.stream));
    GPUNFV_CUDA(cudaEventRecord(s.done, s.stream));
  }

  void complete(Slot& s) {
    GPUNFV_CUDA(cudaEventSynchronize(s.done));
    Batch* b = s.batch;
    s.batch = nullptr;
    done_(b);
  }

  void launch_loop() {
    try {
      GPUNFV_CUDA(cudaSetDevice(0));
      std::deque<size_t> in_flight;  // slot indices, oldest first
      const size_t n_slots = slots_.size();
      for (;;) {
        auto b = queue_.pop_for(in_flight.empty() ? std::chrono::microseconds(10000)
                                                  : std::chrono::microseconds(20));
        if (b) {
          if (in_flight.size() == n_slots) {
            complete(slots_[in_flight.front()]);
            in_flight.pop_front();
          }
          size_t slot = in_flight.empty() ? next_free_ : (in_flight.back() + 1) % n_slots;
          issue(slots_[slot], *b);
          in_flight.push_back(slot);
          continue;
        }
        // Nothing new: hand back whatever the GPU has finished, oldest first.
        while (!in_flight.empty() && cudaEventQuery(slots_[in_flight.front()].done) == cudaSuccess) {
          next_free_ = (in_flight.front() + 1) % n_slots;
          complete(slots_[in_flight.front()]);
          in_flight.pop_front();
        }
        if (queue_.closed_and_empty()) {
          while (!in_flight.empty()) {
            complete(slots_[in_flight.front()]);
            in_flight.pop_front();
          }
          break;
        }
      }
    } catch (const std::exception& e) {
      // A CUDA failure (e.g. an NF tripped an IsoSpan bound) leaves batches on the device:
      // stop loudly instead of reporting packets that were never accounted.
      std::fprintf(stderr, "gpunfv: GPU error: %s\n", e.what());
      std::_Exit(1);
    }
  }

  const RuntimeConfig& rc_;
  BatchLayout layout_;
  std::string device_name_;
  std::vector<Slot> slots_;
  size_t next_free_ = 0;
  Done done_;
  BlockingQueue<Batch*> queue_;
  std::thread launcher_;
};

}  // namespace

std::unique_ptr<ProcessingStage> make_gpu_stage(const RuntimeConfig& rc, const BatchShape& shape) {
  return std::make_unique<GpuStage>(rc, shape);
}

}  // namespace gpunfv
