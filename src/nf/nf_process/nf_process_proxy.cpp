#include <cstring>
#include <stdexcept>

#include "core/shared_arena.h"
#include "nf/nf_process/internal/lost_packets.h"
#include "nf/nf_process/internal/protocol.h"
#include "nf/nf_process/nf_process.h"

namespace gpunfv {

using nf_process::Op;
using nf_process::Request;

NfProcessProxy::NfProcessProxy(std::unique_ptr<NetworkFunction> shape,
                               std::shared_ptr<NfProcess> process, uint32_t index)
    : NetworkFunction(shape->name()), shape_(std::move(shape)), process_(std::move(process)),
      index_(index) {}

std::string NfProcessProxy::describe() const {
  return shape_->describe() + " (in NF process " + process_->name() + ")";
}

void NfProcessProxy::prepare(Backend backend) { process_->start(backend); }

Request NfProcessProxy::request_for(const BatchView& b, uint8_t position) const {
  const SharedArena& arena = SharedArena::instance();
  const BatchLayout layout = BatchLayout::make(b.capacity, b.stride, b.result_stride);
  const uint8_t* base = reinterpret_cast<const uint8_t*>(b.len.framework_data()) - layout.off_len;
  if (!b.slot_index.empty() || !arena.contains(base) ||
      arena.offset_of(base) + layout.bytes > arena.size())
    throw std::logic_error("NF " + name() + ": a batch outside the memory shared with NF processes");
  Request r;
  r.nf = index_;
  r.arena_offset = arena.offset_of(base);
  r.capacity = b.capacity;
  r.stride = b.stride;
  r.result_stride = b.result_stride;
  r.count = b.count;
  r.end = b.count;
  r.result_offset = result_offset();
  r.position = position;
  return r;
}

// The process was lost while it had these packets, or before: they are dropped at this NF,
// those it had already passed on included (it may have left them half rewritten).
void NfProcessProxy::process(const BatchView& b, uint32_t begin, uint32_t end,
                             uint8_t position) const {
  Request r = request_for(b, position);
  r.op = Op::process;
  r.begin = begin;
  r.end = end;
  if (process_->call(r)) return;
  for (uint32_t i = begin; i < end; ++i) {
    if (b.verdict[i] != uint8_t(DropReason::none) || !reached_node(b, i, position)) continue;
    if (b.next_nf[i] != position && b.next_nf[i] != position + 1) continue;
    b.next_nf[i] = position;
    b.verdict[i] = uint8_t(DropReason::nf_process_lost);
  }
}

void NfProcessProxy::skip(const BatchView& b, uint8_t position) const {
  Request r = request_for(b, position);
  r.op = Op::skip;
  process_->call(r);  // a lost process has nothing to note
}

#if GPUNFV_HAVE_CUDA
// The process's GPU calls for the batch come with its reply, and are launched on `s` before
// call() returns. A process lost before it replied launched nothing for this batch.
void NfProcessProxy::process_gpu(const BatchView& device_batch, uint8_t position,
                                 const GpuStream& s) const {
  Request r;
  r.op = Op::process_gpu;
  r.nf = index_;
  r.result_offset = result_offset();
  r.position = position;
  nf_process::GpuBatchText sent;
  sent.batch = device_batch;
  sent.stream = s;
  sent.stream.count_landed = nullptr;  // the Manager's memory: the process counts on the device
  sent.stream.node_switch = nullptr;   // offered by value below
  sent.stream.switch_taken = nullptr;
  if (s.node_switch && s.switch_taken) {
    sent.node_switch = *s.node_switch;
    sent.switch_offered = 1;
  }
  const std::string text(reinterpret_cast<const char*>(&sent), sizeof sent);
  std::string answer;
  process_->hand(s);
  if (!process_->call(r, text, &answer)) {
    nf_process::drop_lost_packets_gpu(device_batch, position, s);
    return;
  }
  if (sent.switch_offered && answer == nf_process::kSwitchTaken) *s.switch_taken = true;
}

void NfProcessProxy::release_gpu_lane(cudaStream_t stream) {
  process_->take_back(stream);
  Request r;
  r.op = Op::release_lane;
  r.nf = index_;
  process_->call(r, std::string(reinterpret_cast<const char*>(&stream), sizeof stream));
}
#endif

void NfProcessProxy::collect(const BatchView& b, uint8_t position, const CollectContext& ctx) {
  Request r = request_for(b, position);
  r.op = Op::collect;
  r.from_pcap = ctx.from_pcap;
  std::memcpy(r.port, ctx.port_name.data(), std::min(ctx.port_name.size(), sizeof r.port - 1));
  process_->call(r);  // lost: the batch's logs and counts are lost with the process's
}

void NfProcessProxy::collect_range(const BatchView& b, uint8_t position, const CollectContext& ctx,
                                   uint32_t begin, uint32_t end, uint32_t shard) {
  Request r = request_for(b, position);
  r.op = Op::collect_range;
  r.from_pcap = ctx.from_pcap;
  r.begin = begin;
  r.end = end;
  r.shard = shard;
  std::memcpy(r.port, ctx.port_name.data(), std::min(ctx.port_name.size(), sizeof r.port - 1));
  process_->call(r);  // lost: as collect()
}

bool NfProcessProxy::count_on_device() {
  if (!shape_->count_on_device()) return false;
  process_->count_on_device(index_);
  return true;
}

void NfProcessProxy::finish() {
  Request r;
  r.op = Op::finish;
  r.nf = index_;
  std::string text;
  if (process_->call(r, {}, &text) && !text.empty()) report_ = nlohmann::json::parse(text);
}

void NfProcessProxy::report(nlohmann::json& j) const {
  if (report_.is_object()) j.update(report_);
  j["process"] = process_->name();
}

std::string NfProcessProxy::command(std::string_view cmd) const {
  Request r;
  r.op = Op::command;
  r.nf = index_;
  std::string answer;
  if (!process_->call(r, std::string(cmd), &answer))
    return "NF process " + process_->name() + " is being started again; try again";
  return answer;
}

bool NfProcessProxy::control(const std::string& request, std::string& reply) const {
  Request r;
  r.op = Op::control;
  r.nf = index_;
  return process_->call(r, request, &reply);
}

}  // namespace gpunfv
