// CPU processing stage: a chain is a pipeline of stages (enter, then one per NF node) with a
// queue in front of each (chain_flow.h); a pool of worker threads takes batches from any
// stage whose rate controller lets it, latest stage first (finishing work frees batches
// sooner than starting it). Batches keep their order per stage; NFs run in place on the
// batch and only next_nf moves between them.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <thread>

#include <fmt/format.h>

#include "chain/chain_flow.h"
#include "chain/chain_steps.h"
#include "chain/processing_stage.h"
#include "core/clock.h"
#include "core/thread_name.h"
#include "core/debug_switches.h"

namespace gpunfv {

void run_chain_cpu(const RuntimeConfig& rc, const Chain& c, const BatchView& b) {
  enter_chain_cpu(c, b);
  for (size_t k = 0; k < c.path.size(); ++k) run_node_cpu(rc, c, b, static_cast<uint8_t>(k));
}

namespace {

class CpuStage final : public ProcessingStage {
 public:
  CpuStage(const RuntimeConfig& rc, uint32_t workers) : rc_(rc), workers_(workers) {
    for (const Chain& c : rc.chains) flows_.push_back(make_chain_flow(rc, c));
  }
  ~CpuStage() override { stop(); }

  void start(Done done) override {
    done_ = std::move(done);
    if (const uint32_t per = rc_.settings.cpu_workers_per_nf) {
      // Each stage its own threads, as NFs in their own VMs or cores (Simmer's setting): a
      // slow NF cannot borrow its neighbours' cores, so its queue is where overload shows.
      for (size_t c = 0; c < flows_.size(); ++c)
        for (size_t st = 0; st < flows_[c]->stages(); ++st)
          for (uint32_t w = 0; w < per; ++w)
            threads_.emplace_back([this, c, st] { work(int(c), int(st)); });
    } else {
      for (uint32_t w = 0; w < workers_; ++w) threads_.emplace_back([this] { work(-1, -1); });
    }
    if (debug_switches().flow)
      threads_.emplace_back([this] {
        while (!stopping_) {
          std::this_thread::sleep_for(std::chrono::seconds(1));
          for (auto& f : flows_) std::fprintf(stderr, "%s", f->state().c_str());
        }
      });
  }
  void submit(Batch* b) override {
    in_pipeline_.fetch_add(1);
    flows_[b->chain]->push(0, b, b->count(), monotonic_ns());
    wake_.notify_one();
  }
  void stop() override {
    // Drain: every submitted batch leaves through done_ before the workers go.
    while (in_pipeline_.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    stopping_ = true;
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  bool ingress_paused(uint16_t chain) const override { return flows_[chain]->ingress_paused(); }
  const ChainFlow* flow(uint16_t chain) const override { return flows_[chain].get(); }
  std::string describe() const override {
    if (const uint32_t per = rc_.settings.cpu_workers_per_nf)
      return "cpu backend, " + std::to_string(per) + " worker thread(s) per NF";
    return "cpu backend, " + std::to_string(workers_) + " worker thread(s)";
  }

 private:
  // Takes the latest runnable stage's next batch; nullptr if none.
  bool take(size_t& chain, size_t& stage, Batch*& b) {
    const uint64_t now = monotonic_ns();
    const size_t start = rr_.fetch_add(1, std::memory_order_relaxed);
    for (size_t c = 0; c < flows_.size(); ++c) {
      size_t ci = (c + start) % flows_.size();
      ChainFlow& f = *flows_[ci];
      for (size_t s = f.stages(); s-- > 0;) {
        if (Batch* got = f.pop(s, now)) {
          chain = ci, stage = s, b = got;
          return true;
        }
      }
    }
    return false;
  }

  // only_chain/only_stage >= 0: a dedicated worker of that stage.
  void work(int only_chain, int only_stage) {
    use_fine_timer_slack();
    set_thread_name(only_chain < 0 ? std::string("gn-cpu-worker")
                                   : fmt::format("gn-cpu-c{}s{}", only_chain, only_stage));
    while (true) {
      size_t c = 0, s = 0;
      Batch* b = nullptr;
      bool got = false;
      if (only_chain >= 0) {
        c = size_t(only_chain), s = size_t(only_stage);
        b = flows_[c]->pop(s, monotonic_ns());
        got = b != nullptr;
      } else {
        got = take(c, s, b);
      }
      if (!got) {
        if (stopping_) return;
        std::unique_lock<std::mutex> lk(wake_m_);
        wake_.wait_for(lk, std::chrono::microseconds(100));
        continue;
      }
      run_stage(c, s, b);
    }
  }

  void run_stage(size_t c, size_t s, Batch* b) {
    const Chain& chain = rc_.chains[c];
    ChainFlow& flow = *flows_[c];
    const BatchView v = b->view();
    if (s == 0) {
      enter_chain_cpu(chain, v);
    } else {
      const auto k = static_cast<uint8_t>(s - 1);
      if (v.node_packets[k] > 0) flow.count_launch(s);
      run_node_cpu(rc_, chain, v, k);
    }
    if (s + 1 < flow.stages()) {
      push_or_drop(flow, s + 1, b, v);
    } else {
      in_pipeline_.fetch_sub(1);
      done_(b);
    }
    wake_.notify_one();
  }

  void push_or_drop(ChainFlow& flow, size_t s, Batch* b, const BatchView& v) {
    const auto k = static_cast<uint8_t>(s - 1);
    if (flow.push(s, b, v.node_packets[k], monotonic_ns())) return;
    drop_at_node_cpu(v, k);
    flow.push(s, b, 0, monotonic_ns());
  }

  const RuntimeConfig& rc_;
  uint32_t workers_;
  std::vector<std::unique_ptr<ChainFlow>> flows_;
  Done done_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> in_pipeline_{0};
  std::atomic<uint32_t> rr_{0};
  std::mutex wake_m_;
  std::condition_variable wake_;
};

}  // namespace

std::unique_ptr<ChainFlow> make_chain_flow(const RuntimeConfig& rc, const Chain& c,
                                           size_t extra_stages) {
  const double threshold = c.backpressure ? c.qt * rc.settings.batch_size : 0.0;
  return std::make_unique<ChainFlow>(c.path.size() + 1 + extra_stages, threshold,
                                     rc.settings.queue_batches);
}

std::unique_ptr<ProcessingStage> make_cpu_stage(const RuntimeConfig& rc, uint32_t workers) {
  return std::make_unique<CpuStage>(rc, workers);
}

}  // namespace gpunfv
