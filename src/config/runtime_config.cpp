#include "config/config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "chain/batch_shape.h"
#include "config/internal/chain_graph_config.h"
#include "config/internal/file_roles.h"
#include "config/internal/forward_config.h"
#include "config/internal/nf_factory.h"
#include "core/error.h"
#include "io/gpuring/gpuring_port.h"
#include "io/port_factory.h"
#include "nf/nf_process/nf_process.h"

namespace gpunfv {

namespace {

YAML::Node load_yaml(const std::string& path) {
  if (!std::filesystem::exists(path)) throw ConfigError(path, "no such file");
  if (!std::filesystem::is_regular_file(path)) throw ConfigError(path, "not a regular file");
  // The settings that would raise the limit are inside the file: it always has the default.
  if (std::filesystem::file_size(path) > (kDefaultMaxInputFileMb << 20))
    throw ConfigError(path, "a configuration file of more than " +
                                std::to_string(kDefaultMaxInputFileMb) + " MiB");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(path, "cannot read the file");
  } catch (const YAML::Exception& e) {
    throw ConfigError(where(path, e.mark.line + 1), "YAML syntax: " + e.msg);
  } catch (const std::exception& e) {
    throw ConfigError(path, std::string("cannot read the file: ") + e.what());
  }
  if (!root.IsMap()) throw ConfigError(path, "expected a map with ports:, nfs: and chains:");
  reject_duplicate_keys(root, path);
  return root;
}

constexpr int64_t kMaxBatchDeadlineUs = 10'000'000;
// Host threads that may issue one chain's fused batches (each makes its streams and events).
constexpr int64_t kMaxGpuIssueThreads = 8;
constexpr double kMaxLatencyBoundUs = 1e7;

// A chain's latency bound and batching deadline: its own keys, else the settings'. The
// deadline defaults to a quarter of the bound, leaving the rest for the NFs and egress.
void parse_chain_latency(const ConfigNode& c, const Settings& s, Chain& chain) {
  chain.latency_bound_us = s.latency_bound_us;
  if (auto b = c.get("latency_bound_us")) {
    chain.latency_bound_us = b->as_double();
    if (!(chain.latency_bound_us > 0 && chain.latency_bound_us <= kMaxLatencyBoundUs))
      b->fail("latency_bound_us must be in (0, 10000000] microseconds");
  }
  const double derived = std::max(1.0, std::floor(chain.latency_bound_us / 4));
  chain.batch_deadline_us = s.batch_deadline_us ? s.batch_deadline_us : uint32_t(derived);
  if (auto d = c.get("batch_deadline_us")) {
    const int64_t us = d->as_int(INT64_MIN, INT64_MAX);
    if (us < 1 || us > kMaxBatchDeadlineUs)
      d->fail("batch_deadline_us must be in [1, 10000000] microseconds");
    chain.batch_deadline_us = static_cast<uint32_t>(us);
  }
}

// `listen: ADDR:PORT` (an IPv6 address in brackets) and `linger_s`.
MetricsSettings parse_metrics(const ConfigNode& n) {
  if (!n.is_map()) n.fail("metrics must be a map: {listen: ADDR:PORT, linger_s: S}");
  n.only_keys({"listen", "linger_s"});
  if (!n.has("listen")) n.fail("metrics needs listen: ADDR:PORT (e.g. 127.0.0.1:9464)");
  MetricsSettings m;
  const ConfigNode l = n["listen"];
  const std::string v = l.as_string();
  const size_t colon = v.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == v.size())
    l.fail("metrics listen must be ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464 (got '" + v + "')");
  m.host = v.substr(0, colon);
  if (m.host.front() == '[' && m.host.back() == ']') m.host = m.host.substr(1, m.host.size() - 2);
  const std::string port = v.substr(colon + 1);
  if (m.host.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535)
    l.fail("metrics listen must be ADDR:PORT with a port in 0..65535 (got '" + v + "')");
  m.port = std::stoi(port);
  if (n.has("linger_s")) {
    m.linger_s = n["linger_s"].as_double();
    if (!(m.linger_s >= 0 && m.linger_s <= 1e6)) n["linger_s"].fail("linger_s must be in [0, 1000000] seconds");
  }
  return m;
}

