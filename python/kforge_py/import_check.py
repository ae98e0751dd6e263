"""The numeric check of an imported spec: the problem's fp64 interpreter (`kforge interpret`)
against the PyTorch module, run in fp64, on the same random inputs - at reduced sizes wherever
the file's size variables can be re-bound, so a full-size problem is never materialized for it.

Sizes, in order of preference (validate):
1. reduced: the file's literal size variables re-bound to small values (shrink_plans), where the
   spec at those sizes is the written spec with other dim values; the written spec is
   interpreted at them;
2. reduced, rebuilt: where the spec at those sizes differs from the written one only in op
   constants computed from the sizes (torch.std's n / (n - 1)), the spec rebuilt at those sizes
   (only where those constants differ between two reduced sizes too: a wrong constant in the
   written spec is not hidden);
3. the file's own sizes, where its tensors hold at most CHECK_MAX_ELEMENTS elements;
4. the inputs' batch / spatial dims reduced, the weights at the file's sizes (check_dims);
otherwise the spec is not checked numerically. Every size is also bounded by the interpreter's
work (check_dims.MAX_CHECK_S). A size where PyTorch's own output is ill-conditioned (it moves by
more than the check's tolerance when the inputs move by rounding: training-mode batch norm over
the two values of a 1x1 map at batch 2 in a deep network) says nothing about the spec: the next
size is tried instead (_check, IllConditioned). The line validate returns says which sizes were
used and, where they are not reduced ones, why.

Each candidate size is first loaded on the meta device (its spec and element count cost no
memory), and only materialized once it is known to fit. torch, numpy and the other kforge_py
modules are imported inside the functions: `kforge import` says plainly when PyTorch is missing
instead of failing at an import."""
import json
import os
import subprocess
import tempfile

CHECK_RTOL = 1e-6   # fp64 PyTorch vs fp64 interpreter: only summation order differs
CHECK_ATOL = 1e-8
INTERPRET_TIMEOUT_S = 120
# all the interpreter's tensors together, activations included (`kforge interpret
# --max-elements`): 2 GiB in fp64, plus its copy of the inputs, within the 8 GiB address space
# that the importer's limit (import_kernelbench.DEFAULT_MAX_MEMORY_MB) gives it as well
INTERPRET_MAX_ELEMENTS = 256 << 20
# inputs + parameters (check_dims.WEIGHTS_MAX_ELEMENTS says what they cost): a check at larger
# sizes is not run
CHECK_MAX_ELEMENTS = 64 << 20
# where the interpreter and PyTorch differ, PyTorch's inputs move by this relative step (about
# what another summation order of a long reduction moves a value by) and its own output must stay
# within the check's tolerance, else the sizes are ill-conditioned. Measured at the step itself,
# not scaled from a larger one: an ill-conditioned network responds non-linearly (a batch norm
# over two nearly equal values flips between +-1)
ILL_CONDITIONED_STEP = 1e-14


class IllConditioned(str):
    """A check's reason (a string, as the interpreter's failures are) saying the sizes are
    ill-conditioned: the caller tries other sizes where it has them."""


class ImportFailed(Exception):
    pass


def shrink_plans(literal_ints):
    """Override sets that make the file's large size variables small: distinct values above 32
    map to distinct multiples of 16 (then of 32), in order, never to a value that a small
    variable already holds (so dims named by value stay distinct)."""
    kept = {v for v in literal_ints.values() if v <= 32}
    big = sorted({v for v in literal_ints.values() if v > 32})
    plans = []
    for step in (16, 32):
        small, cand = {}, step
        for v in big:
            while cand in kept:
                cand += step
            small[v] = min(v, cand)
            cand += step
        plan = {k: small[v] for k, v in literal_ints.items() if v in small}
        if plan and plan not in plans:
            plans.append(plan)
    return plans


def write_feed(feed, path):
    """The inputs file `kforge interpret --inputs` reads: a JSON object naming, for each tensor,
    a raw little-endian float64 file beside it ({"f64_file": "in3.f64"}, row-major). numpy writes
    the bytes as they are: a network's tens of millions of weights take a fraction of a second,
    where printing them as text (and the interpreter parsing it) took tens of seconds."""
    import torch
    folder = os.path.dirname(path)
    index = {}
    for i, (n, t) in enumerate(feed.items()):
        name = f"in{i}.f64"
        t.detach().to(torch.float64).contiguous().numpy().astype("<f8", copy=False).tofile(
            os.path.join(folder, name))
        index[n] = {"f64_file": name}
    with open(path, "w") as f:
        json.dump(index, f)


