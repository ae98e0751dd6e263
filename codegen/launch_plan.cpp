// JSON form of the launch plan (codegen/launch_plan.h). Reading validates every field, so a
// malformed plan.json is a user error naming the JSON path, never a crash in the harness.
#include "codegen/launch_plan.h"

#include <array>

#include "codegen/memory_plan.h"
#include <utility>

namespace kforge::codegen {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<ParamKind, std::string_view>, 6> kParamKindNames{{
    {ParamKind::kTensor, "tensor"},
    {ParamKind::kInt64, "int64"},
    {ParamKind::kInt32, "int32"},
    {ParamKind::kFloat32, "float32"},
    {ParamKind::kWorkspace, "workspace"},
    {ParamKind::kParamBlob, "param_blob"},
}};

Error bad(const std::string& where, const std::string& message) {
    return make_error("plan.json" + (where.empty() ? "" : " " + where), message);
}

// Field readers: each checks presence (unless optional) and type.
Expected<const Json*> member(const Json& j, const char* key, const std::string& where,
                             bool required) {
    if (!j.is_object()) return bad(where, "expected an object");
    auto it = j.find(key);
    if (it == j.end()) {
        if (required) return bad(where + "." + key, std::string("missing key \"") + key + "\"");
        return static_cast<const Json*>(nullptr);
    }
    return &*it;
}

Expected<std::string> get_string(const Json& j, const char* key, const std::string& where,
                                 bool required = true, std::string fallback = {}) {
    auto m = member(j, key, where, required);
    if (!m) return m.error();
    if (!*m) return fallback;
    if (!(*m)->is_string()) return bad(where + "." + key, "expected a string");
    return (*m)->get<std::string>();
}

Expected<int64_t> get_int(const Json& j, const char* key, const std::string& where,
                          bool required = true, int64_t fallback = 0) {
    auto m = member(j, key, where, required);
    if (!m) return m.error();
    if (!*m) return fallback;
    if (!(*m)->is_number_integer()) return bad(where + "." + key, "expected an integer");
    return (*m)->get<int64_t>();
}

Expected<bool> get_bool(const Json& j, const char* key, const std::string& where) {
    auto m = member(j, key, where, false);
    if (!m) return m.error();
    if (!*m) return false;
    if (!(*m)->is_boolean()) return bad(where + "." + key, "expected true or false");
    return (*m)->get<bool>();
}

Expected<std::array<unsigned, 3>> get_dim3(const Json& j, const char* key,
                                           const std::string& where) {
    auto m = member(j, key, where, false);
    if (!m) return m.error();
    std::array<unsigned, 3> out{1, 1, 1};
    if (!*m) return out;
    const Json& a = **m;
    std::string w = where + "." + key;
    if (!a.is_array() || a.size() != 3) return bad(w, "expected an array of 3 positive integers");
    for (size_t i = 0; i < 3; ++i) {
        if (!a[i].is_number_integer() || a[i].get<int64_t>() < 1 ||
            a[i].get<int64_t>() > 0x7fffffffLL)
            return bad(w + "[" + std::to_string(i) + "]", "expected a positive integer");
        out[i] = static_cast<unsigned>(a[i].get<int64_t>());
    }
    return out;
}

Expected<KernelParam> param_from_json(const Json& j, const std::string& where) {
    KernelParam p;
    auto kind = get_string(j, "kind", where);
    if (!kind) return kind.error();
    auto k = param_kind_from_string(*kind);
    if (!k) return bad(where + ".kind", k.error().message);
    p.kind = *k;
    const bool named = p.kind == ParamKind::kTensor || p.kind == ParamKind::kWorkspace;
    auto name = get_string(j, "name", where, named);
    if (!name) return name.error();
    if (named && name->empty()) return bad(where + ".name", "empty buffer name");
    p.name = *name;
    if (p.kind == ParamKind::kInt64 || p.kind == ParamKind::kInt32) {
        auto v = get_int(j, "value", where);
        if (!v) return v.error();
        p.int_value = *v;
        if (p.kind == ParamKind::kInt32 && (p.int_value < INT32_MIN || p.int_value > INT32_MAX))
            return bad(where + ".value", "does not fit in int32");
    } else if (p.kind == ParamKind::kFloat32) {
        auto m = member(j, "value", where, true);
        if (!m) return m.error();
        if (!(*m)->is_number()) return bad(where + ".value", "expected a number");
        p.float_value = (*m)->get<double>();
    }
    return p;
}

// "launch_knobs": {"raster", "swizzle", "splits", "decomposition", "max_ctas"}, each optional.
Expected<LaunchKnobs> knobs_from_json(const Json& j, const std::string& where) {
    LaunchKnobs k;
    auto m = member(j, "launch_knobs", where, false);
    if (!m) return m.error();
    if (!*m) return k;
    const std::string w = where + ".launch_knobs";
    struct Field {
        const char* key;
        int* value;
        int64_t lo, hi;
    };
    for (const Field& f : {Field{"raster", &k.raster, 0, 2}, Field{"swizzle", &k.swizzle, 1, 8},
                           Field{"splits", &k.splits, 1, 1024},
                           Field{"decomposition", &k.decomposition, 0, 3},
                           Field{"max_ctas", &k.max_ctas, 0, 1 << 20}}) {
        auto v = get_int(**m, f.key, w, false, *f.value);
        if (!v) return v.error();
        if (*v < f.lo || *v > f.hi)
            return bad(w + "." + f.key, "out of range " + std::to_string(f.lo) + ".." +
                                            std::to_string(f.hi));
        *f.value = static_cast<int>(*v);
    }
    return k;
}

Expected<KernelLaunch> launch_from_json(const Json& j, const std::string& where) {
    KernelLaunch k;
    auto name = get_string(j, "name", where);
    if (!name) return name.error();
    auto symbol = get_string(j, "symbol", where);
    if (!symbol) return symbol.error();
    if (symbol->empty()) return bad(where + ".symbol", "empty kernel symbol");
    k.name = *name;
    k.symbol = *symbol;
    auto grid = get_dim3(j, "grid", where);
    if (!grid) return grid.error();
    auto block = get_dim3(j, "block", where);
    if (!block) return block.error();
    auto cluster = get_dim3(j, "cluster", where);
    if (!cluster) return cluster.error();
    k.grid = *grid;
    k.block = *block;
    k.cluster = *cluster;
    auto smem = get_int(j, "smem_bytes", where, false, 0);
    if (!smem) return smem.error();
    if (*smem < 0 || *smem > 0x7fffffffLL) return bad(where + ".smem_bytes", "out of range");
    k.smem_bytes = static_cast<unsigned>(*smem);
    auto builder = get_string(j, "param_builder", where, false);
    if (!builder) return builder.error();
    k.param_builder = *builder;
    auto bt = member(j, "builder_tensors", where, false);
    if (!bt) return bt.error();
    if (*bt) {
        if (!(*bt)->is_array()) return bad(where + ".builder_tensors", "expected an array");
        for (const auto& t : **bt) {
            if (!t.is_string()) return bad(where + ".builder_tensors", "expected strings");
            k.builder_tensors.push_back(t.get<std::string>());
        }
    }
    auto knobs = knobs_from_json(j, where);
    if (!knobs) return knobs.error();
    k.knobs = *knobs;
    auto params = member(j, "params", where, true);
    if (!params) return params.error();
    if (!(*params)->is_array()) return bad(where + ".params", "expected an array");
    for (size_t i = 0; i < (*params)->size(); ++i) {
        auto p = param_from_json((**params)[i], where + ".params[" + std::to_string(i) + "]");
        if (!p) return p.error();
        k.params.push_back(*p);
    }
    if (!k.param_builder.empty() &&
        (k.params.size() != 1 || k.params[0].kind != ParamKind::kParamBlob))
        return bad(where + ".params", "a kernel with a param_builder takes one param_blob");
    return k;
}

Expected<BufferDecl> buffer_from_json(const Json& j, const std::string& where) {
    BufferDecl b;
    auto name = get_string(j, "name", where);
    if (!name) return name.error();
    if (name->empty()) return bad(where + ".name", "empty buffer name");
    b.name = *name;
    auto dt = get_string(j, "dtype", where);
    if (!dt) return dt.error();
    auto d = dtype_from_string(*dt);
    if (!d) return bad(where + ".dtype", "unknown dtype \"" + *dt + "\"");
    b.dtype = *d;
    auto shape = member(j, "shape", where, true);
    if (!shape) return shape.error();
    if (!(*shape)->is_array()) return bad(where + ".shape", "expected an array");
    int64_t bytes = dtype_bytes(b.dtype);
    for (const auto& s : **shape) {
        if (!s.is_number_integer() || s.get<int64_t>() < 1)
            return bad(where + ".shape", "expected positive integers");
        b.shape.push_back(s.get<int64_t>());
        // the memory plan adds offsets and sizes: a buffer of 2^50 bytes or more is no buffer
        if (__builtin_mul_overflow(bytes, s.get<int64_t>(), &bytes) || bytes >= (int64_t{1} << 50))
            return bad(where + ".shape", "a buffer of 2^50 bytes or more");
    }
    auto zi = get_bool(j, "zero_init", where);
    if (!zi) return zi.error();
    auto ws = get_bool(j, "workspace", where);
    if (!ws) return ws.error();
    b.zero_init = *zi;
    b.workspace = *ws;
    auto offset = get_int(j, "offset", where, false, -1);
    if (!offset) return offset.error();
    if (*offset < -1) return bad(where + ".offset", "expected a byte offset >= 0");
    b.offset = *offset;
    return b;
}

// "memory": the memory plan's totals, each optional (absent in plans older than the plan).
Expected<MemoryTotals> memory_from_json(const Json& j) {
    MemoryTotals m;
    auto mm = member(j, "memory", "", false);
    if (!mm) return mm.error();
    if (!*mm) return m;
    for (auto [key, value] : {std::pair{"alignment", &m.alignment},
                              {"arena_bytes", &m.arena_bytes},
                              {"unshared_bytes", &m.unshared_bytes},
                              {"io_bytes", &m.io_bytes},
                              {"peak_bytes", &m.peak_bytes}}) {
        auto v = get_int(**mm, key, ".memory", false, *value);
        if (!v) return v.error();
        if (*v < 0) return bad(std::string(".memory.") + key, "expected bytes >= 0");
        *value = *v;
    }
    if (m.alignment != kArenaAlignment)
        return bad(".memory.alignment", "this kforge places buffers at " +
                                            std::to_string(kArenaAlignment) + " bytes");
    return m;
}

}  // namespace

