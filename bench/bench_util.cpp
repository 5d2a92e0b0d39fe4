#include "bench_util.h"

#include "gpu/device.h"

#include <fmt/format.h>
#include <sched.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "chain/processing_stage.h"
#include "core/config_node.h"
#include "core/error.h"
#include "io/port_factory.h"
#include "nf/router/router.h"

#if GPUNFV_HAVE_CUDA
#include "gpu/cuda_check.h"
#include "gpu/device_buffer.h"
#endif

namespace gpunfv::bench {

Batches make_batches(uint32_t n, const BatchShape& shape, MemoryKind kind) {
  Batches v;
  for (uint32_t i = 0; i < n; ++i)
    v.push_back(std::make_unique<Batch>(shape.capacity, shape.stride, kind, shape.result_stride));
  return v;
}

uint64_t fill(Port& port, Batches& bs, uint64_t limit) {
  uint64_t total = 0;
  for (auto& b : bs) {
    b->set_count(0);
    while (b->count() < b->capacity() && total + b->count() < limit && !port.rx_done()) {
      uint32_t want = static_cast<uint32_t>(
          std::min<uint64_t>(b->capacity() - b->count(), limit - total - b->count()));
      port.rx_burst(*b, want);
    }
    total += b->count();
  }
  return total;
}

size_t used_batches(const Batches& bs) {
  size_t used = 0;
  while (used < bs.size() && bs[used]->count() > 0) ++used;
  return used;
}

uint64_t frame_bytes(const Batches& bs, size_t used) {
  uint64_t bytes = 0;
  for (size_t b = 0; b < used; ++b) {
    BatchView v = bs[b]->view();
    for (uint32_t i = 0; i < v.count; ++i) bytes += v.len[i];
  }
  return bytes;
}

void copy_batch(const Batch& from, Batch& to) {
  std::memcpy(to.base(), from.base(), from.layout().bytes);
  to.set_count(from.count());
  to.chain = from.chain;
  to.batch_seq = from.batch_seq;
}

void copy_batches(const Batches& from, Batches& to, size_t used, unsigned threads) {
  run_batches(used, threads, [&](size_t i) { copy_batch(*from[i], *to[i]); });
}

void number_packets(Batches& bs, size_t used, uint64_t& next_seq) {
  for (size_t b = 0; b < used; ++b) {
    BatchView v = bs[b]->view();
    for (uint32_t i = 0; i < v.count; ++i) v.seq[i] = next_seq++;
  }
}

void reset_stateful_nfs(RuntimeConfig& rc, Backend backend) {
  // prepare() of an IPsec NF resets its SA state (and on the GPU re-uploads its small table);
  // the other NFs' prepare() would upload their tables again for nothing.
  for (auto& nf : rc.nfs)
    if (nf->type() == "ipsec") nf->prepare(backend);
}

void set_generator_size(RuntimeConfig& rc, uint32_t size) {
  const uint16_t id = rc.chains[0].from;
  const std::string& name = rc.ports[id]->name();
  YAML::Node root = YAML::LoadFile(rc.file);
  for (YAML::Node p : root["ports"]) {
    if (p["name"].as<std::string>() != name) continue;
    ConfigNode node(p, rc.file);
    if (node.str("type") != "generator")
      node.fail("port '" + name + "' is not a generator: frame sizes cannot be chosen");
    p["size"] = std::to_string(size);
    PortContext ctx;
    ctx.routes_of = [&](const std::string& nf) -> const std::vector<Ipv4Prefix>* {
      for (auto& f : rc.nfs)
        if (f->name() == nf)
          if (auto* r = dynamic_cast<const Router*>(f.get())) return &r->prefixes();
      return nullptr;
    };
    rc.ports[id] = make_port(ConfigNode(p, rc.file), id, ctx);
    return;
  }
  throw ConfigError(rc.file, "no port named '" + name + "'");
}

uint32_t round_batches(const RuntimeConfig& rc, const BatchShape& shape, uint64_t packets,
                       unsigned threads, size_t max_bytes) {
  const uint64_t cap = shape.capacity;
  uint64_t n = std::min<uint64_t>(rc.settings.batches, (packets + cap - 1) / cap);
  n = std::min<uint64_t>(n, std::max<uint64_t>(1, max_bytes / (cap * shape.stride)));
  if (n > threads) n = n / threads * threads;
  return static_cast<uint32_t>(std::max<uint64_t>(n, 1));
}

double run_cpu(const RuntimeConfig& rc, Batches& bs, size_t n, unsigned threads) {
  return run_batches(n, threads,
                     [&](size_t i) { run_chain_cpu(rc, rc.chains[0], bs[i]->view()); });
}

void Check::add(const Check& o) {
  if (mismatches == 0 && o.mismatches) first = o.first;
  compared += o.compared;
  mismatches += o.mismatches;
}

std::string Check::text() const { return fmt::format("{} of {}", mismatches, compared); }

nlohmann::json Check::json() const {
  nlohmann::json j = {{"compared", compared}, {"mismatches", mismatches}};
  if (mismatches) j["first"] = first;
  return j;
}

uint64_t count_mismatches(const Batch& a, const Batch& b, std::string* first) {
  BatchView x = a.view(), y = b.view();
  uint64_t bad = 0;
  const uint32_t rs = std::min(x.result_stride, y.result_stride);
  for (uint32_t i = 0; i < x.count; ++i) {
    bool same = x.len[i] == y.len[i] && x.verdict[i] == y.verdict[i] &&
                x.next_nf[i] == y.next_nf[i] && x.out_port[i] == y.out_port[i] &&
                x.flow_hash[i] == y.flow_hash[i] && x.result_stride == y.result_stride &&
                std::memcmp(&x.headers[i], &y.headers[i], sizeof(PacketHeaders)) == 0 &&
                std::memcmp(x.data.framework_data() + size_t(i) * x.stride,
                            y.data.framework_data() + size_t(i) * y.stride,
                            std::min<uint32_t>(x.len[i], x.stride)) == 0 &&
                (rs == 0 || std::memcmp(x.results.framework_data() + size_t(i) * rs,
                                        y.results.framework_data() + size_t(i) * rs, rs) == 0);
    if (!same && bad++ == 0 && first)
      *first = fmt::format("packet {}: verdict {} / {}, port {} / {}, length {} / {}", i,
                           x.verdict[i], y.verdict[i], x.out_port[i], y.out_port[i], x.len[i],
                           y.len[i]);
  }
  return bad;
}

Check compare_batches(const Batches& a, const Batches& b, size_t used, unsigned threads) {
  std::mutex m;
  Check total;
  run_batches(used, threads, [&](size_t i) {
    Check c;
    c.compared = a[i]->count();
    c.mismatches = count_mismatches(*a[i], *b[i], &c.first);
    if (c.mismatches) c.first = fmt::format("batch {} {}", i, c.first);
    std::lock_guard<std::mutex> lk(m);
    total.add(c);
  });
  return total;
}

void print_header(const Columns& c) {
  const size_t w = c.path_width;
  std::string head = "\n|", rule = "|";
  if (c.size) head += fmt::format(" {:>6} |", "size"), rule += fmt::format("{:->8}|", "");
  head += fmt::format(" {:<{}} | {:>10} | {:>10} | {:>16} |", "path", w, "Mpps", "Gbit/s", c.base);
  rule += fmt::format("{:-<{}}|{:->12}|{:->12}|{:->18}|", "", w + 2, "", "", "");
  if (c.check) head += fmt::format(" {:>22} |", "mismatches"), rule += fmt::format("{:->24}|", "");
  fmt::print("{}\n{}\n", head, rule);
}

void print_row(const Columns& c, const Row& r, double mean_frame, double base_mpps,
               const std::string& size) {
  double gbps = r.mpps() * 1e6 * mean_frame * 8 / 1e9;
  double ratio = base_mpps > 0 ? r.mpps() / base_mpps : 0;
  std::string gbps_text = r.lookup_only ? "-" : fmt::format("{:.2f}", gbps);
  std::string line = "|";
  if (c.size) line += fmt::format(" {:>6} |", size);
  line += fmt::format(" {:<{}} | {:>10.2f} | {:>10} | {:>15.2f}x |", r.path, c.path_width,
                      r.mpps(), gbps_text, ratio);
  if (c.check)
    line += fmt::format(" {:>22} |", r.checked ? r.check.text() : r.note.empty() ? "-" : r.note);
  fmt::print("{}\n", line);
}

nlohmann::json row_json(const Row& r, double mean_frame, double base_mpps) {
  double gbps = r.mpps() * 1e6 * mean_frame * 8 / 1e9;
  double ratio = base_mpps > 0 ? r.mpps() / base_mpps : 0;
  nlohmann::json row = {{"path", r.path},       {"packets", r.packets}, {"seconds", r.seconds},
                        {"mpps", r.mpps()},     {"ratio", ratio},       {"lookup_only", r.lookup_only}};
  row["gbps"] = r.lookup_only ? nlohmann::json(nullptr) : nlohmann::json(gbps);
  if (r.checked) row["check"] = r.check.json();
  return row;
}

void warn_if_few_cpus(const char* program, unsigned threads) {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && unsigned(CPU_COUNT(&cpus)) < threads)
    fmt::print(stderr, "{}: warning: {} threads but this thread may run on {} CPUs\n", program,
               threads, CPU_COUNT(&cpus));
}

