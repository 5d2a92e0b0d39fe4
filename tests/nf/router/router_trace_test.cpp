// The bundled example route table against the bundled SIP trace: most packets route, a few
// have no route (example.routes leaves some destinations out on purpose).
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <array>
#include <cstring>
#include <filesystem>

#include "core/config_node.h"
#include "core/parse.h"
#include "nf/router/router.h"
#include "nf/router/router_logic.h"

namespace gpunfv {
namespace {

TEST(RouterTrace, ExampleRoutesOnSipTrace) {
  const std::string trace = GPUNFV_SOURCE_DIR "/data/traces/SIP_CALL_RTP_G711.pcap";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << trace << " not present";

  auto router = Router::from_config(
      ConfigNode(YAML::Load("name: r1\nroutes: example.routes\n"),
                 GPUNFV_SOURCE_DIR "/data/router/chain.yaml"),
      [](const std::string& name) -> std::optional<uint16_t> {
        if (name == "p1") return 1;
        if (name == "p2") return 2;
        return std::nullopt;
      });

  char err[PCAP_ERRBUF_SIZE];
  pcap_t* pcap = pcap_open_offline(trace.c_str(), err);
  ASSERT_NE(pcap, nullptr) << err;
  Batch batch(256, 2048, MemoryKind::host);
  std::array<uint64_t, kMaxDropReasons> verdicts{};
  std::array<uint64_t, 3> by_port{};
  bool more = true;
  while (more) {
    BatchView v = batch.view();
    uint32_t n = 0;
    pcap_pkthdr* hdr;
    const u_char* bytes;
    while (n < batch.capacity() && (more = pcap_next_ex(pcap, &hdr, &bytes) == 1)) {
      ASSERT_LE(hdr->caplen, batch.stride());
      std::memcpy(v.data.framework_data() + size_t(n) * v.stride, bytes, hdr->caplen);
      v.len[n] = uint16_t(hdr->caplen);
      v.out_port[n] = kNoPort;
      v.next_nf[n] = 0;
      PacketRef p(v, n);
      v.verdict[n] = uint8_t(parse_headers(p.frame(), v.headers[n]));
      ++n;
    }
    batch.set_count(n);
    v = batch.view();
    router->process(v, 0, n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      ++verdicts[v.verdict[i]];
      if (v.verdict[i] == uint8_t(DropReason::none)) ++by_port.at(v.out_port[i]);
    }
  }
  pcap_close(pcap);

  // 4,269 packets: 4,105 IPv4, of which 6 go to destinations without a route.
  EXPECT_EQ(verdicts[size_t(DropReason::not_ipv4)], 164u);
  EXPECT_EQ(verdicts[size_t(drop_reason(RouterDrop::no_route))], 6u);
  EXPECT_EQ(verdicts[size_t(DropReason::none)], 4099u);
  EXPECT_GT(by_port[1], 0u);
  EXPECT_GT(by_port[2], 0u);
}

}  // namespace
}  // namespace gpunfv
