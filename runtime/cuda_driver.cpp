#include "runtime/cuda_driver.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <type_traits>

#include <mutex>
#include <optional>

namespace kforge::runtime {
namespace {

Expected<DriverApi> load_driver() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = dlerror();
        return make_error("cuda", std::string("cannot load the CUDA driver (libcuda.so.1): ") +
                                      (why ? why : "not found") + "; is an NVIDIA driver installed?");
    }
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
    if (!get_proc)
        return make_error("cuda", "the CUDA driver is too old: no cuGetProcAddress_v2 (CUDA 12+ "
                                  "driver needed)");
    DriverApi api;
    std::string missing;
#define KFORGE_DRIVER_LOAD(name, version)                                                \
    {                                                                                    \
        static_assert(std::is_same_v<decltype(api.name), PFN_##name##_v##version>,       \
                      #name ": cuda.h's prototype is not the ABI of version " #version); \
        void* fn = nullptr;                                                              \
        CUdriverProcAddressQueryResult q{};                                              \
        if (get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &q) !=            \
                CUDA_SUCCESS || !fn)                                                     \
            missing += std::string(missing.empty() ? "" : ", ") + #name;                 \
        api.name = reinterpret_cast<decltype(api.name)>(fn);                             \
    }
    KFORGE_DRIVER_FUNCTIONS(KFORGE_DRIVER_LOAD)
#undef KFORGE_DRIVER_LOAD
    if (!missing.empty())
        return make_error("cuda", "the CUDA driver lacks entry points for CUDA " +
                                      std::to_string(CUDA_VERSION) + ": " + missing +
                                      " (update the driver)");
    CUresult r = api.cuInit(0);
    if (r != CUDA_SUCCESS) return make_error("cuda", "cuInit failed: " + driver_error_string(api, r));
    return api;
}

}  // namespace

Expected<const DriverApi*> driver_api() {
    static std::once_flag once;
    static std::optional<Expected<DriverApi>> loaded;
    std::call_once(once, [] { loaded.emplace(load_driver()); });
    if (!loaded->ok()) return loaded->error();
    return &loaded->value();
}

std::string driver_error_string(const DriverApi& api, CUresult r) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (api.cuGetErrorName) api.cuGetErrorName(r, &name);
    if (api.cuGetErrorString) api.cuGetErrorString(r, &text);
    return std::string(name ? name : ("CUresult " + std::to_string(static_cast<int>(r))).c_str()) +
           ": " + (text ? text : "unknown driver error");
}

}  // namespace kforge::runtime
