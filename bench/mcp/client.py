#!/usr/bin/env python3
"""bench/mcp: a scripted MCP client drives `kforge mcp` on the GPU and compares its numbers with
the CLI's on the same candidates (issue 28).

Per problem (spec + its hand-written program from problems/): `kforge eval --json` (CLI, in
process), the MCP tool `evaluate` (the server's supervised worker), `kforge eval --json` again
(the CLI-to-CLI spread is the noise floor), then the MCP tool `profile` and `kforge profile
--json`. It writes $OUT/mcp_bench.jsonl (one row per problem) and $OUT/mcp_bench.md, and exits 1
when a verdict, program hash, gate outcome or diagnosis class differs, or the MCP median lies
outside the CLI medians' range widened by TOL (default 5%).

The client is the official MCP Python SDK (stdio_client + ClientSession) when it is importable,
else a minimal JSON-RPC 2.0 client over the same stdio pipe (--raw forces it).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time


class RawClient:
    """JSON-RPC 2.0 over the server's stdin/stdout, one message per line (MCP's stdio framing)."""

    def __init__(self, cmd, env, errlog):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=errlog, env=env)
        self.next_id = 0
        self.kind = "raw JSON-RPC"

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed the stream during {method}")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method}: JSON-RPC error {msg['error']}")
                return msg["result"]

    def start(self):
        init = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": "bench-mcp-raw", "version": "1"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()
        return init["protocolVersion"]

    def call(self, name, args):
        r = self.request("tools/call", {"name": name, "arguments": args})
        return r.get("structuredContent") or {}, r.get("isError", False), r["content"][0]["text"]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=120)


class SdkClient:
    """The official SDK, driven from synchronous code through an anyio blocking portal."""

    def __init__(self, cmd, env, errlog):
        from anyio.from_thread import start_blocking_portal
        from mcp import ClientSession, StdioServerParameters, stdio_client, types
        self.portal_cm = start_blocking_portal()
        self.portal = self.portal_cm.__enter__()
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
        self.transport = self.portal.wrap_async_context_manager(stdio_client(params, errlog=errlog))
        read, write = self.transport.__enter__()
        self.session_cm = self.portal.wrap_async_context_manager(ClientSession(
            read, write, client_info=types.Implementation(name="bench-mcp-sdk", version="1")))
        self.session = self.session_cm.__enter__()
        self.kind = "MCP Python SDK"

    def start(self):
        return self.portal.call(self.session.initialize).protocol_version

    def call(self, name, args):
        r = self.portal.call(self.session.call_tool, name, args)
        return r.structured_content or {}, r.is_error, r.content[0].text if r.content else ""

    def close(self):
        self.session_cm.__exit__(None, None, None)
        self.transport.__exit__(None, None, None)
        self.portal_cm.__exit__(None, None, None)


def cli_json(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    try:
        return json.loads(p.stdout), p.returncode
    except json.JSONDecodeError:
        return {"error": (p.stdout + p.stderr)[-2000:]}, p.returncode


def gates(report):
    return {g["gate"]: g["status"] for g in report.get("gates", [])}


def classes(diagnoses):
    return sorted((d.get("kernel", ""), d.get("bottleneck", "")) for d in diagnoses)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tier", default="quick")
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--raw", action="store_true")
    ap.add_argument("problems", nargs="+")
    a = ap.parse_args()
    root = os.path.join(a.work, "root")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    os.makedirs(a.out, exist_ok=True)
    for name in a.problems:
        for ext in (".json", ".kf"):
            shutil.copy(os.path.join(a.repo, "problems", name + ext), root)
    env = dict(os.environ)
    server = [a.kforge, "mcp", "--root", root, "--device", a.device, "--max-gpu-seconds", "3000"]
    errlog = open(os.path.join(a.out, "mcp_server.log"), "w")
    client = None
    if not a.raw:
        try:
            client = SdkClient(server, env, errlog)
        except ImportError as e:
            print(f"bench/mcp: the MCP SDK is not importable here ({e}): raw JSON-RPC client")
    client = client or RawClient(server, env, errlog)
    version = client.start()
    print(f"bench/mcp: {client.kind}, protocol {version}, device {a.device}, tier {a.tier}")
    rows, bad = [], 0
    for name in a.problems:
        spec, prog = os.path.join(root, name + ".json"), os.path.join(root, name + ".kf")
        evalcmd = [a.kforge, "eval", spec, "--program", prog, "--device", a.device,
                   "--tier", a.tier, "--json"]
        t0 = time.time()
        cli1, rc1 = cli_json(evalcmd, env)
        t1 = time.time()
        mcp_eval, err, text = client.call("evaluate", {"problem": name + ".json",
                                                       "program": name + ".kf", "tier": a.tier})
        t2 = time.time()
        med = lambda r: (r.get("timing") or {}).get("median_ns")
        cli2, rc2 = cli_json(evalcmd, env)
        t3 = time.time()
        # the same SOL fraction and device model on both sides (kforge profile: --gpu-model)
        pargs = {"problem": name + ".json", "program": name + ".kf"}
        if med(mcp_eval):
            pargs["time_us"] = med(mcp_eval) / 1e3
        mcp_prof, perr, ptext = client.call("profile", pargs)
        t4 = time.time()
        model = (mcp_eval.get("device") or {}).get("datasheet_key") or "h200"
        cli_prof, prc = cli_json([a.kforge, "profile", "--problem", spec, "--program", prog,
                                  "--device", a.device, "--gpu-model", model, "--json"], env)
        t5 = time.time()
        m_cli = [m for m in (med(cli1), med(cli2)) if m]
        m_mcp = med(mcp_eval)
        problems = []
        if err:
            problems.append(f"MCP evaluate failed: {text[:300]}")
        for cli in (cli1, cli2):
            if cli.get("status") != mcp_eval.get("status"):
                problems.append(f"verdict CLI {cli.get('status')} vs MCP {mcp_eval.get('status')}")
            if cli.get("program_hash") != mcp_eval.get("program_hash"):
                problems.append("program hash differs")
            if gates(cli) != gates(mcp_eval):
                problems.append(f"gates CLI {gates(cli)} vs MCP {gates(mcp_eval)}")
        within = None
        if m_cli and m_mcp:
            lo, hi = min(m_cli) * (1 - a.tol), max(m_cli) * (1 + a.tol)
            within = lo <= m_mcp <= hi
            if not within:
                problems.append(f"MCP median {m_mcp / 1e3:.2f} us outside the CLI's "
                                f"[{min(m_cli) / 1e3:.2f}, {max(m_cli) / 1e3:.2f}] us +/- {a.tol:.0%}")
        mcp_classes = classes(mcp_prof.get("kernels", [])) if not perr else []
        cli_classes = classes(cli_prof) if isinstance(cli_prof, list) else []
        if a.device != "sim" and mcp_classes != cli_classes:  # kforge profile needs a GPU
            problems.append(f"diagnosis MCP {mcp_classes} ({mcp_prof.get('source')}) vs CLI "
                            f"{cli_classes} (exit {prc})")
        row = {"problem": name, "device": (mcp_eval.get("device") or {}).get("name"),
               "simulated": mcp_eval.get("simulated"), "tier": a.tier,
               "status_cli": [cli1.get("status"), cli2.get("status")],
               "status_mcp": mcp_eval.get("status"),
               "median_us_cli": [m / 1e3 for m in m_cli],
               "median_us_mcp": m_mcp / 1e3 if m_mcp else None,
               "mcp_over_cli_mean": m_mcp / (sum(m_cli) / len(m_cli)) if m_cli and m_mcp else None,
               "cli_spread": (max(m_cli) - min(m_cli)) / min(m_cli) if len(m_cli) == 2 else None,
               "within_tol": within, "sol_percent_mcp": mcp_eval.get("sol_percent"),
               "profile_source_mcp": mcp_prof.get("source"), "diagnosis_mcp": mcp_classes,
               "diagnosis_cli": cli_classes, "profile_exit_cli": prc,
               "wall_s": {"cli_eval_1": t1 - t0, "mcp_evaluate": t2 - t1, "cli_eval_2": t3 - t2,
                          "mcp_profile": t4 - t3, "cli_profile": t5 - t4},
               "candidate_id": mcp_eval.get("candidate_id"), "proposer": mcp_eval.get("proposer"),
               "problems": problems}
        rows.append(row)
        bad += bool(problems)
        print(json.dumps(row))
        sys.stdout.flush()
    client.close()
    with open(os.path.join(a.out, "mcp_bench.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(a.out, "mcp_bench.md"), "w") as f:
        f.write(f"client: {client.kind}; device {rows[0]['device'] if rows else '?'}; tier {a.tier}\n\n")
        f.write("| problem | CLI median us (2 runs) | MCP median us | MCP/CLI | CLI spread | "
                "verdicts | diagnosis equal | notes |\n|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['problem']} | {', '.join(f'{m:.2f}' for m in r['median_us_cli'])} | "
                    f"{r['median_us_mcp'] or 0:.2f} | {r['mcp_over_cli_mean'] or 0:.3f} | "
                    f"{(r['cli_spread'] or 0):.1%} | {r['status_cli']} / {r['status_mcp']} | "
                    f"{r['diagnosis_mcp'] == r['diagnosis_cli']} | {'; '.join(r['problems'])} |\n")
    print(open(os.path.join(a.out, "mcp_bench.md")).read())
    print(f"{len(rows) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
