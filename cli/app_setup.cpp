// What every subcommand gets from main (cli/commands.h): --json, a suggestion for a mistyped
// subcommand or flag, the JSON object of a command that printed none, the stop handlers.
#include <algorithm>
#include <csignal>
#include <cstring>
#include <vector>

#include "cli/commands.h"
#include "common/stop_request.h"

namespace kforge::cli {
namespace {

// Levenshtein distance (CLI11 has no "did you mean").
size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1u : 0u)});
            diag = up;
        }
    }
    return row[b.size()];
}

// The closest of `names` to `word`, when close enough to be a typo.
std::string closest(const std::string& word, const std::vector<std::string>& names) {
    std::string best;
    size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
    for (const std::string& n : names) {
        if (n.rfind(word, 0) == 0 && word.size() >= 3) return n;  // a prefix: that one
        const size_t d = edit_distance(word, n);
        if (d < best_d) best_d = d, best = n;
    }
    return best;
}

std::vector<CLI::App*> visible_subcommands(CLI::App* app) {
    std::vector<CLI::App*> out;
    for (CLI::App* s : app->get_subcommands([](CLI::App* a) { return !a->get_group().empty(); }))
        out.push_back(s);
    return out;
}

// Long option names of `app` and its parents ("--db").
std::vector<std::string> long_names(CLI::App* app) {
    std::vector<std::string> out;
    for (CLI::App* a = app; a; a = a->get_parent())
        for (const CLI::Option* o : a->get_options())
            for (const std::string& n : o->get_lnames()) out.push_back("--" + n);
    return out;
}

const CLI::Option* find_option(CLI::App* app, const std::string& name) {
    for (CLI::App* a = app; a; a = a->get_parent())
        if (const CLI::Option* o = a->get_option_no_throw(name)) return o;
    return nullptr;
}

void add_json_flag(CLI::App* app) {
    std::vector<CLI::App*> subs = app->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) {
        static bool asked = false;  // JSON mode comes from the command line (prepare_app)
        if (!app->get_option_no_throw("--json"))
            app->add_flag("--json", asked, "print the result (or the error) as one JSON object");
        return;
    }
    for (CLI::App* s : subs) add_json_flag(s);
}

// The subcommand path the parse selected ("db runs"), "" none.
std::string command_path(CLI::App& app) {
    std::string path;
    for (CLI::App* a = &app;;) {
        auto subs = a->get_subcommands();
        if (subs.empty()) break;
        a = subs.front();
        path += (path.empty() ? "" : " ") + a->get_name();
    }
    return path;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

}  // namespace

CLI::Option* add_gpu_model_option(CLI::App* cmd, std::string& target, const std::string& help) {
    cmd->add_option("--device", "(old spelling of --gpu-model)")
        ->group("")
        ->check([](const std::string& v) -> std::string {
            return "--device means sim, cuda or auto in kforge; name a GPU of the device table "
                   "with --gpu-model " + v;
        });
    return cmd->add_option("--gpu-model", target, help);
}

void prepare_app(CLI::App& app, int argc, char** argv) {
    if (argc > 0 && std::strchr(argv[0], '/')) invoked_as() = argv[0];
    for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
        if (s->get_name() != "worker") add_json_flag(s);
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) break;
        if (std::strcmp(argv[i], "--json") == 0) {
            begin_json_mode();
            break;
        }
    }
}

std::string suggestion(CLI::App& app, int argc, char** argv) {
    CLI::App* at = &app;
    bool skip_value = false;
    for (int i = 1; i < argc; ++i) {
        const std::string tok = argv[i];
        if (tok == "--") break;
        if (skip_value) {
            skip_value = false;
            continue;
        }
        if (tok.rfind("--", 0) == 0 && tok.size() > 2) {
            const std::string name = tok.substr(0, tok.find('='));
            const CLI::Option* o = find_option(at, name);
            if (!o) {
                std::string near = closest(name, long_names(at));
                return "unknown option " + name +
                       (near.empty() ? "" : "; did you mean " + near + "?") + " (see kforge " +
                       (at == &app ? std::string() : at->get_name() + " ") + "--help)";
            }
            skip_value = o->get_type_size() != 0 && tok.find('=') == std::string::npos;
            continue;
        }
        if (tok[0] == '-') continue;
        auto subs = at->get_subcommands([](CLI::App*) { return true; });
        if (subs.empty()) continue;  // a positional argument
        auto it = std::find_if(subs.begin(), subs.end(),
                               [&](CLI::App* s) { return s->check_name(tok); });
        if (it != subs.end()) {
            at = *it;
            continue;
        }
        std::vector<std::string> names;
        for (CLI::App* s : visible_subcommands(at)) names.push_back(s->get_name());
        std::string near = closest(tok, names);
        return "unknown command '" + tok + "'" +
               (near.empty() ? "" : "; did you mean '" + near + "'?");
    }
    return "";
}

int parse_error_exit(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
    const int rc = app.exit(e) == 0 ? kExitOk : kExitUserError;
    std::string hint;
    if (rc != kExitOk) {
        hint = suggestion(app, argc, argv);
        if (!hint.empty()) eprintf("kforge: %s\n", hint.c_str());
    }
    if (json_mode()) {
        const std::string text = end_json_mode();
        nlohmann::ordered_json j{{"command", command_path(app)}, {"exit", rc}};
        if (rc != kExitOk) {
            j["error"] = std::string(e.what()) + (hint.empty() ? "" : "; " + hint);
        } else {
            j["output"] = text;  // --help, --version
        }
        print_json(j);
    }
    return rc;
}

int finish_command(CLI::App& app, int rc) {
    if (!json_mode()) return rc;
    const std::string text = end_json_mode();
    if (json_printed()) {
        // the command's own JSON went out; any other text it printed goes to stderr
        if (!text.empty()) std::fputs(text.c_str(), stderr);
        return rc;
    }
    nlohmann::ordered_json j{{"command", command_path(app)}, {"exit", rc}, {"output", text}};
    if (rc != kExitOk) j["error"] = trim(error_lines()).empty() ? "failed" : trim(error_lines());
    print_json(j);
    return rc;
}

int interrupted_exit_code() {
    const int sig = stop_signal();
    return 128 + (sig > 0 ? sig : SIGINT);
}

}  // namespace kforge::cli
