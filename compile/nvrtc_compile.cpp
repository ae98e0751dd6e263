// nvrtc_compile_cubin: see nvrtc_compile.h.
#include "compile/nvrtc_compile.h"

#include <memory>
#include <vector>

#include "common/cuda_check.h"

namespace kforge::compile {
namespace {

struct ProgramDeleter {
    void operator()(nvrtcProgram* p) const {
        nvrtcDestroyProgram(p);
        delete p;
    }
};

Expected<std::string> program_log(nvrtcProgram prog) {
    size_t size = 0;
    KFORGE_CUDA_CHECK(nvrtcGetProgramLogSize(prog, &size));
    std::string log(size, '\0');
    if (size > 0) KFORGE_CUDA_CHECK(nvrtcGetProgramLog(prog, log.data()));
    while (!log.empty() && log.back() == '\0') log.pop_back();
    return log;
}

}  // namespace

Expected<NvrtcOutput> nvrtc_compile_cubin(std::string_view source, const CompileOptions& o) {
    std::string code(source);
    std::unique_ptr<nvrtcProgram, ProgramDeleter> prog(new nvrtcProgram{});
    KFORGE_CUDA_CHECK(nvrtcCreateProgram(prog.get(), code.c_str(), "kernels.cu", 0, nullptr,
                                         nullptr));
    std::vector<std::string> opts = {"-arch=" + o.arch, "-std=c++17", "-default-device",
                                     "--ptxas-options=-v", "-DNDEBUG"};
    for (const auto& d : o.include_dirs) opts.push_back("-I" + d);
    opts.push_back("-I" + std::string(KFORGE_CUDA_INCLUDE));
    opts.push_back("-I" + std::string(KFORGE_CUDA_INCLUDE) + "/cccl");  // <cuda/std/...>
    std::vector<const char*> argv;
    for (const auto& s : opts) argv.push_back(s.c_str());
    nvrtcResult rc = nvrtcCompileProgram(*prog, static_cast<int>(argv.size()), argv.data());
    auto log = program_log(*prog);
    if (!log) return log.error();
    if (rc != NVRTC_SUCCESS)
        return make_error("nvrtc", std::string("compile failed: ") + nvrtcGetErrorString(rc), *log);
    size_t size = 0;
    KFORGE_CUDA_CHECK(nvrtcGetCUBINSize(*prog, &size));
    NvrtcOutput out;
    out.cubin.resize(size);
    KFORGE_CUDA_CHECK(nvrtcGetCUBIN(*prog, out.cubin.data()));
    out.log = std::move(*log);
    return out;
}

}  // namespace kforge::compile
