#include "cli/control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/control_commands.h"

namespace gpunfv {

namespace {

// A reply may take a while (a full routing table diffed and applied), never for ever.
constexpr int kReplyTimeoutMs = 600 * 1000;

std::string absolute(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.string();
}

// Which words of the command are files (made absolute): a table command's file arguments.
std::vector<std::string> with_absolute_files(std::vector<std::string> w) {
  if (w.size() == 3 && w[0] == "routes" && !looks_like_prefix(w[2])) w[2] = absolute(w[2]);
  if (w.size() == 3 && w[0] == "firewall" && w[1] == "replace") w[2] = absolute(w[2]);
  if (w.size() >= 3 && w[0] == "nids" && w[1] == "replace")
    for (size_t i = 2; i < w.size(); ++i) w[i] = absolute(w[i]);
  return w;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "gpunfv ctl: error: %s\n", why.c_str());
  return 1;
}

}  // namespace

int run_ctl(const std::string& socket_path, const std::vector<std::string>& words,
            const std::string& nf) {
  if (words.empty()) {
    std::fprintf(stderr, "gpunfv ctl: a command is needed (stats, routes, firewall, nids, reload, stop)\n");
    return 2;
  }
  if (socket_path.size() > 107) return fail(socket_path + ": socket path longer than 107 bytes");
  const std::vector<std::string> w = with_absolute_files(words);
  nlohmann::json request = {{"cmd", w[0]}, {"args", std::vector<std::string>(w.begin() + 1, w.end())}};
  if (!nf.empty()) request["nf"] = nf;

  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(std::string("socket: ") + std::strerror(errno));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, socket_path.c_str(), socket_path.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return fail("cannot connect to " + socket_path + ": " + why);
  }
  const std::string line = request.dump() + "\n";
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) != ssize_t(line.size())) {
    close(fd);
    return fail("cannot send to " + socket_path);
  }
  std::string reply;
  char chunk[4096];
  while (reply.find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, kReplyTimeoutMs);
    if (ready == 0) {
      close(fd);
      return fail("no reply from " + socket_path + " in " + std::to_string(kReplyTimeoutMs / 1000) + " s");
    }
    const ssize_t n = ready < 0 ? -1 : recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return fail("the connection to " + socket_path + " closed without a reply");
    }
    reply.append(chunk, size_t(n));
  }
  close(fd);
  const nlohmann::json j = nlohmann::json::parse(reply.substr(0, reply.find('\n')), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("not a reply: " + reply);
  if (!j.value("ok", false)) {
    std::printf("%s\n", j.dump(2).c_str());
    return fail(j.value("error", std::string("refused")));
  }
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}

}  // namespace gpunfv
