// Where a fused batch's time goes on the GPU (GPUNFV_DEBUG_STEP_TIMES=N): every Nth fused batch
// of a chain is timed step by step on its stream, by events between its steps (entering the
// GPU: upload or zeroed counts, classify and the first switch; each NF with its switch; leaving:
// the download), and by the issuing thread's clock for each step's calls. The report gives the means
// per chain (scheduler.fused_step_us). Batches recorded as CUDA graphs are not timed (events
// between the steps would be recorded into the graph).
#pragma once

#if GPUNFV_HAVE_CUDA
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nlohmann/json_fwd.hpp>

namespace gpunfv {

class FusedStepTimes {
 public:
  // `steps`: the names of the steps between marks, in order. `every`: 0 times nothing.
  FusedStepTimes(std::vector<std::string> steps, uint32_t every);
  ~FusedStepTimes();
  FusedStepTimes(const FusedStepTimes&) = delete;
  FusedStepTimes& operator=(const FusedStepTimes&) = delete;

  // One timed batch's events and issuing time.
  struct Marks {
    std::vector<cudaEvent_t> events;
    std::vector<uint64_t> host_ns;  // the issuing thread's clock at each mark
  };
  bool enabled() const { return every_ != 0; }
  // Whether the chain's batch number `k` (counted by the caller) is timed.
  bool samples(uint64_t k) const { return every_ != 0 && k % every_ == 0; }
  // Records an event on `st`: the first before the batch's first step, then one after each.
  void mark(Marks& m, cudaStream_t st);
  // The batch landed: its steps' times go into the sums, its events back to the pool. A batch
  // with another count of marks than steps + 1 (its calls refused part way) counts nothing.
  void finish(Marks& m);
  void report(nlohmann::json& j) const;

 private:
  std::vector<std::string> steps_;
  uint32_t every_;
  mutable std::mutex m_;
  std::vector<cudaEvent_t> pool_;
  std::vector<double> step_us_, issue_us_;  // sums, per step: on the GPU, issuing
  uint64_t batches_ = 0;
};

}  // namespace gpunfv
#endif