def torch_outputs(loaded, feed_inputs, dtype=None):
    """The module's outputs in fp64, or `dtype` (float inputs cast to it). The model itself runs
    in that dtype and gets its dtypes back afterwards: a copy would miss a submodule that
    forward() reaches through a closure (MinGPT's `self.mlpf = lambda x: m.c_proj(...)` keeps
    the original's)."""
    import torch
    dtype = dtype or torch.float64
    model = loaded.model
    params = {n: p.dtype for n, p in model.named_parameters()}
    buffers = {n: b.dtype for n, b in model.named_buffers()}
    args = [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in feed_inputs]
    model.to(dtype)
    default = torch.get_default_dtype()
    try:
        # tensors forward() makes without a dtype (h = torch.zeros(b, H, device=x.device) for a
        # recurrent cell's state) in the dtype the model runs in, as they would be in float32
        torch.set_default_dtype(dtype if dtype.is_floating_point and dtype != torch.float16
                                and dtype != torch.bfloat16 else default)
        with torch.no_grad():
            out = model(*args)
    finally:
        torch.set_default_dtype(default)
        for n, dtype in params.items():
            p = model.get_parameter(n)
            p.data = p.data.to(dtype)
        for n, dtype in buffers.items():
            owner, _, leaf = n.rpartition(".")
            mod = model.get_submodule(owner) if owner else model
            mod._buffers[leaf] = mod._buffers[leaf].to(dtype)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def run_kforge(kforge, args, timeout=60):
    r = subprocess.run([kforge] + args, capture_output=True, text=True, timeout=timeout)
    return r.returncode, (r.stderr.strip() or r.stdout.strip())


