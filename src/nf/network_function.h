// The NF abstraction (G-NET section 6, BESS modules, FastClick elements): a small class per NF
// with init (from_config + prepare), process (per-packet logic, one source for both backends)
// and command (runtime queries).
//
// An NF owns its tables on the host. Its per-packet logic is a __host__ __device__ function of
// a trivially copyable view and a PacketRef; it returns DropReason::none to pass the packet on,
// or the reason to drop it. The framework runs it: process() on the CPU backend over a range of
// a host batch, process_gpu() as a kernel over a device batch (src/nf/run_per_packet.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/batch.h"
#include "nf/device_packet_fn.h"
#include "nf/nf_packets.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/stream.h"
#endif

namespace gpunfv {

class TableVersionLog;

enum class Backend { cpu, gpu };

// Where a finished batch came from, for NFs that log per packet (e.g. NIDS alerts).
struct CollectContext {
  std::string_view port_name;
  bool from_pcap = false;  // then seq + 1 is the packet's index in its capture (pcap_cnt)
};

class NetworkFunction {
 public:
  explicit NetworkFunction(std::string name) : name_(std::move(name)) {}
  virtual ~NetworkFunction() = default;
  NetworkFunction(const NetworkFunction&) = delete;
  NetworkFunction& operator=(const NetworkFunction&) = delete;

  const std::string& name() const { return name_; }
  virtual std::string_view type() const = 0;

  // Builds backend state once before packets flow (e.g. uploads tables to the device).
  virtual void prepare(Backend backend) = 0;
  // Puts the state packets advance (sequence numbers, replay windows) back where prepare() left
  // it, so the same packets can run again with the same results: `gpunfv profile` runs one
  // batch many times. Default: an NF whose packets advance no state has nothing to put back.
  virtual void rewind(Backend backend) {}
  // The NF starts in the middle of a run: its NF process was started again after the last one
  // was lost (nf/nf_process/nf_process.h), and the batches that went by meanwhile never reach
  // it. An NF that waits for earlier batches (IPsec's ingress order) starts from the first it
  // sees. Called after prepare(). Default: nothing waits.
  virtual void resume_mid_run() {}

  // CPU backend: runs the NF on packets [begin, end) of `b` whose next_nf equals `position`
  // and whose verdict is none. Thread-safe: workers call it concurrently on disjoint ranges.
  virtual void process(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position) const = 0;
  // CPU backend: called instead of process() for a batch that sends no packet here (all were
  // dropped upstream, or went another way). An NF that orders its work by ingress number notes
  // that the batch went by, so later batches do not wait for it. Default: nothing to note.
  virtual void skip(const BatchView& b, uint8_t position) const {}

#if GPUNFV_HAVE_CUDA
  // GPU backend: the same over a device batch, launched on `stream`; returns at once.
  virtual void process_gpu(const BatchView& device_batch, uint8_t position,
                           const GpuStream& stream) const = 0;
  // Before a persistent kernel starts (gpu/device_preflight.h): makes now what process_gpu
  // would make at its first call on this lane (the lane's context is current). Default: none.
  virtual void prepare_gpu_lane(const GpuStream& stream) {}
  // `stream` has finished all work and is about to be destroyed (a gnet re-plan moved the
  // NF's stage to a new lane, or the stage ends): an NF that remembers streams that launched
  // over its tables forgets it. Default: nothing.
  virtual void release_gpu_lane(cudaStream_t stream) {}
#endif

  // The NF's per-packet function as data, for the persistent pipeline's chain kernel
  // (nf/device_packet_fn.h). none (the default): the NF's batches run on its own kernels.
  virtual DevicePacketFnKind device_packet_kind() const { return DevicePacketFnKind::none; }
  // GPU backend, after prepare(), for one batch: the function with the device view of the
  // NF's tables now, and what to do once the batch is back. Only called where the kind is set.
  virtual DevicePacketUse device_packet_use() const { return {}; }

