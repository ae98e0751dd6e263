"""Summary of bench/network/kernel_breakdown.sh: per evaluated program, the whole-program
median against the sum of its kernels' medians (the per-kernel pass, device/cuda_device_time.cpp),
and the report's per-kernel rows (report.json: time, share, % of the kernel's own SOL bound,
bottleneck). usage: kernel_breakdown.py OUT_DIR"""
import json
import pathlib
import sys


def main(out):
    out = pathlib.Path(out)
    print("# per-kernel breakdown\n")
    print("| program | device | median (us) | sum of kernels (us) | sum / median | kernels |")
    print("|---|---|---|---|---|---|")
    for f in sorted((out / "eval").glob("*.json")):
        try:
            r = json.loads(f.read_text())
        except ValueError:
            print(f"| {f.stem} | - | eval failed (see {f.name}.log) | | | |")
            continue
        if "candidates" in r:  # kforge eval --isolate --json: one entry per program
            r = (r["candidates"] or [{}])[0].get("report", {})
        med = r.get("timing", {}).get("median_ns")
        ks = r.get("kernel_times_ns", [])
        s = sum(ks)
        ratio = f"{s / med:.3f}" if med and ks else "-"
        med_us = f"{med / 1e3:.2f}" if med else r.get("status", "-")
        names = ", ".join(f"{k['name']} {k['kind']}" for k in r.get("kernels", []))
        print(f"| {f.stem} | {r.get('device', {}).get('name', '-')} | {med_us} | "
              f"{s / 1e3:.2f} | {ratio} | {names} |")
    rep = out / "report" / "report.json"
    if not rep.exists():
        print("\nno report.json")
        return
    j = json.loads(rep.read_text())
    print("\n| run | problem | kernel | kind | ops | time (us) | share | %SOL | bottleneck |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p in j.get("problems", []):
        b = p.get("best") or {}
        if b.get("kernels_note"):
            print(f"| {p['run_id']} | {p['name']} | {b['kernels_note']} | | | | | | |")
        for k in b.get("kernels", []):
            sol = k.get("percent_sol")
            print(f"| {p['run_id']} | {p['name']} | {k['kernel']} | {k['kind']} | {k['ops']} | "
                  f"{k['time_ns'] / 1e3:.2f} | {100 * k['share']:.1f}% | "
                  f"{'-' if sol is None else f'{sol:.1f}%'} | {k['bottleneck']} |")


if __name__ == "__main__":
    main(sys.argv[1])