def interpret(kforge, spec_path, dims, feed, workdir):
    """The spec's outputs by `kforge interpret` on `feed` at `dims`: {name: {"shape": [...],
    "data": numpy float64 array}} and None, or None and the interpreter's error. The tensors
    travel as raw float64 files in `workdir` both ways."""
    import numpy as np
    in_path, out_path = os.path.join(workdir, "in.json"), os.path.join(workdir, "out.json")
    write_feed(feed, in_path)
    args = ["interpret", spec_path, "--inputs", in_path, "-o", out_path,
            "--outputs-binary", os.path.join(workdir, "out"),
            "--max-elements", str(INTERPRET_MAX_ELEMENTS)]
    if dims:  # the dims it binds; a derived dim ("3*n_embd") follows them
        from kforge_py.fx_shape import bound_dims
        args += ["--dims", dims_text(bound_dims(dims))]
    try:
        rc, msg = run_kforge(kforge, args, INTERPRET_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"the interpreter took over {INTERPRET_TIMEOUT_S} s"
    if rc != 0:
        return None, msg
    with open(out_path) as f:
        outputs = json.load(f)["outputs"]
    for got in outputs.values():
        if "f64_file" in got:
            got["data"] = np.fromfile(os.path.join(workdir, got.pop("f64_file")), dtype="<f8")
    return outputs, None


def compare(spec, ref_outputs, interp):
    import numpy as np
    worst = 0.0
    for name, ref in zip(spec["outputs"], ref_outputs):
        got = interp[name]
        data = got["data"]  # (interpret: a float64 array read from the raw file)
        r = ref.detach().double().reshape(-1).numpy()
        if list(ref.shape) != got["shape"]:
            raise ImportFailed(f"output {name}: PyTorch gives shape {list(ref.shape)}, "
                               f"the spec gives {got['shape']}")
        if not ref.is_floating_point() and not np.array_equal(data, r):
            bad = int(np.count_nonzero(data != r))
            raise ImportFailed(f"output {name}: the spec's interpreter and PyTorch differ in "
                               f"{bad} of {r.size} {ref.dtype} elements (compared exactly: "
                               "integer and bool outputs); the import is wrong")
        if not np.allclose(data, r, rtol=CHECK_RTOL, atol=CHECK_ATOL, equal_nan=True):
            bad = np.nanmax(np.abs(data - r))
            raise ImportFailed(f"output {name}: the spec's interpreter and PyTorch differ "
                               f"(max |diff| {bad:.3g}); the import is wrong")
        finite = np.isfinite(r) & np.isfinite(data)
        if finite.any():
            worst = max(worst, float(np.max(np.abs(data[finite] - r[finite]))))
    return worst


def degenerate(spec, loaded, draw=None, where=""):
    """degeneracy.assess of the module on two input draws: draw(seed) gives the inputs (default:
    the file's get_inputs()); `where` names the sizes in its messages."""
    from kforge_py import degeneracy
    from kforge_py.kernelbench import draw_inputs
    draw = draw or (lambda seed: draw_inputs(loaded, seed))
    return degeneracy.assess(spec, loaded, draw, where, torch_outputs)


def dims_text(dims):
    return ",".join(f"{k}={v}" for k, v in dims.items())


def constants_differ(a, b):
    """The outputs of the ops whose attributes differ between specs `a` and `b`, where they
    differ only there and only in floating-point numbers (constants computed from the sizes);
    None where they differ otherwise."""
    if any(a[k] != b[k] for k in ("inputs", "outputs")) or set(a["dims"]) != set(b["dims"]):
        return None
    if len(a["graph"]) != len(b["graph"]):
        return None
    names = []
    for x, y in zip(a["graph"], b["graph"]):
        if x.keys() != y.keys():
            return None
        diff = [k for k in x if x[k] != y[k]]
        if any(type(x[k]) is not float or type(y[k]) is not float for k in diff):
            return None
        if diff:
            names.append(x["output"])
    return names


def _reduced(spec, path, plan):
    """The file at the sizes of `plan`, on the meta device: (sspec, conv, kind) with kind
    "written" (the written spec holds at these sizes) or "rebuilt" (only size-dependent
    constants differ: the list of their ops), or a string saying why it cannot be used."""
    from kforge_py import check_dims, kernelbench, spec_build
    where = dims_text(plan)
    try:
        small = kernelbench.load(path, overrides=plan, meta=True)
        sspec, sconv = spec_build.build(small, spec["name"], "")
    except Exception as e:
        text = str(e).splitlines()[0] if str(e) else ""
        return f"at {where} the file gives no spec ({type(e).__name__}: {text})"
    n = kernelbench.element_count(small)
    if n > CHECK_MAX_ELEMENTS:
        return f"at {where} its tensors still hold {n:,} elements"
    work = check_dims.too_much_work(small)
    if work is not None:
        return f"at {where} the check takes {work}"
    if spec_build.same_structure(spec, sspec):
        return sspec, sconv, "written"
    renamed = check_dims.dim_renaming(spec, sspec)
    if renamed is not None:  # dims named by value (D1024 -> D256): the written spec, re-bound
        from kforge_py.fx_shape import resolve_dims
        values = resolve_dims(sspec["dims"])  # (a dim the traced spec derives: its value)
        return dict(sspec, dims={d: spec["dims"][d] if isinstance(spec["dims"][d], str) else
                                 values.get(renamed[d], sspec["dims"][renamed[d]])
                                 for d in spec["dims"]}), sconv, \
            "written"
    ops = constants_differ(spec, sspec)
    if ops is None:
        return f"at {where} the spec has another structure"
    return sspec, sconv, ops


def _size_dependent(rebuilt):
    """Whether the constants in which the reduced specs differ from the written one also differ
    between two reduced sizes: computed from the sizes, not a wrong constant in the written spec
    that a rebuilt spec would hide."""
    if len(rebuilt) < 2:
        return False
    between = constants_differ(rebuilt[0][1], rebuilt[1][1]) or []
    return all(op in between for op in rebuilt[0][3])


def _check(kforge, spec, spec_path, dims, target, conv, work, draw=None, where=""):
    """Interprets the spec at `dims` (None: its own) on `target`'s inputs and compares with the
    module: (degeneracy.Verdict, max |diff|), or a string where the interpreter failed, or an
    IllConditioned where they differ but PyTorch's own output at these sizes moves as much by
    rounding alone."""
    from kforge_py import spec_build
    feed = spec_build.feeds(target, conv)
    interp, err = interpret(kforge, spec_path, dims, feed, work)
    if interp is None and "cross_entropy's targets are class indices" in err:
        raise ImportFailed("get_inputs() draws targets the loss cannot take: " +
                           err.split(": ", 2)[-1] + " (PyTorch raises on them too)")
    if interp is None:
        return err
    ref = torch_outputs(target, list(target.inputs))
    try:
        worst = compare(spec, ref, interp)
    except ImportFailed as e:
        moved = _moved_by_rounding(target, ref)
        if moved is None:
            raise
        differ = str(e).split("; the import is wrong")[0]
        return IllConditioned(f"{differ}, but PyTorch's own output moves by up to {moved:.2g} "
                              f"when its inputs move by one part in "
                              f"{1 / ILL_CONDITIONED_STEP:.0e} (ill-conditioned at these sizes)")
    return degenerate(spec, target, draw=draw, where=where), worst


def _moved_by_rounding(target, ref):
    """Where PyTorch's own outputs are ill-conditioned on `target`'s inputs: how far they move
    (at most) when the floating-point inputs move by one part in 1/ILL_CONDITIONED_STEP, if that
    is beyond the check's tolerance anywhere; else None."""
    import torch
    args = [x.double() * (1 + ILL_CONDITIONED_STEP) if isinstance(x, torch.Tensor) and
            x.is_floating_point() else x for x in target.inputs]  # (fp64, as torch_outputs runs)
    if all(a is x for a, x in zip(args, target.inputs)):
        return None
    moved, beyond = 0.0, False
    for r, p in zip(ref, torch_outputs(target, args)):
        if not r.is_floating_point():
            continue
        r, p = r.detach().double(), p.detach().double()
        ok = torch.isfinite(r) & torch.isfinite(p)
        if not ok.any():
            continue
        step = (p - r).abs()[ok]
        moved = max(moved, float(step.max()))
        beyond = beyond or bool((step > CHECK_ATOL + CHECK_RTOL * r.abs()[ok]).any())
    return moved if beyond else None


def _check_at_input_dims(kforge, spec, spec_path, loaded, path, work, conv):
    """check_dims: the written spec at reduced input dims, the model at its own weights. Returns
    (flag, line), or a string saying why not."""
    import dataclasses
    from kforge_py import check_dims, kernelbench
    conv = conv or _conv_of(spec, loaded)
    start, flagged, target, ill = 0, None, None, []
    while True:
        got = check_dims.try_plans(spec, conv, loaded, spec["name"], start)
        if isinstance(got, str):
            return flagged or "; ".join(ill + [got])
        sspec, sconv, dims, start = got
        start += 1
        if target is None:  # the model with real weights, once a plan holds
            try:
                target = kernelbench.load(path, meta_inputs=True) if loaded.on_meta \
                    else loaded
            except kernelbench.KernelBenchError as e:
                return f"at the file's own weights: {e}"

        def at(seed, sconv=sconv, dims=dims):
            return check_dims.inputs_at(spec, sconv, target, dims, meta=False, seed=seed)

        r = _check(kforge, spec, spec_path, dims, dataclasses.replace(target, inputs=at(0)),
                   sconv, work, draw=at, where=_reduced_where(spec, dims))
        if isinstance(r, IllConditioned):  # larger sizes may not be
            ill.append(f"at {dims_text(dims)}: {r}")
            continue
        if isinstance(r, str):
            return flagged or f"at {dims_text(dims)}: {r}"
        line = (f"interpreter = PyTorch (fp64) at {dims_text(dims)}, the inputs' batch/spatial "
                f"dims reduced and the weights at the file's sizes, max |diff| {r[1]:.2g}")
        if r[0].flag is None:
            return r[0], line
        # degenerate at these sizes (tiny feature maps can leave a network's output constant):
        # larger reduced sizes are tried before the problem is flagged
        flagged = flagged or (r[0], line)


def _reduced_where(spec, dims):
    return " at the reduced sizes " + dims_text({d: v for d, v in dims.items()
                                                 if v != spec["dims"].get(d)})


def _conv_of(spec, loaded):
    from kforge_py import spec_build
    return spec_build.build(loaded, spec["name"], "")[1]


def validate(kforge, spec, spec_path, loaded, path, conv=None):
    """The numeric check of `spec` (written to spec_path) for the module `loaded` (on the meta
    device or not) from `path`, at the sizes the module docstring lists, and its degeneracy test
    (degeneracy.py; where the check's sizes are reduced and the output looks degenerate or
    weakly dependent there, the test runs again at the largest sizes it can afford, and that
    verdict counts). Returns (a degenerate flag or None, the line saying what was checked);
    raises ImportFailed on a mismatch. Where the output depends on the inputs more weakly than
    the policy's band, spec["precision"] gets the tightened atol and rtol (the caller writes the
    spec again) and the line says why."""
    from kforge_py import degeneracy
    verdict, line = _validate(kforge, spec, spec_path, loaded, path, conv)
    if verdict is None:  # not checked numerically: the degeneracy test needs PyTorch alone
        verdict = degeneracy.at_affordable_sizes(spec, conv or _conv_of(spec, loaded), loaded,
                                                 path, degenerate)
        if verdict is None:
            return None, line
    elif not verdict.fine and not verdict.full:
        verdict = degeneracy.at_larger_sizes(spec, conv or _conv_of(spec, loaded), loaded,
                                             path, verdict, degenerate)
    if verdict.flag:
        return verdict.flag, line
    if verdict.tol is not None:
        spec["precision"]["atol"] = spec["precision"]["rtol"] = verdict.tol
    if verdict.note:
        line += "; " + verdict.note
    return None, line


def _validate(kforge, spec, spec_path, loaded, path, conv):
    """validate's numeric check: (degeneracy.Verdict or None where not checked, the line)."""
    from kforge_py import check_dims, kernelbench, spec_build
    own = dims_text(spec["dims"]) or "the given shapes"
    file_sizes = ", ".join(f"{k} {v}" for k, v in spec["dims"].items())
    why_not, rebuilt = [], []
    with tempfile.TemporaryDirectory(prefix="kforge-import-") as work:
        for plan in shrink_plans(loaded.literal_ints):
            got = _reduced(spec, path, plan)
            if isinstance(got, str):
                why_not.append(got)
                continue
            sspec, sconv, kind = got
            if kind != "written":
                rebuilt.append((plan, sspec, sconv, kind))
                continue
            try:
                target = kernelbench.load(path, overrides=plan)
            except kernelbench.KernelBenchError as e:
                why_not.append(f"at {dims_text(plan)}: {e}")
                continue
            r = _check(kforge, spec, spec_path, sspec["dims"], target, sconv, work,
                       where=_reduced_where(spec, sspec["dims"]))
            if isinstance(r, str):
                why_not.append(f"at {dims_text(sspec['dims'])}: {r}")
                continue
            return r[0], (f"interpreter = PyTorch (fp64) at {dims_text(sspec['dims'])}, "
                          f"reduced sizes (the file's: {file_sizes}), max |diff| {r[1]:.2g}")
        if rebuilt and not _size_dependent(rebuilt):
            why_not.append("its constants (" + ", ".join(rebuilt[0][3]) + ") differ at reduced "
                           "sizes but not as the sizes do")
        elif rebuilt:
            plan, sspec, sconv, ops = rebuilt[0]
            small_path = os.path.join(work, "reduced.json")
            with open(small_path, "w") as f:
                json.dump(sspec, f)
            try:
                target = kernelbench.load(path, overrides=plan)
                r = _check(kforge, sspec, small_path, None, target, sconv, work,
                           where=_reduced_where(spec, sspec["dims"]))
            except kernelbench.KernelBenchError as e:
                r = str(e)
            if not isinstance(r, str):
                return r[0], (f"interpreter = PyTorch (fp64) at {dims_text(sspec['dims'])}, "
                              f"reduced sizes (the file's: {file_sizes}) on the spec rebuilt "
                              f"at them as its constants depend on the sizes "
                              f"({', '.join(ops)}), max |diff| {r[1]:.2g}")
            why_not.append(f"at {dims_text(sspec['dims'])}: {r}")
        def reason_with(extra):
            if why_not:
                return "the sizes cannot be reduced: " + "; ".join(why_not + extra)
            if loaded.literal_ints:
                return "; ".join(["not reduced: its size variables are all <= 32"] + extra)
            return "; ".join(["the sizes cannot be reduced: the file has no literal size "
                              "variables (NAME = <int>) to re-bind"] + extra)

        n = kernelbench.element_count(loaded)
        own_err = None
        own_work = check_dims.too_much_work(loaded) if n <= CHECK_MAX_ELEMENTS else None
        if n <= CHECK_MAX_ELEMENTS and own_work is None:
            try:
                target = kernelbench.load(path) if loaded.on_meta else loaded
                _, own_conv = spec_build.build(target, spec["name"], "")
                r = _check(kforge, spec, spec_path, None, target, own_conv, work,
                           where=" at the file's own sizes")
            except kernelbench.KernelBenchError as e:
                r = str(e)
            if not isinstance(r, str):
                r[0].full = True
                return r[0], (f"interpreter = PyTorch (fp64) at {own}, the file's own sizes "
                              f"({reason_with([])}), max |diff| {r[1]:.2g}")
            own_err = r
        # the file's own sizes are too large (or the interpreter refused them): the inputs'
        # batch / spatial dims reduced, the weights kept (check_dims)
        got = _check_at_input_dims(kforge, spec, spec_path, loaded, path, work, conv)
        if not isinstance(got, str):
            return got
        reason = reason_with(["by the inputs' dims: " + got])
        if own_err is not None:
            return None, f"not checked numerically: {reason}; at the file's own sizes: {own_err}"
        if own_work is not None:
            return None, (f"not checked numerically: {reason}, and at the file's own sizes "
                          f"({own}) the check takes {own_work}")
        return None, (f"not checked numerically: {reason}, and at the file's own sizes "
                      f"({own}) its tensors hold {n:,} elements (the check's limit is "
                      f"{CHECK_MAX_ELEMENTS:,})")
