"""Whether a problem's output depends on its inputs strongly enough for the correctness gate to
tell a kernel that computes it from one that skips the work and writes a constant.

The module runs (fp64) on two random input draws. Per output, |a - b| is how far the output
moves with its inputs; a constant halfway between the draws is |a - b| / 2 from both, so the
gate (|out - ref| <= atol + rtol * max(|ref|, rms(ref)) on a fraction min_fraction of the
elements; the max(|ref|, rms) band is the wider of the two the gate uses, so this errs towards
tightening) fails a constant only where |a - b| / 2 exceeds the band. Three outcomes:

- the output moves past CATCH_MARGIN x the band on more elements than the gate's
  1 - min_fraction may miss (for fp32_strict: on one): fine, a constant fails;
- it moves less, but well above the noise of the precision policy: a real but weak dependence
  (a recurrence whose output forgets most of its inputs, a global average over a large image).
  The spec's atol = rtol are tightened to the largest value that fails a constant by
  CATCH_MARGIN on CATCH_FRACTION of the elements (not on a few: a fresh draw must fail it too),
  which must stay >= NOISE_MARGIN x the policy's noise: a correct kernel then passes with room
  and a constant does not;
- it moves by less than that: degenerate (no tolerance passes a correct kernel and fails a
  constant one), refused with the numbers.

The policy's noise is measured, not assumed: the module run in fp32 against its fp64 run (the
largest |diff|), scaled by the policy's unit roundoff over fp32's for the reduced-precision
policies (a first-order estimate: the GPU's tf32 / bf16 / fp16 paths are not emulated here).
"""
import math
from dataclasses import dataclass

ROUNDOFF = {"fp32_strict": 2.0 ** -24, "tf32": 2.0 ** -11, "bf16": 2.0 ** -8, "fp16": 2.0 ** -11}
CATCH_MARGIN = 2.0      # a constant output misses the band by this factor ...
CATCH_FRACTION = 0.01   # ... on at least this fraction of an output's elements (at least one)
NOISE_MARGIN = 10.0     # a tightened tolerance stays at least this far above the policy's noise
SEEDS = (101, 202)
RETRY_MAX_INPUTS = 1 << 24     # the retry at larger sizes: the inputs' elements (activations
RETRY_MAX_ELEMENTS = 1 << 27   # scale with them) and the inputs' and weights' elements
RETRY_BATCH = 2


@dataclass
class Verdict:
    flag: str = None      # degenerate: why (the importer refuses the problem)
    tol: float = None     # weakly dependent: the atol = rtol that the gate needs
    note: str = ""        # weakly dependent: what was measured
    where: str = ""       # the sizes it was measured at, as text (" at the reduced sizes ...")
    full: bool = False    # measured at the file's own sizes

    @property
    def fine(self):
        return self.flag is None and self.tol is None

    def told(self, tail):
        """This verdict with `tail` added to its message."""
        if self.flag:
            self.flag += tail
        else:
            self.note += tail
        return self


def _min_fraction(spec):
    p = spec["precision"]
    return p.get("min_fraction", 1.0 if p["policy"] == "fp32_strict" else 0.999)


def _needed(n, min_fraction, fraction=0.0):
    """Elements on which a constant must miss the band for the gate to fail it: more than the
    gate lets miss (twice as many), and at least `fraction` of the n."""
    def up(x):
        return math.ceil(x - 1e-9 * x)  # 2 * (1 - 0.99) * 1e6 is 20000.000000000004
    return max(1, up(fraction * n), up(2 * (1 - min_fraction) * n))


def _round_down(t):
    """t to one significant digit, rounded down (a readable tolerance that stays tight)."""
    if t <= 0:
        return t
    unit = 10.0 ** math.floor(math.log10(t))
    return math.floor(t / unit + 1e-9) * unit


def _scale(a):
    """Per element, the magnitude the gate's band scales with: max(|ref|, rms(ref))."""
    import numpy as np
    return np.maximum(np.abs(a), math.sqrt(float(np.mean(a * a))))


def _policy_noise(spec, loaded, inputs, ref, to_outputs):
    """(the policy's noise, the model's fp32 error): the model run in fp32 against its fp64 run
    `ref` on the same inputs, max over the floating outputs' elements of |fp32 - fp64| / (1 +
    max(|ref|, rms(ref))) (the part of a band atol = rtol = t that it takes), scaled by the
    policy's unit roundoff over fp32's; and the largest |fp32 - fp64| itself."""
    import numpy as np
    import torch
    got = to_outputs(loaded, inputs, torch.float32)
    noise = err = 0.0
    for a, g in zip(ref, got):
        if a.is_floating_point():
            a, g = a.double().reshape(-1).numpy(), g.double().reshape(-1).numpy()
            ok = np.isfinite(a) & np.isfinite(g)
            if ok.any():
                e = np.abs(a[ok] - g[ok])
                err = max(err, float(e.max()))
                noise = max(noise, float(np.max(e / (1 + _scale(a[ok])))))
    return noise * ROUNDOFF[spec["precision"]["policy"]] / ROUNDOFF["fp32_strict"], err


