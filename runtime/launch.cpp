// The shared launch core (runtime/launch.h).
#include "runtime/launch.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

namespace kforge::runtime {
namespace {

constexpr uint64_t kParamsCapacity = 32 * 1024;  // the kernel parameter limit is 32764 bytes

Error plan_error(const codegen::KernelLaunch& k, const std::string& message) {
    return make_error("plan." + k.name, message);
}

Status load_host_library(const codegen::LaunchPlan& plan, const std::string& path, Module& m) {
    m.builders.assign(plan.kernels.size(), nullptr);
    bool needed = std::any_of(plan.kernels.begin(), plan.kernels.end(),
                              [](const auto& k) { return !k.param_builder.empty(); });
    if (!needed) return Ok{};
    if (path.empty()) return make_error("plan", "param builders but no host library");
    m.host_library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m.host_library) {
        const char* why = dlerror();
        return make_error(path, std::string("cannot load the host library: ") +
                                    (why ? why : "unknown"));
    }
    for (size_t i = 0; i < plan.kernels.size(); ++i) {
        const codegen::KernelLaunch& k = plan.kernels[i];
        if (k.param_builder.empty()) continue;
        auto fn = reinterpret_cast<KforgeParamBuilderFn>(dlsym(m.host_library, k.param_builder.c_str()));
        if (!fn) return plan_error(k, "host library lacks " + k.param_builder);
        m.builders[i] = fn;
    }
    return Ok{};
}

// A builder's arguments: the plan's host ABI version (an older export's library is called with
// the version it was built against and reads only that prefix) and the kernel's launch knobs.
KforgeBuildArgs build_args(const codegen::LaunchPlan& plan, const codegen::KernelLaunch& k,
                           const std::vector<void*>& tensors, const std::vector<int64_t>& dims,
                           int sm_count, int device_id) {
    KforgeBuildArgs a{};
    a.abi_version = plan.host_abi_version;
    a.num_tensors = static_cast<int32_t>(tensors.size());
    a.tensors = tensors.data();
    a.num_dims = static_cast<int32_t>(dims.size());
    a.dims = dims.data();
    a.workspace = nullptr;
    a.sm_count = sm_count;
    a.device_id = device_id;
    a.raster = k.knobs.raster;
    a.swizzle = k.knobs.swizzle;
    a.splits = k.knobs.splits;
    a.decomposition = k.knobs.decomposition;
    a.max_ctas = k.knobs.max_ctas;
    return a;
}

// A builder's output encoding its params blob into `storage` (sized to the capacity here).
KforgeBuiltLaunch built_into(std::vector<uint64_t>& storage) {
    storage.assign(kParamsCapacity / 8, 0);
    KforgeBuiltLaunch out{};
    out.params = storage.data();
    out.params_capacity = kParamsCapacity;
    return out;
}

std::string builder_status(const codegen::KernelLaunch& k, int rc) {
    return k.param_builder + " returned " + std::to_string(rc) + " (codegen/host_abi.h KFORGE_BUILD_*)";
}

}  // namespace

Expected<Module> load_builders(const codegen::LaunchPlan& plan, const std::string& host_library_path) {
    Module m;
    Status s = load_host_library(plan, host_library_path, m);
    if (!s) {
        if (m.host_library) dlclose(m.host_library);
        return s.error();
    }
    return m;
}

Expected<Module> load_module(const DriverApi& api, const codegen::LaunchPlan& plan,
                             const std::string& cubin_image, const std::string& host_library_path) {
    Module m;
    CUresult r = api.cuModuleLoadData(&m.module, cubin_image.data());
    if (r != CUDA_SUCCESS)
        return make_error("cuda", "cuModuleLoadData failed: " + driver_error_string(api, r));
    auto fail = [&](Error e) -> Expected<Module> {
        unload_module(api, m);
        return e;
    };
    for (const codegen::KernelLaunch& k : plan.kernels) {
        CUfunction f = nullptr;
        r = api.cuModuleGetFunction(&f, m.module, k.symbol.c_str());
        if (r != CUDA_SUCCESS)
            return fail(make_error("cuda", "cuModuleGetFunction(" + k.symbol + ") failed: " +
                                               driver_error_string(api, r)));
        m.functions.push_back(f);
    }
    if (Status s = load_host_library(plan, host_library_path, m); !s) return fail(s.error());
    return m;
}

