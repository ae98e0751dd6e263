#!/usr/bin/env python3
"""Shape variants of KernelBench files, for checking that kforge generalizes past the shapes it
was developed on (kforge is judged on other shapes of the same modules):

    variants.py KERNELBENCH_LEVELS_DIR OUT_DIR [--mode odd|half] [--only STEM ...]

Writes OUT_DIR/levelN/<file>.py for each file of KERNELBENCH_LEVELS_DIR/levelN: the file with each
module-level integer constant of 16 or more (batch, channels, spatial extents, features) moved -
`odd`: n * 3 // 4 + 3 (an odd extent where n was even: no power-of-two, no multiple of 4),
`half`: n // 2 for constants of 64 or more (keeps divisibility by head and group counts).
Constants whose names say they are a window, stride, padding, dilation, group, head, patch,
layer or block count are kept (exact names `dim` etc. under 16 are kept anyway). Some variants are invalid modules (a channel count no longer a
multiple of the group count): PyTorch itself refuses them, and the importer reports that as the
model's own failure. Then `bench/kernelbench/coverage.sh OUT_DIR` imports and plans them.
The variants are written outside the repository (KernelBench's files are never copied into it)."""
import argparse
import os
import re
import sys

CONST = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d+)\s*(#.*)?$")
KEEP = ("kernel", "stride", "pad", "dilation", "group", "head", "window", "patch", "layer",
        "block")


def moved(name, n, mode):
    if any(k in name.lower() for k in KEEP):
        return n
    if mode == "half":
        return n // 2 if n >= 64 else n
    if n < 16:
        return n
    return n * 3 // 4 + (3 if n % 2 == 0 else 2)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--mode", choices=("odd", "half"), default="odd")
    ap.add_argument("--only", nargs="*", default=None, help="file stems (e.g. 43_MinGPTCausalAttention)")
    a = ap.parse_args(argv)
    written = 0
    for level in ("level1", "level2", "level3"):
        d = os.path.join(a.src, level)
        if not os.path.isdir(d):
            continue
        os.makedirs(os.path.join(a.out, level), exist_ok=True)
        for f in sorted(os.listdir(d)):
            if not f.endswith(".py") or (a.only and f[:-3] not in a.only):
                continue
            lines = []
            with open(os.path.join(d, f)) as src:
                for line in src:
                    m = CONST.match(line.rstrip("\n"))
                    if m:
                        n = moved(m.group(1), int(m.group(2)), a.mode)
                        if n != int(m.group(2)):
                            line = f"{m.group(1)} = {n}\n"
                    lines.append(line)
            with open(os.path.join(a.out, level, f), "w") as out:
                out.write("".join(lines))
            written += 1
    if written == 0:
        sys.exit(f"no KernelBench files under {a.src} (give the folder holding level1/)")
    print(f"{written} variant file(s) under {a.out} ({a.mode})")


if __name__ == "__main__":
    main(sys.argv[1:])
