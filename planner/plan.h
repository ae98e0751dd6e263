// The fusion planner: synthesizes a correct kernel-language program for any problem, with no
// hand-written program to start from. The search (search/loop.h) starts from these seeds, and
// its "seed" proposer (search/proposers.h) offers the other variants.
//
// Partition (one walk over the op graph in topological order, planner/partition.cpp, each
// kernel family in its own file: plan_gemm.cpp, plan_conv.cpp, plan_rowwise.cpp, plan_map.cpp,
// and the chains they absorb, plan_chain.cpp):
//   (a) matmul / linear starts a gemm kernel (operands named by their problem dims, so transposes
//       and a batch dim follow from the names); its epilogue chain absorbs the element-wise ops
//       that follow while the value has a single consumer, is not a problem output, and the op
//       maps onto an epilogue node (bias [N], column [M], residual [M,N] or [L,M,N], scalars,
//       activations, clamp/min/max, dropout = identity);
//   (b) a reduction, softmax family or norm starts a rowwise kernel over the stored input; its
//       chain absorbs following element-wise ops (and may store an output and go on);
//   (c) element-wise ops that no kernel absorbed start a map kernel from their full-shape operand;
//   (d) a binary op whose other operand an earlier kernel stored is absorbed too, so SwiGLU-like
//       patterns become gemm0 { silu; store A } and gemm1 { mul A; store Y }.
// Intermediates are stored in their problem dtype (or f32 with SeedOptions::intermediates_f32,
// except those a gemm reads, whose operands must share one dtype).
//
// Knobs (planner/knobs.h, one file per kernel family) follow simple rules written beside them;
// every kernel then gets the first of its candidate configurations that passes check_program and
// lower_program (planner/plan.cpp), so a returned program always checks with zero errors and
// lowers.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"
#include "dsl/check.h"
#include "problem/problem.h"

namespace kforge::planner {

// Which gemm tile family the seed prefers (the fallbacks follow when it does not check).
enum class SeedGemmTiles { kAuto, kWide, kSquare };

struct SeedOptions {
    bool fuse = true;                 // absorb element-wise ops into the producer's chain
    bool intermediates_f32 = false;   // intermediates read by rowwise/map kernels stored as f32
    SeedGemmTiles gemm_tiles = SeedGemmTiles::kAuto;
    double rowwise_threads_scale = 1.0;  // multiply the rowwise thread rule (0.5, 2: variants)
    bool rowwise_one_read = false;    // rows too long to cache: held in registers + shared memory
                                      // (passes 1) first, instead of split parts read twice
    bool attention_wmma = false;      // attention on kforge's WMMA kernel even where CUTLASS's
                                      // FMHA applies (the seed's choice: plan_attention.cpp)
    bool conv_direct = true;          // the direct convolution where it is first (false: the
                                      // CUTLASS forms only; plan_conv.cpp)
};

// One program for `problem` that checks with zero errors and lowers on a device with `limits`;
// an Error ("not expressible: ...") naming the op when the language or its lowering cannot
// express part of the problem (e.g. layer_norm over several dims, softmax over a middle axis,
// a gemm operand whose rows are not 16-byte aligned).
Expected<dsl::Program> seed_program(const Problem& problem, const dsl::DeviceLimits& limits,
                                    const SeedOptions& options = {});

// seed_program with the work it took: the whole-program checks and lowerings that picked every
// kernel's configuration and confirmed the result. Picking takes a few rounds over the whole
// program (planner/plan.cpp), so the count grows with the candidates a kernel needs, not with
// the number of kernels: a network of repeated blocks takes as many as one block.
struct SeedWork {
    int checks = 0;
    int lowerings = 0;
};
struct Seeded {
    dsl::Program program;
    SeedWork work;
};
Expected<Seeded> seed_program_counted(const Problem& problem, const dsl::DeviceLimits& limits,
                                      const SeedOptions& options = {});

// A few structurally different seeds (fused, unfused, square vs wide tiles, f32 intermediates,
// other rowwise block sizes, convolutions on CUTLASS rather than the direct kernel), distinct by
// canonical text, the default seed first. Empty when not
// even the default seed exists (seed_program says why).
std::vector<dsl::Program> seed_variants(const Problem& problem, const dsl::DeviceLimits& limits);

// The fusion plan of a program in one line, kernel by kernel: its kind (and row op), the ops its
// chain fused, and what it stores: "k0 gemm {add b, tanh, cast f16} -> Y".
std::string describe_fusion_plan(const dsl::Program& program);

}  // namespace kforge::planner
