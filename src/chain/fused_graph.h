// The fused pipeline's CUDA graphs (settings.gpu_graphs): instead of submitting a batch's whole
// chain call by call (copies, classify, each NF's kernels and switch, copies back: a dozen
// launches, each costing the issuing thread microseconds), the chain is recorded by stream
// capture, which submits nothing, into a graph; the graph updates the stream slot's executable
// graph in place (node parameters only: the batch's addresses and sizes) and is launched whole,
// one submission per batch. A slot keeps an executable graph per shape it met (by node count,
// a few at most), so batches that alternate shapes (zero copy for small ones, copies for large
// ones) update theirs instead of instantiating anew each time; a shape the update still refuses
// (a strided instead of a linear upload: as many nodes, other parameters) is instantiated anew.
// A capture CUDA refuses launches nothing: the caller then issues the batch directly, and the
// refusal is counted.
#pragma once

#if GPUNFV_HAVE_CUDA
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include <cuda_runtime.h>
#include <nlohmann/json_fwd.hpp>

namespace gpunfv {

// Per GPU stage, for the report: whether and how graphs carried the batches.
struct FusedGraphCounts {
  std::atomic<uint64_t> launches{0};        // batches launched as a graph
  std::atomic<uint64_t> updates{0};         // of them, on a slot's executable graph updated in place
  std::atomic<uint64_t> instantiations{0};  // of them, on one instantiated anew (first, or new shape)
  std::atomic<uint64_t> capture_failures{0};  // recordings CUDA refused: issued directly
  std::atomic<uint64_t> direct_batches{0};  // not recorded at all (device-resident, pageable)
  void report(nlohmann::json& j) const;
};

// One fused stream slot's executable graphs. Not thread-safe: its stage thread alone uses it.
// Its graphs run only on the slot's stream, one after another.
class FusedGraph {
 public:
  explicit FusedGraph(FusedGraphCounts& counts) : counts_(&counts) {}
  ~FusedGraph();
  FusedGraph(FusedGraph&& o) noexcept = default;
  FusedGraph& operator=(FusedGraph&&) = delete;
  FusedGraph(const FusedGraph&) = delete;
  FusedGraph& operator=(const FusedGraph&) = delete;

  // Records `issue()` (which launches on `stream` only) and launches it on `stream` as one
  // graph. False: nothing was launched, and the CUDA error state is clear again; the caller
  // issues the batch directly.
  bool launch(cudaStream_t stream, const std::function<void()>& issue);

 private:
  struct Shape {
    size_t nodes = 0;
    cudaGraphExec_t exec = nullptr;
    uint64_t last_use = 0;
  };
  static constexpr size_t kMaxShapes = 4;

  cudaGraph_t capture(cudaStream_t stream, const std::function<void()>& issue);
  cudaGraphExec_t install(cudaGraph_t g);
  Shape* shape_slot(size_t nodes);

  FusedGraphCounts* counts_;
  std::vector<Shape> shapes_;
  uint64_t uses_ = 0;
};

}  // namespace gpunfv
#endif
