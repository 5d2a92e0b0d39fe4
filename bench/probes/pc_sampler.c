// A sampling profiler to preload where perf cannot run (the GPU machines' hosts give no
// perf_event access): LD_PRELOAD=libgpunfv_pc_sampler.so PC_SAMPLER_DIR=DIR COMMAND.
// Every PC_SAMPLER_US (default 1000) microseconds of the process's CPU time, SIGPROF lands on
// the thread that was running and its handler records the interrupted instruction pointer and
// thread id into DIR/pcs-PID.bin, a file mapped shared, so the samples survive a SIGKILL. A
// helper thread copies /proc/self/maps to DIR/pcs-PID.maps every 200 ms (plugins load late)
// and once more at exit. bench/probes/pc_report.py turns both into shares per thread, DSO and
// symbol. It inherits through exec (a wrapper script, a forked testpmd): each process writes
// its own files. Without PC_SAMPLER_DIR it does nothing.
//
// Errors: anything it cannot set up (directory, file, timer) is printed once to stderr and the
// process runs unsampled.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

enum { kCapacity = 1 << 20 };  // samples per process (16 MiB of file)

struct Header {
  char magic[8];        // "GPCSAMP1"
  uint64_t interval_us;
  _Atomic uint64_t count;  // samples taken (may exceed kCapacity: the rest were not kept)
  uint64_t capacity;
};
struct Record {
  uint64_t ip;
  uint64_t tid;
};

static struct Header* g_header;
static struct Record* g_records;
static char g_maps_path[512];
static _Atomic int g_stop;

static void on_sigprof(int sig, siginfo_t* info, void* uc_void) {
  (void)sig, (void)info;
  if (!g_header) return;
  const uint64_t i = atomic_fetch_add_explicit(&g_header->count, 1, memory_order_relaxed);
  if (i >= kCapacity) return;
  const ucontext_t* uc = (const ucontext_t*)uc_void;
#if defined(__x86_64__)
  g_records[i].ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  g_records[i].ip = (uint64_t)uc->uc_mcontext.pc;
#else
  g_records[i].ip = 0;
#endif
  g_records[i].tid = (uint64_t)syscall(SYS_gettid);
}

static void copy_maps(void) {
  char tmp[560];
  snprintf(tmp, sizeof tmp, "%s.tmp", g_maps_path);
  int in = open("/proc/self/maps", O_RDONLY), out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in >= 0 && out >= 0) {
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
      if (write(out, buf, (size_t)n) != n) break;
  }
  if (in >= 0) close(in);
  if (out >= 0) {
    close(out);
    rename(tmp, g_maps_path);
  }
}

static void* maps_thread(void* arg) {
  (void)arg;
  // The CPUs this process started with: EAL pins the main thread later, not this one.
  while (!atomic_load(&g_stop)) {
    copy_maps();
    usleep(200 * 1000);
  }
  return NULL;
}

static void at_exit(void) {
  atomic_store(&g_stop, 1);
  copy_maps();
}

// An interval timer outlives execve while the handler does not: the new image would die of
// SIGPROF's default action before its own copy of this library installs the handler. So the
// exec calls a program makes through its PLT (a shell's exec, execvp) stop the timer first; a
// fork's child has no timer to begin with.
static void stop_timer(void) {
  struct itimerval none;
  memset(&none, 0, sizeof none);
  setitimer(ITIMER_PROF, &none, NULL);
}

typedef int (*execve_fn)(const char*, char* const[], char* const[]);
typedef int (*execv_fn)(const char*, char* const[]);
int execve(const char* path, char* const argv[], char* const envp[]) {
  stop_timer();
  return ((execve_fn)dlsym(RTLD_NEXT, "execve"))(path, argv, envp);
}
int execv(const char* path, char* const argv[]) {
  stop_timer();
  return ((execv_fn)dlsym(RTLD_NEXT, "execv"))(path, argv);
}
int execvp(const char* file, char* const argv[]) {
  stop_timer();
  return ((execv_fn)dlsym(RTLD_NEXT, "execvp"))(file, argv);
}

__attribute__((constructor)) static void pc_sampler_start(void) {
  const char* dir = getenv("PC_SAMPLER_DIR");
  if (!dir || !*dir) return;
  const char* us_text = getenv("PC_SAMPLER_US");
  const long us = us_text ? atol(us_text) : 1000;
  char path[512];
  snprintf(path, sizeof path, "%s/pcs-%d.bin", dir, (int)getpid());
  snprintf(g_maps_path, sizeof g_maps_path, "%s/pcs-%d.maps", dir, (int)getpid());
  const size_t bytes = sizeof(struct Header) + (size_t)kCapacity * sizeof(struct Record);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
    fprintf(stderr, "pc_sampler: cannot create %s: %s\n", path, strerror(errno));
    if (fd >= 0) close(fd);
    return;
  }
  void* map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    fprintf(stderr, "pc_sampler: cannot map %s: %s\n", path, strerror(errno));
    return;
  }
  struct Header* h = (struct Header*)map;
  memcpy(h->magic, "GPCSAMP1", 8);
  h->interval_us = (uint64_t)(us > 0 ? us : 1000);
  h->capacity = kCapacity;
  atomic_store(&h->count, 0);
  g_records = (struct Record*)(h + 1);
  g_header = h;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  pthread_t t;
  if (sigaction(SIGPROF, &sa, NULL) != 0 || pthread_create(&t, NULL, maps_thread, NULL) != 0) {
    fprintf(stderr, "pc_sampler: cannot install the handler or start the maps thread\n");
    g_header = NULL;
    return;
  }
  pthread_detach(t);
  atexit(at_exit);
  struct itimerval it;
  it.it_interval.tv_sec = (time_t)(h->interval_us / 1000000);
  it.it_interval.tv_usec = (suseconds_t)(h->interval_us % 1000000);
  it.it_value = it.it_interval;
  if (setitimer(ITIMER_PROF, &it, NULL) != 0)
    fprintf(stderr, "pc_sampler: setitimer: %s\n", strerror(errno));
}
