// runtime.json, the exported folder's manifest (runtime/package.h).
#include "runtime/package.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kforge::runtime {
namespace {

using Json = nlohmann::json;

Error bad(const std::string& where, const std::string& message) {
    return make_error(std::string(kManifestFile) + (where.empty() ? "" : " " + where), message);
}

Expected<std::string> read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return make_error(p.string(), "cannot read the file");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

nlohmann::ordered_json to_json(const PackageManifest& m) {
    nlohmann::ordered_json j;
    j["format"] = m.format;
    j["name"] = m.name;
    j["arch"] = m.arch;
    j["built"] = m.built;
    j["plan"] = m.plan_file;
    j["cubin"] = m.cubin_file;
    j["host_library"] = m.host_library_file;
    j["dims"] = nlohmann::ordered_json::array();
    for (const auto& [name, value] : m.dims) j["dims"].push_back({name, value});
    j["tensors"] = nlohmann::ordered_json::array();
    for (const PackageTensor& t : m.tensors)
        j["tensors"].push_back({{"name", t.name}, {"dtype", std::string(to_string(t.dtype))},
                                {"shape", t.shape}, {"role", t.output ? "output" : "input"}});
    return j;
}

Expected<PackageManifest> manifest_from_json(const Json& j) {
    PackageManifest m;
    try {
        if (!j.is_object()) return bad("", "expected an object");
        m.format = j.at("format").get<int>();
        if (m.format != kPackageFormat)
            return bad(".format", "unsupported format " + std::to_string(m.format) + " (this "
                                  "runtime reads " + std::to_string(kPackageFormat) + ")");
        m.name = j.at("name").get<std::string>();
        m.arch = j.at("arch").get<std::string>();
        m.built = j.at("built").get<bool>();
        m.plan_file = j.at("plan").get<std::string>();
        m.cubin_file = j.at("cubin").get<std::string>();
        m.host_library_file = j.at("host_library").get<std::string>();
        for (const Json& d : j.at("dims")) {
            if (!d.is_array() || d.size() != 2) return bad(".dims", "expected [name, value] pairs");
            m.dims.emplace_back(d[0].get<std::string>(), d[1].get<int64_t>());
        }
        for (const Json& t : j.at("tensors")) {
            PackageTensor pt;
            pt.name = t.at("name").get<std::string>();
            auto dt = dtype_from_string(t.at("dtype").get<std::string>());
            if (!dt) return bad(".tensors." + pt.name, "unknown dtype");
            pt.dtype = *dt;
            pt.shape = t.at("shape").get<std::vector<int64_t>>();
            std::string role = t.at("role").get<std::string>();
            if (role != "input" && role != "output")
                return bad(".tensors." + pt.name, "role must be input or output");
            pt.output = role == "output";
            m.tensors.push_back(std::move(pt));
        }
    } catch (const Json::exception& e) {
        return bad("", std::string("malformed: ") + e.what());
    }
    if (m.built && m.cubin_file.empty()) return bad(".cubin", "a built package names its cubin");
    return m;
}

PackageManifest manifest_of(const Problem& problem, const std::string& arch) {
    PackageManifest m;
    m.name = problem.name;
    m.arch = arch;
    for (const auto& [name, value] : problem.dims) m.dims.emplace_back(name, value);
    for (const Tensor* t : problem.graph_inputs())
        m.tensors.push_back({t->name, t->dtype, t->shape, false});
    for (const std::string& name : problem.outputs) {
        const Tensor* t = problem.find_tensor(name);
        if (t) m.tensors.push_back({t->name, t->dtype, t->shape, true});
    }
    return m;
}

Expected<Package> read_package(const std::string& dir) {
    namespace fs = std::filesystem;
    Package p;
    p.dir = dir;
    auto text = read_text(fs::path(dir) / kManifestFile);
    if (!text) return make_error(dir, "not an exported kforge program: no readable " +
                                          std::string(kManifestFile));
    Json j = Json::parse(*text, nullptr, false);
    if (j.is_discarded()) return bad("", "not valid JSON");
    auto m = manifest_from_json(j);
    if (!m) return m.error();
    p.manifest = std::move(*m);
    auto plan_text = read_text(fs::path(dir) / p.manifest.plan_file);
    if (!plan_text) return plan_text.error();
    Json pj = Json::parse(*plan_text, nullptr, false);
    if (pj.is_discarded()) return make_error(p.manifest.plan_file, "not valid JSON");
    auto plan = codegen::launch_plan_from_json(pj);
    if (!plan) return plan.error();
    p.plan = std::move(*plan);
    return p;
}

}  // namespace kforge::runtime
