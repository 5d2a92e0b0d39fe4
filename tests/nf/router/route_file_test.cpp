#include "nf/router/route_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "core/error.h"

namespace gpunfv {
namespace {

namespace fs = std::filesystem;

class RouteFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpunfv_route_file_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string write_gz(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    gzFile out = gzopen(path.c_str(), "wb");
    gzwrite(out, text.data(), unsigned(text.size()));
    gzclose(out);
    return path;
  }

  // Reads `text` as a route file and returns the ConfigError's message ("" if none).
  std::string route_error(const std::string& text) {
    path_ = write("bad.routes", text);
    try {
      read_route_file(path_, port_id_of);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
  std::string prefix_error(const std::string& text) {
    path_ = write("bad.txt", text);
    try {
      read_prefix_file(path_);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
  // Expects `message` to start with "<path>:<line>: " and to contain `what`.
  void expect_at(const std::string& message, int line, const std::string& what) {
    std::string head = path_ + ":" + std::to_string(line) + ": ";
    EXPECT_EQ(message.rfind(head, 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }

  static std::optional<uint16_t> port_id_of(const std::string& name) {
    if (name == "p1") return 4;
    if (name == "p2") return 9;
    return std::nullopt;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(RouteFile, ReadsRoutesCommentsAndBlankLines) {
  std::string path = write("ok.routes",
                           "# header comment\n"
                           "\n"
                           "10.0.0.0/8 p2   # trailing comment\n"
                           "  10.1.0.0/16\tp1\r\n"
                           "0.0.0.0/0 p2\n"
                           "192.0.2.1/32 p1");  // no final newline
  RouteTable t = read_route_file(path, port_id_of);
  ASSERT_EQ(t.routes.size(), 4u);
  EXPECT_EQ(t.routes[0].prefix, (Ipv4Prefix{0x0A000000, 8}));
  EXPECT_EQ(t.routes[1].prefix, (Ipv4Prefix{0x0A010000, 16}));
  EXPECT_EQ(t.routes[2].prefix, (Ipv4Prefix{0, 0}));
  EXPECT_EQ(t.routes[3].prefix, (Ipv4Prefix{0xC0000201, 32}));
  // Next hops number the ports in order of first appearance.
  EXPECT_EQ(t.routes[0].next_hop, 0u);
  EXPECT_EQ(t.routes[1].next_hop, 1u);
  EXPECT_EQ(t.routes[2].next_hop, 0u);
  EXPECT_EQ(t.routes[3].next_hop, 1u);
  EXPECT_EQ(t.next_hop_names, (std::vector<std::string>{"p2", "p1"}));
  EXPECT_EQ(t.next_hop_ports, (std::vector<uint16_t>{9, 4}));
}

TEST_F(RouteFile, BadPrefix) {
  expect_at(route_error("10.0.0.0/8 p1\n\n10.0.0/16 p1\n"), 3, "bad prefix '10.0.0/16'");
  expect_at(route_error("10.0.0.0/33 p1\n"), 1, "bad prefix");
  expect_at(route_error("256.0.0.0/8 p1\n"), 1, "bad prefix");
  expect_at(route_error("p1 10.0.0.0/8\n"), 1, "bad prefix 'p1'");
}

TEST_F(RouteFile, HostBitsSet) {
  expect_at(route_error("# x\n10.1.0.0/8 p1\n"), 2, "host bits set (did you mean 10.0.0.0/8?)");
}

TEST_F(RouteFile, MissingNextHop) {
  expect_at(route_error("10.0.0.0/8 p1\n10.1.0.0/16   # p2\n"), 2, "missing next hop");
}

TEST_F(RouteFile, UnknownPort) {
  expect_at(route_error("10.0.0.0/8 p1\n10.1.0.0/16 p3\n"), 2, "unknown port 'p3'");
}

TEST_F(RouteFile, ExtraField) {
  expect_at(route_error("10.0.0.0/8 p1 metric 10\n"), 1, "unexpected 'metric'");
}

TEST_F(RouteFile, DuplicatePrefix) {
  expect_at(route_error("10.0.0.0/8 p1\n10.0.0.0/16 p1\n10.0.0.0/8 p2\n"), 3,
            "duplicate route 10.0.0.0/8 (first at line 1)");
}

TEST_F(RouteFile, MissingFileNamesTheFile) {
  std::string path = (dir_ / "nope.routes").string();
  try {
    read_route_file(path, port_id_of);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind(path + ": cannot open route file", 0), 0u) << m;
  }
  EXPECT_THROW(read_prefix_file(path), ConfigError);
  EXPECT_THROW(read_prefix_file(dir_.string()), ConfigError);  // a folder: unreadable
}

TEST_F(RouteFile, PrefixListPlainAndGzipped) {
  std::string text = "# table\n1.0.0.0/24\n\n1.0.4.0/22\r\n10.0.0.0/8 # c\n";
  auto plain = read_prefix_file(write("t.txt", text));
  auto gz = read_prefix_file(write_gz("t.txt.gz", text));
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(plain, gz);
  EXPECT_EQ(plain[1], (Ipv4Prefix{0x01000400, 22}));
}

TEST_F(RouteFile, PrefixListErrors) {
  expect_at(prefix_error("1.0.0.0/24\n1.0.4.0/22 p1\n"), 2, "unexpected 'p1'");
  expect_at(prefix_error("1.0.0.0/24\n1.0.4.1/22\n"), 2, "host bits set");
  expect_at(prefix_error("1.0.0.0/24\n\n1.0.0.0/24\n"), 3, "duplicate route");
}

TEST_F(RouteFile, GzippedRouteFileWithNextHops) {
  RouteTable t = read_route_file(write_gz("r.gz", "10.0.0.0/8 p1\n"), port_id_of);
  ASSERT_EQ(t.routes.size(), 1u);
  EXPECT_EQ(t.next_hop_ports, (std::vector<uint16_t>{4}));
}

TEST(RouteFileSpread, Fnv1aOfPrefixBytes) {
  // Values from an independent FNV-1a implementation over (a, b, c, d, len).
  EXPECT_EQ(fnv1a_32_prefix(Ipv4Prefix{0, 0}), 0x1210d00fu);
  EXPECT_EQ(fnv1a_32_prefix(Ipv4Prefix{0x01000000, 24}), 0xe369ae14u);
  EXPECT_EQ(fnv1a_32_prefix(Ipv4Prefix{0x0A000000, 8}), 0xcc999115u);
  EXPECT_EQ(fnv1a_32_prefix(Ipv4Prefix{0xC0A80100, 24}), 0x3bba9f04u);
  EXPECT_EQ(spread_index(Ipv4Prefix{0x01000000, 24}, 2), 0u);
  auto routes = spread_routes({Ipv4Prefix{0x0A000000, 8}, Ipv4Prefix{0xC0A80100, 24}}, 3);
  EXPECT_EQ(routes[0].next_hop, 0xcc999115u % 3);
  EXPECT_EQ(routes[1].next_hop, 0x3bba9f04u % 3);
}

TEST(RouteFileBundled, DataFilesLoad) {
  const std::string dir = GPUNFV_SOURCE_DIR "/data/router/";
  EXPECT_EQ(read_prefix_file(dir + "bart_ipv4_random5000.txt").size(), 5000u);
  EXPECT_EQ(read_prefix_file(dir + "bart_ipv4_subset_1-2_slash8.txt").size(), 5029u);
  RouteTable example = read_route_file(dir + "example.routes", [](const std::string& name) {
    return name == "p1" ? std::optional<uint16_t>(0)
                        : name == "p2" ? std::optional<uint16_t>(1) : std::nullopt;
  });
  EXPECT_GE(example.routes.size(), 5u);
  EXPECT_EQ(example.next_hop_names.size(), 2u);
}

}  // namespace
}  // namespace gpunfv
