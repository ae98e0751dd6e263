/* ABI of the kforge-generated host param builders (CUTLASS kernels; see codegen/lower_gemm.cpp).
 * Plain C so both the generated .cu (compiled by nvcc into the plan's host library) and the
 * evaluator (which dlopen()s that library) include it. A builder never launches anything: it
 * encodes the kernel's Params (TMA descriptors included) into a caller-owned blob and returns
 * the launch geometry; the harness launches with cuLaunchKernelEx.
 *
 * Protocol, per kernel with `param_builder` in plan.json:
 *   1. call with workspace == NULL. Returns KFORGE_BUILD_OK (no workspace needed, everything
 *      filled) or KFORGE_BUILD_NEED_WORKSPACE (only workspace_bytes filled);
 *   2. on NEED_WORKSPACE: allocate workspace_bytes of device memory, zero it before every launch
 *      sequence (stream-K/split-K barriers expect zeros), and call again with it.
 * The tile scheduler's run-time arguments of a CUTLASS 3.x kernel (raster order, swizzle, split-K
 * factor and decomposition, persistent CTAs) are launch knobs: the plan carries them
 * (KernelLaunch::knobs) and the caller passes them in KforgeBuildArgs, so kernels that differ
 * only in them share one compiled source. The workspace asked in step 1 follows them (split-K
 * partials): ask again whenever they change.
 * Since version 3 a builder may split its problem into `parts` launches run one after another
 * in part order on the same stream (a convolution whose tensors pass CUTLASS 2.x's 2 GiB limit
 * of 32-bit offsets, split along the batch): the call for part 0 returns the count, and the
 * caller calls again with part = 1 .. parts - 1, each into its own params blob. 0 or 1: one.
 * Bump KFORGE_HOST_ABI_VERSION on any change, appending fields only: a library built against an
 * older version (an older export) is called with that version (LaunchPlan::host_abi_version) and
 * reads the prefix it knows. Generated sources static_assert on it, so the compile cache (keyed
 * by source text) never serves a library built against another ABI. */
#ifndef KFORGE_CODEGEN_HOST_ABI_H
#define KFORGE_CODEGEN_HOST_ABI_H

#include <stdint.h>

#define KFORGE_HOST_ABI_VERSION 3

#define KFORGE_BUILD_OK 0
#define KFORGE_BUILD_NEED_WORKSPACE 1
#define KFORGE_BUILD_BAD_ARGS 2         /* wrong tensor count, ABI version, or dims */
#define KFORGE_BUILD_CANNOT_IMPLEMENT 3 /* CUTLASS can_implement() refused the shapes */
#define KFORGE_BUILD_PARAMS_TOO_LARGE 4 /* params_capacity < sizeof(Params) */
#define KFORGE_BUILD_INIT_FAILED 5      /* to_underlying_arguments failed (TMA encode) */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct KforgeBuildArgs {
    int32_t abi_version;        /* KFORGE_HOST_ABI_VERSION */
    int32_t num_tensors;        /* == builder_tensors.size() in plan.json */
    void* const* tensors;       /* device pointers in plan.json builder_tensors order */
    int32_t num_dims;           /* the problem's dims, sorted by name (std::map order) */
    const int64_t* dims;        /* required: generated sources hold no shape, so one build serves all */
    void* workspace;            /* device memory of workspace_bytes, or NULL (query) */
    int32_t sm_count;           /* SMs of the device the kernel will run on */
    int32_t device_id;
    /* Since version 2 (a version-1 builder reads only the fields above): the launch knobs. A
     * builder compiled with them baked in (KFORGE_BAKE_LAUNCH_KNOBS) ignores them. */
    int32_t raster;             /* KFORGE_RASTER_*: the tile scheduler's raster order */
    int32_t swizzle;            /* max swizzle size: 1, 2, 4 or 8 (0: 1) */
    int32_t splits;             /* split-K factor (stream-K scheduler only; 0: 1) */
    int32_t decomposition;      /* KFORGE_DECOMPOSITION_* (stream-K scheduler only) */
    int32_t max_ctas;           /* persistent CTAs at most (0: one per SM, CUTLASS's grid) */
    /* Since version 3: which of the builder's parts to encode (0 .. parts - 1). */
    int32_t part;
} KforgeBuildArgs;

#define KFORGE_RASTER_HEURISTIC 0
#define KFORGE_RASTER_ALONG_M 1
#define KFORGE_RASTER_ALONG_N 2

#define KFORGE_DECOMPOSITION_HEURISTIC 0
#define KFORGE_DECOMPOSITION_DATA_PARALLEL 1
#define KFORGE_DECOMPOSITION_SPLIT_K 2
#define KFORGE_DECOMPOSITION_STREAM_K 3

typedef struct KforgeBuiltLaunch {
    void* params;               /* caller-owned, 64-byte aligned */
    uint64_t params_capacity;   /* bytes available at params */
    uint64_t params_bytes;      /* out: sizeof(GemmKernel::Params) */
    uint32_t grid[3];           /* out */
    uint32_t block[3];          /* out */
    uint32_t cluster[3];        /* out: cluster dims (cuLaunchKernelEx attribute) */
    uint32_t smem_bytes;        /* out: dynamic shared memory (set the max-dynamic attribute) */
    uint64_t workspace_bytes;   /* out */
    /* Since version 3: how many launches the problem takes at these dims (0 or 1: one). */
    uint32_t parts;             /* out */
} KforgeBuiltLaunch;

typedef int (*KforgeParamBuilderFn)(const KforgeBuildArgs* args, KforgeBuiltLaunch* out);

#ifdef __cplusplus
}
#endif

#endif /* KFORGE_CODEGEN_HOST_ABI_H */