std::string_view to_string(LaunchMode m) { return m == LaunchMode::kGraph ? "graph" : "stream"; }

Expected<LaunchMode> launch_mode_from_string(std::string_view s) {
    if (s == "stream") return LaunchMode::kStream;
    if (s == "graph") return LaunchMode::kGraph;
    return make_error("", "unknown launch mode \"" + std::string(s) + "\"; expected stream or graph");
}

std::string_view to_string(ParamKind k) {
    for (const auto& [kind, name] : kParamKindNames)
        if (kind == k) return name;
    return "?";
}

Expected<ParamKind> param_kind_from_string(std::string_view s) {
    for (const auto& [kind, name] : kParamKindNames)
        if (name == s) return kind;
    return make_error("", "unknown param kind \"" + std::string(s) +
                              "\"; expected tensor, int64, int32, float32, workspace or param_blob");
}

nlohmann::ordered_json to_json(const LaunchPlan& plan) {
    nlohmann::ordered_json j;
    j["version"] = plan.version;
    j["program_hash"] = plan.program_hash;
    j["source_file"] = plan.source_file;
    j["host_library"] = plan.host_library;
    if (!plan.host_library.empty()) j["host_abi_version"] = plan.host_abi_version;
    j["buffers"] = nlohmann::ordered_json::array();
    for (const auto& b : plan.buffers) {
        nlohmann::ordered_json jb;
        jb["name"] = b.name;
        jb["dtype"] = std::string(to_string(b.dtype));
        jb["shape"] = b.shape;
        jb["zero_init"] = b.zero_init;
        jb["workspace"] = b.workspace;
        if (b.offset >= 0) jb["offset"] = b.offset;
        j["buffers"].push_back(jb);
    }
    j["memory"] = {{"alignment", plan.memory.alignment},
                   {"arena_bytes", plan.memory.arena_bytes},
                   {"unshared_bytes", plan.memory.unshared_bytes},
                   {"io_bytes", plan.memory.io_bytes},
                   {"peak_bytes", plan.memory.peak_bytes}};
    j["launch_mode"] = std::string(to_string(plan.launch_mode));
    j["kernels"] = nlohmann::ordered_json::array();
    for (const auto& k : plan.kernels) {
        nlohmann::ordered_json jk;
        jk["name"] = k.name;
        jk["symbol"] = k.symbol;
        jk["grid"] = k.grid;
        jk["block"] = k.block;
        jk["cluster"] = k.cluster;
        jk["smem_bytes"] = k.smem_bytes;
        jk["params"] = nlohmann::ordered_json::array();
        for (const auto& p : k.params) {
            nlohmann::ordered_json jp;
            jp["kind"] = std::string(to_string(p.kind));
            if (!p.name.empty()) jp["name"] = p.name;
            if (p.kind == ParamKind::kInt64 || p.kind == ParamKind::kInt32)
                jp["value"] = p.int_value;
            if (p.kind == ParamKind::kFloat32) jp["value"] = p.float_value;
            jk["params"].push_back(jp);
        }
        if (!k.param_builder.empty()) {
            jk["param_builder"] = k.param_builder;
            jk["builder_tensors"] = k.builder_tensors;
            jk["launch_knobs"] = {{"raster", k.knobs.raster},
                                  {"swizzle", k.knobs.swizzle},
                                  {"splits", k.knobs.splits},
                                  {"decomposition", k.knobs.decomposition},
                                  {"max_ctas", k.knobs.max_ctas}};
        }
        j["kernels"].push_back(jk);
    }
    return j;
}