Settings parse_settings(const ConfigNode& n) {
  n.only_keys({"batch_size", "batches", "slot_bytes", "workers", "gpu_in_flight", "gpu_pipeline",
               "gpu_zero_copy_packets", "gpu_persistent_packets", "gpu_graphs", "gpu_issue_threads",
               "batch_deadline_us", "queue_batches", "scheduler", "model", "latency_bound_us",
               "sched_p", "sched_c_us", "sched_fold_remainder", "cpu_workers_per_nf", "gpu_sms",
               "ingress_threads", "ingress_adapt", "egress_threads", "egress_threads_per_chain",
               "max_input_file_mb", "max_pool_memory_percent", "metrics", "control",
               "nf_process_timeout_ms"});
  Settings s;
  s.batch_size = static_cast<uint32_t>(n.int_or("batch_size", s.batch_size, 1, 1 << 20));
  s.nf_process_timeout_ms =
      static_cast<uint32_t>(n.int_or("nf_process_timeout_ms", s.nf_process_timeout_ms, 100, 3600000));
  s.batches = static_cast<uint32_t>(n.int_or("batches", s.batches, 2, 1 << 16));
  s.slot_bytes = static_cast<uint32_t>(n.int_or("slot_bytes", 0, 0, 65536));
  if (s.slot_bytes % 64 != 0) n["slot_bytes"].fail("slot_bytes must be a multiple of 64");
  s.workers = static_cast<uint32_t>(n.int_or("workers", 0, 0, 1024));
  s.cpu_workers_per_nf = static_cast<uint32_t>(n.int_or("cpu_workers_per_nf", 0, 0, 64));
  s.gpu_in_flight = static_cast<uint32_t>(n.int_or("gpu_in_flight", s.gpu_in_flight, 1, 64));
  s.batch_deadline_us =
      static_cast<uint32_t>(n.int_or("batch_deadline_us", s.batch_deadline_us, 0, kMaxBatchDeadlineUs));
  s.queue_batches = static_cast<uint32_t>(n.int_or("queue_batches", 0, 0, 1 << 16));
  s.scheduler = n.str_or("scheduler", s.scheduler);
  if (s.scheduler != "temporal" && s.scheduler != "fair" && s.scheduler != "unco" &&
      s.scheduler != "gnet")
    n["scheduler"].fail("scheduler must be temporal, fair, unco or gnet");
  s.gpu_pipeline = n.str_or("gpu_pipeline", s.gpu_pipeline);
  if (s.gpu_pipeline != "staged" && s.gpu_pipeline != "fused" && s.gpu_pipeline != "persistent")
    n["gpu_pipeline"].fail("gpu_pipeline must be staged, fused or persistent");
  const bool whole_chain = s.gpu_pipeline != "staged";
  s.gpu_zero_copy_packets = static_cast<uint32_t>(n.int_or("gpu_zero_copy_packets", 0, 0, 1 << 20));
  if (n.has("gpu_zero_copy_packets") && !whole_chain)
    n["gpu_zero_copy_packets"].fail("gpu_zero_copy_packets applies to gpu_pipeline: fused or persistent");
  // The batches a persistent kernel serves in place: 1024 packets are 16 us of a 64 Mpps
  // source, longer than the batching deadlines latency asks for.
  s.gpu_persistent_packets =
      static_cast<uint32_t>(n.int_or("gpu_persistent_packets", s.gpu_persistent_packets, 1, 1 << 20));
  if (n.has("gpu_persistent_packets") && s.gpu_pipeline != "persistent")
    n["gpu_persistent_packets"].fail("gpu_persistent_packets applies to gpu_pipeline: persistent");
  if (n.has("gpu_graphs")) s.gpu_graphs = n["gpu_graphs"].as_bool();
  if (s.gpu_graphs && s.gpu_pipeline != "fused")
    n["gpu_graphs"].fail("gpu_graphs applies to gpu_pipeline: fused (a staged pipeline issues one NF "
                         "at a time, with nothing to record into a graph; a persistent kernel may "
                         "hold up making one)");
  s.gpu_issue_threads = static_cast<uint32_t>(n.int_or("gpu_issue_threads", 1, 1, kMaxGpuIssueThreads));
  if (s.gpu_issue_threads > 1 && (s.gpu_pipeline != "fused" || s.gpu_graphs))
    n["gpu_issue_threads"].fail("gpu_issue_threads applies to gpu_pipeline: fused without gpu_graphs (a "
                                "graph's event nodes order its batch when it is launched, not when it "
                                "is recorded)");
  // Per-NF SM shares and the temporal token act on per-NF stages; a fused batch has none. gnet
  // gives a whole-chain pipeline one partition per chain (sched/gpu_sharing.h).
  if (whole_chain && s.scheduler != "unco" && s.scheduler != "gnet")
    n["gpu_pipeline"].fail("gpu_pipeline: " + s.gpu_pipeline + " runs each batch's whole chain at once; "
                           "it needs scheduler: unco or gnet (" + s.scheduler +
                           " shares the GPU per NF stage)");
  if (n.has("model")) s.model_file = n.path("model");
  if (n.has("control")) {
    s.control = n.path("control");
    // sockaddr_un holds 107 bytes and a terminating zero.
    if (s.control.empty() || s.control.size() > 107)
      n["control"].fail("control: a socket path of 1 to 107 bytes (got " +
                        std::to_string(s.control.size()) + ")");
  }
  s.gpu_sms = static_cast<uint32_t>(n.int_or("gpu_sms", 0, 0, 100000));
  s.ingress_threads = static_cast<uint32_t>(n.int_or("ingress_threads", 0, 0, 1024));
  if (n.has("ingress_adapt")) s.ingress_adapt = n["ingress_adapt"].as_bool();
  s.egress_threads = static_cast<uint32_t>(n.int_or("egress_threads", 0, 0, 1024));
  s.egress_threads_per_chain =
      static_cast<uint32_t>(n.int_or("egress_threads_per_chain", 0, 0, 64));
  s.max_input_file_mb =
      static_cast<uint32_t>(n.int_or("max_input_file_mb", s.max_input_file_mb, 1, 1 << 20));
  s.max_pool_memory_percent = static_cast<uint32_t>(
      n.int_or("max_pool_memory_percent", s.max_pool_memory_percent, 1, 100));
  auto positive = [&](const char* key, double dflt, double max) {
    if (!n.has(key)) return dflt;
    double v = n[key].as_double();
    if (!(v > 0 && v <= max)) n[key].fail(std::string(key) + " must be in (0, " + std::to_string(max) + "]");
    return v;
  };
  s.latency_bound_us = positive("latency_bound_us", s.latency_bound_us, kMaxLatencyBoundUs);
  s.sched_p = positive("sched_p", s.sched_p, 1.0);
  s.sched_c_us = positive("sched_c_us", s.sched_c_us, 1e6);
  if (n.has("sched_fold_remainder")) s.sched_fold_remainder = n["sched_fold_remainder"].as_bool();
  if (n.has("metrics")) s.metrics = parse_metrics(n["metrics"]);
  return s;
}

