#include "forward_bench/testpmd.h"

#include <fmt/format.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "core/clock.h"

#if GPUNFV_HAVE_DPDK_PORT
extern "C" uint64_t rte_get_tsc_hz(void);  // DPDK's EAL (not inline): the TSC rate it assumes
#endif

namespace gpunfv::bench {

// testpmd's Tx-pps are packets over TSC cycles times DPDK's TSC rate (rte_get_tsc_hz: from CPUID
// where the CPU reports it, else measured). On a VM the reported rate may not be the TSC's real
// one, which scales every testpmd figure.
double tsc_rate_ratio(std::string* text) {
  static std::string said;
  static const double ratio = [] {
#if GPUNFV_HAVE_DPDK_PORT && defined(__x86_64__)
    const uint64_t assumed = rte_get_tsc_hz();
    const uint64_t t0 = monotonic_ns(), c0 = __builtin_ia32_rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const uint64_t t1 = monotonic_ns(), c1 = __builtin_ia32_rdtsc();
    const double measured = double(c1 - c0) / (double(t1 - t0) / 1e9);
    if (!assumed) return 1.0;
    said = fmt::format("TSC: DPDK assumes {:.1f} MHz, measured {:.1f} MHz", assumed / 1e6, measured / 1e6);
    return measured / double(assumed);
#else
    return 1.0;
#endif
  }();
  if (text) *text = said;
  return ratio;
}

namespace {

// EAL and testpmd arguments shared by both ways of running it. The main lcore prints stats /
// reads commands: on a CPU of its own where one is free (the one below the first forwarding
// CPU), else on the one the forwarding lcores leave (one port) or beside the first forwarding
// lcore.
std::vector<std::string> testpmd_args(const std::string& testpmd, const std::vector<int>& cpus, bool one_port) {
  const int ncpu = int(std::thread::hardware_concurrency());
  const int free_cpu = ncpu > int(cpus.size()) && cpus[0] > 0 ? cpus[0] - 1 : -1;
  const int main_cpu = free_cpu >= 0 ? free_cpu : one_port ? cpus[1 % cpus.size()] : cpus[0];
  const std::string lcores = one_port ? fmt::format("0@{},1@{}", main_cpu, cpus[0])
                                      : fmt::format("0@{},1@{},2@{}", main_cpu, cpus[0], cpus[1 % cpus.size()]);
  static int serial = 0;
  std::vector<std::string> args = {testpmd, "--no-huge", "--no-pci", "-m", "1024", "--no-shconf",
                                   "--file-prefix", fmt::format("gpunfv-fwdbench-{}-{}", getpid(), serial++),
                                   "--vdev=net_ring0"};
  if (!one_port) args.push_back("--vdev=net_ring1");
  for (std::string a : {std::string("--lcores"), lcores, std::string("--log-level=error"), std::string("--"),
                        std::string("--forward-mode=io"), std::string("--no-lsc-interrupt"),
                        std::string("--total-num-mbufs=8192")})
    args.push_back(a);
  args.push_back(one_port ? "--nb-cores=1" : "--nb-cores=2");
  if (one_port) args.push_back("--port-topology=loop");
  return args;
}

// Starts `args` on a pseudo-terminal (*master: both its input and its output): testpmd's
// printf output is line-buffered there, where into a pipe it would come only at exit.
pid_t spawn_on_pty(std::vector<std::string> args, int* master) {
  termios raw{};
  cfmakeraw(&raw);  // no echo, no line editing: what testpmd prints, as it prints it
  const pid_t pid = forkpty(master, nullptr, &raw, nullptr);
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "exec %s failed: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  return pid;
}

// CPU seconds process `pid` used so far, from /proc like top.
double process_cpu_seconds(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(st)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return 0.0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  return (utime + stime) / double(sysconf(_SC_CLK_TCK));
}

}  // namespace

// A testpmd process on a pseudo-terminal (spawn_on_pty) and what it printed, read on a thread
// of its own; counts and waits for lines as they come.
class TestpmdProcess {
 public:
  explicit TestpmdProcess(const std::vector<std::string>& args) {
    pid_ = spawn_on_pty(args, &fd_);
    if (pid_ < 0) return;
    reader_ = std::thread([this] {
      char buf[4096];
      ssize_t n;
      while ((n = read(fd_, buf, sizeof buf)) > 0) {  // EIO once testpmd has exited
        std::lock_guard<std::mutex> lock(m_);
        text_.append(buf, size_t(n));
        grew_.notify_all();
      }
      std::lock_guard<std::mutex> lock(m_);
      closed_ = true;
      grew_.notify_all();
    });
  }
  // Ends it: `quit` (or SIGINT where `interrupt`), then SIGKILL if it is still there after 5 s.
  ~TestpmdProcess() { end(false); }
  void end(bool interrupt) {
    if (pid_ > 0) {
      interrupt ? void(kill(pid_, SIGINT)) : void(send("quit"));
      int status = 0;
      for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (waitpid(pid_, &status, WNOHANG) == 0) kill(pid_, SIGKILL), waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) close(fd_), fd_ = -1;
  }
  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool send(const std::string& line) {
    const std::string l = line + "\n";
    return fd_ >= 0 && write(fd_, l.data(), l.size()) == ssize_t(l.size());
  }
  std::string text() const {
    std::lock_guard<std::mutex> lock(m_);
    return text_;
  }
  size_t count(const std::string& needle) const {
    std::lock_guard<std::mutex> lock(m_);
    return count_locked(needle);
  }
  // Waits (up to `timeout_s`) until `needle` occurs `at_least` times; the count.
  size_t wait_for(const std::string& needle, size_t at_least, double timeout_s = 10) {
    std::unique_lock<std::mutex> lock(m_);
    size_t n = count_locked(needle);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (n < at_least && !closed_ && grew_.wait_until(lock, until) != std::cv_status::timeout)
      n = count_locked(needle);
    return n;
  }

