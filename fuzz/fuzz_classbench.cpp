// Firewall rule files (ClassBench format): the input as rule text (parse_classbench; the file
// reader adds only zlib). ConfigError is the expected answer to a bad file. Accepted rules must
// be well formed (prefixes without host bits, ordered port ranges), and the firewall built from
// them must classify as a linear first-match scan does, at each rule's corners.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "nf/firewall/bitvector_classifier.h"
#include "nf/firewall/classbench_file.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<ClassBenchRule> rules;
  try {
    rules = parse_classbench(std::string_view(reinterpret_cast<const char*>(data), size),
                             "fuzz.rules", 256);
  } catch (const ConfigError&) {
    return 0;
  }
  FUZZ_CHECK(rules.size() <= 256);
  const std::vector<FiveTupleRule> match = match_parts(rules);
  for (const FiveTupleRule& r : match) {
    for (const Ipv4Prefix& p : {r.src, r.dst})
      FUZZ_CHECK(p.len <= 32 && (p.len == 32 || (p.addr & (0xFFFFFFFFu >> p.len)) == 0));
    FUZZ_CHECK(r.src_port_lo <= r.src_port_hi && r.dst_port_lo <= r.dst_port_hi);
  }
  std::unique_ptr<BitVectorClassifier> c;
  try {
    c = std::make_unique<BitVectorClassifier>(match);
  } catch (const std::length_error&) {
    return 0;  // tables past the classifier's limit: the firewall's error at the config line
  }
  const BitVectorClassifierRef ref = c->ref();
  for (const FiveTupleRule& r : match)
    for (int corner = 0; corner < 4; ++corner) {
      FiveTuple t;
      t.src_addr = corner & 1 ? FiveTupleRule::last_address(r.src) : r.src.addr;
      t.dst_addr = corner & 2 ? FiveTupleRule::last_address(r.dst) : r.dst.addr;
      t.src_port = corner & 1 ? r.src_port_hi : r.src_port_lo;
      t.dst_port = corner & 2 ? r.dst_port_lo : r.dst_port_hi;
      t.proto = r.any_proto ? uint8_t(corner * 7) : r.proto;
      FUZZ_CHECK(ref.classify(t) == first_match_linear(match, t));
      t.dst_port = uint16_t(t.dst_port + 1);
      t.src_addr = t.src_addr - 1;
      FUZZ_CHECK(ref.classify(t) == first_match_linear(match, t));
    }
  return 0;
}
