#include <atomic>
#include <thread>

#include "chain/classify.h"
#include "chain/processing_stage.h"
#include "core/blocking_queue.h"

namespace gpunfv {

void run_chain_cpu(const RuntimeConfig& rc, const Chain& c, const BatchView& b) {
  for (uint32_t i = 0; i < b.count; ++i) classify_packet(b, i);
  for (size_t pos = 0; pos < c.path.size(); ++pos)
    rc.nfs[c.path[pos]]->process(b, 0, b.count, static_cast<uint8_t>(pos));
}

namespace {

// Workers take whole batches; order is restored by egress (batches carry batch_seq).
class CpuStage final : public ProcessingStage {
 public:
  CpuStage(const RuntimeConfig& rc, uint32_t workers) : rc_(rc), workers_(workers) {}
  ~CpuStage() override { stop(); }

  void start(Done done) override {
    done_ = std::move(done);
    for (uint32_t w = 0; w < workers_; ++w) threads_.emplace_back([this] { work(); });
  }
  void submit(Batch* b) override { queue_.push(b); }
  void stop() override {
    queue_.close();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  std::string describe() const override {
    return "cpu backend, " + std::to_string(workers_) + " worker thread(s)";
  }

 private:
  void work() {
    while (!queue_.closed_and_empty()) {
      auto b = queue_.pop_for(std::chrono::milliseconds(10));
      if (!b) continue;
      run_chain_cpu(rc_, rc_.chains[(*b)->chain], (*b)->view());
      done_(*b);
    }
  }

  const RuntimeConfig& rc_;
  uint32_t workers_;
  Done done_;
  BlockingQueue<Batch*> queue_;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<ProcessingStage> make_cpu_stage(const RuntimeConfig& rc, uint32_t workers) {
  return std::make_unique<CpuStage>(rc, workers);
}

}  // namespace gpunfv
