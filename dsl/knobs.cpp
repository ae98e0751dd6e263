#include "dsl/knobs.h"

#include <algorithm>

namespace kforge::dsl {

bool IntDomain::contains(int64_t v) const {
    if (!values.empty()) return std::find(values.begin(), values.end(), v) != values.end();
    return v >= lo && v <= hi && (v - lo) % step == 0;
}

std::string IntDomain::describe() const {
    std::string s;
    if (!values.empty()) {
        s = "one of ";
        for (size_t i = 0; i < values.size(); ++i) {
            s += (i ? ", " : "") + std::to_string(values[i]);
        }
        return s;
    }
    if (lo == 1 && step == 1 && hi >= (1 << 20)) return "a positive integer";
    s = std::to_string(lo) + ".." + std::to_string(hi);
    if (step > 1) s += ", a multiple of " + std::to_string(step);
    return s;
}

std::string_view value_dtype_name(DType d) {
    switch (d) {
        case DType::kF16: return "f16";
        case DType::kBF16: return "bf16";
        default: return "f32";
    }
}

std::optional<DType> value_dtype_from_string(std::string_view s) {
    if (s == "f32") return DType::kF32;
    if (s == "f16") return DType::kF16;
    if (s == "bf16") return DType::kBF16;
    return std::nullopt;
}

namespace {

KnobValue ints(std::vector<int64_t> v) { return KnobValue{std::move(v), {}, 0.0}; }
KnobValue word(std::string_view w) { return KnobValue{{}, std::string(w), 0.0}; }
int as_int(const KnobValue& v, size_t i) { return static_cast<int>(v.ints.at(i)); }

const IntDomain kOneTo16{{}, 1, 16, 1};
const IntDomain kThreads{{}, 32, 1024, 32};
const IntDomain kVec{{1, 2, 4, 8}, 0, 0, 1};

// The row ops that take an eps.
bool is_norm(RowOp op) {
    return op == RowOp::kLayerNorm || op == RowOp::kRmsNorm || op == RowOp::kGroupNorm ||
           op == RowOp::kL1Normalize || op == RowOp::kL2Normalize;
}

// The row ops that take the reverse / exclusive flags.
bool is_scan(RowOp op) { return op == RowOp::kCumsum || op == RowOp::kCumprod; }

std::vector<KnobSpec> gemm_knobs() {
    return {
        {"tile", KnobValueKind::kInts, {"M", "N", "K"},
         {IntDomain{{64, 128, 256}}, IntDomain{{}, 16, 256, 16}, IntDomain{{16, 32, 64, 128}}},
         {}, "128x128x64", "CTA tile MxNxK",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.tile_m = as_int(v, 0), k.gemm.tile_n = as_int(v, 1), k.gemm.tile_k = as_int(v, 2);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             return ints({k.gemm.tile_m, k.gemm.tile_n, k.gemm.tile_k});
         }},
        {"cluster", KnobValueKind::kInts, {"M", "N"},
         {IntDomain{{1, 2, 4}}, IntDomain{{1, 2, 4}}}, {}, "1x1",
         "thread-block cluster MxN (M*N <= 4 on Hopper)",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.cluster_m = as_int(v, 0), k.gemm.cluster_n = as_int(v, 1);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             return ints({k.gemm.cluster_m, k.gemm.cluster_n});
         }},
        {"stages", KnobValueKind::kIntOrAuto, {}, {IntDomain{{}, 2, 8, 1}}, {}, "auto",
         "pipeline stages (auto: as many as shared memory allows)",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.stages = v.ints.empty() ? 0 : as_int(v, 0);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             return k.gemm.stages == 0 ? word("auto") : ints({k.gemm.stages});
         }},
        {"schedule", KnobValueKind::kWord, {}, {},
         {"tma_ws", "cooperative", "pingpong", "stream_k", "multistage"}, "cooperative",
         "mainloop/tile schedule (multistage: Ampere cp.async, also SIMT)",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.schedule = *schedule_from_string(v.word);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> { return word(to_string(k.gemm.schedule)); }},
        {"math", KnobValueKind::kWord, {}, {}, {"auto", "f32_simt", "tf32", "tf32x3", "bf16", "f16"},
         "auto", "operand precision of the multiply (auto: from dtypes and policy)",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.math = *math_from_string(v.word);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> { return word(to_string(k.gemm.math)); }},
        {"acc", KnobValueKind::kWord, {}, {}, {"f32", "f16"}, "f32", "accumulator dtype",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.acc = *value_dtype_from_string(v.word);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             return word(value_dtype_name(k.gemm.acc));
         }},
        {"raster", KnobValueKind::kWord, {}, {}, {"auto", "along_m", "along_n"}, "auto",
         "order in which CTAs walk the output tiles",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.raster = *raster_from_string(v.word);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> { return word(to_string(k.gemm.raster)); }},
        {"swizzle", KnobValueKind::kInts, {}, {IntDomain{{1, 2, 4, 8}}}, {}, "1",
         "tile swizzle width for L2 locality",
         [](Kernel& k, const KnobValue& v) { k.gemm.swizzle = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.gemm.swizzle}); }},
        {"splitk", KnobValueKind::kInts, {}, {kOneTo16}, {}, "1", "split of K across CTAs",
         [](Kernel& k, const KnobValue& v) { k.gemm.split_k = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.gemm.split_k}); }},
    };
}