// A forward's `to` port is sent to by its forward thread only (tx is single-threaded per port).
void check_forward_targets(const ConfigNode& root, const RuntimeConfig& rc) {
  if (rc.forwards.empty()) return;
  std::set<uint16_t> chain_egress;
  for (const Chain& c : rc.chains) {
    if (c.to != kNoPort) chain_egress.insert(c.to);
    for (uint16_t nf : c.path)
      for (uint16_t eg : rc.nfs[nf]->egress_ports()) chain_egress.insert(eg);
  }
  const std::vector<ConfigNode> items = root["forward"].items();
  for (size_t i = 0; i < rc.forwards.size(); ++i)
    if (chain_egress.count(rc.forwards[i].to))
      items[i]["to"].fail("port '" + rc.ports[rc.forwards[i].to]->name() +
                          "' is also a chain's egress; a forward needs its target to itself");
}

// The executor runs a gpuring port as a chain's `from` (chain/gpuring_feed.h) or on one side of a
// forward between two gpuring ports (chain/gpuring_forward.h); a chain's packets leave a
// gpuring port only through the rings they came in on. A port that receives (a chain's or a
// forward's from) needs source:; one that only sends (a forward's to) has none to read.
void check_gpuring_ports(const std::vector<ConfigNode>& port_nodes,
                         const std::vector<ConfigNode>& chain_nodes, const RuntimeConfig& rc) {
  auto is_ring = [&](uint16_t p) { return p < rc.ports.size() && rc.ports[p]->type() == "gpuring"; };
  for (size_t i = 0; i < rc.ports.size(); ++i) {
    if (!is_ring(static_cast<uint16_t>(i))) continue;
    bool receives = false, sends = false, feeds_chain = false;
    for (const Chain& c : rc.chains) feeds_chain = feeds_chain || c.from == i;
    receives = feeds_chain;
    for (const ForwardSpec& f : rc.forwards) {
      receives = receives || (f.on_rings && f.from == i);
      sends = sends || (f.on_rings && f.to == i);
    }
    if (!receives && !sends)
      port_nodes[i]["type"].fail("a gpuring port runs in the chain executor only as a chain's from: or on "
                                 "a forward between two gpuring ports (bench/gpuring_bench runs it on its "
                                 "own; see docs/architecture.md)");
    if (feeds_chain && sends)
      port_nodes[i]["type"].fail("gpuring port '" + rc.ports[i]->name() + "' feeds a chain and is a forward's "
                                 "to: both would drive its NIC's tx into one sink");
    const auto& cfg = dynamic_cast<const GpuRingPort&>(*rc.ports[i]).config();
    if (cfg.real_nic()) {
      if (!feeds_chain)
        throw ConfigError(cfg.nic_where, "nic: gpuring port '" + rc.ports[i]->name() + "' on a real NIC runs as a "
                                         "chain's from: only (a forward between gpuring ports drives emulated NICs)");
      continue;  // the NIC receives and sends itself: no source: or sink:
    }
    if (receives && !cfg.has_source())
      port_nodes[i].fail("gpuring port '" + rc.ports[i]->name() +
                         "' needs source: (a port name or an inline pcap/generator port): its NIC "
                         "receives the frames from there");
    if (!receives && cfg.has_source())
      port_nodes[i]["source"].fail("source: port '" + rc.ports[i]->name() +
                                   "' receives nothing: it is only a forward's to: (its NIC sends what "
                                   "the forward hands it into sink:)");
  }
  for (size_t k = 0; k < rc.chains.size(); ++k) {
    const Chain& c = rc.chains[k];
    if (is_ring(c.to) && c.to != c.from)
      chain_nodes[k]["to"].fail("a chain sends to a gpuring port only through the rings it came in "
                                "on: to: must be the chain's from: or a host port");
    for (uint16_t nf : c.path) {
      for (uint16_t eg : rc.nfs[nf]->egress_ports())
        if (is_ring(eg) && eg != c.from)
          chain_nodes[k].fail("NF '" + rc.nfs[nf]->name() + "' sends to gpuring port '" +
                              rc.ports[eg]->name() + "', which does not feed this chain");
      // A ring's batches name packets in the ring's slots, memory NF processes do not map.
      if (auto* p = dynamic_cast<const NfProcessProxy*>(rc.nfs[nf].get()); p && is_ring(c.from))
        chain_nodes[k]["path"].fail("NF '" + p->name() + "' runs in NF process " + p->nf_process().name() +
                                    ", and gpuring port '" + rc.ports[c.from]->name() +
                                    "' feeds this chain: its packets stay in the ring's slots, which "
                                    "NF processes do not share (run the NF without process:)");
    }
  }
}