void unload_module(const DriverApi& api, Module& m) {
    if (m.module) api.cuModuleUnload(m.module);
    if (m.host_library) dlclose(m.host_library);
    m = Module{};
}

Expected<uint64_t> builder_workspace_bytes(const Module& module, const codegen::LaunchPlan& plan,
                                           size_t index, const std::vector<int64_t>& dims,
                                           int sm_count, int device_id) {
    const codegen::KernelLaunch& k = plan.kernels.at(index);
    if (k.param_builder.empty()) return uint64_t{0};
    KforgeParamBuilderFn fn = module.builders.at(index);
    if (!fn) return plan_error(k, "param builder " + k.param_builder + " not loaded");
    // Distinct, 1 MiB-aligned stand-ins: a query stops before anything reads them.
    std::vector<void*> tensors;
    for (size_t i = 0; i < k.builder_tensors.size(); ++i)
        tensors.push_back(reinterpret_cast<void*>(uintptr_t{(i + 1)} << 20));
    std::vector<uint64_t> storage;
    KforgeBuildArgs args = build_args(plan, k, tensors, dims, sm_count, device_id);
    KforgeBuiltLaunch out = built_into(storage);
    int rc = fn(&args, &out);
    if (rc == KFORGE_BUILD_OK) return uint64_t{0};
    if (rc == KFORGE_BUILD_NEED_WORKSPACE) return out.workspace_bytes;
    return plan_error(k, builder_status(k, rc));
}

