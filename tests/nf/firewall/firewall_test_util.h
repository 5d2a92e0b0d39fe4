// Shared by the firewall tests: the ClassBench sets in data/firewall, the ClassBench trace,
// deterministic header generation, and frames built from 5-tuples.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/packet_headers.h"
#include "nf/firewall/classbench_file.h"
#include "nf/firewall/five_tuple.h"
#include "core/splitmix64.h"

namespace gpunfv::fwtest {

inline std::string data_dir() { return std::string(GPUNFV_SOURCE_DIR) + "/data/firewall"; }

struct RuleSetFile {
  std::string name;  // e.g. "neurocuts_acl1_10k"
  std::string path;
};

// Every ClassBench set in data/firewall: the NeuroCuts 1k and 10k sets of the 10 seeds, and
// JiaChang's acl1_1k (the one with a trace).
inline std::vector<RuleSetFile> classbench_sets() {
  std::vector<RuleSetFile> out;
  for (const char* seed : {"acl1", "acl2", "acl3", "acl4", "acl5", "fw1", "fw2", "fw3", "fw4", "ipc1"}) {
    out.push_back({std::string("neurocuts_") + seed + "_1k",
                   data_dir() + "/classbench_neurocuts/" + seed + "_1k"});
    out.push_back({std::string("neurocuts_") + seed + "_10k",
                   data_dir() + "/classbench_neurocuts/" + seed + "_10k.gz"});
  }
  out.push_back({"jiachang_acl1_1k", data_dir() + "/classbench_jiachang/acl1_1k"});
  return out;
}

inline std::string jiachang_trace_path() {
  return data_dir() + "/classbench_jiachang/acl1_1k_trace";
}

inline std::vector<FiveTupleRule> load_rules(const std::string& path) {
  return match_parts(read_classbench_file(path));
}

struct TraceHeader {
  FiveTuple tuple;
  uint32_t generated_from;  // the trace's rule column: the rule the header was drawn from
};

// ClassBench trace: "src dst sport dport proto flags rule" per line, all decimal.
inline std::vector<TraceHeader> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<TraceHeader> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    uint64_t src, dst, sport, dport, proto, flags, rule;
    if (!(s >> src >> dst >> sport >> dport >> proto >> flags >> rule)) continue;
    out.push_back({FiveTuple{uint32_t(src), uint32_t(dst), uint16_t(sport), uint16_t(dport),
                             uint8_t(proto)},
                   uint32_t(rule)});
  }
  return out;
}

using Rng = SplitMix64;  // reproducible test data, the same on every platform

// A value of a field for a header drawn from a rule: mostly inside [lo, hi], sometimes on its
// ends or just outside them (where interval boundaries are easy to get wrong).
inline uint32_t near_range(Rng& rng, uint32_t lo, uint32_t hi, uint32_t max) {
  uint32_t pick = rng.in(0, 19);
  if (pick < 12) return rng.in(lo, hi);
  if (pick < 15) return lo;
  if (pick < 18) return hi;
  if (pick == 18) return lo == 0 ? lo : lo - 1;
  return hi == max ? hi : hi + 1;
}

// `count` headers: 3/4 drawn from random rules (near_range per field), 1/4 uniform random
// (protocol mostly TCP/UDP/ICMP). Deterministic in `seed`.
inline std::vector<FiveTuple> generate_headers(const std::vector<FiveTupleRule>& rules,
                                               size_t count, uint64_t seed) {
  Rng rng(seed);
  std::vector<FiveTuple> out;
  out.reserve(count);
  const uint8_t common_protos[] = {kProtoTcp, kProtoUdp, kProtoIcmp, kProtoTcp};
  for (size_t i = 0; i < count; ++i) {
    FiveTuple t;
    if (!rules.empty() && i % 4 != 3) {
      const FiveTupleRule& r = rules[rng.in(0, uint32_t(rules.size() - 1))];
      t.src_addr = near_range(rng, FiveTupleRule::first_address(r.src),
                              FiveTupleRule::last_address(r.src), 0xFFFFFFFFu);
      t.dst_addr = near_range(rng, FiveTupleRule::first_address(r.dst),
                              FiveTupleRule::last_address(r.dst), 0xFFFFFFFFu);
      t.src_port = uint16_t(near_range(rng, r.src_port_lo, r.src_port_hi, 0xFFFF));
      t.dst_port = uint16_t(near_range(rng, r.dst_port_lo, r.dst_port_hi, 0xFFFF));
      t.proto = r.any_proto ? uint8_t(rng.in(0, 255)) : r.proto;
      if (rng.in(0, 31) == 0) t.proto = uint8_t(t.proto + 1);
    } else {
      t.src_addr = uint32_t(rng.next());
      t.dst_addr = uint32_t(rng.next());
      t.src_port = uint16_t(rng.next());
      t.dst_port = uint16_t(rng.next());
      t.proto = rng.in(0, 7) == 0 ? uint8_t(rng.in(0, 255)) : common_protos[rng.in(0, 3)];
    }
    out.push_back(t);
  }
  return out;
}

// Ethernet + IPv4 + 20 bytes of L4 header carrying `t` (ports only meaningful for TCP/UDP).
// `frag_offset` in 8-byte units: non-zero makes a non-first fragment.
inline std::vector<uint8_t> ipv4_frame(const FiveTuple& t, uint16_t frag_offset = 0) {
  std::vector<uint8_t> f(14, 0x02);
  f[12] = 0x08;
  f[13] = 0x00;
  auto push16 = [&](uint16_t v) { f.push_back(uint8_t(v >> 8)), f.push_back(uint8_t(v)); };
  auto push32 = [&](uint32_t v) { push16(uint16_t(v >> 16)), push16(uint16_t(v)); };
  f.push_back(0x45);
  f.push_back(0);
  push16(40);
  push16(1);
  push16(frag_offset & 0x1FFF);
  f.push_back(64);
  f.push_back(t.proto);
  push16(0);  // the firewall does not check the header checksum
  push32(t.src_addr);
  push32(t.dst_addr);
  push16(t.src_port);
  push16(t.dst_port);
  if (t.proto == kProtoUdp) {
    push16(20);  // UDP length
    push16(0);
    for (int i = 0; i < 12; ++i) f.push_back(0);
  } else {
    push32(0);
    push32(0);
    f.push_back(0x50);  // TCP data offset: 5 words
    for (int i = 0; i < 7; ++i) f.push_back(0);
  }
  return f;
}

// The tuple the firewall sees in ipv4_frame(t, frag_offset): no ports unless TCP/UDP and a
// first fragment.
inline FiveTuple as_seen(FiveTuple t, uint16_t frag_offset = 0) {
  if ((t.proto != kProtoTcp && t.proto != kProtoUdp) || frag_offset != 0) {
    t.src_port = 0;
    t.dst_port = 0;
  }
  return t;
}

}  // namespace gpunfv::fwtest