// A gpuring port's persistent kernel may hold up any CUDA call that sets something up
// (gpu/device_preflight.h), and instantiating a graph is one: graphs stay off beside it.
void check_gpu_graphs(const ConfigNode& root, const RuntimeConfig& rc) {
  if (!rc.settings.gpu_graphs) return;
  for (const auto& p : rc.ports)
    if (p->type() == "gpuring")
      root["settings"]["gpu_graphs"].fail("gpu_graphs does not run beside gpuring port '" + p->name() +
                                          "': its persistent kernel may hold up making a graph");
}

// The persistent pipeline's kernels and a gpuring port's have not been run side by side: refused
// rather than left to find out on a GPU host.
void check_persistent_pipeline(const ConfigNode& root, const RuntimeConfig& rc) {
  if (rc.settings.gpu_pipeline != "persistent") return;
  for (const auto& p : rc.ports)
    if (p->type() == "gpuring")
      root["settings"]["gpu_pipeline"].fail("gpu_pipeline: persistent does not run beside gpuring port '" +
                                            p->name() + "' (use fused)");
}

// The pool is allocated whole at start: one larger than the machine's memory would end the run
// in std::bad_alloc (or the OOM killer) instead of an error at the settings that sized it.
void check_pool_memory(const ConfigNode& root, RuntimeConfig& rc) {
  const auto why = pool_too_large(plan_batch_shape(rc), rc.settings, physical_memory_bytes());
  if (!why) return;
  const std::optional<ConfigNode> s = root.get("settings");
  if (!s) root.fail(*why);
  for (const char* key : {"batches", "batch_size", "slot_bytes"})
    if (auto k = s->get(key)) k->fail(*why);
  s->fail(*why);
}

}  // namespace

