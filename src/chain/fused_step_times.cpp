#if GPUNFV_HAVE_CUDA
#include "chain/fused_step_times.h"

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "gpu/cuda_check.h"
#include "gpu/stream.h"

namespace gpunfv {

FusedStepTimes::FusedStepTimes(std::vector<std::string> steps, uint32_t every)
    : steps_(std::move(steps)), every_(every), step_us_(steps_.size(), 0.0), issue_us_(steps_.size(), 0.0) {
  // Made before any persistent kernel runs: enough for a few timed batches out at once.
  if (every_)
    for (size_t k = 0; k < (steps_.size() + 1) * 8; ++k) pool_.push_back(create_event(cudaEventDefault));
}

FusedStepTimes::~FusedStepTimes() {
  for (cudaEvent_t e : pool_) gpu::destroy_event(e);
}

void FusedStepTimes::mark(Marks& m, cudaStream_t st) {
  cudaEvent_t e = nullptr;
  {
    std::lock_guard<std::mutex> lk(m_);
    if (!pool_.empty()) {
      e = pool_.back();
      pool_.pop_back();
    }
  }
  if (!e) e = create_event(cudaEventDefault);
  GPUNFV_CUDA(cudaEventRecord(e, st));
  m.events.push_back(e);
  m.host_ns.push_back(monotonic_ns());
}

void FusedStepTimes::finish(Marks& m) {
  std::vector<double> us;
  if (m.events.size() == steps_.size() + 1)
    for (size_t k = 0; k + 1 < m.events.size(); ++k) {
      float ms = 0;
      GPUNFV_CUDA(cudaEventElapsedTime(&ms, m.events[k], m.events[k + 1]));
      us.push_back(double(ms) * 1e3);
    }
  std::lock_guard<std::mutex> lk(m_);
  if (!us.empty()) {
    for (size_t k = 0; k < us.size(); ++k) {
      step_us_[k] += us[k];
      issue_us_[k] += double(m.host_ns[k + 1] - m.host_ns[k]) * 1e-3;
    }
    ++batches_;
  }
  pool_.insert(pool_.end(), m.events.begin(), m.events.end());
  m.events.clear();
  m.host_ns.clear();
}

void FusedStepTimes::report(nlohmann::json& j) const {
  std::lock_guard<std::mutex> lk(m_);
  const double n = double(batches_ ? batches_ : 1);
  nlohmann::json steps = nlohmann::json::array();
  for (size_t k = 0; k < steps_.size(); ++k)
    steps.push_back({{"step", steps_[k]}, {"gpu_us", step_us_[k] / n}, {"issue_us", issue_us_[k] / n}});
  j = {{"batches", batches_}, {"steps", steps}};
}

}  // namespace gpunfv
#endif
