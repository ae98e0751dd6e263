// The JSON form of tensor values (problem/values_json.h).
#include "problem/values_json.h"

#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/atomic_file.h"
#include "problem/spec.h"

namespace kforge {
namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

Expected<double> value_of(const json& v, const std::string& where) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
        std::string s = v.get<std::string>();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    return make_error(where, "expected a number (or \"nan\", \"inf\", \"-inf\")");
}

json number_json(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return x;
}

// The raw file's bytes are little-endian doubles; on a big-endian host each is swapped.
void from_little_endian(std::vector<double>& v) {
    if constexpr (std::endian::native == std::endian::big) {
        for (double& x : v) {
            unsigned char b[sizeof(double)];
            std::memcpy(b, &x, sizeof b);
            for (size_t i = 0; i < sizeof b / 2; ++i) std::swap(b[i], b[sizeof b - 1 - i]);
            std::memcpy(&x, b, sizeof b);
        }
    }
}

// The values of `name` from its raw file `file` (relative to `folder`); `numel` >= 0: the count
// it must hold (its tensor's), -1: any whole number of doubles.
Expected<std::vector<double>> read_f64_file(const std::string& where, const std::string& name,
                                            const std::string& file, const fs::path& folder,
                                            int64_t numel, const Tensor* tensor) {
    const fs::path p = folder / file;
    std::error_code ec;
    const auto bytes = fs::file_size(p, ec);
    if (ec || !fs::is_regular_file(p))
        return make_error(where, "cannot read the f64_file of tensor \"" + name + "\": " +
                                     p.string() + (ec ? " (" + ec.message() + ")" : ""));
    auto shape_text = [&] {
        std::string s = "[";
        for (size_t i = 0; i < tensor->shape.size(); ++i)
            s += (i ? ", " : "") + std::to_string(tensor->shape[i]);
        return s + "]";
    };
    if (numel >= 0 && bytes != static_cast<uintmax_t>(numel) * sizeof(double))
        return make_error(where, "the f64_file of tensor \"" + name + "\" (" + p.string() +
                                     ") holds " + std::to_string(bytes) + " bytes; its shape " +
                                     shape_text() + " needs " + std::to_string(numel) +
                                     " float64 values = " +
                                     std::to_string(numel * int64_t{sizeof(double)}) + " bytes");
    if (bytes % sizeof(double) != 0)
        return make_error(where, "the f64_file of tensor \"" + name + "\" (" + p.string() +
                                     ") holds " + std::to_string(bytes) +
                                     " bytes, not a whole number of float64 values");
    std::vector<double> v(bytes / sizeof(double));
    std::ifstream in(p, std::ios::binary);
    if (!in || !in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes)))
        return make_error(where, "cannot read the f64_file of tensor \"" + name + "\": " +
                                     p.string());
    from_little_endian(v);
    return v;
}

// `name` as a file name where it is one plainly (letters, digits, '_', '-', '.'; not starting
// with '.'), else "output<index>".
std::string output_file_name(const std::string& name, size_t index) {
    bool plain = !name.empty() && name.size() <= 200 && name[0] != '.';
    for (char c : name)
        plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                          c == '.');
    return (plain ? name : "output" + std::to_string(index)) + ".bin";
}

}  // namespace

Expected<TensorValues> read_values_file(const std::string& path, const Problem* problem) {
    std::ifstream in(path);
    if (!in) return make_error(path, "cannot read the inputs file");
    json j = json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return make_error(path, "expected a JSON object {\"name\": [values] or "
                                "{\"f64_file\": \"NAME.bin\"}, ...}");
    const fs::path folder = fs::path(path).parent_path();
    TensorValues values;
    for (const auto& [name, item] : j.items()) {
        const std::string where = path + ": " + name;
        if (item.is_object()) {
            auto file = item.find("f64_file");
            if (item.size() != 1 || file == item.end() || !file->is_string())
                return make_error(where, "expected {\"f64_file\": \"NAME.bin\"} (a raw file of "
                                         "little-endian float64 values, row-major)");
            const Tensor* t = problem ? problem->find_tensor(name) : nullptr;
            if (t && (t->role == TensorRole::kIntermediate || t->role == TensorRole::kOutput))
                t = nullptr;  // (interpret() says it is no input)
            auto v = read_f64_file(where, name, file->get<std::string>(), folder,
                                   t ? t->numel() : -1, t);
            if (!v) return v.error();
            values[name] = std::move(*v);
            continue;
        }
        if (!item.is_array())
            return make_error(where, "expected an array of numbers or {\"f64_file\": ...}");
        std::vector<double> v;
        v.reserve(item.size());
        for (size_t i = 0; i < item.size(); ++i) {
            auto x = value_of(item[i], where + "[" + std::to_string(i) + "]");
            if (!x) return x.error();
            v.push_back(*x);
        }
        values[name] = std::move(v);
    }
    return values;
}

json outputs_to_json(const Problem& problem, const TensorValues& outputs) {
    json out;
    out["dims"] = problem.dims;
    out["outputs"] = json::object();
    for (const std::string& name : problem.outputs) {
        const Tensor* t = problem.find_tensor(name);
        json data = json::array();
        for (double x : outputs.at(name)) data.push_back(number_json(x));
        out["outputs"][name] = {{"shape", t->shape}, {"data", std::move(data)}};
    }
    return out;
}

Expected<json> write_outputs_binary(const Problem& problem, const TensorValues& outputs,
                                    const OutputFiles& files) {
    std::error_code ec;
    fs::create_directories(files.dir, ec);
    if (ec) return make_error(files.dir, "cannot create the outputs folder: " + ec.message());
    const fs::path base = files.base.empty() ? fs::current_path() : fs::path(files.base);
    json out;
    out["dims"] = problem.dims;
    out["outputs"] = json::object();
    for (size_t i = 0; i < problem.outputs.size(); ++i) {
        const std::string& name = problem.outputs[i];
        const Tensor* t = problem.find_tensor(name);
        const std::vector<double>* v = &outputs.at(name);
        std::vector<double> swapped;
        if constexpr (std::endian::native == std::endian::big) {
            swapped = *v;
            from_little_endian(swapped);  // (the same swap: its own inverse)
            v = &swapped;
        }
        const fs::path p = fs::path(files.dir) / output_file_name(name, i);
        auto st = write_file_atomic(p, std::string_view(reinterpret_cast<const char*>(v->data()),
                                                        v->size() * sizeof(double)));
        if (!st) return st.error();
        fs::path rel = fs::relative(fs::absolute(p), fs::absolute(base), ec);
        out["outputs"][name] = {{"shape", t->shape},
                                {"f64_file", ec || rel.empty() ? fs::absolute(p).string()
                                                               : rel.string()}};
    }
    return out;
}

Expected<json> interpret_files(const std::string& spec_path,
                               const std::map<std::string, int64_t>& dims,
                               const std::string& inputs_path, const OutputFiles& files,
                               int64_t max_elements) {
    auto problem = load_problem(spec_path);
    if (!problem) return problem.error();
    if (!dims.empty()) {
        auto rebound = rebind_dims(*problem, dims);
        if (!rebound) return rebound.error();
        problem = std::move(rebound);
    }
    auto inputs = read_values_file(inputs_path, &*problem);
    if (!inputs) return inputs.error();
    auto outputs = interpret(*problem, *inputs, max_elements);
    if (!outputs) return outputs.error();
    if (!files.dir.empty()) return write_outputs_binary(*problem, *outputs, files);
    return outputs_to_json(*problem, *outputs);
}

}  // namespace kforge
