"""Reading the search benchmark's kforge stores (sqlite3; schema in store/schema.cpp) and the
per-run analysis behind summarize.py: best, start, progress curve, lineage, t95. Definitions are
in summarize.py's docstring."""
import json
import math
import os
import shutil
import sqlite3
import statistics
import tempfile
from datetime import datetime


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ") if "." in text else \
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def mode_of(proposers):
    if "random" in proposers:
        return "random"
    if "diagnosis" in proposers:
        return "builtin"
    if "parameter" in proposers:
        return "param"
    return "+".join(proposers) or "?"


def compile_ns(evidence):
    for g in evidence.get("gates", []) if isinstance(evidence, dict) else []:
        if g.get("gate") == "compile" and isinstance(g.get("evidence"), dict):
            t = g["evidence"].get("time_compile_ns")
            if isinstance(t, (int, float)):
                return float(t)
    return 0.0


def input_copies_timed(name, modes):
    """True for a max-autotune baseline whose inputs were not at static addresses (`kforge
    baseline` before 463727a): its CUDA graphs copied every input inside the timed call."""
    return name == "compile_max_autotune" and \
        not (modes.get(name) or {}).get("static_input_addresses", False)


def load_store(path, tmp):
    """Optimize runs and baseline samples of one store. It is read from a private copy (with its
    -wal), so a store in a read-only folder or still open elsewhere reads the same; `kforge report
    --compare` reads the copy too (run["copy"]), so it never migrates a result store in place."""
    d = tempfile.mkdtemp(dir=tmp)
    copy = os.path.join(d, os.path.basename(path))  # its name: kforge report's legend shows it
    for suffix in ("", "-wal"):
        if os.path.exists(path + suffix):
            shutil.copyfile(path + suffix, copy + suffix)
    con = sqlite3.connect(copy)
    con.row_factory = sqlite3.Row
    devices = {r["id"]: dict(r) for r in con.execute("SELECT * FROM devices")}
    runs, baselines = [], []
    for r in con.execute("SELECT r.*, p.name AS problem, p.spec_json FROM runs r "
                         "JOIN problems p ON p.id = r.problem_id ORDER BY r.id"):
        opts = json.loads(r["options_json"] or "{}")
        dev = devices[r["device_id"]]
        evals = con.execute(
            "SELECT e.id, e.tier, e.status, e.shapes_key, e.evidence_json, e.created_at, "
            "e.cached_from_id, c.id AS cid, c.proposer, c.move FROM evaluations e "
            "JOIN candidates c ON c.id = e.candidate_id WHERE c.run_id = ? ORDER BY e.id",
            (r["id"],)).fetchall()
        samples = {}
        for m in con.execute(
                "SELECT m.evaluation_id, m.label, m.time_ns FROM measurements m JOIN evaluations e "
                "ON e.id = m.evaluation_id JOIN candidates c ON c.id = e.candidate_id "
                "WHERE c.run_id = ?", (r["id"],)):
            samples.setdefault(m["evaluation_id"], []).append((m["label"], m["time_ns"]))
        common = dict(db=path, copy=copy, run_id=r["id"], problem=r["problem"], spec_json=r["spec_json"],
                      device=dev["name"], datasheet_key=dev["datasheet_key"],
                      simulated=dev["uuid"].startswith("simulated"), status=r["status"],
                      started_at=r["started_at"])
        # PyTorch baselines: a `kforge baseline` run, or stored into a search run (--run,
        # --latest-run: a carrier candidate whose samples are all labelled baseline:<mode>)
        for e in evals:
            modes = {}
            for label, t in samples.get(e["id"], []):
                if label.startswith("baseline:"):
                    if not modes:
                        modes = json.loads(e["evidence_json"] or "{}").get("modes", {}) or {}
                    name = label[len("baseline:"):]
                    baselines.append(dict(common, name=name, shapes=e["shapes_key"], time_ns=t,
                                          input_copies=input_copies_timed(name, modes)))
        if opts.get("command") not in ("optimize", "suite"):  # a suite run is one problem's search
            continue
        parents = {}
        for c in con.execute("SELECT cp.candidate_id, cp.parent_id FROM candidate_parents cp "
                             "JOIN candidates c ON c.id = cp.candidate_id WHERE c.run_id = ? "
                             "ORDER BY cp.position", (r["id"],)):
            parents.setdefault(c["candidate_id"], []).append(c["parent_id"])
        cands = {c["id"]: dict(c) for c in con.execute(
            "SELECT id, proposer, move FROM candidates WHERE run_id = ?", (r["id"],))}
        runs.append(dict(common, mode=mode_of(opts.get("proposers", [])),
                         proposers=opts.get("proposers", []), evals=[dict(e) for e in evals],
                         samples=samples, parents=parents, cands=cands))
    con.close()
    return runs, baselines


