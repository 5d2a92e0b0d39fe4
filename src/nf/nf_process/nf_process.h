// NF processes (G-NET section 4.1: NFs from different vendors in processes of their own). An NF
// entry with `process: NAME` runs, with the other entries of that NAME, in an OS process that
// `gpunfv run` (the Manager) starts: `gpunfv nf-process`. The NF process reads its entries of the
// configuration, builds its tables and does its NFs' host-side work (collect: alert logs and
// counters; finish and report). It works on the Manager's batches in place, in memory both map
// (core/shared_arena.h), when the Manager asks over its socket; the Manager keeps a stand-in
// (NfProcessProxy) in the chain, which reads the entry only to check it and learn the NF's shape
// (its results, egress ports), and never prepares or runs it.
//
// A process that dies (killed, crashed), or hangs (answers nothing for `timeout_ms`: it is then
// killed), loses the packets it was working on and those sent to its NFs until it is back: they
// are dropped as nf_process_lost. The Manager starts it again at
// once and counts the restart (report: `processes: {NAME: {pid, restarts, hung}}`); its NFs' counters
// start again from zero with it. Other NFs and chains are not touched.
//
// On the GPU backend the NF process has no GPU of its own: its NFs' GPU calls (gpu/gpu_calls.h:
// memory, copies, launches, streams, events) travel to the Manager with its messages, and the
// Manager performs them in its one context (G-NET's API remoting), on the batch's stream and SM
// partition, launching the kernels it loaded itself: registered ones (gpu/kernel_registry.h),
// from its own binary or from the plugin's library, which it loads too. Batches stay in the
// Manager's device memory; a request hands the process the batch's device view.
//
// Errors: a process that does not start, or does not report ready within 30 s, throws
// std::runtime_error from prepare(); an NF that throws in its process throws
// std::runtime_error in the Manager with the NF's message; a GPU call the Manager refuses
// (internal/manager_gpu.h) fails in the NF process, or, sent with a reply, throws GpuError in
// the Manager.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "nf/network_function.h"

namespace gpunfv {

namespace nf_process {
struct Request;
}

// One NF process, as the Manager sees it: started once, restarted when lost. Thread-safe: its
// socket connections (one per core, at most 16) each carry one request at a time, so as many
// requests as there are connections are served at once (an NF that waits inside process() for
// another batch, as IPsec orders its batches, must not hold the only way in).
class NfProcess {
 public:
  NfProcess(std::string name, std::string config_path, uint32_t timeout_ms = 30000);
  ~NfProcess();
  NfProcess(const NfProcess&) = delete;
  NfProcess& operator=(const NfProcess&) = delete;

  const std::string& name() const { return name_; }
  // Before start(): NF `index` of the process counts on the device (NetworkFunction::
  // count_on_device), which it is told before it prepares.
  void count_on_device(uint32_t index);
  // Starts the process for `backend` (once; later calls return at once).
  void start(Backend backend);
  // Sends `req` (with `text`) and waits for its reply. False: the process is gone; a restart
  // is under way. Throws std::runtime_error when the NF threw.
  bool call(const nf_process::Request& req, const std::string& text = {},
            std::string* reply = nullptr);
  // {pid, restarts, hung}: hung counts the restarts of a process that hung.
  nlohmann::json report() const;
#if GPUNFV_HAVE_CUDA
  // The process may use `s` (a batch's stream, its lane's aux stream and event) from now on,
  // until take_back(s).
  void hand(const GpuStream& s);
  void take_back(cudaStream_t s);
#endif

  // The binary started as the process (default: this one, /proc/self/exe).
  static void set_executable(std::string path);

 private:
  struct Child;
  std::shared_ptr<Child> spawn(bool mid_run) const;  // throws std::runtime_error
  void lose();                           // m_ held
  void restart_loop();
  static void reap(pid_t pid);