// conv2d: the gemm knobs of the implicit GEMM (M = N*P*Q, N = K, K = C*R*S): tile, stages 2..6
// (multistage; tma_ws sizes its own pipeline), schedule (multistage or tma_ws; `auto` reads as
// multistage), math, acc, swizzle. No cluster, raster or splitk: the sm80 conv kernels have none.
std::vector<KnobSpec> conv2d_knobs() {
    std::vector<KnobSpec> out;
    for (KnobSpec s : gemm_knobs()) {
        if (s.name == "tile") {
            s.default_text = "128x64x32";
            s.domains[1] = IntDomain{{}, 8, 256, 8};  // direct: 8 filters a thread
            s.domains[2] = IntDomain{{4, 8, 16, 32, 64, 128}};  // direct: channels a step
            s.doc = "CTA tile MxNxK of the implicit GEMM (M = N*P*Q, N = K, K = C*R*S)";
        } else if (s.name == "stages") {
            s.kind = KnobValueKind::kInts;
            s.domains = {IntDomain{{}, 1, 6, 1}};
            s.default_text = "3";
            s.doc = "cp.async pipeline stages (multistage 2..6; direct: channel steps in flight, "
                    "1..6)";
            s.read = [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.gemm.stages}); };
        } else if (s.name == "schedule") {
            s.words = {"auto", "multistage", "tma_ws", "direct"};
            s.default_text = "multistage";
            s.doc = "mainloop schedule: Ampere cp.async multistage (CUTLASS 2.x), tma_ws: "
                    "Hopper TMA im2col + wgmma, warp-specialized (CUTLASS 3.x sm90; dense 2-D "
                    "and 1-D fprop), or direct: kforge's direct convolution in f32 FMA, one "
                    "launch, NCHW in and out (f32 operands, math f32_simt; transposed too, and "
                    "groups of whole tiles of N filters; tile M positions x N filters a block x "
                    "K channels a step); auto: multistage";
            s.apply = [](Kernel& k, const KnobValue& v) {
                k.gemm.schedule = v.word == "tma_ws"   ? Schedule::kTmaWarpSpecialized
                                  : v.word == "direct" ? Schedule::kDirect
                                                       : Schedule::kMultistage;
                return std::string();
            };
        } else if (s.name != "math" && s.name != "acc" && s.name != "swizzle") {
            continue;
        }
        out.push_back(s);
    }
    out.push_back(
        {"iterator", KnobValueKind::kWord, {}, {}, {"auto", "optimized", "few_channels"}, "auto",
         "fprop's GEMM-K walk: optimized (C in tile-K steps per filter position), few_channels "
         "(flattened R*S*C: for C below tile K; tensor ops only); auto: optimized",
         [](Kernel& k, const KnobValue& v) {
             k.gemm.iterator = v.word == "few_channels" ? ConvIterator::kFewChannels
                               : v.word == "optimized" ? ConvIterator::kOptimized
                                                       : ConvIterator::kAuto;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             switch (k.gemm.iterator) {
                 case ConvIterator::kOptimized: return word("optimized");
                 case ConvIterator::kFewChannels: return word("few_channels");
                 default: return std::nullopt;
             }
         }});
    return out;
}

