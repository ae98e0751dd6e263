// kforge_torch: the compiled PyTorch side of exported kforge programs (issue 23). One generic
// library for every export, loaded with ctypes after `import torch`: kforge_torch_register()
// registers, for an op `kforge::<name>` whose schema the package has defined (torch.library), a
// boxed kernel for the CUDA and CPU dispatch keys and autograd's not-implemented kernel, so that
// a call goes Python -> dispatcher -> this file -> libkforge_runtime.so's kforge_rt_launch without
// running Python.
//
// Per call the kernel checks the tensors against the export (dtype, exact shape, device, one
// device, contiguity: ValueError with the same words as the package's Python check), allocates
// the outputs and the workspace through torch's caching allocator on the tensors' device, and
// launches on torch's current stream of that device; it never synchronizes, so it can be
// captured in a CUDA graph. A CPU call gets the same checks (and so the "is on cpu" ValueError).
//
// What is per device (the program loaded there, its workspace size: the GPU arch check, the
// --no-build refusal, the runtime library) stays in the package's Python (Program.native_entry),
// which this file calls once per device through a ctypes callback; its error comes back as a
// ValueError or RuntimeError with the same words. The runtime's C functions come as addresses from
// the package's ctypes handle on libkforge_runtime.so, so both paths share one loaded program.
// Needs neither CUDA nor Python headers: the stream and the device come from c10's
// device-generic interfaces, and the interface to Python is C (ctypes), so a C++ compiler and
// torch's headers build it.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>
#include <torch/version.h>

#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

// The interface between this file and the package's Python (native.py's INTERFACE: bumped on any
// change of kforge_torch_register's arguments or of the entry callback).
constexpr int kInterface = 2;
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
constexpr std::array<DtypeName, 7> kDtypes = {{{c10::ScalarType::Float, "float32"},
                                               {c10::ScalarType::Half, "float16"},
                                               {c10::ScalarType::BFloat16, "bfloat16"},
                                               {c10::ScalarType::Double, "float64"},
                                               {c10::ScalarType::Int, "int32"},
                                               {c10::ScalarType::Long, "int64"},
                                               {c10::ScalarType::Bool, "bool"}}};

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

}  // namespace

// The program loaded on one device, as the package's callback fills it (Program.native_entry).
struct kforge_torch_entry {
    void* program;
    uint64_t workspace_bytes;
    void* launch;      // kforge_rt_launch
    void* last_error;  // kforge_rt_last_error
    int32_t runtime_abi;
};
// The callback: 0 and *entry filled, or 1 (ValueError) / 2 (RuntimeError) and the message.
using EntryCallback = int32_t (*)(int32_t device, kforge_torch_entry* entry, char* message,
                                  uint64_t message_bytes);

namespace {

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
    // The schema takes the inputs as one list (`Tensor[] inputs`): a program of more inputs
    // than PyTorch's 64 schema arguments (a network's weights).
    bool packed = false;
    EntryCallback native_entry = nullptr;  // the package keeps the ctypes callback alive
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

