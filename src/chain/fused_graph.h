// The fused pipeline's CUDA graphs (settings.gpu_graphs): instead of submitting a batch's whole
// chain call by call (copies, classify, each NF's kernels and switch, copies back: a dozen
// launches, each costing the issuing thread microseconds), the chain is recorded by stream
// capture, which submits nothing, into a graph; the graph updates the stream slot's executable
// graph in place (node parameters only: the batch's addresses and sizes) and is launched whole,
// one submission per batch. A batch whose calls form another graph shape than the slot's last
// one (a strided instead of a linear upload, zero copy instead of copies) re-instantiates the
// slot's executable graph. A capture CUDA refuses launches nothing: the caller then issues the
// batch directly, and the refusal is counted.
#pragma once

#if GPUNFV_HAVE_CUDA
#include <atomic>
#include <cstdint>
#include <functional>

#include <cuda_runtime.h>
#include <nlohmann/json_fwd.hpp>

namespace gpunfv {

// Per GPU stage, for the report: whether and how graphs carried the batches.
struct FusedGraphCounts {
  std::atomic<uint64_t> launches{0};        // batches launched as a graph
  std::atomic<uint64_t> updates{0};         // of them, on a slot's executable graph updated in place
  std::atomic<uint64_t> instantiations{0};  // of them, on one instantiated anew (first, or new shape)
  std::atomic<uint64_t> capture_failures{0};  // recordings CUDA refused: issued directly
  std::atomic<uint64_t> direct_batches{0};  // not recorded at all (device-resident, pageable, ordered NF)
  void report(nlohmann::json& j) const;
};

// One fused stream slot's executable graph. Not thread-safe: its stage thread alone uses it.
class FusedGraph {
 public:
  explicit FusedGraph(FusedGraphCounts& counts) : counts_(&counts) {}
  ~FusedGraph();
  FusedGraph(FusedGraph&& o) noexcept;
  FusedGraph& operator=(FusedGraph&&) = delete;
  FusedGraph(const FusedGraph&) = delete;
  FusedGraph& operator=(const FusedGraph&) = delete;

  // Records `issue()` (which launches on `stream` only) and launches it on `stream` as one
  // graph. False: nothing was launched, and the CUDA error state is clear again; the caller
  // issues the batch directly.
  bool launch(cudaStream_t stream, const std::function<void()>& issue);

 private:
  cudaGraph_t capture(cudaStream_t stream, const std::function<void()>& issue);
  bool install(cudaGraph_t g);

  FusedGraphCounts* counts_;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace gpunfv
#endif
