// Runs, candidates with their lineage, artefacts and the LLM request log.
#include "store/store.h"
#include "store/store_internal.h"

namespace kforge {

using store_detail::check_json;
using store_detail::not_found;

namespace {

constexpr const char* kCandidateColumns =
    "SELECT id, run_id, problem_id, program_text, content_hash, proposer, move, created_at "
    "FROM candidates ";

CandidateRecord read_candidate(const Statement& s) {
    return CandidateRecord{s.column_int(0),  s.column_int(1),  s.column_int(2),
                           s.column_text(3), s.column_text(4), {},
                           s.column_text(5), s.column_text(6), s.column_text(7)};
}

Status load_parents(Database& db, CandidateRecord& c) {
    auto sel = db.prepare(
        "SELECT parent_id FROM candidate_parents WHERE candidate_id = ?1 ORDER BY position");
    if (!sel) return sel.error();
    sel->bind(1, c.id);
    for (;;) {
        auto row = sel->step();
        if (!row) return row.error();
        if (!*row) return Ok{};
        c.parent_ids.push_back(sel->column_int(0));
    }
}

}  // namespace

// ---- runs ----

Expected<int64_t> Store::create_run(const NewRun& run) {
    if (!run.problem_id && !run.suite) return make_error("run", "names neither problem nor suite");
    if (auto st = check_json(run.options_json, "run options"); !st) return st.error();
    if (run.problem_id) {
        if (auto p = get_problem(*run.problem_id); !p) return p.error();
    }
    if (auto d = get_device(run.device_id); !d) return d.error();
    auto ins = db_.prepare(
        "INSERT INTO runs (problem_id, suite, device_id, options_json, kforge_version, "
        "git_commit, toolchain) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!ins) return ins.error();
    ins->bind(1, run.problem_id).bind(2, run.suite).bind(3, run.device_id);
    ins->bind(5, run.kforge_version).bind(6, run.git_commit).bind(7, run.toolchain);
    if (auto st = ins->bind(4, run.options_json).run(); !st) return st.error();
    return db_.last_insert_rowid();
}

Status Store::finish_run(int64_t run_id, RunStatus status) {
    if (status == RunStatus::kRunning) {
        return make_error("run " + std::to_string(run_id), "cannot finish with status 'running'");
    }
    auto upd = db_.prepare(
        "UPDATE runs SET status = ?2, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
        "WHERE id = ?1");
    if (!upd) return upd.error();
    if (auto st = upd->bind(1, run_id).bind(2, to_string(status)).run(); !st) return st;
    if (db_.changes() == 0) return not_found(path(), "run", run_id);
    return Ok{};
}

Status Store::resume_run(int64_t run_id) {
    auto upd = db_.prepare(
        "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?1");
    if (!upd) return upd.error();
    if (auto st = upd->bind(1, run_id).run(); !st) return st;
    if (db_.changes() == 0) return not_found(path(), "run", run_id);
    return Ok{};
}

Expected<RunRecord> Store::get_run(int64_t run_id) {
    auto sel = db_.prepare(
        "SELECT id, problem_id, suite, device_id, started_at, finished_at, options_json, status, "
        "kforge_version, git_commit, toolchain FROM runs WHERE id = ?1");
    if (!sel) return sel.error();
    auto row = sel->bind(1, run_id).step();
    if (!row) return row.error();
    if (!*row) return not_found(path(), "run", run_id);
    auto status = run_status_from_string(sel->column_text(7));
    if (!status) return make_error(path(), "run " + std::to_string(run_id) + " has unknown status");
    return RunRecord{sel->column_int(0),     sel->column_opt_int(1),  sel->column_opt_text(2),
                     sel->column_int(3),     sel->column_text(4),     sel->column_opt_text(5),
                     sel->column_text(6),    *status,
                     sel->column_text(8),    sel->column_text(9),     sel->column_text(10)};
}

// ---- candidates ----

Expected<CandidateInsert> Store::add_candidate(const NewCandidate& c) {
    if (c.content_hash.empty()) return make_error("candidate", "content hash is empty");
    if (c.program_text.empty()) return make_error("candidate", "program text is empty");
    auto txn = Transaction::begin(db_);
    if (!txn) return txn.error();
    auto existing =
        db_.prepare("SELECT id FROM candidates WHERE run_id = ?1 AND content_hash = ?2");
    if (!existing) return existing.error();
    auto row = existing->bind(1, c.run_id).bind(2, c.content_hash).step();
    if (!row) return row.error();
    if (*row) return CandidateInsert{existing->column_int(0), false};  // rollback: nothing written

    if (auto r = get_run(c.run_id); !r) return r.error();
    if (auto p = get_problem(c.problem_id); !p) return p.error();
    auto ins = db_.prepare(
        "INSERT INTO candidates (run_id, problem_id, program_text, content_hash, proposer, move) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!ins) return ins.error();
    ins->bind(1, c.run_id).bind(2, c.problem_id).bind(3, c.program_text);
    ins->bind(4, c.content_hash).bind(5, c.proposer).bind(6, c.move);
    if (auto st = ins->run(); !st) return st.error();
    int64_t id = db_.last_insert_rowid();

    auto par = db_.prepare(
        "INSERT INTO candidate_parents (candidate_id, parent_id, position) VALUES (?1, ?2, ?3)");
    if (!par) return par.error();
    for (size_t i = 0; i < c.parent_ids.size(); ++i) {
        if (auto p = get_candidate(c.parent_ids[i]); !p) {
            Error e = p.error();
            e.where = "candidate parent " + std::to_string(i);
            return e;
        }
        par->bind(1, id).bind(2, c.parent_ids[i]).bind(3, static_cast<int64_t>(i));
        if (auto st = par->run(); !st) return st.error();
        if (auto st = par->reset(); !st) return st.error();
    }
    if (auto st = txn->commit(); !st) return st.error();
    return CandidateInsert{id, true};
}

Expected<CandidateRecord> Store::get_candidate(int64_t candidate_id) {
    auto sel = db_.prepare(std::string(kCandidateColumns) + "WHERE id = ?1");
    if (!sel) return sel.error();
    auto row = sel->bind(1, candidate_id).step();
    if (!row) return row.error();
    if (!*row) return not_found(path(), "candidate", candidate_id);
    CandidateRecord c = read_candidate(*sel);
    if (auto st = load_parents(db_, c); !st) return st.error();
    return c;
}

Expected<std::vector<CandidateRecord>> Store::list_candidates(int64_t run_id) {
    auto sel = db_.prepare(std::string(kCandidateColumns) + "WHERE run_id = ?1 ORDER BY id");
    if (!sel) return sel.error();
    sel->bind(1, run_id);
    std::vector<CandidateRecord> out;
    for (;;) {
        auto row = sel->step();
        if (!row) return row.error();
        if (!*row) break;
        out.push_back(read_candidate(*sel));
    }
    for (auto& c : out) {
        if (auto st = load_parents(db_, c); !st) return st.error();
    }
    return out;
}

Expected<std::vector<LineageEntry>> Store::lineage(int64_t candidate_id) {
    if (auto c = get_candidate(candidate_id); !c) return c.error();
    // Parents exist before their children, so the graph has no cycles; UNION drops repeated
    // (id, depth) pairs and MIN(depth) keeps each shared ancestor once, at its nearest depth.
    auto sel = db_.prepare(
        "WITH RECURSIVE up(id, depth) AS ("
        "  SELECT ?1, 0"
        "  UNION"
        "  SELECT p.parent_id, up.depth + 1 FROM candidate_parents p JOIN up"
        "    ON p.candidate_id = up.id WHERE up.depth < 10000"
        ") SELECT id, MIN(depth) AS d FROM up GROUP BY id ORDER BY d, id");
    if (!sel) return sel.error();
    sel->bind(1, candidate_id);
    std::vector<std::pair<int64_t, int>> ids;
    for (;;) {
        auto row = sel->step();
        if (!row) return row.error();
        if (!*row) break;
        ids.emplace_back(sel->column_int(0), static_cast<int>(sel->column_int(1)));
    }
    std::vector<LineageEntry> out;
    for (const auto& [id, depth] : ids) {
        auto c = get_candidate(id);
        if (!c) return c.error();
        out.push_back(LineageEntry{std::move(*c), depth});
    }
    return out;
}

// ---- artefacts ----

Expected<int64_t> Store::add_artefact(int64_t candidate_id, ArtefactKind kind,
                                      std::string_view content) {
    if (auto c = get_candidate(candidate_id); !c) return c.error();
    std::string hash = content_hash(content);
    auto ins = db_.prepare(
        "INSERT INTO artefacts (candidate_id, kind, content, hash) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (candidate_id, kind, hash) DO NOTHING");
    if (!ins) return ins.error();
    ins->bind(1, candidate_id).bind(2, to_string(kind)).bind(3, content).bind(4, hash);
    if (auto st = ins->run(); !st) return st.error();
    auto sel = db_.prepare(
        "SELECT id FROM artefacts WHERE candidate_id = ?1 AND kind = ?2 AND hash = ?3");
    if (!sel) return sel.error();
    auto row = sel->bind(1, candidate_id).bind(2, to_string(kind)).bind(3, hash).step();
    if (!row) return row.error();
    return sel->column_int(0);
}

Expected<std::vector<ArtefactRecord>> Store::list_artefacts(int64_t candidate_id) {
    auto sel = db_.prepare(
        "SELECT id, candidate_id, kind, content, hash FROM artefacts WHERE candidate_id = ?1 "
        "ORDER BY id");
    if (!sel) return sel.error();
    sel->bind(1, candidate_id);
    std::vector<ArtefactRecord> out;
    for (;;) {
        auto row = sel->step();
        if (!row) return row.error();
        if (!*row) return out;
        auto kind = artefact_kind_from_string(sel->column_text(2));
        if (!kind) return make_error(path(), "artefact with unknown kind");
        out.push_back(ArtefactRecord{sel->column_int(0), sel->column_int(1), *kind,
                                     sel->column_text(3), sel->column_text(4)});
    }
}

// ---- LLM requests ----

Expected<int64_t> Store::add_llm_request(const NewLlmRequest& r) {
    if (r.provider.empty() || r.model.empty()) {
        return make_error("llm request", "provider and model must be named");
    }
    auto ins = db_.prepare(
        "INSERT INTO llm_requests (run_id, provider, model, request_hash, prompt, reply, "
        "tokens_in, tokens_out, cost_usd, latency_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (!ins) return ins.error();
    ins->bind(1, r.run_id).bind(2, r.provider).bind(3, r.model).bind(4, r.request_hash);
    ins->bind(5, r.prompt).bind(6, r.reply).bind(7, r.tokens_in).bind(8, r.tokens_out);
    ins->bind(9, r.cost_usd).bind(10, r.latency_ms);
    if (auto st = ins->run(); !st) return st.error();
    return db_.last_insert_rowid();
}

}  // namespace kforge
