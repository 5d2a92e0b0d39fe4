#include "cli/html_report.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/debug_switches.h"

extern char** environ;

namespace gpunfv {

namespace {

namespace fs = std::filesystem;

constexpr const char* kRenderer = "report_html.py";

// Installed tree, beside the binary (a packaged directory), then the source tree.
std::string find_renderer() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    candidates.push_back(exe.parent_path() / ".." / "share" / "gpunfv" / kRenderer);
    candidates.push_back(exe.parent_path() / kRenderer);
  }
#ifdef GPUNFV_SOURCE_DIR
  candidates.push_back(fs::path(GPUNFV_SOURCE_DIR) / "scripts" / kRenderer);
#endif
  for (const fs::path& p : candidates)
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
  return "";
}

// GPUNFV_PYTHON, else the system's Python (where Debian's python3-matplotlib is installed, even
// when another python3 comes first on PATH), else python3 from PATH.
std::string find_python() {
  if (std::string p = debug_switches().python; !p.empty()) return p;
  std::error_code ec;
  if (fs::exists("/usr/bin/python3", ec)) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

int render_html_report(const std::string& json_path, const std::string& html_path) {
  const std::string renderer = find_renderer();
  if (renderer.empty()) {
    std::fprintf(stderr, "gpunfv: error: the HTML renderer (%s) is not installed with this gpunfv "
                         "(looked in BIN/../share/gpunfv/, beside the binary and the source tree)\n", kRenderer);
    return 127;
  }
  const std::string python = find_python();
  std::vector<std::string> args = {python, renderer, json_path, html_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    std::fprintf(stderr, "gpunfv: error: cannot start python3 for the HTML report (set GPUNFV_PYTHON or install python3 and python3-matplotlib)\n");
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int render_html_report(const nlohmann::json& report, const std::string& json_path, const std::string& html_path) {
  if (!json_path.empty()) return render_html_report(json_path, html_path);
  std::error_code ec;
  std::string name = (fs::temp_directory_path(ec) / "gpunfv-report-XXXXXX").string();
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    std::fprintf(stderr, "gpunfv: error: cannot make a temporary file for the HTML report\n");
    return 1;
  }
  close(fd);
  std::ofstream(name) << report.dump() << "\n";
  const int rc = render_html_report(name, html_path);
  std::remove(name.c_str());
  return rc;
}

CLI::App* add_report_command(CLI::App& app, ReportOptions& o) {
  CLI::App* cmd = app.add_subcommand("report", "Render a JSON report (gpunfv run --report) as an HTML page");
  cmd->add_option("report", o.json, "The JSON report")->required();
  cmd->add_option("--html", o.html, "Write one self-contained HTML page with plots to FILE")->required();
  cmd->footer("Examples:\n  gpunfv run examples/router.yaml --report r.json\n  gpunfv report r.json --html r.html");
  return cmd;
}

int run_report_command(const ReportOptions& o) {
  const int rc = render_html_report(o.json, o.html);
  return rc == 0 ? 0 : 2;
}

}  // namespace gpunfv