def _moves(spec, name, a, b, atol, rtol, where):
    """For one output's two draws: None where a constant fails the band (or the output is not
    floating point and moves), a Verdict where the output cannot depend on the inputs, else
    (the atol = rtol that fails a constant, the largest move, the largest |output|, a)."""
    import numpy as np
    import torch
    if not a.is_floating_point():
        if torch.equal(a, b):
            return Verdict(where=where, flag=f"output {name} does not depend on the inputs (the "
                                             f"same {a.dtype} values for two random draws"
                                             f"{where})")
        return None
    a, b = a.double().reshape(-1).numpy(), b.double().reshape(-1).numpy()
    ok = np.isfinite(a) & np.isfinite(b)
    if not ok.any() or not np.array_equal(a[~ok], b[~ok], equal_nan=True) or \
            not np.array_equal(ok, np.isfinite(a)):
        if np.array_equal(a, b, equal_nan=True):
            return Verdict(where=where, flag=f"output {name} does not depend on the inputs (the "
                                             f"same non-finite values for two random draws"
                                             f"{where})")
        return None  # where an Inf or NaN moves, the output depends on the inputs
    a, b = a[ok], b[ok]
    scale, move = _scale(a), np.abs(a - b)
    if np.count_nonzero(move > 2 * CATCH_MARGIN * (atol + rtol * scale)) >= \
            _needed(a.size, _min_fraction(spec)):
        return None
    k = _needed(a.size, _min_fraction(spec), CATCH_FRACTION)
    catch = float(np.sort(move / (2 * CATCH_MARGIN * (1 + scale)))[-k])
    return catch, float(move.max()), float(np.max(np.abs(a))), a


def assess(spec, loaded, draw, where, to_outputs):
    """The Verdict for `loaded` on the inputs draw(seed) gives for two seeds. to_outputs(loaded,
    inputs, dtype) runs the module with its float tensors in `dtype` (import_check.torch_outputs).
    `where` (" at SIZES") goes into the messages."""
    import numpy as np
    import torch
    from kforge_py.spec_build import tolerance
    atol, rtol = tolerance(spec)
    explicit = any(k in spec["precision"] for k in ("atol", "rtol"))
    policy = spec["precision"]["policy"]
    inputs_a = draw(SEEDS[0])
    outs_a = to_outputs(loaded, inputs_a, torch.float64)
    outs_b = to_outputs(loaded, draw(SEEDS[1]), torch.float64)
    weak = []
    for name, a, b in zip(spec["outputs"], outs_a, outs_b):
        got = _moves(spec, name, a, b, atol, rtol, where)
        if isinstance(got, Verdict):
            return got
        if got is not None:
            weak.append((name,) + got)
    if not weak:
        return Verdict(where=where)
    noise, err32 = _policy_noise(spec, loaded, inputs_a, outs_a, to_outputs)
    name, catch, move, top, a = min(weak, key=lambda w: w[1])
    if policy == "fp32_strict":
        noise_text = f"the fp32_strict noise {noise:.2g} (the model's fp32 error against fp64)"
    else:
        noise_text = (f"the {policy} noise {noise:.2g} (the model's fp32 error {err32:.2g}, "
                      f"scaled by the policy's unit roundoff)")
    if catch <= 0 or catch < NOISE_MARGIN * noise:
        if np.ptp(a) <= atol + rtol * top:
            what = f"is constant ({a[0]:.6g} everywhere{where})"
        else:
            what = f"does not depend on the inputs{where}"
        if move == 0:
            how = "exactly the same for two random draws"
        else:
            how = (f"two random draws move it by at most {move:.2g} (|output| up to {top:.3g}), "
                   f"not measurably above {noise_text}: no tolerance passes a correct kernel and "
                   f"fails one that writes a constant")
        return Verdict(where=where, flag=f"output {name} {what}: {how}")
    tol = _round_down(catch)
    if tol < NOISE_MARGIN * noise:
        tol = catch
    band = f"atol={atol:g}, rtol={rtol:g}"
    moved = f"two random draws move it by at most {move:.2g} (|output| up to {top:.3g})"
    if explicit:
        return Verdict(where=where, flag=f"output {name} depends on the inputs only weakly"
                                         f"{where}: {moved}; the given {band} passes an output "
                                         f"that is a constant: atol = rtol <= {tol:.2g} would "
                                         f"catch it ({noise_text})")
    ratio = f"{tol / noise:.0f}x" if noise else "above"
    return Verdict(tol=tol, where=where,
                   note=f"output {name} depends on the inputs only weakly{where}: {moved}, so "
                        f"the {policy} band ({band}) would pass a constant output; atol = rtol "
                        f"tightened to {tol:.2g}, {ratio} {noise_text}")