bool gpu_present() { return cuda_device_available(); }

#if GPUNFV_HAVE_CUDA

struct GpuBench::Impl {
  const RuntimeConfig& rc;
  BatchLayout layout;
  std::unique_ptr<ProcessingStage> stage;
  std::mutex m;
  std::condition_variable cv;
  size_t finished = 0;
  uint64_t next_batch_seq = 0;
  DeviceBuffer<uint8_t> dev;  // device-resident copies of one round, for kernel-only timing
  std::vector<cudaStream_t> streams;
  DeviceBuffer<uint8_t> pristine, working;  // upload(): the set, and its working copies
  std::vector<uint32_t> counts;
  uint32_t copies = 0;

  // Launches the chain over batches [0, n) at `base` (counts[i % counts.size()] packets each)
  // between two events; returns their seconds.
  double timed_launches(uint8_t* base, size_t n, const std::vector<uint32_t>& count_of) {
    cudaEvent_t e0, e1;
    GPUNFV_CUDA(cudaEventCreate(&e0));
    GPUNFV_CUDA(cudaEventCreate(&e1));
    GPUNFV_CUDA(cudaDeviceSynchronize());
    GPUNFV_CUDA(cudaEventRecord(e0));
    for (auto& st : streams) GPUNFV_CUDA(cudaStreamWaitEvent(st, e0));
    for (size_t i = 0; i < n; ++i)
      launch_chain_gpu(rc, rc.chains[0], layout.view(base + i * layout.bytes, count_of[i % count_of.size()]),
                       streams[i % streams.size()]);
    for (auto& st : streams) {
      cudaEvent_t e;
      GPUNFV_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      GPUNFV_CUDA(cudaEventRecord(e, st));
      GPUNFV_CUDA(cudaStreamWaitEvent(nullptr, e));
      GPUNFV_CUDA(cudaEventDestroy(e));
    }
    GPUNFV_CUDA(cudaEventRecord(e1));
    GPUNFV_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    GPUNFV_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ms / 1e3;
  }

