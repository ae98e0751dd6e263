// `kforge db`: look into the store. `runs` lists runs, `export RUN` writes one run as JSON,
// `migrate` brings a database to the current schema. The library takes explicit paths; this
// command picks the default (.kforge/kforge.db, or $KFORGE_DB) and creates its folder.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "common/atomic_file.h"
#include "store/export.h"
#include "store/schema.h"
#include "store/store.h"

namespace kforge::cli {
namespace {

struct DbOptions {
    std::string db_path = ".kforge/kforge.db";
    int64_t run_id = 0;
    std::string out_path;
};

int user_error(const std::string& message) {
    eprintf("kforge db: %s\n", message.c_str());
    return kExitUserError;
}

// Opens an existing store (runs, export must not create an empty database by mistake).
Expected<Store> open_existing(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        return make_error(path, "no database here (pass --db PATH, or run a search first)");
    }
    return open_store(path);
}

std::string format_time(const std::optional<double>& ns) {
    if (!ns) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f us", *ns / 1000.0);
    return buf;
}

int run_runs(const DbOptions& o) {
    auto store = open_existing(o.db_path);
    if (!store) return user_error(store.error().to_string());
    auto runs = store->list_runs();
    if (!runs) return user_error(runs.error().to_string());
    if (json_mode()) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& r : *runs)
            j.push_back({{"id", r.id},
                         {"problem", r.problem},
                         {"device", r.device},
                         {"status", std::string(to_string(r.status))},
                         {"started_at", r.started_at},
                         {"candidates", r.candidates},
                         {"best_time_ns", r.best_time_ns ? nlohmann::ordered_json(*r.best_time_ns)
                                                         : nullptr},
                         {"kforge_version", r.kforge_version},
                         {"git_commit", r.git_commit},
                         {"toolchain", r.toolchain}});
        print_json(j);
        return kExitOk;
    }
    if (runs->empty()) {
        std::printf("no runs in %s\n", o.db_path.c_str());
        return kExitOk;
    }
    std::printf("%-6s %-32s %-24s %-12s %10s %14s\n", "id", "problem", "device", "status",
                "candidates", "best time");
    for (const auto& r : *runs) {
        std::printf("%-6lld %-32s %-24s %-12s %10lld %14s\n", static_cast<long long>(r.id),
                    r.problem.c_str(), r.device.c_str(), std::string(to_string(r.status)).c_str(),
                    static_cast<long long>(r.candidates), format_time(r.best_time_ns).c_str());
    }
    return kExitOk;
}

int run_export(const DbOptions& o) {
    auto store = open_existing(o.db_path);
    if (!store) return user_error(store.error().to_string());
    auto json = export_run_json(*store, o.run_id);
    if (!json) return user_error(json.error().to_string());
    std::string text = json->dump(2) + "\n";
    if (o.out_path.empty() || o.out_path == "-") {
        if (json_mode()) {
            print_json(*json);
            return kExitOk;
        }
        std::fwrite(text.data(), 1, text.size(), stdout);
        return kExitOk;
    }
    if (auto st = write_file_atomic(o.out_path, text); !st)
        return user_error(o.out_path + ": cannot write the export: " + st.error().message);
    eprintf("kforge db: wrote run %lld to %s\n", static_cast<long long>(o.run_id),
                 o.out_path.c_str());
    if (json_mode()) print_json(nlohmann::ordered_json{{"run", o.run_id}, {"out", o.out_path}});
    return kExitOk;
}

int run_migrate(const DbOptions& o) {
    std::filesystem::path parent = std::filesystem::path(o.db_path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return user_error(parent.string() + ": cannot create folder: " + ec.message());
    auto store = open_store(o.db_path);
    if (!store) return user_error(store.error().to_string());
    auto version = schema_version(store->db());
    if (!version) return user_error(version.error().to_string());
    if (json_mode())
        print_json(nlohmann::ordered_json{{"db", o.db_path}, {"schema_version", *version}});
    else
        std::printf("%s: schema version %d\n", o.db_path.c_str(), *version);
    return kExitOk;
}

}  // namespace

void register_db(CLI::App& app) {
    auto opts = std::make_shared<DbOptions>();
    auto* db = app.add_subcommand("db", "Inspect and export the run database");
    db->add_option("--db", opts->db_path, "Database file")
        ->envname("KFORGE_DB")
        ->capture_default_str();
    db->require_subcommand(1);
    db->fallthrough();

    auto* runs = db->add_subcommand("runs", "List runs: problem, device, status, best time");
    runs->callback([opts] { exit_code() = run_runs(*opts); });

    auto* exp = db->add_subcommand("export", "Write one run (candidates, evaluations, "
                                             "measurements, artefacts) as JSON");
    exp->add_option("run", opts->run_id, "Run id (see `kforge db runs`)")->required();
    exp->add_option("-o,--out,--output", opts->out_path, "Output file (default: standard output)");
    exp->callback([opts] { exit_code() = run_export(*opts); });

    auto* mig = db->add_subcommand("migrate", "Create the database or bring it to the current "
                                              "schema");
    mig->callback([opts] { exit_code() = run_migrate(*opts); });
}

}  // namespace kforge::cli
