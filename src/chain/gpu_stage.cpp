// GPU processing stage: a chain is a pipeline of stages, each run by its own host thread:
// upload (ingress's arrays and the slots, chain/host_batch_transfer.h; classify and the first
// switch), one stage per NF node (the NF's kernels and the switch on the node's lane: its own
// stream inside its SM partition), and download (one D2H copy). Batches stay on the device between NFs; only
// the per-node packet counts (128 bytes) come back after each NF, so the host knows every NF
// queue's occupancy in packets (Simmer's congestion monitor) and skips NFs no packet was sent
// to. Queues between stages keep ingress order (chain_flow.h).
// A device-resident batch (a GPU ring's, Batch::set_device_resident) is its own device twin:
// stage 0 uploads nothing (node_packets is zeroed on the device), and the download stage
// copies its metadata only (chain/ring_batch_transfer.h), never packet bytes. The report
// counts the bytes each way (`pcie`).
// Fused pipeline (settings.gpu_pipeline: fused, unco only): stage 0's thread issues a batch's
// whole chain (upload, classify, every NF and its switch, download) at once on one of
// gpu_in_flight streams and hands it to egress when it completes; the host learns the per-NF
// counts from the download. It trades the per-NF stages' pipelining and queues for one
// host hand-off per batch instead of one per NF and transfer, which is most of a small batch's
// latency. Beside a GPU ring's persistent kernel, nothing may be set
// up late (gpu/device_preflight.h): prepare_for_persistent_kernels makes every stage thread's
// stream and events, the NFs' per-lane resources and the host batches' device twins first, and
// the counts are zeroed by a kernel of ours rather than a runtime memset.
// With settings.gpu_graphs the fused batch's calls are recorded and launched as one CUDA graph
// per batch instead (chain/fused_graph.h). With settings.gpu_issue_threads, that many threads
// per chain take batches from stage 0 in turn, each with its own streams, and issue each node
// in the batches' order (chain/issue_turns.h).
// Persistent pipeline (settings.gpu_pipeline: persistent): fused, except that a chain's pinned
// host batches of up to gpu_persistent_packets go to the chain's persistent kernel
// (chain/persistent_chain.h) instead of being issued, waiting for a slot when every one is
// taken; larger batches are issued as fused ones. For the kernel's batches the stage's thread
// only writes a slot and polls for it, in the same flight order.
#if GPUNFV_HAVE_CUDA
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "chain/chain_flow.h"
#include "chain/chain_steps.h"
#include "chain/fused_graph.h"
#include "chain/fused_step_times.h"
#include "chain/issue_turns.h"
#include "sched/gpu_sharing.h"
#include "chain/host_batch_transfer.h"
#include "chain/persistent_chain.h"
#include "chain/processing_stage.h"
#include "chain/ring_batch_transfer.h"
#include "core/clock.h"
#include "core/thread_name.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/device_buffer.h"
#include "gpu/device_preflight.h"
#include "gpu/graph_launch_gate.h"
#include "gpu/stream.h"
#include "core/debug_switches.h"