  Impl(const RuntimeConfig& r, const BatchShape& shape, uint32_t batches)
      : rc(r), layout(BatchLayout::make(shape.capacity, shape.stride, shape.result_stride)) {
    stage = make_gpu_stage(rc, shape);
    stage->start([this](Batch*) {
      std::lock_guard<std::mutex> lk(m);
      ++finished;
      cv.notify_one();
    });
    dev.allocate(layout.bytes * batches);
    streams.resize(8);
    for (auto& s : streams) GPUNFV_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  ~Impl() {
    stage->stop();
    for (auto& s : streams) cudaStreamDestroy(s);
  }
};

GpuBench::GpuBench(const RuntimeConfig& rc, const BatchShape& shape, uint32_t batches)
    : impl_(std::make_unique<Impl>(rc, shape, batches)) {}

GpuBench::~GpuBench() = default;

double GpuBench::end_to_end(Batches& bs, size_t used) {
  Impl& s = *impl_;
  s.finished = 0;
  uint64_t t0 = monotonic_ns();
  // The pipeline releases a stage's batches in ingress order (batch_seq), which runs on across
  // rounds: numbered here so every round continues where the last one stopped.
  for (size_t i = 0; i < used; ++i) {
    bs[i]->batch_seq = s.next_batch_seq++;
    bs[i]->chain = 0;
    s.stage->submit(bs[i].get());
  }
  {
    std::unique_lock<std::mutex> lk(s.m);
    s.cv.wait(lk, [&] { return s.finished == used; });
  }
  return (monotonic_ns() - t0) / 1e9;
}

double GpuBench::kernel_only(const Batches& in, size_t used, Batches* out) {
  Impl& s = *impl_;
  const BatchLayout& L = s.layout;
  std::vector<uint32_t> counts;
  for (size_t i = 0; i < used; ++i) {
    GPUNFV_CUDA(cudaMemcpy(s.dev.data() + i * L.bytes, in[i]->base(), L.bytes, cudaMemcpyHostToDevice));
    counts.push_back(in[i]->count());
  }
  const double seconds = s.timed_launches(s.dev.data(), used, counts);
  if (out)
    for (size_t i = 0; i < used; ++i) {
      GPUNFV_CUDA(cudaMemcpy((*out)[i]->base(), s.dev.data() + i * L.bytes, L.bytes,
                             cudaMemcpyDeviceToHost));
      (*out)[i]->set_count(in[i]->count());
    }
  return seconds;
}

void GpuBench::upload(const Batches& in, size_t used, uint32_t copies) {
  Impl& s = *impl_;
  const BatchLayout& L = s.layout;
  s.copies = std::max(1u, copies);
  s.pristine.allocate(L.bytes * used);
  s.working.allocate(L.bytes * used * s.copies);
  s.counts.clear();
  for (size_t i = 0; i < used; ++i) {
    GPUNFV_CUDA(cudaMemcpy(s.pristine.data() + i * L.bytes, in[i]->base(), L.bytes,
                           cudaMemcpyHostToDevice));
    s.counts.push_back(in[i]->count());
  }
}

double GpuBench::kernel_pass(uint32_t copies) {
  Impl& s = *impl_;
  const size_t set = s.layout.bytes * s.counts.size();
  copies = std::min(std::max(1u, copies), s.copies);
  for (uint32_t k = 0; k < copies; ++k)
    GPUNFV_CUDA(cudaMemcpy(s.working.data() + k * set, s.pristine.data(), set,
                           cudaMemcpyDeviceToDevice));
  return s.timed_launches(s.working.data(), s.counts.size() * copies, s.counts);
}

void GpuBench::download(Batches& out, size_t used) {
  Impl& s = *impl_;
  const BatchLayout& L = s.layout;
  for (size_t i = 0; i < used && i < s.counts.size(); ++i) {
    GPUNFV_CUDA(cudaMemcpy(out[i]->base(), s.working.data() + i * L.bytes, L.bytes,
                           cudaMemcpyDeviceToHost));
    out[i]->set_count(s.counts[i]);
  }
}

uint32_t GpuBench::kernel_copies() const { return impl_->copies; }

#else

struct GpuBench::Impl {};
GpuBench::GpuBench(const RuntimeConfig&, const BatchShape&, uint32_t) {
  throw std::runtime_error("this build has no CUDA backend");
}
GpuBench::~GpuBench() = default;
double GpuBench::end_to_end(Batches&, size_t) { return 0; }
double GpuBench::kernel_only(const Batches&, size_t, Batches*) { return 0; }
void GpuBench::upload(const Batches&, size_t, uint32_t) {}
double GpuBench::kernel_pass(uint32_t) { return 0; }
void GpuBench::download(Batches&, size_t) {}
uint32_t GpuBench::kernel_copies() const { return 0; }

#endif

ChainBenchArgs parse_chain_bench_args(int argc, char** argv, std::string config,
                                      const std::function<bool(const std::string&)>& extra) {
  ChainBenchArgs a{std::move(config), 0, {argv[0]}};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--config=", 0) == 0)
      a.config = arg.substr(9);
    else if (arg.rfind("--batch=", 0) == 0)
      a.batch_size = uint32_t(std::stoul(arg.substr(8)));
    else if (!extra || !extra(arg))
      a.rest.push_back(argv[i]);
  }
  return a;
}

}  // namespace gpunfv::bench
