// The control commands on a loaded configuration (no run needed): replies say ok or why not,
// updates change the live tables, refused ones change nothing.
#include "cli/control_commands.h"

#include <gtest/gtest.h>

#include <atomic>

#include "config/config.h"
#include "nf/router/router.h"
#include "tests/chain/chain_test_util.h"

namespace gpunfv {
namespace {

using testing::temp_dir;
using testing::write_file;

struct Loaded {
  RuntimeConfig rc;
  std::atomic<int> stops{0};
  ControlCommands commands;
  std::string dir;
  explicit Loaded(const std::string& name)
      : rc(load(name)), commands(rc, [this] { ++stops; }), dir(temp_dir(name + "-files").string()) {}
  static RuntimeConfig load(const std::string& name) {
    const auto dir = temp_dir(name);
    write_file(dir / "r.routes", "10.0.0.0/8 p1\n");
    return load_runtime_config(write_file(dir / "c.yaml",
        "ports:\n"
        "  - {name: gen, type: generator, count: 10, dst_from: r1}\n"
        "  - {name: p1, type: discard}\n"
        "  - {name: p2, type: discard}\n"
        "nfs:\n"
        "  - {name: r1, type: router, routes: r.routes}\n"
        "chains:\n"
        "  - {from: gen, path: [r1]}\n"));
  }
  nlohmann::json run(const std::string& request) { return commands.execute(nlohmann::json::parse(request)); }
  std::string lookup(const char* addr) { return rc.nfs[0]->command(std::string("lookup ") + addr); }
};

TEST(ControlCommands, MalformedRequestsAreRefusedWithAReason) {
  Loaded l("ctl-malformed");
  for (const char* req : {"5", "[]", "{}", R"({"cmd": 1})", R"({"cmd": "stats", "args": "x"})",
                          R"({"cmd": "stats", "args": [1]})", R"({"cmd": "routes", "nf": 3})"}) {
    const nlohmann::json r = l.run(req);
    EXPECT_EQ(r["ok"], false) << req;
    EXPECT_FALSE(r["error"].get<std::string>().empty()) << req;
  }
  EXPECT_NE(l.run(R"({"cmd": "reboot"})")["error"].get<std::string>().find("unknown command"), std::string::npos);
}

TEST(ControlCommands, RoutesAddDeleteReplace) {
  Loaded l("ctl-routes");
  EXPECT_EQ(l.run(R"({"cmd": "routes", "args": ["add", "10.1.0.0/16", "p2"]})")["table_version"], 2);
  EXPECT_EQ(l.lookup("10.1.2.3"), "10.1.2.3 -> p2 (port 2)");
  EXPECT_EQ(l.lookup("10.2.2.3"), "10.2.2.3 -> p1 (port 1)");
  EXPECT_EQ(l.run(R"({"cmd": "routes", "args": ["del", "10.1.0.0/16"]})")["routes"], 1);
  EXPECT_EQ(l.lookup("10.1.2.3"), "10.1.2.3 -> p1 (port 1)");
  // replace of one route needs it to exist; a file replaces the whole table.
  EXPECT_EQ(l.run(R"({"cmd": "routes", "args": ["replace", "10.9.0.0/16", "p2"]})")["ok"], false);
  EXPECT_EQ(l.run(R"({"cmd": "routes", "args": ["replace", "10.0.0.0/8", "p2"]})")["ok"], true);
  EXPECT_EQ(l.lookup("10.2.2.3"), "10.2.2.3 -> p2 (port 2)");
  const std::string file = write_file(std::filesystem::path(l.dir) / "new.routes", "192.168.0.0/16 p1\n");
  const nlohmann::json r = l.run(nlohmann::json{{"cmd", "routes"}, {"args", {"replace", file}}}.dump());
  EXPECT_EQ(r["ok"], true) << r;
  EXPECT_EQ(r["routes"], 1);
  EXPECT_EQ(l.lookup("10.2.2.3"), "10.2.2.3: no route");
  EXPECT_EQ(l.lookup("192.168.1.1"), "192.168.1.1 -> p1 (port 1)");
}

TEST(ControlCommands, RefusedUpdatesChangeNothing) {
  Loaded l("ctl-refused");
  const std::string bad = write_file(std::filesystem::path(l.dir) / "bad.routes", "10.0.0.0/8 p2\n10.0.0.0 p2\n");
  for (const std::string& req :
       {nlohmann::json{{"cmd", "routes"}, {"args", {"replace", bad}}}.dump(),
        std::string(R"({"cmd": "routes", "args": ["add", "10.1.0.0/16", "gen"]})"),  // no tx side
        std::string(R"({"cmd": "routes", "args": ["add", "10.1.0.0/16", "p9"]})"),
        std::string(R"({"cmd": "routes", "args": ["add", "10.1.0.0/16"]})"),
        std::string(R"({"cmd": "routes", "args": ["del", "10.1.0.0/16"]})"),
        std::string(R"({"cmd": "routes", "args": ["add", "10.1.0.0/16", "p2"], "nf": "r9"})"),
        std::string(R"({"cmd": "firewall", "args": ["replace", "x"]})")}) {
    const nlohmann::json r = l.run(req);
    EXPECT_EQ(r["ok"], false) << req;
  }
  EXPECT_NE(l.run(nlohmann::json{{"cmd", "routes"}, {"args", {"replace", bad}}}.dump())["error"]
                .get<std::string>().find(bad + ":2"), std::string::npos);
  EXPECT_EQ(l.lookup("10.2.2.3"), "10.2.2.3 -> p1 (port 1)");
  EXPECT_EQ(dynamic_cast<Router&>(*l.rc.nfs[0]).live().log().latest(), 1u);
}

TEST(ControlCommands, StopAndStats) {
  Loaded l("ctl-stop");
  const nlohmann::json s = l.run(R"({"cmd": "stats"})");
  EXPECT_EQ(s["ok"], true);
  EXPECT_EQ(s["running"], false);
  EXPECT_EQ(s["nfs"][0]["table_version"], 1);
  EXPECT_EQ(l.run(R"({"cmd": "stop"})")["ok"], true);
  EXPECT_EQ(l.stops.load(), 1);
}

// An NF process's side: the request gpunfv run hands on names the NF and carries the ports as
// the run sees them (an id, or why a route may not send there).
TEST(ControlCommands, AnNfProcessPerformsWhatGpunfvRunHandsOn) {
  Loaded l("ctl-nf-process");
  const auto control = nf_process_control(l.rc.nfs);
  auto handed_on = [&](const std::string& cmd, const std::vector<std::string>& args) {
    const nlohmann::json req = {{"cmd", cmd}, {"args", args}, {"nf", "r1"},
                                {"ports", {{"p1", 1}, {"p2", 2}, {"gen", "port 'gen' has no tx side"}}},
                                {"max_input_bytes", 1 << 20}};
    return nlohmann::json::parse(control(req.dump()));
  };
  EXPECT_EQ(handed_on("routes", {"add", "10.1.0.0/16", "p2"})["table_version"], 2);
  EXPECT_EQ(l.lookup("10.1.2.3"), "10.1.2.3 -> p2 (port 2)");
  EXPECT_NE(handed_on("routes", {"add", "10.2.0.0/16", "gen"})["error"].get<std::string>().find("no tx side"),
            std::string::npos);
  EXPECT_NE(handed_on("routes", {"add", "10.2.0.0/16", "p9"})["error"].get<std::string>().find("unknown port 'p9'"),
            std::string::npos);
  EXPECT_EQ(handed_on("reload", {})["reloaded"].size(), 1u);  // the named NF, from its file
  EXPECT_EQ(l.lookup("10.1.2.3"), "10.1.2.3 -> p1 (port 1)");
  EXPECT_EQ(handed_on("stats", {})["nfs"][0]["table_version"], 3);
  EXPECT_EQ(handed_on("stop", {})["ok"], false);  // a run's command, not a process's
  EXPECT_EQ(l.stops, 0);
  EXPECT_EQ(nlohmann::json::parse(control("not json"))["ok"], false);
}

TEST(ControlCommands, PrefixWords) {
  EXPECT_TRUE(looks_like_prefix("10.0.0.0/8"));
  EXPECT_TRUE(looks_like_prefix("10.0.0.1/8"));  // host bits: refused later, with that reason
  EXPECT_FALSE(looks_like_prefix("routes/new.routes"));
  EXPECT_FALSE(looks_like_prefix("/tmp/x"));
  EXPECT_FALSE(looks_like_prefix("10.0.0.0/"));
}

}  // namespace
}  // namespace gpunfv
