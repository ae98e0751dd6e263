// Parameters of a generated extern "C" entry point, kept in one order for both the CUDA
// signature and the launch plan's KernelParam list (row-wise and map lowering).
#pragma once

#include <string>
#include <vector>

#include "codegen/chain.h"
#include "codegen/kernel_lowering.h"
#include "codegen/launch_plan.h"

namespace kforge::codegen {

class EntryParams {
public:
    // A tensor pointer `t_<name>`; a tensor added twice is one parameter (written wins).
    void add_tensor(const std::string& name, const std::string& ctype, bool written) {
        for (Entry& e : entries_) {
            if (e.param.kind == ParamKind::kTensor && e.param.name == name) {
                e.written = e.written || written;
                return;
            }
        }
        entries_.push_back({{ParamKind::kTensor, name, 0, 0.0}, ctype, written});
    }
    void add_chain(const ChainCode& chain) {
        for (const ChainParam& p : chain.params) {
            add_tensor(p.name, *chain_param_type(p.dtype, p.written, ""), p.written);
        }
    }
    // A workspace buffer `w_<name>` of element type `ctype` (f32 unless staged narrower).
    void add_workspace(const std::string& name, const std::string& ctype = "float") {
        entries_.push_back({{ParamKind::kWorkspace, name, 0, 0.0}, ctype, true});
    }
    void add_int64(const std::string& name, int64_t value) {
        entries_.push_back({{ParamKind::kInt64, name, value, 0.0}, "int64_t", false});
    }

    std::string signature() const {
        std::string s;
        for (size_t i = 0; i < entries_.size(); ++i) {
            const Entry& e = entries_[i];
            s += i ? ", " : "";
            if (e.param.kind == ParamKind::kInt64) {
                s += "int64_t " + e.param.name;
            } else {
                const std::string prefix = e.param.kind == ParamKind::kWorkspace ? "w_" : "t_";
                s += std::string(e.written ? "" : "const ") + e.ctype + "* __restrict__ " +
                     prefix + e.param.name;
            }
        }
        return s;
    }
    std::vector<KernelParam> plan_params() const {
        std::vector<KernelParam> v;
        for (const Entry& e : entries_) v.push_back(e.param);
        return v;
    }

private:
    struct Entry {
        KernelParam param;
        std::string ctype;
        bool written = false;
    };
    std::vector<Entry> entries_;
};

// `Chain chain{t_a, t_b};` for a chain functor whose pointers come from the entry's params;
// a runtime-shape chain's sizes follow (`sizes`: one expression per space dim).
inline std::string chain_init(const ChainCode& chain, const std::vector<std::string>& sizes = {},
                              const std::string& var = "chain") {
    std::string s = "    const " + chain.type_name + " " + var + "{";
    for (size_t i = 0; i < chain.params.size(); ++i) {
        s += (i ? ", " : "") + std::string("t_") + chain.params[i].name;
    }
    for (size_t i = 0; i < sizes.size(); ++i) s += (i || !chain.params.empty() ? ", " : "") + sizes[i];
    return s + "};\n";
}

// A kernel body that takes `vec`-wide accesses where the chain's pointers allow them:
// call(vec) when chain.aligned<vec>(), call(1) otherwise (vec 1: call(1) alone).
template <class Call>
std::string vec_dispatch(int vec, const Call& call) {
    if (vec == 1) return "    " + call(1);
    return "    if (chain.aligned<" + std::to_string(vec) + ">()) {\n        " + call(vec) +
           "    } else {\n        " + call(1) + "    }\n";
}

// What a one-launch NVRTC kernel contributes: `header` (its kernels/*.cuh) and chain_ops.cuh
// included before `source`, a 1-D grid of `blocks` CTAs of `threads`, the entry's params.
inline KernelCode one_launch(const std::string& header, const std::string& source,
                             const std::string& name, const std::string& symbol, int64_t blocks,
                             int threads, const EntryParams& params) {
    KernelCode code;
    code.device_source =
        "#include \"" + header + "\"\n#include \"kernels/chain_ops.cuh\"\n" + source;
    KernelLaunch launch;
    launch.name = name;
    launch.symbol = symbol;
    launch.grid = {unsigned(blocks), 1, 1};
    launch.block = {unsigned(threads), 1, 1};
    launch.params = params.plan_params();
    code.launches.push_back(launch);
    return code;
}

}  // namespace kforge::codegen
