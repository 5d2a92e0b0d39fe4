# Sourced by the GPU check suites (scripts/gpu-check.d/collect.sh, egress.sh): what they share.

log() { echo; echo "=== $*"; }

# The GPU, the host's CPU and cores, and any further lines given, into DEVICE_FILE and stdout.
# usage: print_device DEVICE_FILE [LINE...]
print_device() {
  local file=$1
  shift
  log "device"
  { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
    grep -m1 "model name" /proc/cpuinfo; echo "host cores: $(nproc)"
    for line in "$@"; do echo "$line"; done; } | tee "$file"
}

# Runs a command in the background, finds the gpunfv process it starts (looked up, never
# signalled), samples each of its threads' CPU for SAMPLE_S seconds after WARMUP_S
# (scripts/lib/thread_cpu.py), and returns the command's exit status.
# usage: sampled_run LOG THREADS_OUT WARMUP_S SAMPLE_S command [args...]
sampled_run() {
  local log=$1 threads_out=$2 warmup=$3 sample=$4
  shift 4
  "$@" > "$log" 2>&1 &
  local runner=$! pid=""
  for _ in $(seq 1 300); do
    pid=$(pgrep -n -x gpunfv) && break
    kill -0 $runner 2>/dev/null || break
    sleep 0.1
  done
  if [ -n "$pid" ]; then
    sleep "$warmup"
    python3 "$(dirname "${BASH_SOURCE[0]}")/thread_cpu.py" "$pid" "$sample" > "$threads_out" 2>&1
  else
    echo "no gpunfv process seen" > "$threads_out"
  fi
  wait $runner
}
