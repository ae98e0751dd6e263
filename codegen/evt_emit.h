// Epilogue visitor tree (EVT) emission: a GemmSpec's epilogue steps -> CUTLASS EVT type
// definitions and the matching nested Arguments initializer. Every step wraps the value so far
// (`Sm90EVT<Sm90Compute<Fn, ...>, value [, operand]>`); the operand is a leaf (a tensor) or, for
// a value named by `let`, the subtree that computed it, repeated (a DAG lowered as a tree:
// element-wise recompute, no memory traffic; CUTLASS's Sm90TopologicalVisitor is not used). Run after
// analyze_gemm; used by lower_gemm (sm90 TMA epilogue) and lower_gemm_sm80 (2.x visitors).
#pragma once

#include <string>

#include "codegen/gemm_spec.h"

namespace kforge::codegen {

enum class EvtFamily { kSm90, kSm80 };

struct EvtCode {
    std::string types;      // type definitions inside the kernel's namespace; defines `Evt`
    std::string arguments;  // initializer of Evt::Arguments; uses builder locals (see below)
};

// The arguments expression refers to these locals of the param builder: `tensors` (void* const*,
// in spec.tensor_order), M, N, L (int64_t). The sm90 tree's root yields the D value (the
// collective epilogue stores it); the sm80 tree's root is the VisitorAuxStore of D.
Expected<EvtCode> emit_evt(const GemmSpec& spec, EvtFamily family);

}  // namespace kforge::codegen