namespace {

// The root of the file at `path`, with its settings read and applied to the nodes NFs and ports
// will read, and its port ids by name: NFs (router next hops) refer to ports before ports are
// built.
struct ConfigRoot {
  ConfigNode root;
  Settings settings;
  std::map<std::string, uint16_t> port_ids;
  std::vector<ConfigNode> port_nodes;

  explicit ConfigRoot(const std::string& path) : root(load_yaml(path), path) {
    root.only_keys({"ports", "nfs", "chains", "settings", "forward"});
    if (auto s = root.get("settings")) settings = parse_settings(*s);
    // Before any NF or port reads a file: the nodes they get inherit the limit from the root.
    root.set_max_input_bytes(uint64_t(settings.max_input_file_mb) << 20);
    check_file_roles(root);
    port_nodes = root["ports"].items();
    if (port_nodes.empty()) root["ports"].fail("at least one port is needed");
    if (port_nodes.size() >= kNoPort) root["ports"].fail("too many ports");
    for (const ConfigNode& p : port_nodes) {
      std::string name = p.str("name");
      if (!port_ids.emplace(name, static_cast<uint16_t>(port_ids.size())).second)
        p["name"].fail("duplicate port name '" + name + "'");
    }
  }
  NfContext nf_context() const {
    return NfContext{[this](const std::string& name) -> std::optional<uint16_t> {
      auto it = port_ids.find(name);
      if (it == port_ids.end()) return std::nullopt;
      return it->second;
    }};
  }
};

// `process: NAME` of an NF entry (nf/nf_process/nf_process.h); empty when it has none.
std::string process_of(const ConfigNode& n) {
  if (!n.has("process")) return {};
  const std::string name = n.str("process");
  if (name.empty() || name.size() > 64 ||
      !std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(uint8_t(c)) || c == '_' || c == '-'; }))
    n["process"].fail("an NF process name is 1-64 letters, digits, '_' or '-'");
  return name;
}

}  // namespace

std::vector<std::unique_ptr<NetworkFunction>> load_nf_process_nfs(const std::string& path,
                                                                   const std::string& process) {
  ConfigRoot c(path);
  std::vector<std::unique_ptr<NetworkFunction>> nfs;
  if (auto entries = c.root.get("nfs"))
    for (const ConfigNode& n : entries->items())
      if (process_of(n) == process) nfs.push_back(make_nf(n, c.nf_context()));
  if (nfs.empty()) c.root.fail("no NF has process: " + process);
  return nfs;
}