def analyse(run):
    """Best, start, curve and attribution of one optimize run."""
    bad = {e["cid"] for e in run["evals"] if e["status"] in ("incorrect", "flagged_gaming")}
    usable = [e for e in run["evals"] if e["cid"] not in bad
              and not e["proposer"].startswith("baseline")]

    def median(e):
        t = [x for label, x in run["samples"].get(e["id"], []) if label == "candidate"]
        return statistics.median(t) if t else None

    timed = [e for e in usable if e["status"] == "passed" and median(e) is not None]
    top = {"full", "profile"} if any(e["tier"] in ("full", "profile") for e in timed) else {"quick"}
    t0 = parse_time(run["started_at"])
    gpu_ns, best, best_eval, curve, improvements = 0.0, None, None, [], []
    start_ns = None
    for e in usable:
        if not e["cached_from_id"]:
            gpu_ns += sum(x for _, x in run["samples"].get(e["id"], []))
            gpu_ns += compile_ns(json.loads(e["evidence_json"] or "{}"))
        m = median(e) if (e["status"] == "passed" and e["tier"] in top) else None
        if m is not None and e["proposer"] == "start" and start_ns is None:
            start_ns = m
        if m is not None and (best is None or m < best):
            improvements.append((e["proposer"], best, m))
            best, best_eval = m, e
        wall = (parse_time(e["created_at"]) - t0).total_seconds()
        if best is not None:
            curve.append(dict(eval_id=e["id"], wall_s=wall, gpu_s=gpu_ns * 1e-9, best_ns=best))
    # Search time: from the start program's first timing (the budget does not count the start
    # program's evaluation, which comes before it).
    origin = curve[0]["wall_s"] if curve else 0.0
    for c in curve:
        c["search_s"] = max(0.0, c["wall_s"] - origin)
    out = dict(run, start_ns=start_ns, best_ns=best, curve=curve, start_eval_s=origin, tier="/".join(sorted(top)),
               cut=run["status"] == "running", shapes=best_eval["shapes_key"] if best_eval else None,
               evaluations=len(usable))
    if best_eval is None:
        return out
    # Lineage of the best: candidate, its first parent, ... (nearest first).
    chain, cid, seen = [], best_eval["cid"], set()
    while cid is not None and cid not in seen:
        seen.add(cid)
        c = run["cands"].get(cid, {"proposer": "?", "move": "?"})
        chain.append(f'{c["proposer"].replace("search:", "")}: {c["move"]}')
        ps = run["parents"].get(cid, [])
        cid = ps[0] if ps else None
    out["lineage"] = chain
    out["best_proposer"] = best_eval["proposer"]
    # Credit of each improvement (log speedup over the previous best) to its proposer.
    credit = {}
    for proposer, before, after in improvements:
        if before:
            name = proposer.replace("search:", "")
            credit[name] = credit.get(name, 0.0) + math.log(before / after)
    out["credit"] = credit
    return out


def label(db):
    """A store's name for the tables: its folder (run.sh's search-TAG) and file."""
    return os.path.join(os.path.basename(os.path.dirname(os.path.abspath(db))),
                        os.path.basename(db))


def same_device(a, b):
    return a.strip().lower() == b.strip().lower()


def stop_text(a):
    """Why the run ended, from run.sh's manifest (the optimize log's "stopped:" line)."""
    e = a.get("manifest") or {}
    if e.get("status") == "killed":
        return f"killed at the {e.get('cap_s')} s cap"
    msg = (e.get("message") or "").replace("stopped: ", "").replace("|", "/")
    return msg or ("cut" if a["cut"] else "?")


def start_kind(a):
    """Where the run started, from run.sh's manifest: "seed" (kforge's own seed program) or
    "hand" (problems/NAME.kf); manifests from before run.sh's START knob always used hand."""
    e = a.get("manifest") or {}
    return e.get("start") or "hand"


def t95(a, budget):
    """(t95 fraction, t95 gain fraction) of the budget; None without a curve."""
    if not a["curve"] or not a["best_ns"]:
        return None, None
    final = a["best_ns"]
    first = next(p for p in a["curve"] if p["best_ns"] <= final / 0.95)
    frac = first["search_s"] / budget
    gfrac = frac
    if a["start_ns"] and a["start_ns"] > final:
        need = 0.95 * math.log(a["start_ns"] / final)
        g = next(p for p in a["curve"] if math.log(a["start_ns"] / p["best_ns"]) >= need - 1e-12)
        gfrac = g["search_s"] / budget
    return frac, gfrac


def time_to_reach(a, target_ns):
    for p in a["curve"]:
        if p["best_ns"] <= target_ns * (1 + 1e-9):
            return p["search_s"]
    return None
