// Built with the CUDA backend only: without it no NF calls the GPU.
#if GPUNFV_HAVE_CUDA
#include "gpu/gpu_calls.h"

#include <atomic>

#include "gpu/persistent_kernel_guard.h"
#include "gpu/stream.h"

namespace gpunfv {

namespace {
std::atomic<GpuCallSink*> g_sink{nullptr};
}  // namespace

void set_gpu_call_sink(GpuCallSink* sink) { g_sink.store(sink, std::memory_order_release); }
GpuCallSink* gpu_call_sink() { return g_sink.load(std::memory_order_acquire); }

namespace gpu {

void* malloc(size_t bytes) {
  if (GpuCallSink* s = gpu_call_sink()) return s->malloc(bytes);
  note_cuda_setup("cudaMalloc");
  void* p = nullptr;
  GPUNFV_CUDA(cudaMalloc(&p, bytes));
  return p;
}

void free(void* p) {
  if (!p) return;
  if (GpuCallSink* s = gpu_call_sink()) return s->free(p);
  note_cuda_setup("cudaFree");
  cudaFree(p);
}

void copy_to_device(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  if (GpuCallSink* s = gpu_call_sink()) return s->copy_to_device(dst, src, bytes, stream);
  if (stream)
    GPUNFV_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
  else
    GPUNFV_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}

void copy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (GpuCallSink* s = gpu_call_sink()) return s->copy_to_host(dst, src, bytes);
  GPUNFV_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

void launch(const GpuLaunch& l) {
  if (GpuCallSink* s = gpu_call_sink()) return s->launch(l);
  void* args[32];
  if (l.arg_count > 32) throw GpuError("a kernel launch with more than 32 parameters");
  for (uint32_t k = 0; k < l.arg_count; ++k) args[k] = const_cast<void*>(l.args[k].data);
  GPUNFV_CUDA(cudaLaunchKernel(l.kernel, l.grid, l.block, args, l.shared_bytes, l.stream));
}

cudaStream_t create_stream() {
  if (GpuCallSink* s = gpu_call_sink()) return s->create_stream();
  note_cuda_setup("cudaStreamCreate");
  cudaStream_t st = nullptr;
  GPUNFV_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  note_stream_created();
  return st;
}

void destroy_stream(cudaStream_t st) {
  if (!st) return;
  if (GpuCallSink* s = gpu_call_sink()) return s->destroy_stream(st);
  cudaStreamDestroy(st);
  note_stream_destroyed();
}

cudaEvent_t create_event(unsigned flags) {
  if (GpuCallSink* s = gpu_call_sink()) return s->create_event(flags);
  note_cuda_setup("cudaEventCreate");
  cudaEvent_t e = nullptr;
  GPUNFV_CUDA(cudaEventCreateWithFlags(&e, flags));
  return e;
}

void destroy_event(cudaEvent_t e) {
  if (!e) return;
  if (GpuCallSink* s = gpu_call_sink()) return s->destroy_event(e);
  cudaEventDestroy(e);
}

// Recorded into a CUDA graph (a fused batch's), the record and the wait stay event nodes
// (External), ordering the graph's launches after work outside it; CUDA takes the flags only
// while the stream is being recorded.
namespace {
bool recording(cudaStream_t st) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  GPUNFV_CUDA(cudaStreamIsCapturing(st, &status));
  return status == cudaStreamCaptureStatusActive;
}
}  // namespace

void record_event(cudaEvent_t e, cudaStream_t st) {
  if (GpuCallSink* s = gpu_call_sink()) return s->record_event(e, st);
  GPUNFV_CUDA(cudaEventRecordWithFlags(e, st, recording(st) ? cudaEventRecordExternal : cudaEventRecordDefault));
}

void wait_event(cudaStream_t st, cudaEvent_t e) {
  if (GpuCallSink* s = gpu_call_sink()) return s->wait_event(st, e);
  GPUNFV_CUDA(cudaStreamWaitEvent(st, e, recording(st) ? cudaEventWaitExternal : cudaEventWaitDefault));
}

void synchronize(cudaStream_t st) {
  if (GpuCallSink* s = gpu_call_sink()) return s->synchronize(st);
  GPUNFV_CUDA(cudaStreamSynchronize(st));
}

void synchronize_device() {
  if (GpuCallSink* s = gpu_call_sink()) return s->synchronize_device();
  GPUNFV_CUDA(cudaDeviceSynchronize());
}

void set_max_dynamic_shared(const void* kernel, int bytes) {
  if (GpuCallSink* s = gpu_call_sink()) return s->set_max_dynamic_shared(kernel, bytes);
  GPUNFV_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

int max_shared_per_block_optin() {
  if (GpuCallSink* s = gpu_call_sink()) return s->max_shared_per_block_optin();
  int device = 0, optin = 0;
  GPUNFV_CUDA(cudaGetDevice(&device));
  GPUNFV_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return optin;
}

}  // namespace gpu
}  // namespace gpunfv
#endif  // GPUNFV_HAVE_CUDA