  const std::string name_, config_path_;
  mutable std::mutex m_;
  std::condition_variable restart_, free_;
  std::shared_ptr<Child> child_;  // null while lost
  pid_t pid_ = -1;                // the last one started
  bool started_ = false, stopping_ = false;
  std::vector<pid_t> lost_;       // to reap
  uint64_t restarts_ = 0, hung_ = 0;
  const uint32_t timeout_ms_;
  Backend backend_ = Backend::cpu;
  std::vector<uint32_t> device_counted_;
  int device_ = 0;  // GPU backend: the device the process's calls are performed on
  std::thread restarter_;
};

// The Manager's stand-in for an NF that runs in an NF process.
class NfProcessProxy final : public NetworkFunction {
 public:
  // `shape`: the NF built from its entry (never prepared); `index`: its place in its process.
  NfProcessProxy(std::unique_ptr<NetworkFunction> shape, std::shared_ptr<NfProcess> process,
                 uint32_t index);

  std::string_view type() const override { return shape_->type(); }
  std::string describe() const override;
  const NfProcess& nf_process() const { return *process_; }
  // The NF as the Manager read it from its entry (never prepared).
  const NetworkFunction& shape() const { return *shape_; }

  void prepare(Backend backend) override;
  void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const override;
  void skip(const BatchView& b, uint8_t position) const override;
#if GPUNFV_HAVE_CUDA
  void process_gpu(const BatchView& device_batch, uint8_t position, const GpuStream& s) const override;
  void release_gpu_lane(cudaStream_t stream) override;
#endif
  uint32_t result_bytes() const override { return shape_->result_bytes(); }
  uint32_t headroom_bytes() const override { return shape_->headroom_bytes(); }
  void collect(const BatchView& b, uint8_t position, const CollectContext& ctx) override;
  bool collects() const override { return shape_->collects(); }
  uint32_t collect_shards() const override { return shape_->collect_shards(); }
  void collect_range(const BatchView& b, uint8_t position, const CollectContext& ctx, uint32_t begin,
                     uint32_t end, uint32_t shard) override;
  // The NF in its process is told to, as the stand-in's shape answers.
  bool count_on_device() override;
  bool collect_reads_frames() const override { return shape_->collect_reads_frames(); }
  void report(nlohmann::json& j) const override;
  void finish() override;
  std::vector<uint16_t> egress_ports() const override { return shape_->egress_ports(); }
  std::string command(std::string_view cmd) const override;
  // A control request (JSON text) for the NFs of this NF's process, performed there; returns
  // the reply's text. False when the process is being started again.
  bool control(const std::string& request, std::string& reply) const;

 private:
  nf_process::Request request_for(const BatchView& b, uint8_t position) const;

  std::unique_ptr<NetworkFunction> shape_;
  std::shared_ptr<NfProcess> process_;
  uint32_t index_;
  nlohmann::json report_;  // the NF's report from its process, at finish()
};

// The NF process's side: prepares `nfs` for `backend` (and, for a process started again after a
// loss, `mid_run`, tells them they start mid-run), says it is ready on the first of `socks`,
// and serves requests on batches in `arena` (`arena_bytes` mapped), each socket on a thread of
// its own, until the Manager closes them. Returns the exit status.
// The NF process's side, before it builds its NFs: their drop reasons take the Manager's codes
// (core/drop_reason.h), asked over `sock`, the first of its sockets, so that a verdict means the
// same reason in both processes.
void use_manager_drop_codes(int sock);

// What an NF process does with a control request (a live table update) from the Manager: the
// request's JSON text in, the reply's out (cli/control_commands.h). Never throws.
using NfProcessControl = std::function<std::string(const std::string& request)>;

// On the GPU backend the NFs' GPU calls go to the Manager (gpu/gpu_calls.h).
// `count_on_device`: the NFs (by index) the Manager offered device counting to and that took it.
// `control`: the process's answer to control requests (none: they are refused).
int serve_nf_process(std::vector<std::unique_ptr<NetworkFunction>>& nfs, const std::vector<int>& socks,
                     uint8_t* arena, size_t arena_bytes, bool mid_run = false,
                     Backend backend = Backend::cpu, const std::vector<uint32_t>& count_on_device = {},
                     NfProcessControl control = {});

}  // namespace gpunfv
