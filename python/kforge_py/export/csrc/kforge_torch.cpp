// kforge_torch: the compiled PyTorch side of exported kforge programs (issue 23). One generic
// extension for every export: register_op() registers, for an op `kforge::<name>` whose schema
// the package has defined (torch.library), a boxed kernel for the CUDA and CPU dispatch keys and
// the autograd not-implemented kernel, so that a call goes Python -> dispatcher -> this file ->
// libkforge_runtime.so's kforge_rt_launch without running Python.
//
// Per call the kernel checks the tensors against the export (dtype, exact shape, device, one
// device, contiguity: ValueError with the same words as the package's Python check), allocates
// the outputs and the workspace through torch's caching allocator on the tensors' device, and
// launches on torch's current stream of that device; it never synchronizes, so it can be
// captured in a CUDA graph. A CPU call gets the same checks (and so the "is on cpu" ValueError).
//
// What is per device (the program loaded there, its workspace size: the GPU arch check, the
// --no-build refusal, the runtime library) stays in the package's Python (Program.native_entry),
// which this file calls once per device under the GIL; its RuntimeError comes back unchanged.
// The runtime's C functions come as addresses from the package's ctypes handle on
// libkforge_runtime.so, so both paths share one loaded program. Needs no CUDA header: the stream
// and the device come from c10's device-generic interfaces.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>
#include <torch/version.h>

#include <array>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;

namespace {

// The interface between this file and the package's Python (bumped on any change of
// register_op's arguments or of native_entry's result).
constexpr int kInterface = 1;
// runtime/kforge_runtime.h's ABI version and the two functions used, as declared there.
constexpr int kRuntimeAbi = 1;
using LaunchFn = int32_t (*)(void* program, void* stream, void* const* tensors,
                             int32_t num_tensors, void* workspace, uint64_t workspace_bytes);
using LastErrorFn = const char* (*)();
constexpr int kMaxDevices = 64;

const char* status_name(int32_t s) {  // kforge_rt_status_name's words (the Python path's too)
    static const char* const names[] = {"ok",     "invalid_argument", "bad_package",
                                        "not_built", "no_gpu",        "wrong_arch",
                                        "wrong_context", "cuda_error", "builder_failed"};
    return s >= 0 && s < 9 ? names[s] : "unknown";
}

// torch's Python names of the dtypes an export can take ("float32", as str(torch.float32)
// without "torch.").
struct DtypeName {
    c10::ScalarType type;
    const char* name;
};
constexpr std::array<DtypeName, 6> kDtypes = {{{c10::ScalarType::Float, "float32"},
                                               {c10::ScalarType::Half, "float16"},
                                               {c10::ScalarType::BFloat16, "bfloat16"},
                                               {c10::ScalarType::Double, "float64"},
                                               {c10::ScalarType::Int, "int32"},
                                               {c10::ScalarType::Long, "int64"}}};

std::string dtype_name(c10::ScalarType t) {
    for (const DtypeName& d : kDtypes)
        if (d.type == t) return d.name;
    std::string s = c10::toString(t);
    return s;
}

c10::ScalarType dtype_from_name(const std::string& name) {
    for (const DtypeName& d : kDtypes)
        if (name == d.name) return d.type;
    throw std::invalid_argument("kforge_torch: unknown dtype '" + name + "'");
}

std::string shape_text(c10::IntArrayRef s) {  // Python's list repr: [2, 3]
    std::ostringstream o;
    o << '[';
    for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
    o << ']';
    return o.str();
}

struct TensorDecl {
    std::string name;
    c10::ScalarType dtype;
    std::vector<int64_t> shape;
};

// The program loaded on one device (from the package's Program.native_entry).
struct DeviceEntry {
    void* program = nullptr;
    uint64_t workspace_bytes = 0;
    LaunchFn launch = nullptr;
    LastErrorFn last_error = nullptr;
};

struct OpState {
    std::string where;  // "kforge::<name>"
    std::vector<TensorDecl> inputs;
    std::vector<TensorDecl> outputs;
    PyObject* native_entry = nullptr;  // a reference held for the process (never released: the
                                       // dispatcher may outlive the interpreter's teardown)
    std::mutex mutex;
    std::array<DeviceEntry, kMaxDevices> devices{};  // program == nullptr: not loaded yet

