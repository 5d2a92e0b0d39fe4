#include "telemetry/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace gpunfv {
namespace {

// One HTTP/1.0 GET on 127.0.0.1:port; the whole response, headers included.
std::string http_get(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return "";
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  if (write(fd, req.data(), req.size()) != ssize_t(req.size())) {
    close(fd);
    return "";
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(fd);
  return out;
}

MetricsSnapshot snapshot(uint64_t rx) {
  MetricsSnapshot m;
  PortSample p;
  p.name = "in";
  p.rx_packets = rx;
  m.ports = {p};
  return m;
}

TEST(MetricsBoard, LiveThenFinal) {
  MetricsBoard board;
  EXPECT_FALSE(board.current());
  std::atomic<int> calls{0};
  board.set_live([&] {
    ++calls;
    return snapshot(5);
  });
  EXPECT_EQ(board.current()->ports[0].rx_packets, 5u);
  MetricsSnapshot fin = snapshot(9);
  fin.finished = true;
  board.set_final(fin);
  EXPECT_EQ(board.current()->ports[0].rx_packets, 9u);
  EXPECT_TRUE(board.current()->finished);
  EXPECT_EQ(calls.load(), 1);  // the live source is not called once the final figures are set
}

TEST(MetricsServer, ServesTheBoardInPrometheusFormat) {
  MetricsBoard board;
  MetricsServer server("127.0.0.1", 0, board);
  ASSERT_GT(server.port(), 0);
  EXPECT_NE(http_get(server.port(), "/metrics").find("503"), std::string::npos);  // not started
  board.set_final(snapshot(42));
  const std::string r = http_get(server.port(), "/metrics");
  EXPECT_NE(r.find("200 OK"), std::string::npos) << r;
  EXPECT_NE(r.find("text/plain; version=0.0.4"), std::string::npos) << r;
  EXPECT_NE(r.find("\ngpunfv_port_rx_packets_total{port=\"in\"} 42\n"), std::string::npos) << r;
  EXPECT_NE(http_get(server.port(), "/nothing").find("404"), std::string::npos);
}

TEST(MetricsServer, AnAddressInUseIsAnError) {
  MetricsBoard board;
  MetricsServer first("127.0.0.1", 0, board);
  try {
    MetricsServer second("127.0.0.1", first.port(), board);
    FAIL() << "bound a port already in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:" + std::to_string(first.port())),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(MetricsServer("192.0.2.1", 9464, board), std::runtime_error);  // not this host's
}

}  // namespace
}  // namespace gpunfv
