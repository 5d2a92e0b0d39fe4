// Control socket requests (cli/control_commands.h): each input line is one request, run
// against a loaded router + firewall configuration. Every reply must be an object with a
// boolean "ok" (and an "error" string when false); after each request the router's live table
// must answer as a longest-prefix match over its route set, so an accepted or refused update
// never leaves a torn or stale table. Files a request names are the scratch folder's only.
#include <cstdint>
#include <sstream>
#include <string>

#include "cli/control_commands.h"
#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "nf/router/router.h"

using namespace gpunfv;
using namespace gpunfv::fuzz;

namespace {

struct Loaded {
  RuntimeConfig rc;
  int stops = 0;
  std::unique_ptr<ControlCommands> commands;
  Loaded() {
    write_file("r.routes", "10.0.0.0/8 p1\n10.1.0.0/16 p2\n10.1.2.128/25 p1\n");
    write_file("fw.rules", "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF 0x0000/0x0000 accept\n");
    write_file("new.routes", "192.168.0.0/16 p2\n10.0.0.0/8 p2\n");
    write_file("bad.routes", "10.0.0.0/8 p2\n10.1.0.0/33 p1\n");
    rc = load_runtime_config(write_file("c.yaml",
        "ports:\n  - {name: gen, type: generator, count: 1, dst_from: r1}\n"
        "  - {name: p1, type: discard}\n  - {name: p2, type: discard}\n"
        "nfs:\n  - {name: fw, type: firewall, rules: fw.rules, max_rules: 16}\n"
        "  - {name: r1, type: router, routes: r.routes}\n"
        "chains:\n  - {from: gen, path: [fw, r1]}\n"
        "settings: {max_input_file_mb: 1}\n"));
    commands = std::make_unique<ControlCommands>(rc, [this] { ++stops; });
  }
};

uint32_t mask_of(uint8_t len) { return len == 0 ? 0 : 0xFFFFFFFFu << (32 - len); }

// The live table against a linear longest-prefix match, at each route's first and last address
// and just outside it.
void check_router(const Router& r) {
  const std::vector<Route> routes = r.live().routes();
  auto linear = [&](uint32_t a) -> int64_t {
    int best = -1;
    int64_t hop = -1;
    for (const Route& rt : routes)
      if ((a & mask_of(rt.prefix.len)) == rt.prefix.addr && int(rt.prefix.len) > best)
        best = rt.prefix.len, hop = rt.next_hop;
    return hop;
  };
  const Dir24_8Ref t = r.table().ref();
  for (const Route& rt : routes) {
    const uint32_t last = rt.prefix.addr | ~mask_of(rt.prefix.len);
    for (uint32_t a : {rt.prefix.addr, last, rt.prefix.addr - 1, last + 1}) {
      const LpmResult got = t.lookup(a);
      FUZZ_CHECK((got.found ? int64_t(got.next_hop) : -1) == linear(a));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Loaded l;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Paths in requests stay in the scratch folder.
  if (text.find('/') != std::string::npos && text.find("..") != std::string::npos) return 0;
  std::istringstream lines(text);
  std::string line;
  const Router& router = dynamic_cast<const Router&>(*l.rc.nfs[1]);
  while (std::getline(lines, line)) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    if (request.is_discarded()) continue;
    if (request.is_object() && request.contains("args") && request["args"].is_array()) {
      bool outside = false;
      for (const auto& a : request["args"])
        outside = outside || (a.is_string() && a.get<std::string>().find('/') != std::string::npos &&
                              a.get<std::string>()[0] == '/');
      if (outside) continue;  // absolute paths: files outside the scratch folder
    }
    const std::filesystem::path cwd = std::filesystem::current_path();
    std::filesystem::current_path(scratch_dir());
    const nlohmann::json reply = l.commands->execute(request);
    std::filesystem::current_path(cwd);
    FUZZ_CHECK(reply.is_object() && reply.contains("ok") && reply["ok"].is_boolean());
    if (!reply["ok"].get<bool>())
      FUZZ_CHECK(reply.contains("error") && reply["error"].is_string() &&
                 !reply["error"].get<std::string>().empty());
    check_router(router);
  }
  return 0;
}