Expected<PreparedLaunch> prepare_launch(const DriverApi& api, const Module& module,
                                        const codegen::LaunchPlan& plan, size_t index,
                                        const Bindings& b) {
    const codegen::KernelLaunch& k = plan.kernels.at(index);
    PreparedLaunch l;
    l.name = k.name;
    l.function = module.functions.at(index);
    for (int i = 0; i < 3; ++i) {
        l.grid[i] = k.grid[i];
        l.block[i] = k.block[i];
        l.cluster[i] = k.cluster[i];
    }
    l.smem_bytes = k.smem_bytes;
    auto pointer_of = [&](const std::string& name) -> Expected<CUdeviceptr> {
        auto p = b.pointer_of(name);
        if (!p) return plan_error(k, "kernel parameter names unknown buffer '" + name + "'");
        return *p;
    };
    if (!k.param_builder.empty()) {
        KforgeParamBuilderFn fn = module.builders.at(index);
        if (!fn) return plan_error(k, "param builder without a host library");
        std::vector<void*> tensors;
        for (const std::string& name : k.builder_tensors) {
            auto p = pointer_of(name);
            if (!p) return p.error();
            tensors.push_back(reinterpret_cast<void*>(*p));
        }
        KforgeBuildArgs args = build_args(plan, k, tensors, b.dims, b.sm_count, b.device_id);
        KforgeBuiltLaunch out = built_into(l.storage);
        int rc = fn(&args, &out);
        if (rc == KFORGE_BUILD_NEED_WORKSPACE) {
            if (!b.workspace) return plan_error(k, "the builder needs a workspace; none given");
            auto ws = b.workspace(index, out.workspace_bytes);
            if (!ws) return ws.error();
            args.workspace = reinterpret_cast<void*>(*ws);
            rc = fn(&args, &out);
        }
        if (rc != KFORGE_BUILD_OK) return plan_error(k, builder_status(k, rc));
        for (int i = 0; i < 3; ++i) {
            l.grid[i] = out.grid[i];
            l.block[i] = out.block[i];
            l.cluster[i] = out.cluster[i] ? out.cluster[i] : 1;
        }
        l.smem_bytes = out.smem_bytes;
        l.args = {l.storage.data()};
        // a problem split into parts (host ABI 3): each part's blob from its own call
        const uint32_t parts = plan.host_abi_version >= 3 && out.parts > 1 ? out.parts : 1;
        for (uint32_t part = 1; part < parts; ++part) {
            LaunchPart p;
            KforgeBuiltLaunch o = built_into(p.storage);
            args.part = static_cast<int32_t>(part);
            rc = fn(&args, &o);
            if (rc != KFORGE_BUILD_OK)
                return plan_error(k, builder_status(k, rc) + " for part " + std::to_string(part) +
                                         " of " + std::to_string(parts));
            if (o.block[0] != out.block[0] || o.smem_bytes != out.smem_bytes || o.parts != parts)
                return plan_error(k, "part " + std::to_string(part) + " of " + k.param_builder +
                                         " changes the block, shared memory or part count");
            for (int i = 0; i < 3; ++i) p.grid[i] = o.grid[i];
            l.more.push_back(std::move(p));
        }
    } else {
        l.storage.assign(k.params.size(), 0);
        for (size_t i = 0; i < k.params.size(); ++i) {
            const codegen::KernelParam& p = k.params[i];
            void* slot = &l.storage[i];
            switch (p.kind) {
                case codegen::ParamKind::kTensor:
                case codegen::ParamKind::kWorkspace: {
                    auto ptr = pointer_of(p.name);
                    if (!ptr) return ptr.error();
                    CUdeviceptr v = *ptr;
                    std::memcpy(slot, &v, sizeof v);
                    break;
                }
                case codegen::ParamKind::kInt64: std::memcpy(slot, &p.int_value, 8); break;
                case codegen::ParamKind::kInt32: {
                    int32_t v = static_cast<int32_t>(p.int_value);
                    std::memcpy(slot, &v, 4);
                    break;
                }
                case codegen::ParamKind::kFloat32: {
                    float v = static_cast<float>(p.float_value);
                    std::memcpy(slot, &v, 4);
                    break;
                }
                case codegen::ParamKind::kParamBlob:
                    return plan_error(k, "params blob without a param builder");
            }
        }
        for (uint64_t& s : l.storage) l.args.push_back(&s);
    }
    if (!b.set_function_attributes) return l;
    unsigned cluster = l.cluster[0] * l.cluster[1] * l.cluster[2];
    if (cluster > 8) {  // beyond the portable cluster size
        CUresult r = api.cuFuncSetAttribute(
            l.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        if (r != CUDA_SUCCESS)
            return make_error("resources_exceeded", k.name + ": a cluster of " +
                                                        std::to_string(cluster) + " CTAs refused: " +
                                                        driver_error_string(api, r));
    }
    if (l.smem_bytes > 0) {
        CUresult r = api.cuFuncSetAttribute(
            l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(l.smem_bytes));
        if (r != CUDA_SUCCESS)
            return make_error("resources_exceeded", k.name + ": " + std::to_string(l.smem_bytes) +
                                                        " bytes of dynamic shared memory refused: " +
                                                        driver_error_string(api, r));
    }
    return l;
}

Expected<std::vector<std::pair<std::string, CUdeviceptr>>> arena_pointers(
    const codegen::LaunchPlan& plan, CUdeviceptr arena) {
    std::vector<std::pair<std::string, CUdeviceptr>> out;
    for (const codegen::BufferDecl& b : plan.buffers) {
        if (b.offset < 0) return make_error("plan.buffers", b.name + " has no arena offset");
        out.emplace_back(b.name, arena + static_cast<CUdeviceptr>(b.offset));
    }
    return out;
}

LaunchFailure enqueue_launches(const DriverApi& api, std::vector<PreparedLaunch>& launches,
                               CUstream stream, const std::function<LaunchFailure(size_t)>& before) {
    for (size_t i = 0; i < launches.size(); ++i) {
        if (before) {
            LaunchFailure f = before(i);
            if (!f.ok()) return f;
        }
        PreparedLaunch& l = launches[i];
        CUlaunchConfig cfg = launch_config(l.grid, l.block, l.smem_bytes, stream);
        CUlaunchAttribute attr{};
        if (l.cluster[0] * l.cluster[1] * l.cluster[2] != 1) {
            attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.x = l.cluster[0];
            attr.value.clusterDim.y = l.cluster[1];
            attr.value.clusterDim.z = l.cluster[2];
            cfg.attrs = &attr;
            cfg.numAttrs = 1;
        }
        CUresult r = api.cuLaunchKernelEx(&cfg, l.function, l.args.data(), nullptr);
        if (r != CUDA_SUCCESS) return {r, "launch of " + l.name};
        for (size_t p = 0; p < l.more.size(); ++p) {
            LaunchPart& part = l.more[p];
            void* blob = part.storage.data();
            CUlaunchConfig pc = cfg;
            pc.gridDimX = part.grid[0];
            pc.gridDimY = part.grid[1];
            pc.gridDimZ = part.grid[2];
            r = api.cuLaunchKernelEx(&pc, l.function, &blob, nullptr);
            if (r != CUDA_SUCCESS)
                return {r, "launch of " + l.name + " part " + std::to_string(p + 1)};
        }
    }
    return {};
}

}  // namespace kforge::runtime