 private:
  size_t count_locked(const std::string& needle) const {
    size_t n = 0;
    for (size_t at = text_.find(needle); at != std::string::npos; at = text_.find(needle, at + 1)) ++n;
    return n;
  }
  pid_t pid_ = -1;
  int fd_ = -1;
  mutable std::mutex m_;
  std::condition_variable grew_;
  std::string text_;
  bool closed_ = false;
  std::thread reader_;
};

namespace {

// The Tx-pps figures in `text`, in order.
std::vector<double> tx_pps(const std::string& text) {
  std::vector<double> v;
  static const std::regex tx(R"(Tx-pps:\s+(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), tx); it != std::sregex_iterator(); ++it)
    v.push_back(std::stod((*it)[1]));
  return v;
}

std::string tail(const std::string& text, size_t n = 400) {
  return text.substr(text.size() > n ? text.size() - n : 0);
}

}  // namespace

// A process per row: --tx-first, --stats-period=1; the median of the per-second samples after
// the first two (start-up) is the rate. The window starts 3 s after the process; where start-up
// took longer (a loaded host), it waits (up to 10 s) for a steady sample before ending it.
Row run_testpmd(const std::string& testpmd, uint32_t size, double seconds, const std::vector<int>& cpus,
                bool one_port) {
  Row row;
  row.what = "dpdk-testpmd io";
  row.size = size;
  row.descriptor_batch = 32;
  std::vector<std::string> args = testpmd_args(testpmd, cpus, one_port);
  for (std::string a : {fmt::format("--txpkts={}", size), std::string("--tx-first"), std::string("--stats-period=1")})
    args.push_back(a);
  TestpmdProcess p(args);
  if (!p.started()) return row.note = "forkpty failed", row;
  const size_t ports = one_port ? 1 : 2;
  // CPU time over the steady window only (start-up excluded).
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const double c0 = process_cpu_seconds(p.pid());
  const uint64_t w0 = monotonic_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double c1 = process_cpu_seconds(p.pid());
  const double window = (monotonic_ns() - w0) / 1e9;
  p.wait_for("Tx-pps:", 3 * ports);
  p.end(true);
  const std::string text = p.text();
  // Both ports' Tx-pps per stats period, in order.
  std::vector<double> totals, per_port;
  for (double x : tx_pps(text)) {
    per_port.push_back(x);
    if (per_port.size() == ports) {
      double sum = 0;
      for (double v : per_port) sum += v;
      totals.push_back(sum), per_port.clear();
    }
  }
  // The first samples are start-up (the first is all zeros); with few samples (stretched
  // periods) only the first is left out.
  const size_t startup = totals.size() >= 4 ? 2 : 1;
  if (totals.size() <= startup) return row.note = "testpmd gave no rate: " + tail(text), row;
  std::vector<double> steady(totals.begin() + long(startup), totals.end());
  std::sort(steady.begin(), steady.end());
  std::string tsc;
  const double ratio = tsc_rate_ratio(&tsc);
  row.mpps = steady[steady.size() / 2] / 1e6 * ratio;
  if (std::abs(ratio - 1) > 0.002) row.note = fmt::format("its Tx-pps x {:.4f} ({})", ratio, tsc);
  row.gbps = row.mpps * 1e6 * size * 8 / 1e9;
  row.cores = c1 > c0 ? (c1 - c0) / window : 0;
  return row;
}

TestpmdSession::TestpmdSession(const std::string& testpmd, const std::vector<int>& cpus, bool one_port)
    : one_port_(one_port) {
  std::vector<std::string> args = testpmd_args(testpmd, cpus, one_port);
  args.push_back("-i");
  process_ = std::make_unique<TestpmdProcess>(args);
  // Up once it answers a command (EAL start, port setup).
  if (!process_->started())
    error_ = "forkpty failed";
  else if (!process_->send("show port info all") || process_->wait_for("Infos for port", 1) < 1)
    error_ = "testpmd did not start: " + tail(process_->text());
}

TestpmdSession::~TestpmdSession() = default;  // TestpmdProcess quits it

Row TestpmdSession::measure(uint32_t size, double seconds) {
  Row row;
  row.what = "dpdk-testpmd io";
  row.size = size;
  row.descriptor_batch = 32;
  if (!error_.empty()) return row.note = error_, row;
  const size_t ports = one_port_ ? 1 : 2;
  TestpmdProcess& p = *process_;
  if (size != size_) p.send(fmt::format("set txpkts {}", size)), size_ = size;
  const size_t stops = p.count("Accumulated forward statistics");
  p.send("start tx_first");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // warm-up, as ours
  const size_t before = p.count("Tx-pps:");
  p.send("show port stats all");  // the window starts at this "since last show"
  p.wait_for("Tx-pps:", before + ports);
  const double c0 = process_cpu_seconds(p.pid());
  const uint64_t w0 = monotonic_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  p.send("show port stats all");
  const size_t shown = p.wait_for("Tx-pps:", before + 2 * ports);
  const double c1 = process_cpu_seconds(p.pid());
  const double window = (monotonic_ns() - w0) / 1e9;
  const std::string text = p.text();
  p.send("stop");  // the forwarding lcores have stopped once it prints the accumulated stats
  p.wait_for("Accumulated forward statistics", stops + 1);
  const std::vector<double> pps = tx_pps(text);
  if (shown < before + 2 * ports || pps.size() < ports) {
    error_ = "testpmd gave no rate: " + tail(text);
    return row.note = error_, row;
  }
  double sum = 0;
  for (size_t p = pps.size() - ports; p < pps.size(); ++p) sum += pps[p];
  std::string tsc;
  const double ratio = tsc_rate_ratio(&tsc);
  row.mpps = sum / 1e6 * ratio;
  row.note = "one testpmd process, rows by start/stop";
  if (std::abs(ratio - 1) > 0.002) row.note += fmt::format("; its Tx-pps x {:.4f} ({})", ratio, tsc);
  row.gbps = row.mpps * 1e6 * size * 8 / 1e9;
  row.cores = (c1 - c0) / window;
  return row;
}

}  // namespace gpunfv::bench