Expected<LaunchPlan> launch_plan_from_json(const nlohmann::json& j) {
    LaunchPlan plan;
    auto version = get_int(j, "version", "");
    if (!version) return version.error();
    if (*version != kLaunchPlanVersion)
        return bad(".version", "unsupported plan version " + std::to_string(*version) +
                                   " (this kforge reads version " +
                                   std::to_string(kLaunchPlanVersion) + ")");
    auto hash = get_string(j, "program_hash", "", false);
    if (!hash) return hash.error();
    auto src = get_string(j, "source_file", "", false, "kernels.cu");
    if (!src) return src.error();
    auto lib = get_string(j, "host_library", "", false);
    if (!lib) return lib.error();
    plan.program_hash = *hash;
    plan.source_file = *src;
    plan.host_library = *lib;
    auto abi = get_int(j, "host_abi_version", "", false, 1);
    if (!abi) return abi.error();
    if (*abi < 1 || *abi > KFORGE_HOST_ABI_VERSION)
        return bad(".host_abi_version", "host ABI version " + std::to_string(*abi) +
                                            " (this kforge calls versions 1.." +
                                            std::to_string(KFORGE_HOST_ABI_VERSION) + ")");
    plan.host_abi_version = static_cast<int>(*abi);
    auto buffers = member(j, "buffers", "", false);
    if (!buffers) return buffers.error();
    if (*buffers) {
        if (!(*buffers)->is_array()) return bad(".buffers", "expected an array");
        for (size_t i = 0; i < (*buffers)->size(); ++i) {
            auto b = buffer_from_json((**buffers)[i], ".buffers[" + std::to_string(i) + "]");
            if (!b) return b.error();
            plan.buffers.push_back(*b);
        }
    }
    auto kernels = member(j, "kernels", "", true);
    if (!kernels) return kernels.error();
    if (!(*kernels)->is_array() || (*kernels)->empty())
        return bad(".kernels", "expected a non-empty array");
    for (size_t i = 0; i < (*kernels)->size(); ++i) {
        auto k = launch_from_json((**kernels)[i], ".kernels[" + std::to_string(i) + "]");
        if (!k) return k.error();
        plan.kernels.push_back(*k);
    }
    auto memory = memory_from_json(j);
    if (!memory) return memory.error();
    plan.memory = *memory;
    auto mode = get_string(j, "launch_mode", "", false, "stream");
    if (!mode) return mode.error();
    auto m = launch_mode_from_string(*mode);
    if (!m) return bad(".launch_mode", m.error().message);
    plan.launch_mode = *m;
    // offsets: all or none (a plan older than the memory plan: placed here), and never aliased
    size_t placed = 0;
    for (const BufferDecl& b : plan.buffers) placed += b.offset >= 0 ? 1 : 0;
    if (placed == 0) {
        assign_arena_offsets(plan);
    } else if (placed != plan.buffers.size()) {
        return bad(".buffers", "some buffers have an offset and some do not");
    } else if (Status s = check_memory_plan(plan); !s) {
        return s.error();
    }
    return plan;
}

}  // namespace kforge::codegen