std::vector<KnobSpec> rowwise_knobs() {
    return {
        {"over", KnobValueKind::kDim, {}, {}, {}, "the last dim", "the dim reduced or normalized (sum, mean, max, min: a set of dims joined by commas, reduced in one kernel)",
         [](Kernel& k, const KnobValue& v) { k.over = v.word; return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.over.empty()) return std::nullopt;
             return word(k.over);
         }},
        {"eps", KnobValueKind::kNumber, {}, {}, {}, "the problem's", "norms: epsilon",
         [](Kernel& k, const KnobValue& v) {
             if (!is_norm(k.row_op)) return std::string("eps applies to layer_norm, rms_norm, group_norm, l1_normalize, l2_normalize only");
             k.eps = v.number;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.eps) return std::nullopt;
             return KnobValue{{}, {}, *k.eps};
         }},
        {"groups", KnobValueKind::kInts, {}, {IntDomain{{}, 1, 1 << 20, 1}}, {}, "the problem's",
         "group_norm: number of groups",
         [](Kernel& k, const KnobValue& v) {
             if (k.row_op != RowOp::kGroupNorm) return std::string("groups applies to group_norm only");
             k.groups = v.ints.at(0);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.groups) return std::nullopt;
             return ints({*k.groups});
         }},
        {"rows_per_block", KnobValueKind::kInts, {}, {IntDomain{{}, 1, 64, 1}}, {}, "1",
         "rows one thread block handles",
         [](Kernel& k, const KnobValue& v) { k.rowwise.rows_per_block = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.rowwise.rows_per_block}); }},
        {"threads", KnobValueKind::kInts, {}, {kThreads}, {}, "256", "threads per block",
         [](Kernel& k, const KnobValue& v) { k.rowwise.threads = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.rowwise.threads}); }},
        {"vec", KnobValueKind::kInts, {}, {kVec}, {}, "4", "elements per vector load/store",
         [](Kernel& k, const KnobValue& v) { k.rowwise.vec = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.rowwise.vec}); }},
        {"passes", KnobValueKind::kInts, {}, {IntDomain{{1, 2}}}, {}, "1",
         "1: row kept on chip; 2: row re-read from memory",
         [](Kernel& k, const KnobValue& v) { k.rowwise.passes = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.rowwise.passes}); }},
        {"online", KnobValueKind::kFlag, {}, {}, {}, "off", "online softmax: max and sum in one sweep",
         [](Kernel& k, const KnobValue&) { k.rowwise.online = true; return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.rowwise.online) return std::nullopt;
             return KnobValue{};
         }},
        {"reverse", KnobValueKind::kFlag, {}, {}, {}, "off",
         "cumsum, cumprod: scan from the row's end (x.flip(d).cumsum(d).flip(d))",
         [](Kernel& k, const KnobValue&) {
             if (!is_scan(k.row_op)) return std::string("reverse applies to cumsum, cumprod only");
             k.rowwise.reverse = true;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.rowwise.reverse) return std::nullopt;
             return KnobValue{};
         }},
        {"exclusive", KnobValueKind::kFlag, {}, {}, {}, "off",
         "cumsum, cumprod: element i combines the elements before i (0 or 1 first)",
         [](Kernel& k, const KnobValue&) {
             if (!is_scan(k.row_op)) return std::string("exclusive applies to cumsum, cumprod only");
             k.rowwise.exclusive = true;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.rowwise.exclusive) return std::nullopt;
             return KnobValue{};
         }},
        {"split", KnobValueKind::kInts, {}, {kOneTo16}, {}, "1",
         "cluster CTAs sharing one row (above 8: non-portable cluster size)",
         [](Kernel& k, const KnobValue& v) { k.rowwise.split = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.rowwise.split}); }},
        {"smem_stage", KnobValueKind::kFlag, {}, {}, {}, "off",
         "row staged in shared memory by cp.async (passes 2: what fits, rest re-read)",
         [](Kernel& k, const KnobValue&) { k.rowwise.smem_stage = true; return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.rowwise.smem_stage) return std::nullopt;
             return KnobValue{};
         }},
    };
}

std::vector<KnobSpec> map_knobs() {
    return {
        {"block", KnobValueKind::kInts, {}, {kThreads}, {}, "256", "threads per block",
         [](Kernel& k, const KnobValue& v) { k.map.block = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.map.block}); }},
        {"vec", KnobValueKind::kInts, {}, {kVec}, {}, "4", "elements per vector load/store",
         [](Kernel& k, const KnobValue& v) { k.map.vec = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.map.vec}); }},
        {"items", KnobValueKind::kInts, {}, {kOneTo16}, {}, "1", "vectors per thread",
         [](Kernel& k, const KnobValue& v) { k.map.items_per_thread = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.map.items_per_thread}); }},
        {"grid_stride", KnobValueKind::kFlag, {}, {}, {}, "off", "grid-stride loop over the elements",
         [](Kernel& k, const KnobValue&) { k.map.grid_stride = true; return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.map.grid_stride) return std::nullopt;
             return KnobValue{};
         }},
    };
}

