#if GPUNFV_HAVE_CUDA
#include "chain/fused_graph.h"

#include <exception>

#include <nlohmann/json.hpp>

#include "gpu/cuda_check.h"

namespace gpunfv {

void FusedGraphCounts::report(nlohmann::json& j) const {
  j = {{"launches", launches.load()},
       {"updates", updates.load()},
       {"instantiations", instantiations.load()},
       {"capture_failures", capture_failures.load()},
       {"direct_batches", direct_batches.load()}};
}

FusedGraph::~FusedGraph() {
  // A launch still in flight completes; CUDA frees the graph then.
  for (Shape& s : shapes_)
    if (s.exec) cudaGraphExecDestroy(s.exec);
}

bool FusedGraph::launch(cudaStream_t stream, const std::function<void()>& issue) {
  cudaGraph_t g = capture(stream, issue);
  if (!g) {
    counts_->capture_failures.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  cudaGraphExec_t exec = install(g);
  cudaGraphDestroy(g);  // the executable graph keeps its own copy of the nodes
  if (!exec) {
    counts_->capture_failures.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  GPUNFV_CUDA(cudaGraphLaunch(exec, stream));
  counts_->launches.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// Thread-local mode: only this thread's calls that cannot be recorded fail (and invalidate the
// capture); other threads' synchronous calls go on as usual.
cudaGraph_t FusedGraph::capture(cudaStream_t stream, const std::function<void()>& issue) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  bool failed = false;
  try {
    issue();  // a refused call throws GpuError here (GPUNFV_CUDA)
  } catch (const std::exception&) {
    failed = true;
  }
  cudaGraph_t g = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &g);
  if (failed || ended != cudaSuccess || !g) {
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();  // the refusal is no error of the next launch's
    return nullptr;
  }
  return g;
}

// The executable graph of `g`'s shape takes `g`'s parameters (launches already queued keep
// theirs); where the update is refused, or the slot has met no such shape, it is made anew from
// `g`. Null: CUDA refused that too.
cudaGraphExec_t FusedGraph::install(cudaGraph_t g) {
  size_t nodes = 0;
  if (cudaGraphGetNodes(g, nullptr, &nodes) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  Shape* s = shape_slot(nodes);
  s->last_use = ++uses_;
  if (s->exec) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(s->exec, g, &info) == cudaSuccess) {
      counts_->updates.fetch_add(1, std::memory_order_relaxed);
      return s->exec;
    }
    (void)cudaGetLastError();  // a refused update leaves an error the next check would see
    cudaGraphExecDestroy(s->exec);
    s->exec = nullptr;
  }
  if (cudaGraphInstantiate(&s->exec, g, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    s->exec = nullptr;
    return nullptr;
  }
  counts_->instantiations.fetch_add(1, std::memory_order_relaxed);
  return s->exec;
}

// The entry for graphs of `nodes` nodes: the one met before, a new one, or (all taken) the one
// least recently used, emptied.
FusedGraph::Shape* FusedGraph::shape_slot(size_t nodes) {
  for (Shape& s : shapes_)
    if (s.nodes == nodes) return &s;
  if (shapes_.size() < kMaxShapes) {
    shapes_.push_back(Shape{nodes, nullptr, 0});
    return &shapes_.back();
  }
  Shape* oldest = &shapes_[0];
  for (Shape& s : shapes_)
    if (s.last_use < oldest->last_use) oldest = &s;
  if (oldest->exec) cudaGraphExecDestroy(oldest->exec);  // frees once its launches are done
  *oldest = Shape{nodes, nullptr, 0};
  return oldest;
}

}  // namespace gpunfv
#endif
