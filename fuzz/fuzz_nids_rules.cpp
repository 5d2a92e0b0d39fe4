// NIDS rule files: the input as Snort/Suricata rule text (add_rules_text, which the file
// reader feeds after zlib). Bad lines are skipped and counted, never an error. Checked: every
// line is accounted (loaded + skipped = active rule lines), every loaded rule is an alert rule
// with a content that is not negated, sids are distinct; and the NIDS built from the set fires
// each rule on a payload made of that rule's own contents.
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/parse.h"
#include "fuzz/fuzz_util.h"
#include "nf/nids/nids.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

// Ethernet + IPv4 + UDP carrying `payload` (the NIDS payload is what follows the UDP header).
std::vector<uint8_t> udp_frame(const std::string& payload) {
  const uint32_t ip_len = 20 + 8 + uint32_t(payload.size());
  std::vector<uint8_t> f(14 + ip_len, 0);
  f[12] = 0x08;
  f[14] = 0x45;
  f[16] = uint8_t(ip_len >> 8);
  f[17] = uint8_t(ip_len);
  f[22] = 64;
  f[23] = kProtoUdp;
  std::memcpy(f.data() + 42, payload.data(), payload.size());
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  RuleSet set;
  add_rules_text(set, std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.rules");
  FUZZ_CHECK(set.stats.loaded == set.rules.size());
  FUZZ_CHECK(set.stats.loaded + set.stats.skipped_total() == set.stats.rule_lines);
  std::set<std::pair<uint32_t, uint32_t>> sids;
  for (const Rule& r : set.rules) {
    FUZZ_CHECK(r.action == "alert" && !r.noalert);
    bool has_content = false;
    for (const RuleContent& c : r.contents) has_content |= !c.negated && !c.bytes.empty();
    FUZZ_CHECK(has_content);
    FUZZ_CHECK(sids.insert({r.gid, r.sid}).second);
  }
  if (set.rules.empty() || set.rules.size() > 64) return 0;

  // Each rule's own contents, one after another: a payload on which it must fire.
  std::vector<std::vector<uint8_t>> frames;
  for (const Rule& r : set.rules) {
    std::string payload;
    for (const RuleContent& c : r.contents)
      if (!c.negated) payload += c.bytes;
    if (payload.size() > 1400) payload.clear();
    frames.push_back(udp_frame(payload));
  }
  Nids::Options options;
  options.max_automaton_bytes = 64u << 20;
  std::unique_ptr<Nids> nids;
  try {
    nids = std::make_unique<Nids>("ids", std::move(set), options);
  } catch (const std::length_error&) {
    return 0;  // an automaton past max_automaton_mb: an error at the config line
  }
  OneNfChain chain(std::move(nids));
  auto batch = make_batch(frames, 1536, kNidsResultBytes);
  const BatchView v = batch->view();
  chain.run(v);
  check_accounted(v);
  for (uint32_t i = 0; i < v.count; ++i) {
    FUZZ_CHECK(v.verdict[i] == uint8_t(DropReason::none));
    if (frames[i].size() == 42) continue;  // contents too long for one frame
    NidsResult got = NidsResult::load(v.results.framework_data() + size_t(i) * kNidsResultBytes);
    bool fired = false;
    for (uint32_t k = 0; k < got.kept(); ++k) fired |= got.rules[k] == i;
    FUZZ_CHECK(fired || (got.fired > kNidsRulesPerPacket && got.rules[kNidsRulesPerPacket - 1] < i));
  }
  return 0;
}
