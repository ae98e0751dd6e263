/* libkforge_runtime.so: call a program exported by `kforge export` from C or C++.
 *
 *   kforge_rt_program* p = NULL;
 *   if (kforge_rt_open("export/gemm", &p) != KFORGE_RT_OK) puts(kforge_rt_last_error());
 *   uint64_t ws = 0;
 *   kforge_rt_workspace_bytes(p, &ws);           // device memory the caller provides
 *   void* tensors[] = {a, b, c};                 // kforge_rt_tensor_name order: inputs, outputs
 *   kforge_rt_launch(p, stream, tensors, 3, workspace, ws);
 *   kforge_rt_close(p);
 *
 * open binds the program to the CUDA context current on the calling thread (the device's
 * primary context is made current when none is) and loads its cubin there; a launch must come
 * from the same context (on a thread with no current context, open's is made current). A launch enqueues the kernels (and the workspace zeroing they need) on
 * the caller's stream and returns: it never synchronizes, so it can be captured in a CUDA graph.
 * Tensors are contiguous device pointers of exactly the exported shapes and dtypes (the runtime
 * cannot check a raw pointer's extent: callers check, as the exported Python package does).
 * Every call returns a status; on an error kforge_rt_last_error() (per thread) says why.
 * Thread-safe: calls on one program are serialized. */
#ifndef KFORGE_RUNTIME_H
#define KFORGE_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KFORGE_RT_API
#define KFORGE_RT_API __attribute__((visibility("default")))
#endif

typedef enum kforge_rt_status {
    KFORGE_RT_OK = 0,
    KFORGE_RT_INVALID_ARGUMENT = 1, /* null handle, wrong tensor count, workspace too small */
    KFORGE_RT_BAD_PACKAGE = 2,      /* the folder is not a readable export */
    KFORGE_RT_NOT_BUILT = 3,        /* exported with --no-build: no cubin to launch */
    KFORGE_RT_NO_GPU = 4,           /* no CUDA driver or no GPU */
    KFORGE_RT_WRONG_ARCH = 5,       /* the GPU is not the arch the package was built for */
    KFORGE_RT_WRONG_CONTEXT = 6,    /* launched from another CUDA context than open's */
    KFORGE_RT_CUDA_ERROR = 7,       /* a driver call failed (the message names it) */
    KFORGE_RT_BUILDER_FAILED = 8    /* a CUTLASS param builder refused the arguments */
} kforge_rt_status;

typedef struct kforge_rt_program kforge_rt_program;

/* The runtime's ABI version (KFORGE_RT_ABI_VERSION of the header it was built from). */
#define KFORGE_RT_ABI_VERSION 1
KFORGE_RT_API int32_t kforge_rt_abi_version(void);

/* The last error on this thread ("" when none). Valid until the next call on this thread. */
KFORGE_RT_API const char* kforge_rt_last_error(void);
KFORGE_RT_API const char* kforge_rt_status_name(kforge_rt_status status);

/* Reads DIR (runtime.json, plan.json, the cubin and host library), checks the GPU's arch and
 * loads the program in the current context. On failure *out is NULL. */
KFORGE_RT_API kforge_rt_status kforge_rt_open(const char* dir, kforge_rt_program** out);
KFORGE_RT_API void kforge_rt_close(kforge_rt_program* program);

/* The tensors a launch takes, in order (inputs, parameters included, then outputs). */
KFORGE_RT_API int32_t kforge_rt_num_tensors(const kforge_rt_program* program);
KFORGE_RT_API const char* kforge_rt_tensor_name(const kforge_rt_program* program, int32_t index);

/* Bytes of device workspace a launch needs (0: workspace may be NULL). */
KFORGE_RT_API kforge_rt_status kforge_rt_workspace_bytes(const kforge_rt_program* program, uint64_t* bytes);

/* Enqueues the program on `stream` (a CUstream / cudaStream_t; NULL is the legacy stream). */
KFORGE_RT_API kforge_rt_status kforge_rt_launch(kforge_rt_program* program, void* stream,
                                  void* const* tensors, int32_t num_tensors, void* workspace,
                                  uint64_t workspace_bytes);

/* How launches are issued: "graph" (the kernels as one CUDA graph, captured once per set of
 * pointers on a stream of the program's own and launched on the caller's stream, the legacy one
 * included; updated in place when the pointers change; chosen at export by measurement,
 * plan.json "launch_mode") or "stream" (one launch per kernel). A call on a stream the caller is
 * capturing launches kernel by kernel (they join the caller's capture); a capture that fails
 * makes the program "stream". The note says why the last call did not launch a graph ("" when
 * it did or when the mode is "stream" from the start). close destroys the graphs: finish the
 * work launched before closing, as for the workspace. */
KFORGE_RT_API const char* kforge_rt_launch_mode(const kforge_rt_program* program);
KFORGE_RT_API const char* kforge_rt_launch_mode_note(const kforge_rt_program* program);
/* Overrides the plan's launch mode ("graph" or "stream"), e.g. to time both ways. */
KFORGE_RT_API kforge_rt_status kforge_rt_set_launch_mode(kforge_rt_program* program, const char* mode);

#ifdef __cplusplus
}
#endif

#endif /* KFORGE_RUNTIME_H */