    // The named check of the Python path (Program.check), in its order; throws.
    [[noreturn]] void fail_check(c10::ArrayRef<c10::IValue> args) const {
        c10::Device device(c10::DeviceType::CPU);
        bool have_device = false;
        for (size_t i = 0; i < inputs.size(); ++i) {
            const TensorDecl& d = inputs[i];
            const at::Tensor& x = args[i].toTensor();
            TORCH_CHECK_VALUE(x.scalar_type() == d.dtype, where, ": input '", d.name,
                              "' has dtype ", dtype_name(x.scalar_type()),
                              "; the exported program takes ", dtype_name(d.dtype));
            TORCH_CHECK_VALUE(x.sizes() == c10::IntArrayRef(d.shape), where, ": input '", d.name,
                              "' has shape ", shape_text(x.sizes()),
                              "; the exported program takes exactly ", shape_text(d.shape),
                              " (it was exported for one shape)");
            TORCH_CHECK_VALUE(x.is_cuda(), where, ": input '", d.name, "' is on ",
                              x.device().str(),
                              "; the exported program runs on CUDA only (no CPU fallback)");
            if (!have_device) {
                device = x.device();
                have_device = true;
            } else {
                TORCH_CHECK_VALUE(x.device() == device, where, ": input '", d.name, "' is on ",
                                  x.device().str(), ", '", inputs[0].name, "' on ", device.str(),
                                  ": all on one device");
            }
            TORCH_CHECK_VALUE(x.is_contiguous(), where, ": input '", d.name,
                              "' is not contiguous (call .contiguous() first)");
        }
        TORCH_CHECK(false, where, ": internal error: the call's check found no mismatch");
    }

    // The device index every input is on, or a named ValueError.
    c10::DeviceIndex check(c10::ArrayRef<c10::IValue> args) const {
        c10::DeviceIndex index = -1;
        for (size_t i = 0; i < inputs.size(); ++i) {
            const TensorDecl& d = inputs[i];
            const at::Tensor& x = args[i].toTensor();
            if (x.scalar_type() != d.dtype || x.sizes() != c10::IntArrayRef(d.shape) ||
                !x.is_cuda() || !x.is_contiguous() || (i > 0 && x.get_device() != index))
                fail_check(args);
            index = static_cast<c10::DeviceIndex>(x.get_device());
        }
        return index;
    }

    DeviceEntry entry(c10::DeviceIndex index) {
        TORCH_CHECK(index >= 0 && index < kMaxDevices, where, ": cuda:", int(index),
                    " is beyond the ", kMaxDevices, " devices kforge_torch serves");
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (devices[index].program) return devices[index];
        }
        DeviceEntry e = load(index);  // Python, under the GIL (outside the mutex)
        std::lock_guard<std::mutex> lock(mutex);
        if (!devices[index].program) devices[index] = e;
        return devices[index];
    }

    // Program.native_entry(index) -> (program, workspace bytes, kforge_rt_launch,
    // kforge_rt_last_error, kforge_rt_abi_version()); its exception, as the same Python type.
    DeviceEntry load(c10::DeviceIndex index) {
        std::string message;
        bool value_error = false;
        DeviceEntry e;
        int abi = 0;
        {
            py::gil_scoped_acquire gil;
            try {
                py::tuple r = py::reinterpret_borrow<py::object>(native_entry)(int(index));
                e.program = reinterpret_cast<void*>(r[0].cast<uintptr_t>());
                e.workspace_bytes = r[1].cast<uint64_t>();
                e.launch = reinterpret_cast<LaunchFn>(r[2].cast<uintptr_t>());
                e.last_error = reinterpret_cast<LastErrorFn>(r[3].cast<uintptr_t>());
                abi = r[4].cast<int>();
            } catch (py::error_already_set& err) {
                value_error = err.matches(PyExc_ValueError);
                message = py::str(err.value());
            } catch (const std::exception& err) {
                message = where + ": loading the program: " + err.what();
            }
        }
        TORCH_CHECK_VALUE(!value_error, message);
        TORCH_CHECK(message.empty(), message);
        TORCH_CHECK(e.program && e.launch && e.last_error, where,
                    ": the package's native_entry returned a null program or function");
        TORCH_CHECK(abi == kRuntimeAbi, where, ": libkforge_runtime.so has ABI version ", abi,
                    "; kforge_torch was built for ", kRuntimeAbi,
                    " (export again with this kforge)");
        return e;
    }
};

// The CUDA (and CPU) kernel: check, outputs, workspace, launch on the current stream.
class LaunchKernel final : public c10::OperatorKernel {
   public:
    explicit LaunchKernel(std::shared_ptr<OpState> state) : state_(std::move(state)) {}

