// nvrtc_compile_cubin: see nvrtc_compile.h.
#include "compile/nvrtc_compile.h"

// NVRTC is loaded with dlopen on first use (libnvrtc.so.<CUDA major>, else the toolkit's lib
// folder), so kforge starts without it: commands that compile nothing never load it, and a
// machine without NVRTC gets an Error here (the caller falls back to nvcc).
#include <cuda.h>  // CUDA_VERSION
#include <dlfcn.h>
#include <nvrtc.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace kforge::compile {
namespace {

struct NvrtcApi {
    decltype(&::nvrtcCreateProgram) create_program = nullptr;
    decltype(&::nvrtcCompileProgram) compile_program = nullptr;
    decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
    decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
    decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
    decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
    decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
    decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
};

Expected<NvrtcApi> load_nvrtc() {
    const std::string soname = "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
    const std::string toolkit = std::string(KFORGE_CUDA_INCLUDE) + "/..";
    void* lib = nullptr;
    for (const std::string& name :
         {soname, toolkit + "/lib64/" + soname, toolkit + "/lib/" + soname})
        if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
        const char* why = dlerror();
        return make_error("nvrtc", "cannot load NVRTC (" + soname + "): " +
                                       (why ? why : "not found"));
    }
    NvrtcApi api;
    std::string missing;
    auto load = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
        if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    load(api.create_program, "nvrtcCreateProgram");
    load(api.compile_program, "nvrtcCompileProgram");
    load(api.destroy_program, "nvrtcDestroyProgram");
    load(api.get_program_log_size, "nvrtcGetProgramLogSize");
    load(api.get_program_log, "nvrtcGetProgramLog");
    load(api.get_cubin_size, "nvrtcGetCUBINSize");
    load(api.get_cubin, "nvrtcGetCUBIN");
    load(api.get_error_string, "nvrtcGetErrorString");
    if (!missing.empty()) return make_error("nvrtc", soname + " lacks " + missing);
    return api;
}

Expected<const NvrtcApi*> nvrtc_api() {
    static std::once_flag once;
    static std::optional<Expected<NvrtcApi>> loaded;
    std::call_once(once, [] { loaded.emplace(load_nvrtc()); });
    if (!loaded->ok()) return loaded->error();
    return &loaded->value();
}

// An Error naming the call when `r` is not NVRTC_SUCCESS.
Status check(const NvrtcApi& api, nvrtcResult r, const char* call) {
    if (r == NVRTC_SUCCESS) return Ok{};
    return make_error("nvrtc", std::string(call) + " failed: " + api.get_error_string(r));
}

Expected<std::string> program_log(const NvrtcApi& api, nvrtcProgram prog) {
    size_t size = 0;
    if (auto s = check(api, api.get_program_log_size(prog, &size), "nvrtcGetProgramLogSize"); !s)
        return s.error();
    std::string log(size, '\0');
    if (size > 0)
        if (auto s = check(api, api.get_program_log(prog, log.data()), "nvrtcGetProgramLog"); !s)
            return s.error();
    while (!log.empty() && log.back() == '\0') log.pop_back();
    return log;
}

}  // namespace

Expected<NvrtcOutput> nvrtc_compile_cubin(std::string_view source, const CompileOptions& o) {
    auto loaded = nvrtc_api();
    if (!loaded) return loaded.error();
    const NvrtcApi& api = **loaded;
    std::string code(source);
    auto destroy = [&api](nvrtcProgram* p) {
        if (*p) api.destroy_program(p);
        delete p;
    };
    std::unique_ptr<nvrtcProgram, decltype(destroy)> prog(new nvrtcProgram{}, destroy);
    if (auto s = check(api, api.create_program(prog.get(), code.c_str(), "kernels.cu", 0, nullptr,
                                               nullptr), "nvrtcCreateProgram"); !s)
        return s.error();
    std::vector<std::string> opts = {"-arch=" + o.arch, "-std=c++17", "-default-device",
                                     "--ptxas-options=-v", "-DNDEBUG"};
    for (const auto& d : o.include_dirs) opts.push_back("-I" + d);
    opts.push_back("-I" + std::string(KFORGE_CUDA_INCLUDE));
    opts.push_back("-I" + std::string(KFORGE_CUDA_INCLUDE) + "/cccl");  // <cuda/std/...>
    std::vector<const char*> argv;
    for (const auto& s : opts) argv.push_back(s.c_str());
    nvrtcResult rc = api.compile_program(*prog, static_cast<int>(argv.size()), argv.data());
    auto log = program_log(api, *prog);
    if (!log) return log.error();
    if (rc != NVRTC_SUCCESS)
        return make_error("nvrtc", std::string("compile failed: ") + api.get_error_string(rc),
                          *log);
    size_t size = 0;
    if (auto s = check(api, api.get_cubin_size(*prog, &size), "nvrtcGetCUBINSize"); !s)
        return s.error();
    NvrtcOutput out;
    out.cubin.resize(size);
    if (auto s = check(api, api.get_cubin(*prog, out.cubin.data()), "nvrtcGetCUBIN"); !s)
        return s.error();
    out.log = std::move(*log);
    return out;
}

}  // namespace kforge::compile
