// What optimize and suite share around a search (driver/search_session.h).
#include "driver/search_session.h"

#include <filesystem>

#include "common/atomic_file.h"
#include "search/proposers.h"

namespace kforge::driver {

OpenedSession open_search_session(const SearchSessionOptions& options, const Console& console) {
    OpenedSession out;
    auto opened = open_eval_backend(options.backend);
    if (!opened.fallback.empty() && console.note)
        console.note("*** no usable GPU (" + opened.fallback + "): using the SIMULATED device; "
                     "times are model estimates, not measurements ***");
    if (!opened.value) {
        out.failure = fail(opened.failure == OpenFailure::kEnvironment ? Exit::kEnvironment
                                                                       : Exit::kUserError,
                           opened.message);
        return out;
    }
    SearchSession s;
    s.backend = std::move(opened.value);
    std::error_code ec;
    auto parent = std::filesystem::path(options.db).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    auto store = open_store(options.db);
    if (!store) {
        out.failure = fail(Exit::kUserError, store.error().to_string());
        return out;
    }
    s.store = std::make_unique<Store>(std::move(*store));
    if (options.make_llm) {
        auto llm = options.make_llm(*s.store);
        if (!llm) {
            out.failure = fail(Exit::kUserError, llm.error().to_string());
            return out;
        }
        s.llm = std::move(*llm);
    }
    out.session = std::move(s);
    return out;
}

Expected<std::vector<std::unique_ptr<search::Proposer>>> make_proposers(
    const std::vector<std::string>& names) {
    std::vector<std::unique_ptr<search::Proposer>> out;
    for (const std::string& n : names) {
        auto p = search::make_builtin_proposer(n);
        if (!p)
            return make_error("", "unknown proposer '" + n + "' (parameter, diagnosis, random, "
                                  "seed; the LLM joins with --llm CONFIG)");
        out.push_back(std::move(p));
    }
    return out;
}

void set_profile_hook(search::SearchOptions& options, const ProfileSettings& profile,
                      bool simulated, StateLookup find_state, const std::string& work_dir) {
    options.profile_top = profile.top;
    if (profile.top <= 0) return;
    ProfileHookOptions h;
    h.use_ncu = !simulated;
    h.ncu = profile.ncu;
    h.kforge_executable = profile.kforge_executable;
    h.compile_cache_dir = options.compile_cache_dir;
    h.work_dir = work_dir;
    auto log = options.log;
    h.log = [log](const std::string& line) {
        if (log) log("  " + line);
    };
    options.profile_hook = make_profile_hook(std::move(find_state), std::move(h));
}

std::string work_dir_for(const std::string& command) {
    // mkdtemp: an unpredictable name, mode 0700, never a folder that existed before (the fixed
    // kforge-<command>-<pid> could be pre-created by another user; issue 31, item 9)
    auto dir = make_private_temp_dir("kforge-" + command);
    return dir ? dir->string() : std::string();
}

}  // namespace kforge::driver