def _retry_target(spec, conv, loaded, path):
    """(the module at the largest sizes the retry affords, those sizes as text, whether they are
    the file's own), or (None, why not, False). The file's own sizes where its tensors fit
    RETRY_MAX_*; else its sizes with the batch dims (check_dims.free_dims) re-bound to
    RETRY_BATCH where the file names them by a size variable (`batch_size = 64`): per-sample
    structure - spatial extents, sequence lengths, channel counts - stays the file's. (The
    file's own sizes come first: the gate's worst element over a full-size output is what the
    noise must stay below, and a larger output has a larger worst element.)"""
    import torch
    from kforge_py import check_dims, kernelbench
    free, batch = check_dims.free_dims(spec, conv)

    def sizes(model_loaded, fixed):
        n_in = sum(x.numel() for x in model_loaded.inputs if isinstance(x, torch.Tensor))
        n = kernelbench.element_count(model_loaded)
        if n_in > RETRY_MAX_INPUTS or n > RETRY_MAX_ELEMENTS:
            return f"at {fixed} its inputs hold {n_in:,} and its tensors {n:,} elements"
        return None

    own = ", ".join(f"{d}={spec['dims'][d]}" for d in free)
    plan = {d: RETRY_BATCH for d in batch
            if loaded.literal_ints.get(d) == spec["dims"][d] and spec["dims"][d] > RETRY_BATCH}
    text = ", ".join(f"{d}={plan.get(d, spec['dims'][d])}" for d in free)
    why = []
    for small in (False, True):
        if small and not plan:
            why.append("no batch dim is a size variable to re-bind")
            continue
        if small:
            meta = kernelbench.load(path, overrides=plan, meta=True)
            why_not = sizes(meta, text)
            if why_not is None:
                return kernelbench.load(path, overrides=plan), f" at the file's sizes with " \
                    f"the batch reduced ({text})", False
        else:
            why_not = sizes(loaded, f"the file's own sizes ({own})")
            if why_not is None:
                target = kernelbench.load(path) if loaded.on_meta else loaded
                return target, f" at the file's own sizes ({own})", True
        why.append(why_not)
    return None, "; ".join(why), False


def at_larger_sizes(spec, conv, loaded, path, verdict, degenerate):
    """The Verdict at the largest affordable sizes (_retry_target) where `verdict`, taken at
    reduced sizes, is not fine: reduced sizes can make a network degenerate that is not (spatial
    dims collapsed to 1x1 by its strides and pools, a ReLU dead on every element of a tiny map)
    and can overstate a recurrence's dependence on its inputs (a short sequence forgets less).
    degenerate(spec, loaded, where=...) measures (import_check.degenerate). Where no larger size
    is affordable, `verdict` stands and its message says why."""
    from kforge_py import kernelbench
    try:
        target, where, full = _retry_target(spec, conv, loaded, path)
    except kernelbench.KernelBenchError as e:
        target, where, full = None, f"the file at larger sizes fails to load ({e})", False
    if target is None:
        return verdict.told(f" (not retried at larger sizes: {where})")
    try:
        again = degenerate(spec, target, where=where)
    except Exception as e:  # noqa: BLE001 - out of memory at the larger sizes, say: keep verdict
        return verdict.told(f" (the retry{where} failed: {type(e).__name__}: {str(e)[:160]})")
    again.full = full
    earlier = ("looked degenerate" if verdict.flag else "looked weakly dependent") + verdict.where
    if again.fine:
        again.note = f"the output {earlier}; it depends on the inputs{where}"
        return again
    return again.told(f" (it first {earlier})")


def at_affordable_sizes(spec, conv, loaded, path, degenerate):
    """The Verdict at the largest affordable sizes (_retry_target) for a problem the numeric
    check did not reach (its interpreter run is past the check's limits): the test needs only
    PyTorch. None where no size is affordable either."""
    try:
        target, where, full = _retry_target(spec, conv, loaded, path)
        if target is None:
            return None
        verdict = degenerate(spec, target, where=where)
    except Exception:  # noqa: BLE001 - unaffordable after all (memory): the test is not run
        return None
    verdict.full = full
    if verdict.fine:
        verdict.note = f"the output depends on the inputs{where} (PyTorch alone)"
    return verdict