    void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* stack) {
        OpState& s = *state_;
        const size_t n = s.inputs.size();
        auto args = torch::jit::last(*stack, n);
        const c10::DeviceIndex index = s.check(args);
        const DeviceEntry e = s.entry(index);
        const c10::Device device(c10::DeviceType::CUDA, index);
        c10::DeviceGuard guard(device);
        c10::SmallVector<at::Tensor, 4> outs;
        for (const TensorDecl& d : s.outputs)
            outs.push_back(at::empty(d.shape, at::TensorOptions().dtype(d.dtype).device(device)));
        // from the caching allocator, on the current stream: reused by the next call (or the
        // graph's private pool under capture)
        at::Tensor workspace;
        if (e.workspace_bytes)
            workspace = at::empty({static_cast<int64_t>(e.workspace_bytes)},
                                  at::TensorOptions().dtype(at::kByte).device(device));
        c10::SmallVector<void*, 16> ptrs;
        for (const c10::IValue& v : args) ptrs.push_back(v.toTensor().data_ptr());
        for (const at::Tensor& t : outs) ptrs.push_back(t.data_ptr());
        void* stream = guard_impl()->getStream(device).native_handle();
        int32_t rc = e.launch(e.program, stream, ptrs.data(), static_cast<int32_t>(ptrs.size()),
                              workspace.defined() ? workspace.data_ptr() : nullptr,
                              e.workspace_bytes);
        TORCH_CHECK(rc == 0, s.where, ": the launch failed (", status_name(rc), "): ",
                    e.last_error());
        torch::jit::drop(*stack, n);
        for (at::Tensor& t : outs) torch::jit::push(*stack, std::move(t));
    }

   private:
    static const c10::impl::DeviceGuardImplInterface* guard_impl() {
        static const c10::impl::DeviceGuardImplInterface* impl =
            c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
        return impl;
    }
    std::shared_ptr<OpState> state_;
};

std::vector<TensorDecl> decls(const std::vector<std::tuple<std::string, std::string,
                                                           std::vector<int64_t>>>& in) {
    std::vector<TensorDecl> out;
    for (const auto& [name, dtype, shape] : in) out.push_back({name, dtype_from_name(dtype), shape});
    return out;
}

// register_op("<name>", inputs, outputs, native_entry): inputs and outputs as (name, dtype
// name, shape) in call order; kforge::<name> must be defined (its schema) by the caller.
void register_op(const std::string& name,
                 const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>& inputs,
                 const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>& outputs,
                 py::object native_entry) {
    auto schema = c10::Dispatcher::singleton().findSchema({"kforge::" + name, ""});
    if (!schema)
        throw std::invalid_argument("kforge_torch.register_op: kforge::" + name +
                                    " is not defined (define its schema first)");
    auto state = std::make_shared<OpState>();
    state->where = "kforge::" + name;
    state->inputs = decls(inputs);
    state->outputs = decls(outputs);
    if (schema->schema().arguments().size() != state->inputs.size() ||
        schema->schema().returns().size() != state->outputs.size())
        throw std::invalid_argument("kforge_torch.register_op: kforge::" + name +
                                    "'s schema does not take the export's tensors");
    state->native_entry = native_entry.release().ptr();
    // Kept for the process: a Library's destructor would deregister the kernels.
    auto* lib = new torch::Library(torch::Library::IMPL, "kforge", std::nullopt, __FILE__, __LINE__);
    for (c10::DispatchKey key : {c10::DispatchKey::CUDA, c10::DispatchKey::CPU})
        lib->impl(name.c_str(),
                  torch::dispatch(key, torch::CppFunction::makeFromBoxedFunctor(
                                           std::make_unique<LaunchKernel>(state))));
    lib->impl(name.c_str(), torch::dispatch(c10::DispatchKey::Autograd,
                                            torch::autograd::autogradNotImplementedFallback()));
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "kforge's compiled PyTorch op for exported programs (python/kforge_py/export)";
    m.attr("INTERFACE") = kInterface;
    m.attr("RUNTIME_ABI") = kRuntimeAbi;
    m.attr("TORCH_VERSION") = TORCH_VERSION;  // the torch headers it was compiled against
    m.def("register_op", &register_op, py::arg("name"), py::arg("inputs"), py::arg("outputs"),
          py::arg("native_entry"));
}