    // The package's Program.native_entry(index), through its ctypes callback (which takes the
    // GIL); its error as the same Python type (ValueError or RuntimeError) and words.
    DeviceEntry load(c10::DeviceIndex index) {
        kforge_torch_entry raw{};
        std::array<char, 4096> message{};
        int32_t rc = native_entry(index, &raw, message.data(), message.size());
        message.back() = '\0';
        std::string why = message.data();
        if (why.empty()) why = where + ": loading the program on cuda:" + std::to_string(index) + " failed";
        TORCH_CHECK_VALUE(rc != 1, why);
        TORCH_CHECK(rc == 0, why);
        TORCH_CHECK(raw.program && raw.launch && raw.last_error, where,
                    ": the package's native_entry returned a null program or function");
        TORCH_CHECK(raw.runtime_abi == kRuntimeAbi, where, ": libkforge_runtime.so has ABI "
                    "version ", raw.runtime_abi, "; kforge_torch was built for ", kRuntimeAbi,
                    " (export again with this kforge)");
        DeviceEntry e;
        e.program = raw.program;
        e.workspace_bytes = raw.workspace_bytes;
        e.launch = reinterpret_cast<LaunchFn>(raw.launch);
        e.last_error = reinterpret_cast<LastErrorFn>(raw.last_error);
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
        c10::SmallVector<c10::IValue, 16> unpacked;  // a packed call's list, one per tensor
        c10::ArrayRef<c10::IValue> args;
        size_t on_stack = n;
        if (s.packed) {
            on_stack = 1;
            c10::List<at::Tensor> list = stack->back().toTensorList();
            TORCH_CHECK_VALUE(list.size() == n, s.where, " takes ", n, " tensors, got ",
                              list.size());
            for (size_t i = 0; i < list.size(); ++i) unpacked.emplace_back(list.get(i));
            args = unpacked;
        } else {
            args = torch::jit::last(*stack, n);
        }
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
        torch::jit::drop(*stack, on_stack);
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

std::vector<TensorDecl> decls(int32_t n, const char* const* names, const char* const* dtypes,
                              const int32_t* ranks, const int64_t* dims) {
    std::vector<TensorDecl> out;
    for (int32_t i = 0; i < n; ++i) {
        TensorDecl d{names[i], dtype_from_name(dtypes[i]), {}};
        d.shape.assign(dims, dims + ranks[i]);
        dims += ranks[i];
        out.push_back(std::move(d));
    }
    return out;
}

void copy_message(const std::string& text, char* out, uint64_t bytes) {
    if (!out || bytes == 0) return;
    size_t n = std::min<size_t>(text.size(), bytes - 1);
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int32_t kforge_torch_interface() { return kInterface; }

// The torch headers it was compiled against ("2.15.0").
__attribute__((visibility("default"))) const char* kforge_torch_version() { return TORCH_VERSION; }

// Registers kforge::<name>'s kernels (its schema must be defined): the inputs and outputs in call
// order as names, torch dtype names ("float32") and shapes (ranks, then every dim in a row). A
// schema of one list argument takes the inputs packed in that list (interface 2).
// 0, or 1 and the reason in `message`.
__attribute__((visibility("default"))) int32_t kforge_torch_register(
    const char* name, int32_t num_inputs, const char* const* input_names,
    const char* const* input_dtypes, const int32_t* input_ranks, const int64_t* input_dims,
    int32_t num_outputs, const char* const* output_names, const char* const* output_dtypes,
    const int32_t* output_ranks, const int64_t* output_dims, EntryCallback native_entry,
    char* message, uint64_t message_bytes) {
    try {
        const std::string op = name;
        auto schema = c10::Dispatcher::singleton().findSchema({"kforge::" + op, ""});
        if (!schema)
            throw std::invalid_argument("kforge::" + op + " is not defined (define its schema first)");
        auto state = std::make_shared<OpState>();
        state->where = "kforge::" + op;
        state->inputs = decls(num_inputs, input_names, input_dtypes, input_ranks, input_dims);
        state->outputs = decls(num_outputs, output_names, output_dtypes, output_ranks, output_dims);
        const auto& arguments = schema->schema().arguments();
        state->packed = arguments.size() == 1 && state->inputs.size() != 1 &&
                        arguments[0].type()->kind() == c10::TypeKind::ListType;
        if ((!state->packed && arguments.size() != state->inputs.size()) ||
            schema->schema().returns().size() != state->outputs.size())
            throw std::invalid_argument("kforge::" + op + "'s schema does not take the export's tensors");
        if (!native_entry) throw std::invalid_argument("no native_entry callback");
        state->native_entry = native_entry;
        // Kept for the process: a Library's destructor would deregister the kernels.
        auto* lib = new torch::Library(torch::Library::IMPL, "kforge", std::nullopt, __FILE__,
                                       __LINE__);
        for (c10::DispatchKey key : {c10::DispatchKey::CUDA, c10::DispatchKey::CPU})
            lib->impl(op.c_str(), torch::dispatch(key, torch::CppFunction::makeFromBoxedFunctor(
                                                           std::make_unique<LaunchKernel>(state))));
        lib->impl(op.c_str(), torch::dispatch(c10::DispatchKey::Autograd,
                                              torch::autograd::autogradNotImplementedFallback()));
        return 0;
    } catch (const std::exception& e) {
        copy_message(std::string("kforge_torch_register: ") + e.what(), message, message_bytes);
        return 1;
    }
}

}  // extern "C"
