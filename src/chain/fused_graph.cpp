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
  if (exec_) cudaGraphExecDestroy(exec_);
}

FusedGraph::FusedGraph(FusedGraph&& o) noexcept : counts_(o.counts_), exec_(o.exec_) { o.exec_ = nullptr; }

bool FusedGraph::launch(cudaStream_t stream, const std::function<void()>& issue) {
  cudaGraph_t g = capture(stream, issue);
  if (!g) {
    counts_->capture_failures.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const bool installed = install(g);
  cudaGraphDestroy(g);  // the executable graph keeps its own copy of the nodes
  if (!installed) {
    counts_->capture_failures.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  GPUNFV_CUDA(cudaGraphLaunch(exec_, stream));
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

// The slot's executable graph takes `g`'s parameters when the shapes match (launches already
// queued keep theirs); otherwise it is made anew from `g`.
bool FusedGraph::install(cudaGraph_t g) {
  if (exec_) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(exec_, g, &info) == cudaSuccess) {
      counts_->updates.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    (void)cudaGetLastError();  // a refused update leaves an error the next check would see
    cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  if (cudaGraphInstantiate(&exec_, g, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    exec_ = nullptr;
    return false;
  }
  counts_->instantiations.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace gpunfv
#endif