namespace gpunfv {

void launch_chain_gpu(const RuntimeConfig& rc, const Chain& chain, const BatchView& dv,
                      cudaStream_t st) {
  if (dv.count == 0) return;
  launch_zero_node_packets(dv, st);
  launch_enter_chain(chain, dv, st);
  GpuStream gs{st, 0, 256};
  for (size_t k = 0; k < chain.path.size(); ++k)
    launch_node_gpu(rc, chain, dv, static_cast<uint8_t>(k), gs);
}

namespace {

// FIFO token for the temporal policy: one NF batch on the GPU at a time, NFs served in the
// order they asked (round robin among NFs with work).
class TemporalToken {
 public:
  void acquire() {
    std::unique_lock<std::mutex> lk(m_);
    uint64_t mine = next_ticket_++;
    cv_.wait(lk, [&] { return serving_ == mine; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> lk(m_);
      ++serving_;
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0, serving_ = 0;
};

class GpuStage final : public ProcessingStage {
 public:
  GpuStage(const RuntimeConfig& rc, const BatchShape& shape)
      : rc_(rc), layout_(BatchLayout::make(shape.capacity, shape.stride, shape.result_stride)) {
    if (!cuda_device_available()) throw GpuError("no CUDA device is available (use --backend cpu)");
    GPUNFV_CUDA(cudaSetDevice(0));
    cudaDeviceProp prop{};
    GPUNFV_CUDA(cudaGetDeviceProperties(&prop, 0));
    device_name_ = prop.name;
    sharing_ = std::make_unique<GpuSharing>(rc);
    batches_closed_ = std::vector<std::atomic<uint64_t>>(rc.chains.size());
    batches_full_ = std::vector<std::atomic<uint64_t>>(rc.chains.size());
    const DebugSwitches debug = debug_switches();
    counts_by_copy_ = debug.counts_by_copy;
    offer_switch_ = !debug.switch_kernels;
    upload_prefix_ = debug.upload_prefix;
    debug_replan_ns_ = debug.replan_ms * 1'000'000ull;
    batch_times_ = std::vector<BatchTimes>(rc.chains.size());
    persistent_pipeline_ = rc.settings.gpu_pipeline == "persistent";
    fused_ = rc.settings.gpu_pipeline == "fused" || persistent_pipeline_;
    nf_paths_.assign(rc.nfs.size(), 0);
    for (const Chain& c : rc.chains)
      for (size_t nf : c.path) ++nf_paths_[nf];
    graphs_ = fused_ && rc.settings.gpu_graphs;
    issuers_ = fused_ ? std::max<uint32_t>(1, rc.settings.gpu_issue_threads) : 1;
    // Every kernel loaded and local memory sized before the first recording, so that no
    // capture or instantiation is the first use of a kernel (lazy module loading).
    if (graphs_) prepare_device_for_persistent_kernels();
    for (const Chain& c : rc.chains) {
      auto flow = make_chain_flow(rc, c, /*extra_stages=*/1);  // + download
      if (fused_ && !debug.close_while_issuing) flow->set_issuers(uint32_t(issuers_));
      flows_.push_back(std::move(flow));
      std::vector<std::string> steps{"enter"};
      for (uint16_t nf : c.path) steps.push_back(rc.nfs[nf]->name());
      steps.push_back("leave");
      step_times_.push_back(std::make_unique<FusedStepTimes>(std::move(steps), fused_ ? debug.step_times : 0));
      turns_.push_back(std::make_unique<IssueTurns>(c.path.size()));
    }
  }
  ~GpuStage() override {
    stop();
    for (auto& w : prepared_)  // made for a run that never started
      if (w) {
        for (cudaEvent_t e : w->free_events) cudaEventDestroy(e);
        for (cudaStream_t st : w->fused_streams) destroy_stream(st);
        destroy_stream(w->own_stream);
      }
  }

  void start(Done done) override {
    done_ = std::move(done);
    // Run without the executor (tests): every stream, event and device copy made first.
    if (persistent_pipeline_ && persistent_.empty()) prepare_for_persistent_kernels({});
    for (size_t c = 0; c < persistent_.size(); ++c) {
      if (!persistent_[c]) continue;
      if (persistent_lanes_[c]) persistent_lanes_[c]->make_current();
      persistent_[c]->start();
    }
    GPUNFV_CUDA(cudaSetDevice(0));
    for (size_t c = 0; c < rc_.chains.size(); ++c)
      for (size_t s = 0; s < (fused_ ? 1 : flows_[c]->stages()); ++s)
        for (size_t i = 0; i < (s == 0 ? issuers_ : 1); ++i)
          threads_.emplace_back([this, c, s, i] { guarded([&] { stage_loop(c, s, i); }); });
    threads_.emplace_back([this] { guarded([&] { scheduler_loop(); }); });
  }
  // Before a GPU ring's persistent kernel starts, everything the stage would otherwise make or
  // do for the first time once batches flow (gpu/device_preflight.h): each stage thread's
  // stream and events (in its lane's context), device twins of the host batches, the NFs'
  // per-lane resources, and in every green context a preflight (loads kernels, sets up local
  // memory and printf there). Called on the executor's thread, before start().
  void set_egress_only_download(const std::vector<bool>& by_chain) override { egress_only_download_ = by_chain; }
  void prepare_for_persistent_kernels(const std::vector<Batch*>& host_batches) override {
    std::lock_guard<std::mutex> lk(workers_m_);
    size_t total = 0;
    for (const auto& f : flows_) total += f->stages() + issuers_ - 1;
    prepared_.clear();
    prepared_.resize(total);
    std::vector<const Lane*> preflown;
    for (size_t c = 0; c < rc_.chains.size(); ++c)
      for (size_t s = 0; s < flows_[c]->stages(); ++s)
        for (size_t i = 0; i < (s == 0 ? issuers_ : 1); ++i) {
          auto w = std::make_unique<Worker>();
          w->chain = c, w->stage = s, w->issuer = i;
          w->lane = lane_for(c, s);
          bind(*w);  // makes the lane's context current
          if (w->lane) {
            if (is_nf_stage(c, s)) rc_.nfs[rc_.chains[c].path[s - 1]]->prepare_gpu_lane(w->lane->gs);
            const SmPartition& part = (*w->lane->owner)[w->lane->index];
            if (part.green && std::find(preflown.begin(), preflown.end(), w->lane.get()) == preflown.end()) {
              prepare_device_for_persistent_kernels(w->lane->gs.stream);
              preflown.push_back(w->lane.get());
            }
          }
          prepared_[worker_index(c, s, i)] = std::move(w);
        }
    GPUNFV_CUDA(cudaSetDevice(0));  // back to the primary context
    for (Batch* b : host_batches)
      if (!b->device_resident()) device_twin(b);
    if (persistent_pipeline_) make_persistent_chains();
  }

  // A persistent kernel per chain that can run in one; each kernel block serves one batch in
  // flight. The primary context's preflight first: nothing may be set up beside the kernels.
  // With chain lanes a chain's kernel runs in the chain's partition, which later plans keep
  // while it runs (sched/gpu_sharing.h).
  void make_persistent_chains() {
    prepare_device_for_persistent_kernels();
    persistent_.resize(rc_.chains.size());
    persistent_lanes_.resize(rc_.chains.size());
    for (size_t c = 0; c < rc_.chains.size(); ++c) {
      if (!chain_runs_per_packet(rc_, rc_.chains[c])) continue;
      persistent_lanes_[c] = lane_for(c, 0);
      if (persistent_lanes_[c]) persistent_lanes_[c]->make_current();  // the kernel's stream is made there
      persistent_[c] = std::make_unique<PersistentChain>(rc_, rc_.chains[c], rc_.settings.gpu_in_flight);
    }
    GPUNFV_CUDA(cudaSetDevice(0));
  }

  void submit(Batch* b) override {
    in_pipeline_.fetch_add(1);
    const uint64_t now = monotonic_ns();
    note_time(b, &Times::submitted_ns, now);
    flows_[b->chain]->push(0, b, b->count(), now);
  }
  void stop() override {
    if (threads_.empty()) return;
    while (in_pipeline_.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    stopping_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
    for (auto& p : persistent_)
      if (p) p->stop();
  }
  bool runs_persistent_kernels() const override { return persistent_pipeline_; }
  bool ingress_paused(uint16_t chain) const override { return flows_[chain]->ingress_paused(); }
  const ChainFlow* flow(uint16_t chain) const override { return flows_[chain].get(); }
  uint32_t ingress_batch(uint16_t chain) const override { return sharing_->ingress_batch(chain); }
  std::string allocation_line() const override { return sharing_->line(); }
  std::vector<std::vector<double>> sm_shares() const override { return sharing_->sm_shares(); }
  void report(nlohmann::json& j) const override {
    sharing_->report(j);
    j["lane_moves"] = lane_moves_.load();  // NF stages that moved to a re-planned partition
    j["issue_threads"] = issuers_;          // per chain, fused pipeline
    // Where a batch's time goes before egress, mean per batch: filling (first frame to
    // submission), waiting for the stage's first step, and on the GPU (its first step issued
    // to the host seeing its last step done, stage hand-offs included).
    j["batch_time_us"] = nlohmann::json::array();
    for (const BatchTimes& t : batch_times_) {
      const double n = double(std::max<uint64_t>(1, t.batches.load()));
      j["batch_time_us"].push_back({{"batches", t.batches.load()},
                                    {"filling", t.filling_ns.load() / n * 1e-3},
                                    {"waiting", t.waiting_ns.load() / n * 1e-3},
                                    {"on_gpu", t.on_gpu_ns.load() / n * 1e-3}});
    }
    // Batch transfers of the stage (not the per-NF packet counts): host batches' prefixes in
    // and out; device-resident batches' metadata out.
    j["pcie"] = {{"h2d_bytes", h2d_bytes_.load()},
                 {"d2h_bytes", d2h_bytes_.load()},
                 {"host_batches", host_batches_.load()},
                 {"zero_copy_batches", zero_copy_batches_.load()},
                 {"persistent_batches", persistent_batches_.load()},
                 {"device_resident_batches", resident_batches_.load()}};
    if (graphs_) graph_counts_.report(j["gpu_graphs"]);
    if (!step_times_.empty() && step_times_.front()->enabled()) {  // one switch for every chain
      j["fused_step_us"] = nlohmann::json::array();
      for (const auto& st : step_times_) {
        nlohmann::json c;
        st->report(c);
        j["fused_step_us"].push_back(std::move(c));
      }
    }
  }
  std::string describe() const override {
    if (persistent_pipeline_)
      return "gpu backend on " + device_name_ + ", scheduler " + rc_.settings.scheduler +
             ", persistent pipeline: batches of up to " + std::to_string(rc_.settings.gpu_persistent_packets) +
             " packets served in place by a persistent kernel per chain of routers and firewalls, others issued whole, " +
             std::to_string(rc_.settings.gpu_in_flight) + " batches in the kernel and as many issued per chain";
    if (fused_)
      return "gpu backend on " + device_name_ + ", scheduler " + rc_.settings.scheduler +
             ", fused pipeline: each batch's whole chain at once" + (graphs_ ? " as one CUDA graph, " : ", ") +
             std::to_string(rc_.settings.gpu_in_flight) + " batches in flight per chain" +
             (issuers_ > 1 ? " and issuing thread, " + std::to_string(issuers_) + " issuing threads per chain" : "");
    return "gpu backend on " + device_name_ + ", scheduler " + rc_.settings.scheduler +
           ", one stream per NF, " + std::to_string(rc_.settings.gpu_in_flight) + " batches in flight per stage";
  }

 private:
  // A batch's transfers, counted once it is issued (a recording CUDA refused is issued again).
  struct PcieTally {
    uint64_t h2d = 0, d2h = 0;
    uint32_t host = 0, zero_copy = 0, resident = 0, persistent = 0;
  };

  struct Flight {
    Batch* batch = nullptr;
    cudaEvent_t start = nullptr, done = nullptr;  // around the batch's work on the stream
    bool token = false;  // holds the temporal token
    uint64_t ticket = 0;  // a persistent kernel's batch (no events): its ticket
    // Per path node, for a persistent kernel's or a fused batch: what the NF does once it is
    // back (counts the packets sent to it against its table version).
    std::vector<std::function<void(uint32_t)>> nf_done;
    FusedStepTimes::Marks marks;  // a fused batch timed step by step (GPUNFV_DEBUG_STEP_TIMES)
  };

  // Per stage thread: its lane (NF stages) or its own stream (upload, download), and events.
  struct Worker {
    size_t chain = 0, stage = 0;
    size_t issuer = 0;  // of stage 0's issuing threads (settings.gpu_issue_threads)
    std::shared_ptr<const Lane> lane;
    cudaStream_t own_stream = nullptr;
    std::vector<cudaStream_t> fused_streams;  // fused pipeline, stage 0: one per batch in flight
    std::vector<FusedGraph> fused_graphs;     // settings.gpu_graphs: one per fused stream
    size_t next_fused = 0;
    uint64_t fused_issued = 0;  // batches issued fused, for GPUNFV_DEBUG_STEP_TIMES
    size_t persistent_out = 0;  // of the flights, those in a persistent kernel's slots
    Batch* waiting = nullptr;   // a small batch popped while every slot was taken
    std::vector<cudaEvent_t> free_events;
    std::deque<Flight> flights;
    cudaStream_t stream() const { return lane ? lane->gs.stream : own_stream; }
    // Blocks a launch may have: a lane's block cap where it has no green context (0: any).
    int max_blocks() const { return lane ? lane->gs.max_blocks : 0; }
  };

  template <typename F>
  void guarded(F f) {
    try {
      f();
    } catch (const std::exception& e) {
      // A CUDA failure leaves batches on the device: stop loudly rather than report packets
      // that were never accounted.
      std::fprintf(stderr, "gpunfv: GPU error: %s\n", e.what());
      std::_Exit(1);
    }
  }

  bool is_nf_stage(size_t c, size_t s) const { return s >= 1 && s <= rc_.chains[c].path.size(); }

  // The lane a stage thread launches on: an NF stage's own; with chain lanes (gnet on a fused
  // pipeline, sched/gpu_sharing.h) the chain's, for stage 0's issuing threads; else none.
  std::shared_ptr<const Lane> lane_for(size_t c, size_t s) const {
    if (fused_ && sharing_->chain_lanes())
      return s == 0 && !rc_.chains[c].path.empty() ? sharing_->lane(c, 0) : nullptr;
    return is_nf_stage(c, s) ? sharing_->lane(c, s - 1) : nullptr;
  }

  void release_events(Worker& w) {
    for (cudaEvent_t e : w.free_events) GPUNFV_CUDA(cudaEventDestroy(e));
    w.free_events.clear();
  }

  void bind(Worker& w) {
    // Events belong to the context current when they are made: the lane's green context.
    release_events(w);
    if (w.lane) {
      w.lane->make_current();
    } else {
      GPUNFV_CUDA(cudaSetDevice(0));
      if (!w.own_stream) w.own_stream = create_stream();
    }
    // Made in the current context: a chain lane's streams run on its partition's SMs.
    if (fused_ && w.stage == 0)
      while (w.fused_streams.size() < rc_.settings.gpu_in_flight) w.fused_streams.push_back(create_stream());
    if (graphs_ && w.stage == 0)
      while (w.fused_graphs.size() < w.fused_streams.size()) w.fused_graphs.emplace_back(graph_counts_);
    // Two timing events per flight: the stage's busy time (report: busy_s) is the sum of the
    // intervals between them; on one stream the intervals never overlap.
    for (size_t i = 0; i < 2 * flight_depth(); ++i) w.free_events.push_back(create_event(cudaEventDefault));
  }

  // Per chain: a worker per stage, then stage 0's further issuing threads.
  size_t worker_index(size_t c, size_t s, size_t issuer) const {
    size_t at = 0;
    for (size_t k = 0; k < c; ++k) at += flows_[k]->stages() + issuers_ - 1;
    return issuer == 0 ? at + s : at + flows_[c]->stages() + issuer - 1;
  }

  // A stage thread's worker: made beforehand by prepare_for_persistent_kernels, or here.
  Worker take_worker(size_t c, size_t s, size_t issuer) {
    {
      std::lock_guard<std::mutex> lk(workers_m_);
      const size_t at = worker_index(c, s, issuer);
      if (at < prepared_.size() && prepared_[at]) {
        Worker w = std::move(*prepared_[at]);
        prepared_[at].reset();
        if (w.lane) w.lane->make_current();
        return w;
      }
    }
    Worker w;
    w.chain = c, w.stage = s, w.issuer = issuer;
    w.lane = lane_for(c, s);
    bind(w);
    return w;
  }

  uint8_t* device_twin(Batch* b) {
    if (!b->device_base) {
      std::lock_guard<std::mutex> lk(twins_m_);
      twins_.emplace_back(layout_.bytes);
      b->device_base = twins_.back().data();
    }
    return b->device_base;
  }

  void stage_loop(size_t c, size_t s, size_t issuer) {
    set_thread_name(issuer ? fmt::format("gn-gpu-c{}s{}i{}", c, s, issuer) : fmt::format("gn-gpu-c{}s{}", c, s));
    use_fine_timer_slack();
    GPUNFV_CUDA(cudaSetDevice(0));
    Worker w = take_worker(c, s, issuer);
    ChainFlow& flow = *flows_[c];
    const bool temporal = sharing_->serialize() && is_nf_stage(c, s);
    // settings.gpu_in_flight: batches on the stage's stream at once (1..64, checked at parse).
    const size_t depth = temporal ? 1 : flight_depth();
    unsigned idle = 0;
    for (;;) {
      bool progressed = false;
      while (!w.flights.empty() && landed(w, w.flights.front())) {
        Flight f = std::move(w.flights.front());
        w.flights.pop_front();
        if (f.ticket) {
          finish_persistent(w, f);
          progressed = true;
          continue;
        }
        if (f.start) {  // fused flights have none: they overlap, so their times do not add up
          float ms = 0;
          GPUNFV_CUDA(cudaEventElapsedTime(&ms, f.start, f.done));
          flows_[c]->add_busy(s, uint64_t(double(ms) * 1e6));
          w.free_events.push_back(f.start);
        }
        w.free_events.push_back(f.done);
        if (f.token) token_.release();
        if (!f.marks.events.empty()) step_times_[c]->finish(f.marks);
        if (fused_)
          finish_fused(w, f);
        else
          finish(w, f.batch);
        progressed = true;
      }
      // A re-plan gave this NF (or chain) a new lane: issue nothing more on the old one, and
      // move once it holds nothing in flight (so the NF's batches never overtake each other).
      bool moving = false;
      if (w.lane) {
        auto now_lane = lane_for(c, s);
        if (now_lane != w.lane) {
          moving = !w.flights.empty();
          if (!moving) {
            // The old lane's events and streams go while its context lives: dropping the lane
            // may destroy the old plan's contexts, and destroying an event of a destroyed
            // context leaves an error that the NF's next cudaGetLastError() would report as its own.
            release_events(w);
            release_streams(w);
            drop_fused_streams(w);
            w.lane = std::move(now_lane);
            bind(w);
            lane_moves_.fetch_add(1, std::memory_order_relaxed);
          }
        }
      }
      if (!moving && w.flights.size() < depth) {
        Batch* b = w.waiting ? std::exchange(w.waiting, nullptr) : flow.pop(s, monotonic_ns());
        if (b && waits_for_slot(w, b)) {
          w.waiting = b;
        } else if (b) {
          if (fused_) {
            flow.begin_issue();
            issue_fused(w, b);
            flow.end_issue();
          } else
            issue(w, b, temporal);
          progressed = true;
        }
      }
      if (progressed) {
        idle = 0;
        continue;
      }
      if (stopping_ && w.flights.empty() && !w.waiting) break;
      // A persistent kernel's batches are polled closely: a sleep would add to their latency.
      if (++idle < 64 || (persistent_pipeline_ && !w.flights.empty()))
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(idle < 4096 ? 5 : 50));
    }
    for (cudaEvent_t e : w.free_events) cudaEventDestroy(e);
    release_streams(w);
    for (cudaStream_t st : w.fused_streams) destroy_stream(st);
    destroy_stream(w.own_stream);
  }

  // The worker's streams are idle and about to go (its lane's with a re-plan's move, all at the
  // end): the NFs that launched on them forget them (NetworkFunction::release_gpu_lane), so a
  // later table update never waits on a destroyed stream.
  void release_streams(const Worker& w) {
    std::vector<cudaStream_t> streams(w.fused_streams);
    streams.push_back(w.own_stream);
    if (w.lane) streams.insert(streams.end(), {w.lane->gs.stream, w.lane->gs.aux});
    const Chain& chain = rc_.chains[w.chain];
    for (size_t k = 0; k < chain.path.size(); ++k) {
      // A stage launches its own NF only; the fused stage 0 launches all of them.
      if (fused_ ? w.stage != 0 : w.stage != k + 1) continue;
      for (cudaStream_t s : streams)
        if (s) rc_.nfs[chain.path[k]]->release_gpu_lane(s);
    }
  }

  // A chain lane's issuing thread moves to a re-planned partition: its streams (and the graphs
  // recorded for them) are made again there.
  void drop_fused_streams(Worker& w) {
    w.fused_graphs.clear();
    for (cudaStream_t st : w.fused_streams) destroy_stream(st);
    w.fused_streams.clear();
  }

  // The batch on the device: its twin, or (device-resident) the batch itself.
  BatchView device_view(Batch* b) {
    return b->device_resident() ? b->device_view() : layout_.view(device_twin(b), b->count());
  }

  void issue(Worker& w, Batch* b, bool temporal) {
    const Chain& chain = rc_.chains[w.chain];
    const size_t n = chain.path.size();
    const BatchView dv = device_view(b);
    const BatchView hv = b->view();
    cudaStream_t st = w.stream();
    Flight f;
    f.batch = b;
    PcieTally t;
    auto begin = [&] {
      f.start = w.free_events.back();
      w.free_events.pop_back();
      GPUNFV_CUDA(cudaEventRecord(f.start, st));
    };
    if (w.stage == 0) {
      begin();
      note_time(b, &Times::issued_ns, monotonic_ns());
      enter_on_device(b, chain, dv, hv, st, t);
      publish_counts(dv, hv, b, st);
    } else if (w.stage <= n) {
      const auto k = static_cast<uint8_t>(w.stage - 1);
      if (hv.node_packets[k] == 0) {  // no packet was sent to this NF: nothing to launch
        finish(w, b);
        return;
      }
      if (temporal) {
        token_.acquire();
        f.token = true;
      }
      flows_[w.chain]->count_launch(w.stage);
      begin();
      GpuStream gs = w.lane->gs;
      gs.packets = hv.node_packets[k];
      // An NF on several chains' paths sees their batches on several lanes: its stream is then
      // not the only way in, and an NF with ordered state must order them itself. aux_done
      // stays: an event of the lane's context, which the NF may record on the lane's stream.
      if (nf_paths_[chain.path[k]] > 1) {
        gs.serial = false;
        gs.aux = nullptr;
      }
      launch_node_gpu(rc_, chain, dv, k, gs, offer_switch_);
      publish_counts(dv, hv, b, st);
    } else {
      begin();
      download(b, st, t);
    }
    count(t);
    f.done = w.free_events.back();
    w.free_events.pop_back();
    GPUNFV_CUDA(cudaEventRecord(f.done, st));
    w.flights.push_back(f);
  }

  // Whether a flight's work is done (a CUDA error, or a persistent kernel that failed, throws).
  bool landed(const Worker& w, const Flight& f) {
    if (f.ticket) return persistent_[w.chain]->done(f.ticket);
    const cudaError_t e = cudaEventQuery(f.done);
    if (e == cudaErrorNotReady) return false;
    GPUNFV_CUDA(e);
    return true;
  }

  // A batch the chain's persistent kernel can take: pinned host memory, small enough to run in
  // place. Larger ones are issued fused: under load the kernel's slots and the fused streams
  // carry batches side by side.
  bool fits_persistent(const Worker& w, const Batch* b) const {
    return w.chain < persistent_.size() && persistent_[w.chain] && !b->device_resident() &&
           b->page_locked() && b->count() <= rc_.settings.gpu_persistent_packets;
  }
  bool goes_persistent(const Worker& w, const Batch* b) const {
    return fits_persistent(w, b) && w.persistent_out < rc_.settings.gpu_in_flight;
  }
  // A batch that fits the kernel but finds every slot taken waits for the oldest slot (a
  // batch's time in the kernel) rather than being issued fused: a fused flight of a few packets
  // takes several times as long, and the slots' batches behind it in the flights then wait for
  // it too, so that more small batches find the slots taken.
  bool waits_for_slot(const Worker& w, const Batch* b) const {
    return fits_persistent(w, b) && w.persistent_out >= rc_.settings.gpu_in_flight;
  }

  // Batches a stage thread keeps out at once: gpu_in_flight, and under the persistent pipeline
  // as many again in the persistent kernel's slots.
  size_t flight_depth() const {
    return rc_.settings.gpu_in_flight * (persistent_pipeline_ ? 2 : 1);
  }

  // Each NF's function with its tables now, into the next slot; nothing is launched.
  void issue_persistent(Worker& w, Batch* b) {
    const Chain& chain = rc_.chains[w.chain];
    Flight f;
    f.batch = b;
    DevicePacketFn fns[kMaxChainPacketNodes];
    for (size_t k = 0; k < chain.path.size(); ++k) {
      const NetworkFunction& nf = *rc_.nfs[chain.path[k]];
      DevicePacketUse use = nf.device_packet_use();
      fns[k] = use.fn;
      if (nf.quarantined()) fns[k].kind = DevicePacketFnKind::quarantined;
      f.nf_done.push_back(std::move(use.done));
    }
    note_time(b, &Times::issued_ns, monotonic_ns());
    f.ticket = persistent_[w.chain]->submit(b->view(), fns);
    ++w.persistent_out;
    PcieTally t;
    t.zero_copy = 1;
    t.persistent = 1;
    count(t);
    w.flights.push_back(std::move(f));
  }

  void finish_persistent(Worker& w, Flight& f) {
    --w.persistent_out;
    finish_fused(w, f);
  }

  // Upload (host batch) or zeroed counts (device-resident batch), then classify and the first
  // switch.
  void enter_on_device(Batch* b, const Chain& chain, const BatchView& dv, const BatchView& hv,
                       cudaStream_t st, PcieTally& t) {
    if (b->device_resident()) {
      // Everything classify reads is on the device already (the ring's rx loop wrote it).
      launch_zero_node_packets(dv, st);
      t.resident = 1;
    } else {
      upload_host_batch(b, hv, st, t);
      t.host = 1;
    }
    launch_enter_chain(chain, dv, st);
  }

  // What egress needs back on the host; the per-NF counts come with it.
  void download(Batch* b, cudaStream_t st, PcieTally& t) {
    if (b->device_resident()) {
      for (const ByteRange& r : metadata_download_ranges(b->layout())) {
        GPUNFV_CUDA(cudaMemcpyAsync(b->base() + r.offset, b->device_base + r.offset, r.bytes,
                                    cudaMemcpyDeviceToHost, st));
        t.d2h += r.bytes;
      }
      return;
    }
    const bool egress_only = b->chain < egress_only_download_.size() && egress_only_download_[b->chain];
    const ByteRange r = plan_host_batch_download(layout_, b->count(), egress_only);
    GPUNFV_CUDA(cudaMemcpyAsync(b->base() + r.offset, b->device_base + r.offset, r.bytes,
                                cudaMemcpyDeviceToHost, st));
    t.d2h += r.bytes;
  }

  // Fused pipeline: the batch's whole chain on the next of the worker's streams. Every NF runs
  // (one with no packet of the batch finds none to work on); batches on different streams
  // overlap, and an NF with ordered state orders them itself (serial = false), as when the
  // NF's stage spans several streams.
  // Zero copy (gpu_zero_copy_packets): a small host batch is not copied at all; the kernels
  // work on its pinned host memory over PCIe, which for a few hundred packets costs less than
  // the four copies and their calls. Only the per-node counts stay on the device (the switch
  // kernels add to them atomically) and come back by a one-block kernel.
  void issue_fused(Worker& w, Batch* b) {
    if (goes_persistent(w, b)) return issue_persistent(w, b);
    const size_t slot = w.next_fused++ % w.fused_streams.size();
    cudaStream_t st = w.fused_streams[slot];
    Flight f;
    f.batch = b;
    note_time(b, &Times::issued_ns, monotonic_ns());
    PcieTally t;
    if (!issue_fused_graph(w, slot, b, t, f.nf_done)) {
      t = PcieTally{};  // a refused recording counted nothing that ran
      FusedStepTimes& times = *step_times_[w.chain];
      if (times.samples(w.fused_issued)) {
        times.mark(f.marks, st);
        enqueue_fused(rc_.chains[w.chain], b, st, w.max_blocks(), t, f.nf_done, [&] { times.mark(f.marks, st); });
      } else {
        enqueue_fused(rc_.chains[w.chain], b, st, w.max_blocks(), t, f.nf_done);
      }
    }
    ++w.fused_issued;
    count(t);
    f.done = w.free_events.back();
    w.free_events.pop_back();
    GPUNFV_CUDA(cudaEventRecord(f.done, st));
    w.flights.push_back(std::move(f));
  }

  // The fused batch's calls, on `st` (submitted, or recorded into a graph).
  // `mark` (timing) runs after entering, after each NF and after leaving.
  // Each NF leaves in `landed[k]` what it counts once the batch is back.
  void enqueue_fused(const Chain& chain, Batch* b, cudaStream_t st, int max_blocks, PcieTally& t,
                     std::vector<std::function<void(uint32_t)>>& landed,
                     const std::function<void()>& mark = [] {}) {
    const BatchView dv = device_view(b);
    const BatchView hv = b->view();
    landed.assign(chain.path.size(), nullptr);
    auto gs = [&](size_t k) {
      GpuStream s{st, max_blocks, 256};
      s.count_landed = &landed[k];
      return s;
    };
    const bool zero_copy = !b->device_resident() && b->page_locked() &&
                           b->count() <= rc_.settings.gpu_zero_copy_packets;
    if (zero_copy) {
      BatchView zv = hv;
      zv.node_packets = dv.node_packets;
      launch_zero_node_packets(zv, st);
      launch_enter_chain(chain, zv, st);
      mark();
      for (size_t k = 0; k < chain.path.size(); ++k) {
        issue_node(b, k, [&] { launch_node_gpu(rc_, chain, zv, uint8_t(k), gs(k), offer_switch_); });
        mark();
      }
      launch_publish_node_packets(zv, hv.node_packets.framework_data(), st);
      t.zero_copy = 1;
    } else {
      enter_on_device(b, chain, dv, hv, st, t);
      mark();
      for (size_t k = 0; k < chain.path.size(); ++k) {
        issue_node(b, k, [&] { launch_node_gpu(rc_, chain, dv, uint8_t(k), gs(k), offer_switch_); });
        mark();
      }
      download(b, st, t);
    }
    mark();
  }

  // Node k of batch b, at its turn where several threads issue the chain's batches.
  template <typename F>
  void issue_node(const Batch* b, size_t k, F launch) {
    if (issuers_ == 1) return launch();
    IssueTurns& turns = *turns_[b->chain];
    turns.wait(k, b->batch_seq);
    launch();
    turns.pass(k, b->batch_seq);
  }

  // settings.gpu_graphs: the batch's calls as one graph launch on the slot's stream (see
  // chain/fused_graph.h). False: nothing was launched; the batch is to be issued directly.
  // Device-resident batches (a GPU ring's; graphs are refused beside one anyway) and pageable
  // ones (their copies cannot be recorded) go directly.
  bool issue_fused_graph(Worker& w, size_t slot, Batch* b, PcieTally& t,
                         std::vector<std::function<void(uint32_t)>>& landed) {
    if (!graphs_) return false;
    if (b->device_resident() || !b->page_locked()) {
      graph_counts_.direct_batches.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    cudaStream_t st = w.fused_streams[slot];
    device_twin(b);  // a batch's first twin is an allocation, which a recording refuses
    // From the recording until the launch, what the NFs noted as launched on `st` is not there yet.
    std::shared_lock<std::shared_mutex> recording(graph_launch_gate());
    return w.fused_graphs[slot].launch(st, [&] { enqueue_fused(rc_.chains[w.chain], b, st, w.max_blocks(), t, landed); });
  }

  void count(const PcieTally& t) {
    if (t.h2d) h2d_bytes_.fetch_add(t.h2d, std::memory_order_relaxed);
    if (t.d2h) d2h_bytes_.fetch_add(t.d2h, std::memory_order_relaxed);
    if (t.host) host_batches_.fetch_add(t.host, std::memory_order_relaxed);
    if (t.zero_copy) zero_copy_batches_.fetch_add(t.zero_copy, std::memory_order_relaxed);
    if (t.persistent) persistent_batches_.fetch_add(t.persistent, std::memory_order_relaxed);
    if (t.resident) resident_batches_.fetch_add(t.resident, std::memory_order_relaxed);
  }

  // A fused batch came back: each NF stage counts what was sent to it, then egress takes it.
  // Flights complete in issue order, so stages see batches in ingress order.
  void finish_fused(Worker& w, Flight& f) {
    Batch* b = f.batch;
    const BatchView hv = b->view();
    for (size_t k = 0; k < f.nf_done.size(); ++k)
      if (f.nf_done[k]) f.nf_done[k](hv.node_packets[k]);
    ChainFlow& flow = *flows_[w.chain];
    const size_t n = rc_.chains[w.chain].path.size();
    const uint64_t now = monotonic_ns();
    for (size_t s = 1; s <= n; ++s) flow.pass(s, b, hv.node_packets[s - 1], now);
    flow.pass(n + 1, b, 0, now);
    count_batch_time(b, now);
    in_pipeline_.fetch_sub(1);
    done_(b);
  }

  // Ingress's arrays and the slots, not the whole device prefix (chain/host_batch_transfer.h);
  // GPUNFV_DEBUG_UPLOAD_PREFIX=1 uploads the whole prefix, the earlier way, to measure it.
  // The per-node counts start at zero on the device: zeroed here and uploaded with ingress's
  // arrays (or the prefix).
  void upload_host_batch(Batch* b, const BatchView& hv, cudaStream_t st, PcieTally& t) {
    for (uint32_t k = 0; k < kMaxChainNodes; ++k) hv.node_packets[k] = 0;
    if (upload_prefix_) {
      const size_t bytes = layout_.device_prefix_bytes(b->count());
      GPUNFV_CUDA(cudaMemcpyAsync(b->device_base, b->base(), bytes, cudaMemcpyHostToDevice, st));
      t.h2d += bytes;
      return;
    }
    const HostBatchUpload u = plan_host_batch_upload(layout_, hv);
    auto copy = [&](const ByteRange& r) {
      GPUNFV_CUDA(cudaMemcpyAsync(b->device_base + r.offset, b->base() + r.offset, r.bytes,
                                  cudaMemcpyHostToDevice, st));
    };
    if (u.strided()) {
      copy(u.metadata);
      GPUNFV_CUDA(cudaMemcpy2DAsync(b->device_base + u.data_offset, u.pitch, b->base() + u.data_offset,
                                    u.pitch, u.row_bytes, u.rows, cudaMemcpyHostToDevice, st));
    } else {
      copy(u.run());
    }
    t.h2d += u.bytes();
  }

  // After a step, the per-node counts come back to the host batch: by a one-block kernel that
  // writes them into the pinned host copy (default), or, with GPUNFV_DEBUG_COUNTS_BY_COPY=1, by a
  // 128-byte copy, the earlier way, kept to measure the difference: that copy waits for the copy
  // engine, behind whole batches egress is downloading, and holds the NF's serial stream meanwhile.
  void publish_counts(const BatchView& dv, const BatchView& hv, Batch* b, cudaStream_t st) {
    if (counts_by_copy_ || !b->page_locked()) {
      const size_t off = b->layout().off_node_packets;
      GPUNFV_CUDA(cudaMemcpyAsync(b->base() + off, b->device_base + off,
                                  kMaxChainNodes * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
    } else {
      launch_publish_node_packets(dv, hv.node_packets.framework_data(), st);
    }
  }

  void finish(Worker& w, Batch* b) {
    ChainFlow& flow = *flows_[w.chain];
    const size_t n = rc_.chains[w.chain].path.size();
    if (w.stage == n + 1) {
      count_batch_time(b, monotonic_ns());
      in_pipeline_.fetch_sub(1);
      done_(b);
      return;
    }
    const BatchView hv = b->view();
    const uint32_t packets = w.stage < n ? hv.node_packets[w.stage] : 0;
    if (flow.push(w.stage + 1, b, packets, monotonic_ns())) return;
    // The next NF's queue is full: its packets are dropped there, on the device copy.
    const auto k = static_cast<uint8_t>(w.stage);
    launch_drop_at_node(device_view(b), k, w.stream());
    GPUNFV_CUDA(cudaStreamSynchronize(w.stream()));
    hv.node_packets[k] = 0;
    flow.push(w.stage + 1, b, 0, monotonic_ns());
  }

  struct Times {
    uint64_t submitted_ns = 0, issued_ns = 0;
  };
  void note_time(const Batch* b, uint64_t Times::*field, uint64_t ns) {
    std::lock_guard<std::mutex> lk(times_m_);
    times_[b].*field = ns;
  }
  void count_batch_time(const Batch* b, uint64_t now) {
    Times bt;
    {
      std::lock_guard<std::mutex> lk(times_m_);
      auto it = times_.find(b);
      if (it == times_.end()) return;
      bt = it->second;
      times_.erase(it);
    }
    BatchTimes& t = batch_times_[b->chain];
    auto since = [](uint64_t from, uint64_t to) { return to > from && from ? to - from : 0; };
    t.batches.fetch_add(1, std::memory_order_relaxed);
    t.filling_ns.fetch_add(since(b->ingress_ns, bt.submitted_ns), std::memory_order_relaxed);
    t.waiting_ns.fetch_add(since(bt.submitted_ns, bt.issued_ns), std::memory_order_relaxed);
    t.on_gpu_ns.fetch_add(since(bt.issued_ns, now), std::memory_order_relaxed);
  }

  // Measures each node's input rate ten times a second for the gnet policy.
  // GPUNFV_DEBUG_REPLAN_MS=N (tests): also re-plan every N ms whatever the policy, so the
  // switch-over can be checked under load.
  void scheduler_loop() {
    set_thread_name("gn-scheduler");
    GPUNFV_CUDA(cudaSetDevice(0));
    std::vector<std::vector<uint64_t>> last(flows_.size());
    uint64_t last_t = monotonic_ns();
    const uint64_t debug_ns = debug_replan_ns_;
    uint64_t last_debug = monotonic_ns();
    while (!stopping_) {
      for (int i = 0; i < 10 && !stopping_; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(debug_ns ? 1 : 10));
        if (debug_ns && monotonic_ns() - last_debug >= debug_ns) {
          sharing_->debug_replan();
          last_debug = monotonic_ns();
        }
      }
      const uint64_t now = monotonic_ns();
      const double dt = (now - last_t) * 1e-9;
      std::vector<std::vector<double>> pps(flows_.size());
      for (size_t c = 0; c < flows_.size(); ++c) {
        const size_t n = rc_.chains[c].path.size();
        last[c].resize(n, 0);
        for (size_t k = 0; k < n; ++k) {
          uint64_t seen = flows_[c]->packets_seen(k + 1);
          pps[c].push_back((seen - last[c][k]) / dt);
          last[c][k] = seen;
        }
      }
      last_t = now;
      sharing_->observe(pps, mean_frame_bytes(), take_full_shares());
    }
  }

  // Per chain, the share of batches ingress closed full since the last call.
  std::vector<double> take_full_shares() {
    std::vector<double> out(rc_.chains.size(), 0.0);
    for (size_t c = 0; c < out.size(); ++c) {
      const uint64_t full = batches_full_[c].exchange(0), all = batches_closed_[c].exchange(0);
      out[c] = all ? double(full) / double(all) : 0.0;
    }
    return out;
  }

  double mean_frame_bytes() const {
    const uint64_t p = frames_.load(), bytes = frame_bytes_.load();
    return p ? double(bytes) / p : 64.0;
  }

 public:
  void note_frames(uint64_t packets, uint64_t bytes) override {
    frames_.fetch_add(packets, std::memory_order_relaxed);
    frame_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void note_batch(uint16_t chain, bool full) override {
    batches_closed_[chain].fetch_add(1, std::memory_order_relaxed);
    if (full) batches_full_[chain].fetch_add(1, std::memory_order_relaxed);
  }

 private:
  const RuntimeConfig& rc_;
  BatchLayout layout_;
  std::string device_name_;
  std::unique_ptr<GpuSharing> sharing_;
  std::vector<std::unique_ptr<ChainFlow>> flows_;
  TemporalToken token_;
  std::mutex twins_m_;
  std::mutex workers_m_;
  std::vector<std::unique_ptr<Worker>> prepared_;  // per (chain, stage), until its thread takes it
  std::deque<DeviceBuffer<uint8_t>> twins_;
  Done done_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> in_pipeline_{0};
  std::atomic<uint64_t> frames_{0}, frame_bytes_{0};
  // Per chain: batches ingress closed, and of them full ones (note_batch).
  std::vector<std::atomic<uint64_t>> batches_closed_, batches_full_;
  std::atomic<uint64_t> lane_moves_{0};
  struct BatchTimes {
    std::atomic<uint64_t> batches{0}, filling_ns{0}, waiting_ns{0}, on_gpu_ns{0};
  };
  std::vector<BatchTimes> batch_times_;  // by chain
  std::vector<uint32_t> nf_paths_;       // by NF: how many chain path entries name it
  std::mutex times_m_;
  std::unordered_map<const Batch*, Times> times_;  // batches in the stage
  std::atomic<uint64_t> h2d_bytes_{0}, d2h_bytes_{0}, host_batches_{0}, resident_batches_{0};
  std::atomic<uint64_t> zero_copy_batches_{0};
  std::atomic<uint64_t> persistent_batches_{0};  // of the zero-copy ones, served by a persistent kernel
  uint64_t debug_replan_ns_ = 0;  // GPUNFV_DEBUG_REPLAN_MS, read when the stage is made
  bool counts_by_copy_ = false;   // GPUNFV_DEBUG_COUNTS_BY_COPY
  bool offer_switch_ = true;      // GPUNFV_DEBUG_SWITCH_KERNELS off
  bool upload_prefix_ = false;    // GPUNFV_DEBUG_UPLOAD_PREFIX
  bool fused_ = false;            // settings.gpu_pipeline: fused or persistent
  bool persistent_pipeline_ = false;  // settings.gpu_pipeline: persistent
  // By chain, the lane each persistent kernel runs in (chain lanes), declared first so that it
  // outlives the kernel's stream.
  std::vector<std::shared_ptr<const Lane>> persistent_lanes_;
  std::vector<std::unique_ptr<PersistentChain>> persistent_;  // by chain; null: issued as fused
  bool graphs_ = false;           // settings.gpu_graphs (fused only)
  std::vector<std::unique_ptr<FusedStepTimes>> step_times_;  // by chain
  size_t issuers_ = 1;            // settings.gpu_issue_threads (fused only)
  std::vector<std::unique_ptr<IssueTurns>> turns_;  // by chain, with several issuers
  FusedGraphCounts graph_counts_;
  std::vector<bool> egress_only_download_;  // by chain: set_egress_only_download
};

}  // namespace

std::unique_ptr<ProcessingStage> make_gpu_stage(const RuntimeConfig& rc, const BatchShape& shape) {
  return std::make_unique<GpuStage>(rc, shape);
}

}  // namespace gpunfv

#endif  // GPUNFV_HAVE_CUDA
