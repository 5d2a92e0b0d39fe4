// The backend-specific middle of the pipeline: takes classified-or-raw batches from ingress,
// runs each batch's chain (classify, then its NFs in order, every NF seeing a chain's batches in
// the order it received them), and hands finished batches to egress, which sends them in that
// order. CPU: worker threads. GPU: host threads issuing batches, several in flight on their own
// streams.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "chain/batch_shape.h"
#include "chain/runtime_config.h"
#include "chain/chain_flow.h"
#include "core/batch.h"
#include <nlohmann/json_fwd.hpp>

#if GPUNFV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace gpunfv {

class ProcessingStage {
 public:
  using Done = std::function<void(Batch*)>;
  virtual ~ProcessingStage() = default;
  // Starts threads; `done` is called (from stage threads) for each finished batch.
  virtual void start(Done done) = 0;
  virtual void submit(Batch* b) = 0;
  // Finishes every submitted batch, then stops the threads.
  virtual void stop() = 0;
  virtual std::string describe() const = 0;
  // Simmer: the chain's first stage is slowed, so its ingress port should stop polling.
  virtual bool ingress_paused(uint16_t chain) const { return false; }
  // The chain's stage queues and their metrics (nullptr for stages without them).
  virtual const ChainFlow* flow(uint16_t chain) const { return nullptr; }
  // Live scheduler state for the progress line and the report ("" / null when none).
  virtual std::string allocation_line() const { return ""; }
  virtual void report(nlohmann::json& j) const {}
  // Live: per chain and NF node, the share of the GPU's SMs the node's lane may use (empty
  // where no GPU sharing policy runs).
  virtual std::vector<std::vector<double>> sm_shares() const { return {}; }
  // Chain's ingress batch under the current plan (0: settings.batch_size).
  virtual uint32_t ingress_batch(uint16_t chain) const { return 0; }
  // Ingress tells the stage what it received (mean frame size for the scheduler's model).
  virtual void note_frames(uint64_t packets, uint64_t bytes) {}
  // Ingress closed a batch of the chain: full (the source had more: the chain is saturated)
  // or on its deadline.
  virtual void note_batch(uint16_t chain, bool full) {}
  // Before a persistent kernel (a GPU ring's) starts, before start(): makes everything the
  // stage would otherwise make once batches flow (streams, events, device copies of
  // `host_batches`), since CUDA may make such a call wait for the persistent kernel for ever
  // (gpu/device_preflight.h). Nothing on the CPU.
  virtual void prepare_for_persistent_kernels(const std::vector<Batch*>& host_batches) {}
  // Whether the stage runs persistent kernels of its own (gpu_pipeline: persistent): then
  // prepare_for_persistent_kernels is called before start() whatever the ports are.
  virtual bool runs_persistent_kernels() const { return false; }
  // Before start(): chains (by index) whose finished host batches need only what egress reads,
  // no NF reading results on the host (chain/host_batch_transfer.h). Nothing on the CPU.
  virtual void set_egress_only_download(const std::vector<bool>& by_chain) {}
};

// The chain's stage queues: enter + one per NF, plus `extra_stages` (the GPU's download).
std::unique_ptr<ChainFlow> make_chain_flow(const RuntimeConfig& rc, const Chain& c,
                                           size_t extra_stages = 0);

std::unique_ptr<ProcessingStage> make_cpu_stage(const RuntimeConfig& rc, uint32_t workers);
#if GPUNFV_HAVE_CUDA
std::unique_ptr<ProcessingStage> make_gpu_stage(const RuntimeConfig& rc, const BatchShape& shape);
// Launches classify and chain `c`'s NF kernels over a device-resident batch on `stream`.
void launch_chain_gpu(const RuntimeConfig& rc, const Chain& c, const BatchView& device_batch,
                      cudaStream_t stream);
#endif

// Runs chain `c` over a host batch on the calling thread: the CPU backend's whole job for one
// batch, also used by tests and benchmarks as the reference.
void run_chain_cpu(const RuntimeConfig& rc, const Chain& c, const BatchView& b);

}  // namespace gpunfv
