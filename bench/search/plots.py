"""Progress-curve plots of summarize.py: ASCII for the Markdown, SVG files beside it (matplotlib)."""

import io
import sys

MODE_TEXT = {"builtin": "built-in (diagnosis,parameter)", "random": "random",
             "param": "parameter only"}


def ascii_plot(series, budget, width=64, height=14):
    """series: {mode: [(wall_s, speedup)]}; x = wall / budget, y = best speedup vs start."""
    pts = [p for s in series.values() for p in s]
    if not pts:
        return "(no points)"
    xmax = max(1.0, max(w for w, _ in pts) / budget)
    ylo, yhi = min(1.0, min(y for _, y in pts)), max(y for _, y in pts)
    yhi = yhi if yhi > ylo else ylo + 0.01
    grid = [[" "] * width for _ in range(height)]
    for mode, s in series.items():
        ch = {"builtin": "B", "random": "R", "param": "P"}.get(mode, "?")
        # step function: hold each best until the next point
        for i in range(width):
            x = i / (width - 1) * xmax * budget
            y = None
            for w, v in s:
                if w <= x:
                    y = v
            if y is not None:
                row = height - 1 - round((y - ylo) / (yhi - ylo) * (height - 1))
                cell = grid[row][i]
                grid[row][i] = ch if cell in (" ", ch) else "*"
    lines = [f"{yhi:7.3f}x |" + "".join(grid[0])]
    lines += ["         |" + "".join(r) for r in grid[1:-1]]
    lines += [f"{ylo:7.3f}x |" + "".join(grid[-1])]
    lines.append("         +" + "-" * width)
    lines.append(f"          0{' ' * (width - 12)}{xmax:.2f} x budget (search wall)")
    lines.append("          B built-in, R random, P parameter only, * overlap")
    return "\n".join(lines)


def svg_plot(title, series, budget, simulated, x_label=None):
    """Step curves of series {mode: [(x, speedup)]} as SVG text, drawn by matplotlib; x is search
    wall seconds with `budget` (a dashed line at it), or, with `x_label` and budget None, any other
    axis (GPU-seconds). None when there is no point, or no matplotlib (said once on stderr: the
    Markdown keeps its ASCII curves; `pip install matplotlib`, or run summarize.py again on the
    tarball where it is installed, as scripts/setup.sh installs it in .venv)."""
    pts = [p for s in series.values() for p in s]
    if not pts:
        return None
    plt = _pyplot()
    if plt is None:
        return None
    if budget:
        xmax = max(1.0, max(x for x, _ in pts) / budget) * budget
    else:
        xmax = max(x for x, _ in pts) * 1.05 or 1.0
    colors = {"builtin": "#1f77b4", "random": "#d62728", "param": "#2ca02c"}
    fig, ax = plt.subplots(figsize=(5.2, 3.0), dpi=100)
    for mode, s in series.items():
        xs = [x for x, _ in s]
        ys = [y for _, y in s]
        # the best holds until the next point, and to the last point's x
        ax.step(xs, ys, where="post", color=colors.get(mode, "black"), linewidth=2,
                label=MODE_TEXT.get(mode, mode))
    if budget:
        ax.axvline(budget, color="#999999", linestyle="--", linewidth=1)
        ax.set_xlabel(f"search wall, s (budget {budget:.0f} s)")
    else:
        ax.set_xlabel(x_label or "")
    ax.set_xlim(0, xmax)
    ax.set_ylabel("best speedup vs start")
    ax.set_title(title + (" (SIMULATED device)" if simulated else ""), fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, linewidth=0.3)
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    return out.getvalue()


_PLT = []


def _pyplot():
    """matplotlib.pyplot on its file-only backend, imported once; None when not installed."""
    if not _PLT:
        try:
            import matplotlib
            matplotlib.use("Agg")
            matplotlib.rcParams["svg.hashsalt"] = "kforge"  # the same SVG for the same data
            import matplotlib.pyplot as plt
            _PLT.append(plt)
        except ImportError:
            print("plots.py: matplotlib is not installed: no SVG curves (pip install matplotlib)",
                  file=sys.stderr)
            _PLT.append(None)
    return _PLT[0]
