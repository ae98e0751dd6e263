#!/usr/bin/env python3
"""The official MCP Python SDK (`mcp` from PyPI) as a real client of `kforge mcp` (issue 28).

Over stdio_client + ClientSession, on the simulated device (a labelled test double): initialize,
list the tools, call each with valid and invalid arguments (an invalid one is an MCP tool error
naming the field, or JSON-RPC -32602 for an unknown tool - never a crash), compare an evaluation
with `kforge eval --json` of the same program, run a short optimize with progress
notifications, cancel a longer one, read the reference resource. Then, on a raw pipe: a
malformed JSON-RPC stream, an oversized request and a path outside the working folder are
refused while the server keeps serving, and stdout carries nothing but protocol messages.
Exit 0 passed, 1 failed, 77 skipped (no SDK: scripts/setup.sh installs it into .venv).
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

try:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client, types
    from mcp.shared.exceptions import MCPError
except ImportError as e:  # pragma: no cover
    print(f"SKIP: the MCP Python SDK is not installed ({e}); run scripts/setup.sh")
    sys.exit(77)

TOOLS = {"check_problem", "sol", "language_reference", "check_program", "compile", "evaluate",
         "profile", "optimize", "report", "export", "import_kernelbench"}
REFERENCE = "kforge://reference/kernel-language"
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        raise AssertionError(what)


def tool_error(result, field=None):
    """An MCP tool error (isError) whose text names `field`."""
    text = result.content[0].text if result.content else ""
    check(result.is_error, f"expected a tool error, got {text[:300]}")
    if field:
        check(field in text, f"the error should name {field}: {text[:300]}")
    return text


async def expect_rpc_error(coro, code):
    try:
        await coro
    except MCPError as e:
        check(e.error.code == code, f"expected JSON-RPC {code}, got {e.error.code}: {e.error.message}")
        return e.error.message
    raise AssertionError(f"expected JSON-RPC error {code}")


async def sdk_client(kforge, root, errlog):
    server = StdioServerParameters(
        command=kforge,
        args=["mcp", "--root", root, "--device", "sim", "--max-optimize-wall", "30",
              "--max-gpu-seconds", "900", "--max-concurrent", "2"],
        env={"KFORGE_CACHE_DIR": os.path.join(root, ".cache")})
    async with stdio_client(server, errlog=errlog) as (read, write):
        async with ClientSession(read, write, client_info=types.Implementation(
                name="kforge-ci-client", version="1.0")) as s:
            init = await s.initialize()
            check(init.server_info.name == "kforge", "serverInfo.name")
            check(init.protocol_version == "2025-11-25", f"negotiated {init.protocol_version}")
            check(init.capabilities.tools is not None, "tools capability")

            listed = await s.list_tools()
            names = {t.name for t in listed.tools}
            check(names == TOOLS, f"tools: {sorted(names)}")
            for t in listed.tools:
                check(t.input_schema.get("type") == "object", f"{t.name} inputSchema")
                check(t.output_schema and t.output_schema.get("type") == "object",
                      f"{t.name} outputSchema")

            # ---- valid calls (the SDK validates structuredContent against outputSchema)
            spec, prog = "row_sum_f32.json", "row_sum_f32.kf"
            r = await s.call_tool("check_problem", {"problem": spec})
            check(not r.is_error and r.structured_content["name"] == "row_sum_f32", "check_problem")
            r = await s.call_tool("sol", {"problem": spec, "time_us": 400.0})
            sc = r.structured_content
            check(not r.is_error and sc["bound_kind"] == "memory" and sc["headroom"]["time_over_sol"] > 1,
                  f"sol: {sc}")
            r = await s.call_tool("language_reference", {})
            check(not r.is_error and "kernel" in r.structured_content["text"], "language_reference")
            r = await s.call_tool("check_program", {"problem": spec, "program": prog})
            check(not r.is_error and r.structured_content["ok"], f"check_program: {r.structured_content}")
            bad_program = open(os.path.join(root, prog)).read().replace("threads 256", "threads 100000")
            r = await s.call_tool("check_program", {"problem": spec, "program_text": bad_program})
            sc = r.structured_content
            check(not r.is_error and not sc["ok"] and sc["errors"] and
                  sc["errors"][0]["where"].startswith("<program_text>:"), f"checker messages: {sc}")
            r = await s.call_tool("compile", {"problem": spec, "program": prog, "no_build": True,
                                              "out": "build_out"})
            check(not r.is_error and r.structured_content["status"] == "lowered" and
                  os.path.exists(os.path.join(root, "build_out", "plan.json")), f"compile: {r.content}")
            r = await s.call_tool("evaluate", {"problem": spec, "program": prog, "tier": "full"})
            ev = r.structured_content
            check(not r.is_error and ev["status"] == "passed" and ev["simulated"], f"evaluate: {r.content}")
            check(ev["proposer"] == "agent:kforge-ci-client", f"proposer {ev['proposer']}")
            check(any(g["gate"] == "correctness_small" and g["passed"] for g in ev["gates"]),
                  "gate evidence")
            cli = json.loads(subprocess.run(
                [kforge, "eval", os.path.join(root, spec), "--program", os.path.join(root, prog),
                 "--device", "sim", "--tier", "full", "--json"], capture_output=True, text=True,
                env=dict(os.environ, KFORGE_CACHE_DIR=os.path.join(root, ".cache"))).stdout)
            check(cli["status"] == ev["status"] and cli["program_hash"] == ev["program_hash"] and
                  cli["timing"]["median_ns"] == ev["timing"]["median_ns"],
                  f"MCP evaluate = CLI eval: {cli.get('timing')} vs {ev.get('timing')}")
            r = await s.call_tool("profile", {"problem": spec, "program": prog, "time_us": 300.0})
            check(not r.is_error and r.structured_content["kernels"] and
                  r.structured_content["kernels"][0].get("moves") is not None, f"profile: {r.content}")
            r = await s.call_tool("report", {"runs": [ev["run_id"]], "out": "report"})
            check(not r.is_error and "report/report.md" in r.structured_content["files"],
                  f"report: {r.content}")
            r = await s.call_tool("export", {"source": spec, "program": prog, "out": "exported",
                                             "no_build": True})
            check(not r.is_error and r.structured_content["exported"], f"export: {r.content}")
            r = await s.call_tool("import_kernelbench", {"files": ["model.py"], "out": "imported"})
            tool_error(r, "--allow-import")  # the operator did not enable it

            # ---- invalid arguments: a tool error naming the field, for every tool
            invalid = {
                "check_problem": ({}, "arguments.problem"),
                "sol": ({"problem": spec, "time_us": "fast"}, "arguments.time_us"),
                "language_reference": ({"x": 1}, "arguments.x"),
                "check_program": ({"problem": spec}, "arguments.program"),
                "compile": ({"problem": spec, "program": prog, "no_build": "yes"}, "arguments.no_build"),
                "evaluate": ({"problem": spec, "program": prog, "tier": "fastest"}, "arguments.tier"),
                "profile": ({"problem": 7, "program": prog}, "arguments.problem"),
                "optimize": ({"problem": spec, "rounds": 0}, "arguments.rounds"),
                "report": ({"runs": []}, "arguments.runs"),
                "export": ({"out": "x", "run": "one"}, "arguments.run"),
                "import_kernelbench": ({"files": "model.py", "out": "x"}, "arguments.files"),
            }
            check(set(invalid) == TOOLS, "every tool has an invalid call")
            for name, (args, field) in invalid.items():
                tool_error(await s.call_tool(name, args), field)
            await expect_rpc_error(s.call_tool("no_such_tool", {}), -32602)
            # paths outside the working folder
            tool_error(await s.call_tool("check_problem", {"problem": "/etc/passwd"}), "arguments.problem")
            tool_error(await s.call_tool("check_problem", {"problem": "../outside.json"}),
                       "arguments.problem")
            tool_error(await s.call_tool("check_problem", {"problem": "escape/secret.json"}),
                       "arguments.problem")
            tool_error(await s.call_tool("compile", {"problem": spec, "program": prog,
                                                     "no_build": True, "out": "../elsewhere"}),
                       "arguments.out")
            # an output folder holding a link that leads out (the writes could follow it)
            tool_error(await s.call_tool("report", {"runs": [ev["run_id"]], "out": "leaky"}),
                       "arguments.out")

            # ---- the resource
            res = await s.list_resources()
            check(any(str(x.uri) == REFERENCE for x in res.resources), "resources/list")
            rr = await s.read_resource(REFERENCE)
            check("kernel" in rr.contents[0].text, "resources/read")

            # ---- a short optimize with progress notifications
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, message))

            t0 = time.monotonic()
            r = await s.call_tool("optimize", {"problem": spec, "rounds": 1, "budget_wall_s": 10000},
                                  progress_callback=on_progress)
            sc = r.structured_content
            check(not r.is_error and sc["status"] == "finished" and sc["best"], f"optimize: {r.content}")
            check(sc["budget"]["wall_s"] == 30, f"the client's budget capped by --max-optimize-wall: "
                                                f"{sc['budget']}")
            # The SDK runs each progress callback as its own task: they may land after the
            # result and in any order, so wait for them and compare the values as a set.
            with anyio.move_on_after(10):
                while len(seen) < 2:
                    await anyio.sleep(0.05)
            values = sorted(v for v, _ in seen)
            check(len(seen) >= 2 and len(set(values)) == len(values) and values[0] >= 1,
                  f"distinct, growing progress values: {seen[:5]}")
            print(f"optimize (1 round): {time.monotonic() - t0:.1f} s, {len(seen)} progress "
                  f"notifications, run {sc['run_id']}, stop: {sc['stop_reason']}")

            # ---- a longer optimize, cancelled: the SDK sends notifications/cancelled
            seen2 = []
            started = anyio.Event()

            async def on_progress2(progress, total, message):
                seen2.append(message)
                if len(seen2) >= 3:
                    started.set()

            async def long_optimize(scope_box):
                with anyio.CancelScope() as scope:
                    scope_box.append(scope)
                    await s.call_tool("optimize", {"problem": spec, "budget_wall_s": 600},
                                      progress_callback=on_progress2)
                    scope_box.append("finished")

            box = []
            t0 = time.monotonic()
            async with anyio.create_task_group() as tg:
                tg.start_soon(long_optimize, box)
                with anyio.fail_after(30):
                    await started.wait()
                box[0].cancel()
            check("finished" not in box, "the optimize was cancelled, not finished")
            # The device is free again once the search stopped: an evaluation goes through.
            r = await s.call_tool("evaluate", {"problem": spec, "program": prog})
            waited = time.monotonic() - t0
            check(not r.is_error and r.structured_content["status"] == "passed", "evaluate after cancel")
            check(waited < 25, f"the cancelled optimize (budget capped at 30 s) stopped: {waited:.1f} s")
            # The run was stopped, not finished: the store marks it interrupted.
            starts = [m for m in seen2 if m and m.startswith("run ") and " started" in m]
            check(len(starts) == 1, f"one 'run N started' notification: {seen2[:5]}")
            run = int(starts[0].split()[1])
            db = sqlite3.connect(os.path.join(root, ".kforge", "kforge.db"))
            status = db.execute("SELECT status FROM runs WHERE id = ?", (run,)).fetchone()[0]
            check(status == "interrupted", f"the cancelled run {run} is {status}")
            proposers = {p for (p,) in db.execute("SELECT DISTINCT proposer FROM candidates")}
            check("agent:kforge-ci-client" in proposers, f"proposers in the store: {proposers}")
            db.close()
            print(f"cancelled optimize: run {run} {status}, {len(seen2)} progress notifications, "
                  f"device free after {waited:.1f} s")
    return True


def raw_stream(kforge, root, source_dir):
    """Malformed JSON-RPC, an oversized request and a bad path on a raw pipe."""
    p = subprocess.Popen([kforge, "mcp", "--root", root, "--device", "sim",
                          "--max-request-bytes", "65536"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def send(line):
        p.stdin.write(line if isinstance(line, bytes) else line.encode())
        p.stdin.write(b"\n")
        p.stdin.flush()
        out = p.stdout.readline()
        check(out.endswith(b"\n"), f"an answer to {line[:80]!r}")
        return json.loads(out)

    def code(msg):
        return msg.get("error", {}).get("code")

    init = send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}))
    check(init["result"]["protocolVersion"] == "2025-03-26", "version negotiation (older)")
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    check(code(send("{this is not json")) == -32700, "parse error")
    check(code(send('{"jsonrpc":"1.0","id":2,"method":"ping"}')) == -32600, "wrong jsonrpc version")
    check(code(send('{"jsonrpc":"2.0","id":3}')) == -32600, "missing method")
    check(code(send('[{"jsonrpc":"2.0","id":4,"method":"ping"}]')) == -32600, "batch refused")
    check(code(send("[]")) == -32600, "empty batch")
    check(code(send('{"jsonrpc":"2.0","id":5,"method":"no/such"}')) == -32601, "method not found")
    check(code(send("[" * 1000000 + "]" * 1000000)) == -32600, "a deeply nested array (2 MB)")
    check(code(send(b'{"jsonrpc":"2.0","id":10,"method":"\xff\xfe"}')) == -32700, "invalid UTF-8")
    check(code(send('{"jsonrpc":"2.0","id":11,"method":"initialize","params":{}}')) == -32602,
          "initialize without protocolVersion")
    check(code(send('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}')) == -32602,
          "unknown tool")
    big = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "check_program", "arguments": {"problem": "row_sum_f32.json",
                                               "program_text": "x" * (8 << 20)}}})
    over = send(big)
    check(code(over) == -32600 and "too large" in over["error"]["message"], f"oversized: {over}")
    out = send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "check_problem", "arguments": {"problem": "/etc/passwd"}}}))
    check(out["result"]["isError"] and "outside the working folder" in out["result"]["content"][0]["text"],
          "absolute path outside the root")
    check(send('{"jsonrpc":"2.0","id":9,"method":"ping"}') == {"jsonrpc": "2.0", "id": 9, "result": {}},
          "still serving")
    p.stdin.close()
    rest = p.stdout.read()
    # The operator's limits: no compile left, one device call in flight.
    q = subprocess.run([kforge, "mcp", "--root", root, "--device", "sim", "--max-compiles", "0"],
                       input="\n".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                                    "params": {"name": n, "arguments": a}})
                                        for i, (n, a) in enumerate([
                                            ("compile", {"problem": "row_sum_f32.json",
                                                         "program": "row_sum_f32.kf"}),
                                            ("profile", {"problem": "row_sum_f32.json",
                                                         "program": "row_sum_f32.kf"})])) + "\n",
                       capture_output=True, text=True, timeout=60)
    answers = [json.loads(line) for line in q.stdout.splitlines()]
    # import_kernelbench enabled by the operator: a KernelBench-format file becomes a spec
    try:
        import torch  # noqa: F401  (the importer traces the module with PyTorch)
        have_torch = True
    except ImportError:
        have_torch = False
        print("SKIP import_kernelbench's valid call: no PyTorch in this Python")
    if have_torch:
        os.makedirs(os.path.join(root, "kb"), exist_ok=True)
        shutil.copy(os.path.join(source_dir, "examples", "kernelbench", "03_softmax.py"),
                    os.path.join(root, "kb"))
        q = subprocess.run([kforge, "mcp", "--root", root, "--device", "sim", "--allow-import"],
                           input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": "import_kernelbench", "arguments": {
                                                 "files": ["kb/03_softmax.py"], "out": "imported"}}})
                           + "\n", capture_output=True, text=True, timeout=120)
        res = json.loads(q.stdout)["result"]
        check(not res["isError"] and res["structuredContent"]["all_imported"] and
              res["structuredContent"]["specs"], f"import_kernelbench: {q.stdout[:500]}")
    # The end of input stops a search in flight (within seconds, not its 600 s budget).
    t0 = time.monotonic()
    e = subprocess.run([kforge, "mcp", "--root", root, "--device", "sim"],
                       input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                           "name": "optimize", "arguments": {"problem": "row_sum_f32.json",
                                                             "budget_wall_s": 600}}}) + "\n",
                       capture_output=True, text=True, timeout=60)
    check(e.returncode == 0 and time.monotonic() - t0 < 30,
          f"end of input stops optimize: exit {e.returncode} after {time.monotonic() - t0:.1f} s")
    check(len(answers) == 2 and all(a["result"]["isError"] and "--max-compiles" in
                                    a["result"]["content"][0]["text"] for a in answers),
          f"the compile limit holds: {q.stdout[:500]}")
    rc = p.wait(timeout=30)
    check(rc == 0, f"exit {rc} at the end of input")
    check(rest.strip() == b"", f"nothing but answers on stdout: {rest[:200]!r}")
    check(b"kforge mcp:" in p.stderr.read(), "logs on stderr")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--source-dir", required=True)
    a = ap.parse_args()
    base = tempfile.mkdtemp(prefix="kforge-mcp-sdk-")
    root = os.path.join(base, "root")
    os.makedirs(root)
    try:
        for f in ("row_sum_f32.json", "row_sum_f32.kf"):
            shutil.copy(os.path.join(a.source_dir, "problems", f), root)
        with open(os.path.join(base, "outside.json"), "w") as f:
            f.write("{}")
        os.makedirs(os.path.join(base, "secret"))
        shutil.copy(os.path.join(base, "outside.json"), os.path.join(base, "secret", "secret.json"))
        os.symlink(os.path.join(base, "secret"), os.path.join(root, "escape"))
        os.makedirs(os.path.join(root, "leaky"))
        os.symlink(os.path.join(base, "secret"), os.path.join(root, "leaky", "report.md"))
        t0 = time.monotonic()
        with open(os.path.join(base, "server.log"), "w") as errlog:
            try:
                anyio.run(sdk_client, a.kforge, root, errlog)
            except BaseException:
                errlog.flush()
                print(open(os.path.join(base, "server.log")).read()[-4000:], file=sys.stderr)
                raise
        t1 = time.monotonic()
        raw_stream(a.kforge, root, a.source_dir)
        print(f"{checks} passed, 0 failed (SDK client {t1 - t0:.1f} s, raw stream "
              f"{time.monotonic() - t1:.1f} s)")
    except BaseException as e:  # anyio wraps the failed check in exception groups
        while isinstance(e, BaseExceptionGroup) and e.exceptions:
            e = e.exceptions[0]
        if not isinstance(e, AssertionError):
            raise
        print(f"FAIL: {e}")
        print(f"{checks - 1} passed, 1 failed")
        return 1
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