  // Per-packet results this NF hands back to the host, in bytes (a multiple of 4; 0: none).
  // The framework reserves a slice of every packet's results record for it at
  // result_offset(); per-packet code reaches it, and no other NF's, with PacketReader::results().
  virtual uint32_t result_bytes() const { return 0; }
  void set_result_offset(uint32_t offset) { result_offset_ = offset; }
  uint32_t result_offset() const { return result_offset_; }
  // What the framework hands this NF's per-packet function with each packet (core/batch.h):
  // `first_drop`, the code of its first own drop reason, and its results slice.
  NfSlot slot(uint8_t first_drop) const { return NfSlot(first_drop, result_offset_, result_bytes()); }
  // The batch `b` as this NF's kernels and passes at `position` may reach it (nf/nf_packets.h):
  // its packets there, its results slice, its drop codes from `first_drop`.
  template <PacketAccess A = PacketAccess::read>
  NfPackets<A> packets_at(const BatchView& b, uint8_t position, uint8_t first_drop) const {
    return framework_packets_at<A>(b, position, slot(first_drop));
  }

  // Bytes a packet may grow by in this NF (encapsulation); slots are sized to fit.
  virtual uint32_t headroom_bytes() const { return 0; }

  // Host side, once per finished batch of a chain this NF is in, in ingress order, on the
  // egress thread (never concurrently with itself): turn per-packet results into logs and
  // counters. A packet reached this NF if reached_node(b, i, position) (core/batch.h); the NF
  // dropped it if dropped_at_node(b, i, position).
  virtual void collect(const BatchView& b, uint8_t position, const CollectContext& ctx) {}
  // False for an NF whose collect() does nothing: the framework then skips it, and a batch of
  // a chain where no NF collects goes back without a hand-off to the collect threads (for a
  // GPU ring's batch, which egress waits on, that hand-off cost more than the batch's egress).
  virtual bool collects() const { return true; }
  // An NF whose collect() only adds up counters (order does not matter) may split it: with
  // collect_shards() = S > 1 the framework runs, for each batch, collect_range() over S packet
  // ranges [begin, end) (together covering the batch) on S threads at once, range s with
  // shard = s; each shard must write only its own counters (the report sums them). S = 1:
  // collect() alone is called. The answer must not change after prepare().
  virtual uint32_t collect_shards() const { return 1; }
  virtual void collect_range(const BatchView& b, uint8_t position, const CollectContext& ctx,
                             uint32_t begin, uint32_t end, uint32_t shard) {}
  // GPU backend, before prepare(): the framework offers an NF whose collect() only counts the
  // chance to count on the device instead (gpu/device_counters.h), in kernels process_gpu()
  // launches after its own, so no host thread reads its results. It offers only where the NF
  // sits at one node of each chain at most (each node's results are then final when its kernels
  // end, as collect() would read them). An NF that takes it returns true, makes its counters
  // in prepare(), answers collects() false, and adds the device's counts to its own in
  // finish(), before report(). Default: declined.
  virtual bool count_on_device() { return false; }
  // Whether collect() reads packet bytes (b.data), not only metadata and results, and of which
  // packets (one that reached this NF; results and metadata are readable): for batches whose
  // packets stay in GPU memory (a GPU ring's), egress copies those frames to the host first
  // (chain/ring_batch_transfer.h).
  virtual bool collect_reads_frames() const { return false; }
  virtual bool collect_reads_frame(const BatchView& b, uint32_t i, uint8_t position) const { return true; }
  // NF-specific additions to the JSON report (e.g. rule_hits) and the end of a run.
  virtual void report(nlohmann::json& j) const {}
  // An NF whose tables change while packets flow (control socket, SIGHUP): their versions.
  virtual const TableVersionLog* table_versions() const { return nullptr; }
  virtual void finish() {}

  // Ports this NF may send packets to (validated to have a tx side at load time).
  virtual std::vector<uint16_t> egress_ports() const { return {}; }

  // Runtime command (`gpunfv` control surface): returns a human-readable answer.
  virtual std::string command(std::string_view cmd) const;

  // One line for the startup summary.
  virtual std::string describe() const = 0;

  // isoPointer's containment: once a packet's run of this NF reached outside its memory (the
  // packet was dropped as nf_isolation_fault), the framework quarantines the NF. It then runs
  // no more, and the packets sent to it are dropped as nf_isolation_fault; the other NFs and
  // chains go on. Thread-safe; there is no way back in a run.
  void quarantine() { quarantined_.store(true, std::memory_order_relaxed); }
  bool quarantined() const { return quarantined_.load(std::memory_order_relaxed); }

 private:
  std::string name_;
  uint32_t result_offset_ = 0;
  std::atomic<bool> quarantined_{false};
};

}  // namespace gpunfv
