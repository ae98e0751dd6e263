#!/usr/bin/env python3
"""bench/export's table from harness.py's JSON lines: table.py RESULTS.jsonl (Markdown)."""
import json
import sys


def us(x):
    return "-" if x is None else f"{x:.1f}"


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    rows.sort(key=lambda r: (r.get("kind", ""), r["problem"]))
    gpu = next((r.get("gpu") for r in rows if r.get("gpu")), "?")
    print(f"GPU: {gpu}; times are medians of 100 trials (us), CUDA events, L2 flushed\n")
    print("| problem | correct | graph | compile fg | kforge eval | exported | exported graph "
          "| overhead | exp/kforge | eager | compile | x eager | x compile |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ok = 0
    for r in rows:
        if "error" in r:
            print(f"| {r['problem']} | ERROR: {r['error'][:80]} |" + " |" * 11)
            continue
        ok += r["correct"] and r["cuda_graph_same"] and r["compile_fullgraph_same"]
        e = r["exported"]["median_us"]
        print(f"| {r['problem']} | {'yes' if r['correct'] else 'NO: ' + r.get('correct_message', '')}"
              f" | {'same' if r['cuda_graph_same'] else 'DIFF'}"
              f" | {'same' if r['compile_fullgraph_same'] else 'DIFF'}"
              f" | {us(r.get('kforge_eval_us'))} | {us(e)} | {us(r['exported_graph']['median_us'])}"
              f" | {us(r.get('overhead_us'))}"
              f" | {'-' if not r.get('exported_vs_kforge') else '%.3f' % r['exported_vs_kforge']}"
              f" | {us(r['eager']['median_us'])} | {us(r['compile']['median_us'])}"
              f" | {r['speedup_vs_eager']:.2f} | {r['speedup_vs_compile']:.2f} |")
    print(f"\n{ok} of {len(rows)} correct, same in a CUDA graph and under "
          "torch.compile(fullgraph=True)")


if __name__ == "__main__":
    main(sys.argv[1])
