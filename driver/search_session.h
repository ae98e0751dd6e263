// What `kforge optimize` and `kforge suite` (and later the MCP server) share around a search:
// the evaluation backend, the store and the LLM proposer opened in that order, the built-in
// proposers by name, and the profiling hook that diagnoses the best candidates of each round.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/eval_backend.h"
#include "driver/outcome.h"
#include "driver/profile_hook.h"
#include "llm/proposer.h"
#include "search/loop.h"
#include "search/proposer.h"
#include "store/store.h"

namespace kforge::driver {

// Builds the LLM proposer over the opened store (null: no LLM); an error is the user's. The
// caller supplies it: the proposer's API key comes from the environment.
using LlmFactory = std::function<Expected<std::unique_ptr<llm::LlmProposer>>(Store& store)>;

struct SearchSessionOptions {
    EvalBackendOptions backend;
    std::string db = ".kforge/kforge.db";  // its folder is created
    LlmFactory make_llm;                   // unset: no LLM
};

// Store and proposer live on the heap: the proposer keeps a pointer to the store.
struct SearchSession {
    std::unique_ptr<EvalBackend> backend;
    std::unique_ptr<Store> store;
    std::unique_ptr<llm::LlmProposer> llm;
};

// Opens the backend (a GPU fallback is noted on `console` as a banner), the store, the LLM.
// On failure `failure` says why (backend: its OpenFailure; store, LLM: a user error).
struct OpenedSession {
    std::optional<SearchSession> session;
    Outcome failure;
};
OpenedSession open_search_session(const SearchSessionOptions& options, const Console& console);

// The built-in proposers by name; a user error naming the first unknown one.
Expected<std::vector<std::unique_ptr<search::Proposer>>> make_proposers(
    const std::vector<std::string>& names);

// The profiling hook's settings: the best `top` candidates of each round are diagnosed (ncu on
// the GPU, the ptxas + SOL fallback on the simulated device; driver/profile_hook.h).
struct ProfileSettings {
    int top = 2;  // 0: none
    std::string ncu = "ncu";
    std::string kforge_executable;  // ncu profiles `kforge eval` of the candidate
};

// Sets options.profile_top and, when top > 0, options.profile_hook (ncu unless `simulated`; its
// log lines indented under options.log); its files go to `work_dir`.
void set_profile_hook(search::SearchOptions& options, const ProfileSettings& profile,
                      bool simulated, StateLookup find_state, const std::string& work_dir);

// A fresh private folder for a command's temporary files, made now (common/atomic_file.h
// make_private_temp_dir: <tmp>/kforge-<command>-XXXXXX, mode 0700); empty when none can be made.
std::string work_dir_for(const std::string& command);

}  // namespace kforge::driver
