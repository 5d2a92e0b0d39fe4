// `ipsec sa add|del` through the control commands on a loaded configuration: the fields are
// read as the configuration's SA entries are, as FIELD=VALUE words or one JSON object; refused
// changes name what was wrong, never a key, and keep the live SA table.
#include <gtest/gtest.h>

#include "cli/control_commands.h"
#include "config/config.h"
#include "nf/ipsec/ipsec.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::temp_dir;
using testing::write_file;

constexpr const char* kEnc = "00112233445566778899aabbccddeeff01020304";
constexpr const char* kAuth = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3";
constexpr const char* kNewEnc = "f0e1d2c3b4a5968778695a4b3c2d1e0f0a0b0c0d";
constexpr const char* kNewAuth = "5f4e3d2c1b0a99887766554433221100ffeeddcc";

struct Loaded {
  RuntimeConfig rc;
  ControlCommands commands;
  explicit Loaded(const std::string& name) : rc(load(name)), commands(rc, [] {}) {}
  static RuntimeConfig load(const std::string& name) {
    const auto dir = temp_dir(name);
    write_file(dir / "empty.rules", "");
    const std::string sa = std::string("{spi: 0x1000, enc_key: ") + kEnc + ", auth_key: " + kAuth +
                           ", local: 198.51.100.1, remote: 203.0.113.1";
    return load_runtime_config(write_file(dir / "c.yaml",
        "ports:\n"
        "  - {name: gen, type: generator, count: 10}\n"
        "  - {name: p1, type: discard}\n"
        "nfs:\n"
        "  - {name: fw, type: firewall, rules: empty.rules}\n"
        "  - {name: out, type: ipsec, direction: outbound, sas: [" + sa + ", match: 0.0.0.0/0}]}\n"
        "  - {name: in, type: ipsec, direction: inbound, sas: [" + sa + "}]}\n"
        "chains:\n"
        "  - {from: gen, path: [fw, out, in], to: p1}\n"));
  }
  nlohmann::json ipsec(const std::vector<std::string>& args) {
    return commands.execute({{"cmd", "ipsec"}, {"args", args}});
  }
  IpsecGateway& gw(size_t k) { return dynamic_cast<IpsecGateway&>(*rc.nfs[k]); }
  // The reply's error, checked for the keys of the configuration and of the commands.
  std::string error(const std::vector<std::string>& args) {
    const nlohmann::json r = ipsec(args);
    EXPECT_EQ(r["ok"], false);
    const std::string text = r.dump();
    for (const char* key : {kEnc, kAuth, kNewEnc, kNewAuth})
      EXPECT_EQ(text.find(std::string(key).substr(0, 16)), std::string::npos) << text;
    return r.value("error", std::string());
  }
};

std::vector<std::string> add(const std::string& nf, std::vector<std::string> fields) {
  fields.insert(fields.begin(), {"sa", "add", nf});
  return fields;
}

const std::string kFields[] = {std::string("enc_key=") + kNewEnc, std::string("auth_key=") + kNewAuth,
                               "local=198.51.100.1", "remote=203.0.113.9"};

TEST(ControlIpsec, AddAndDeleteWithFieldWordsOrJson) {
  Loaded l("ctl-ipsec-add");
  nlohmann::json r = l.ipsec(add("out", {"spi=0x2000", kFields[0], kFields[1], kFields[2], kFields[3],
                                         "match=10.0.0.0/8"}));
  ASSERT_EQ(r["ok"], true) << r.dump();
  EXPECT_EQ(r["table_version"], 2);
  EXPECT_EQ(r["sas"], 2);
  EXPECT_EQ(r.dump().find(kNewEnc), std::string::npos);
  EXPECT_NE(l.gw(1).table().find_spi(0x2000), nullptr);
  EXPECT_EQ(l.gw(1).table_versions()->json()[1]["change"], "ipsec sa add 0x00002000");

  const nlohmann::json sa = {{"spi", 12288}, {"enc_key", kNewEnc}, {"auth_key", kNewAuth},
                             {"local", "203.0.113.9"}, {"remote", "198.51.100.1"}};
  r = l.ipsec({"sa", "add", "in", sa.dump()});
  ASSERT_EQ(r["ok"], true) << r.dump();
  EXPECT_NE(l.gw(2).table().find_spi(0x3000), nullptr);

  r = l.ipsec({"sa", "del", "out", "0x2000"});
  ASSERT_EQ(r["ok"], true) << r.dump();
  EXPECT_EQ(r["table_version"], 3);
  EXPECT_EQ(l.gw(1).table().find_spi(0x2000), nullptr);
  r = l.ipsec({"sa", "del", "in", "4096"});  // decimal
  ASSERT_EQ(r["ok"], true) << r.dump();
  EXPECT_EQ(l.gw(2).table().size(), 1u);

  // stats shows the SA count and the versions.
  const nlohmann::json stats = l.commands.execute({{"cmd", "stats"}});
  EXPECT_EQ(stats["nfs"][1]["sas"], 1);
  EXPECT_EQ(stats["nfs"][1]["table_version"], 3);
  EXPECT_EQ(stats["nfs"][1]["table_versions"].size(), 3u);
}

