// The NIDS's per-packet path: single-content rules and frames, both from the input, through
// ingress classification and the Nids (Aho-Corasick DFA) on the CPU backend, checked packet by
// packet against a naive substring search of each rule's content in the payload.
//
// Input: a rule count byte (1 to 16 rules), per rule a byte (bits 0-2: content length - 1,
// bit 3: nocase) and 8 content bytes; the rest is frames. The rules go through the rule parser
// as text (content as |hex|).
#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "core/parse.h"
#include "fuzz/fuzz_util.h"
#include "nf/nids/nids.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

constexpr uint32_t kStride = 512;

uint8_t fold(uint8_t c) { return c >= 'A' && c <= 'Z' ? uint8_t(c + 32) : c; }

bool occurs(const std::vector<uint8_t>& hay, const std::vector<uint8_t>& needle, bool nocase) {
  if (needle.size() > hay.size()) return false;
  for (size_t at = 0; at + needle.size() <= hay.size(); ++at) {
    size_t k = 0;
    while (k < needle.size() &&
           (nocase ? fold(hay[at + k]) == fold(needle[k]) : hay[at + k] == needle[k]))
      ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  struct Content {
    std::vector<uint8_t> bytes;
    bool nocase;
  };
  std::vector<Content> contents;
  std::string text;
  const uint32_t count = in.u8() % 16 + 1;
  for (uint32_t k = 0; k < count; ++k) {
    uint8_t spec = in.u8();
    std::vector<uint8_t> bytes = in.bytes(8);
    bytes.resize((spec & 7) + 1u, 'a');
    contents.push_back({bytes, (spec & 8) != 0});
    text += "alert tcp any any -> any any (msg:\"r" + std::to_string(k) + "\"; content:\"|";
    for (uint8_t c : bytes) text += fmt::format("{:02x} ", c);
    text += "|\";";
    if (spec & 8) text += " nocase;";
    text += " sid:" + std::to_string(k + 1) + ";)\n";
  }
  RuleSet set;
  add_rules_text(set, text, "fuzz.rules");
  FUZZ_CHECK(set.rules.size() == count);  // every rule written above is a valid one
  for (uint32_t k = 0; k < count; ++k) {
    FUZZ_CHECK(set.rules[k].contents.size() == 1);
    FUZZ_CHECK(set.rules[k].contents[0].bytes ==
               std::string(contents[k].bytes.begin(), contents[k].bytes.end()));
    FUZZ_CHECK(set.rules[k].contents[0].nocase == contents[k].nocase);
  }
  // Matching keeps no per-packet state: the NIDS built for the previous input serves again while
  // the rule bytes are the same (most mutations change only the frames).
  static std::string cached_key;
  static std::unique_ptr<OneNfChain> cached;
  const std::string key(reinterpret_cast<const char*>(data), size - in.left());
  if (!cached || key != cached_key) {
    cached.reset();
    cached = std::make_unique<OneNfChain>(std::make_unique<Nids>("ids", std::move(set), Nids::Options{}));
    cached_key = key;
  }
  const OneNfChain& chain = *cached;

  const auto frames = read_frames(in, 32, 600);
  auto batch = make_batch(frames, kStride, kNidsResultBytes);
  const BatchView v = batch->view();
  chain.run(v);
  check_accounted(v);

  for (uint32_t i = 0; i < v.count; ++i) {
    const std::vector<uint8_t>& f = frames[i];
    PacketHeaders h{};
    DropReason parsed = f.size() > kStride
                            ? DropReason::oversize
                            : parse_headers(IsoSpan<const uint8_t>(f.data(), f.size()), h);
    FUZZ_CHECK(DropReason(v.verdict[i]) == parsed);  // action alert: the NIDS drops nothing
    if (parsed != DropReason::none) continue;
    PayloadRange pr = nids_payload(IsoSpan<const uint8_t>(f.data(), f.size()), h);
    FUZZ_CHECK(pr.offset + pr.length <= f.size());
    std::vector<uint8_t> payload(f.begin() + pr.offset, f.begin() + pr.offset + pr.length);
    NidsResult want;
    for (uint32_t k = 0; k < count; ++k)
      if (occurs(payload, contents[k].bytes, contents[k].nocase)) want.add(k);
    NidsResult got = NidsResult::load(v.results.framework_data() + size_t(i) * kNidsResultBytes);
    FUZZ_CHECK(got.fired == want.fired);
    for (uint32_t k = 0; k < kNidsRulesPerPacket; ++k) FUZZ_CHECK(got.rules[k] == want.rules[k]);
  }
  return 0;
}
