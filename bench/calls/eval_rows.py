# bench/calls: one row per candidate of a `kforge eval --json` report (c7, c9): problem, program,
# status, the timing gate's message, the largest median relative error of the error profile, note.
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"| {sys.argv[2]} | - | no report ({e}) | | | |"); sys.exit()
for c in j.get("candidates", []):
    r = c.get("report") or {}
    t = None
    med = []
    for g in r.get("gates") or []:
        ev = g.get("evidence") or {}
        if g.get("gate") == "timing" and g.get("status") == "passed":
            t = g.get("message", "")
        for rd in ev.get("rounds") or []:
            for tn in (rd.get("comparison") or {}).get("tensors") or []:
                m = (tn.get("profile") or {}).get("median_rel_err")
                if m is not None: med.append(m)
    note = (r.get("message") or "")[:160].replace("|", "/").replace("\n", " ")
    print(f"| {sys.argv[2]} | {c.get('label')} | {r.get('status')} | {t or '-'} | "
          f"{max(med) if med else '-'} | {note} |")