// rows / vec shape a thread's tile of outputs (kernels/pool.cuh pool_tiles): max and avg pools
// whose windows are not split over lanes.
std::string pool_tile_knob_applies(const Kernel& k, std::string_view knob) {
    if (k.pool_op != OpKind::kMaxPool && k.pool_op != OpKind::kAvgPool)
        return std::string(knob) + " applies to max and avg pools (a thread's tile of outputs)";
    if (k.pool.lanes > 1)
        return std::string(knob) + " applies to lanes 1 (a thread's tile of outputs); this kernel "
               "splits each window over " + std::to_string(k.pool.lanes) + " lanes";
    return "";
}

// pool: threads per block, the outputs a thread computes (items x rows), the lanes that split
// one window, the input loads' width (kernels/pool.cuh).
std::vector<KnobSpec> pool_knobs() {
    return {
        {"threads", KnobValueKind::kInts, {}, {kThreads}, {}, "256", "threads per block",
         [](Kernel& k, const KnobValue& v) { k.pool.threads = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.pool.threads}); }},
        {"items", KnobValueKind::kInts, {}, {IntDomain{{1, 2, 4, 8}}}, {}, "1",
         "consecutive outputs (along the last spatial axis) per thread",
         [](Kernel& k, const KnobValue& v) { k.pool.items = as_int(v, 0); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.pool.items}); }},
        {"rows", KnobValueKind::kInts, {}, {IntDomain{{1, 2, 4, 8}}}, {}, "1",
         "consecutive outputs along the next-to-last axis per thread (overlapping windows share "
         "rows); max/avg, lanes 1",
         [](Kernel& k, const KnobValue& v) {
             const int n = as_int(v, 0);
             if (std::string msg = pool_tile_knob_applies(k, "rows"); n != 1 && !msg.empty())
                 return msg;
             k.pool.rows = n;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.pool.rows}); }},
        {"vec", KnobValueKind::kInts, {}, {IntDomain{{1, 2, 4}}}, {}, "1",
         "elements per input load along the last axis (dividing its length and items x "
         "stride); max/avg, lanes 1",
         [](Kernel& k, const KnobValue& v) {
             const int n = as_int(v, 0);
             if (std::string msg = pool_tile_knob_applies(k, "vec"); n != 1 && !msg.empty())
                 return msg;
             k.pool.vec = n;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.pool.vec}); }},
        // after rows and vec: lanes past 1 resets them (a window split over lanes has no tile)
        {"lanes", KnobValueKind::kInts, {}, {IntDomain{{1, 2, 4, 8, 16, 32}}}, {}, "1",
         "threads that split one output's window (shuffle-combined): large windows",
         [](Kernel& k, const KnobValue& v) {
             k.pool.lanes = as_int(v, 0);
             if (k.pool.lanes > 1) k.pool.rows = k.pool.vec = 1;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> { return ints({k.pool.lanes}); }},
    };
}

}  // namespace

std::vector<KnobSpec> attention_knobs();  // dsl/knobs_attention.cpp
std::vector<KnobSpec> copy_knobs();       // dsl/knobs_copy.cpp
std::vector<KnobSpec> rnn_knobs();        // dsl/check_rnn.cpp

const std::vector<KnobSpec>& knob_table(KernelKind kind) {
    static const std::vector<KnobSpec> gemm = gemm_knobs();
    static const std::vector<KnobSpec> rowwise = rowwise_knobs();
    static const std::vector<KnobSpec> map = map_knobs();
    static const std::vector<KnobSpec> conv2d = conv2d_knobs();
    static const std::vector<KnobSpec> pool = pool_knobs();
    static const std::vector<KnobSpec> attention = attention_knobs();
    static const std::vector<KnobSpec> copy = copy_knobs();
    static const std::vector<KnobSpec> rnn = rnn_knobs();
    switch (kind) {
        case KernelKind::kGemm: return gemm;
        case KernelKind::kRowwise: return rowwise;
        case KernelKind::kConv2d: return conv2d;
        case KernelKind::kPool: return pool;
        case KernelKind::kAttention: return attention;
        case KernelKind::kCopy: return copy;
        case KernelKind::kRnn: return rnn;
        case KernelKind::kMap: break;
    }
    return map;
}

const KnobSpec* find_knob(KernelKind kind, std::string_view name) {
    for (const KnobSpec& k : knob_table(kind)) {
        if (k.name == name) return &k;
    }
    return nullptr;
}

}  // namespace kforge::dsl