RuntimeConfig load_runtime_config(const std::string& path) {
  ConfigRoot c(path);
  ConfigNode& root = c.root;
  RuntimeConfig rc;
  rc.file = path;
  rc.settings = c.settings;
  const std::map<std::string, uint16_t>& port_ids = c.port_ids;
  const std::vector<ConfigNode>& port_nodes = c.port_nodes;
  const NfContext nf_context = c.nf_context();
  auto port_id_of = nf_context.port_id_of;

  std::map<std::string, uint16_t> nf_ids;
  std::map<std::string, std::pair<std::shared_ptr<NfProcess>, uint32_t>> processes;
  if (auto nfs = root.get("nfs")) {
    for (const ConfigNode& n : nfs->items()) {
      std::string name = n.str("name");
      if (nf_ids.count(name)) n["name"].fail("duplicate NF name '" + name + "'");
      if (port_ids.count(name)) n["name"].fail("NF name '" + name + "' is also a port name");
      std::unique_ptr<NetworkFunction> nf = make_nf(n, nf_context);
      if (const std::string group = process_of(n); !group.empty()) {
        auto& [process, members] = processes[group];
        if (!process)
          process = std::make_shared<NfProcess>(group, std::filesystem::absolute(path).string(),
                                                rc.settings.nf_process_timeout_ms);
        nf = std::make_unique<NfProcessProxy>(std::move(nf), process, members++);
        rc.nf_processes = true;
      }
      rc.nfs.push_back(std::move(nf));
      nf_ids.emplace(name, static_cast<uint16_t>(rc.nfs.size() - 1));
    }
  }

  PortContext pctx;
  pctx.routes_of = [&](const std::string& nf) { return router_prefixes(rc.nfs, nf); };
  for (size_t i = 0; i < port_nodes.size(); ++i)
    rc.ports.push_back(make_port(port_nodes[i], static_cast<uint16_t>(i), pctx));
  for (size_t i = 0; i < rc.nfs.size(); ++i)
    for (uint16_t eg : rc.nfs[i]->egress_ports())
      if (eg >= rc.ports.size() || !rc.ports[eg]->has_tx())
        root["nfs"].items()[i].fail("NF '" + rc.nfs[i]->name() + "' sends to port '" +
                                    (eg < rc.ports.size() ? rc.ports[eg]->name() : "?") +
                                    "', which has no tx side");

  if (auto f = root.get("forward")) rc.forwards = parse_forwards(*f, port_id_of, rc.ports);
  std::set<uint16_t> ingress_used;
  for (const ForwardSpec& f : rc.forwards) ingress_used.insert(f.from);
  const std::vector<ConfigNode> chain_nodes =
      rc.forwards.empty() || root.has("chains") ? root["chains"].items() : std::vector<ConfigNode>{};
  for (const ConfigNode& c : chain_nodes) {
    c.only_keys({"name", "from", "path", "to", "routes", "backpressure", "qt", "latency_bound_us",
                 "batch_deadline_us"});
    Chain chain;
    std::string from = c.str("from");
    auto from_id = port_id_of(from);
    if (!from_id) c["from"].fail("unknown port '" + from + "'");
    if (!rc.ports[*from_id]->has_rx()) c["from"].fail("port '" + from + "' has no rx side");
    if (!ingress_used.insert(*from_id).second)
      c["from"].fail("port '" + from + "' already feeds another chain or a forward");
    chain.from = *from_id;
    chain.graph = parse_chain_graph(c, nf_ids);
    chain.path = chain.graph.nf;
    chain.view = chain.graph.view();
    if (c.has("backpressure")) chain.backpressure = c["backpressure"].as_bool();
    if (c.has("qt")) {
      chain.qt = c["qt"].as_double();
      if (!(chain.qt >= 1.0 && chain.qt <= 64.0)) c["qt"].fail("qt must be in [1, 64] batches");
    }
    parse_chain_latency(c, rc.settings, chain);
    if (auto to = c.get("to")) {
      std::string to_name = to->as_string();
      auto to_id = port_id_of(to_name);
      if (!to_id) to->fail("unknown port '" + to_name + "'");
      if (!rc.ports[*to_id]->has_tx()) to->fail("port '" + to_name + "' has no tx side");
      chain.to = *to_id;
    }
    chain.name = c.str_or("name", from + (chain.to != kNoPort ? "->" + c.str("to") : ""));
    rc.chains.push_back(std::move(chain));
  }
  if (rc.chains.empty() && rc.forwards.empty()) root["chains"].fail("at least one chain is needed");
  check_forward_targets(root, rc);
  check_gpuring_ports(port_nodes, chain_nodes, rc);
  check_gpu_graphs(root, rc);
  check_persistent_pipeline(root, rc);
  check_pool_memory(root, rc);
  return rc;
}

}  // namespace gpunfv