TEST(ControlIpsec, BadCommandsAreRefusedWithoutKeysAndChangeNothing) {
  Loaded l("ctl-ipsec-bad");
  const std::string spi = "spi=0x2000", match = "match=10.0.0.0/8";
  EXPECT_EQ(l.error(add("out", {"spi=0x1000", kFields[0], kFields[1], kFields[2], kFields[3], match})),
            "SPI 0x00001000 exists already (sa del it first)");
  EXPECT_EQ(l.error(add("out", {spi, "enc_key=00112233", kFields[1], kFields[2], kFields[3], match})),
            "ipsec sa add: enc_key: expected 40 hex digits (20 bytes: AES-128 key then the 4-byte "
            "RFC 3686 nonce)");
  EXPECT_EQ(l.error(add("out", {spi, kFields[0], std::string("auth_key=") + kNewAuth + "0", kFields[2],
                                kFields[3], match})),
            "ipsec sa add: auth_key: expected 40 hex digits (20 bytes: HMAC-SHA1-96 key)");
  EXPECT_EQ(l.error(add("out", {spi, kFields[0], kFields[1], "local=198.51.100", kFields[3], match})),
            "ipsec sa add: local: '198.51.100' is not an IPv4 address");
  EXPECT_EQ(l.error(add("out", {spi, kFields[0], kFields[1], kFields[2], kFields[3], "match=10.0.0.1/8"})),
            "ipsec sa add: match: '10.0.0.1/8' is not a prefix a.b.c.d/len (host bits zero)");
  EXPECT_EQ(l.error(add("out", {spi, kFields[0], kFields[1], kFields[2], kFields[3]})),
            "ipsec sa add: outbound SA 0x00002000: missing key 'match' (the destination prefix it "
            "protects)");
  EXPECT_EQ(l.error(add("out", {spi, kFields[0], kFields[1], kFields[2], kFields[3], "match=0.0.0.0/0"})),
            "match: SA 0x00001000 protects 0.0.0.0/0 already");
  // A key with its field name mistyped or missing is not echoed.
  EXPECT_EQ(l.error(add("out", {spi, std::string("enc-key=") + kNewEnc})),
            "unknown SA field (fields: spi, enc_key, auth_key, local, remote, match)");
  EXPECT_EQ(l.error(add("out", {spi, kNewEnc})),
            "SA fields are FIELD=VALUE words (fields: spi, enc_key, auth_key, local, remote, match)");
  EXPECT_EQ(l.error(add("out", {std::string("{\"spi\": 1, \"enc_key\": ") + kNewEnc + "}"})),
            "the SA is not a JSON object");
  EXPECT_EQ(l.error({"sa", "del", "out", "0x9999"}), "no SA with SPI 0x00009999");
  EXPECT_EQ(l.error({"sa", "del", "out", "x1"}), "'x1': not an SPI (a number, 0x for hex)");
  EXPECT_EQ(l.error({"sa", "del", "fw", "0x1000"}), "NF 'fw' is a firewall NF; this command is for ipsec NFs");
  EXPECT_EQ(l.error({"sa", "del", "nope", "0x1000"}), "no ipsec NF named 'nope'");
  EXPECT_NE(l.error({"sa", "list", "out"}).find("usage: ipsec sa add NF"), std::string::npos);
  for (size_t k : {1, 2}) {
    EXPECT_EQ(l.gw(k).table_version(), 1u);
    EXPECT_EQ(l.gw(k).table().size(), 1u);
  }
}

}  // namespace
}  // namespace gpunfv
