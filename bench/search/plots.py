"""Progress-curve plots of summarize.py: ASCII for the Markdown, SVG files beside it."""

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
    """Step curves of series {mode: [(x, speedup)]}; x is search wall seconds with `budget` (a
    dashed line at it), or, with `x_label` and budget None, any other axis (GPU-seconds)."""
    w, h, ml, mb = 520, 300, 50, 35
    pts = [p for s in series.values() for p in s]
    if not pts:
        return None
    if budget:
        xmax = max(1.0, max(x for x, _ in pts) / budget) * budget
    else:
        xmax = max(x for x, _ in pts) * 1.05 or 1.0
    ylo, yhi = min(1.0, min(y for _, y in pts)), max(y for _, y in pts)
    yhi = yhi if yhi > ylo else ylo + 0.01
    sx = lambda x: ml + x / xmax * (w - ml - 10)
    sy = lambda y: h - mb - (y - ylo) / (yhi - ylo) * (h - mb - 25)
    colors = {"builtin": "#1f77b4", "random": "#d62728", "param": "#2ca02c"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{ml}" y="15">{title}{" (SIMULATED device)" if simulated else ""}</text>',
           f'<line x1="{ml}" y1="{h - mb}" x2="{w - 10}" y2="{h - mb}" stroke="black"/>',
           f'<line x1="{ml}" y1="{h - mb}" x2="{ml}" y2="20" stroke="black"/>',
           f'<text x="{ml}" y="{h - 8}">0</text>',
           f'<text x="{w - 170}" y="{h - 8}">' +
           (f'{xmax:.0f} s search wall (budget {budget:.0f} s)' if budget
            else f'{xmax:.3g} {x_label}') + '</text>',
           f'<text x="2" y="{sy(yhi) + 4:.0f}">{yhi:.2f}x</text>',
           f'<text x="2" y="{sy(ylo) + 4:.0f}">{ylo:.2f}x</text>']
    if budget:
        out.append(f'<line x1="{sx(budget):.1f}" y1="20" x2="{sx(budget):.1f}" y2="{h - mb}" '
                   'stroke="#999" stroke-dasharray="4"/>')
    for i, (mode, s) in enumerate(series.items()):
        path, last = [], None
        for x, y in s:
            if last is not None:
                path.append(f"{sx(x):.1f},{sy(last):.1f}")
            path.append(f"{sx(x):.1f},{sy(y):.1f}")
            last = y
        if last is not None:
            path.append(f"{sx(s[-1][0]):.1f},{sy(last):.1f}")
        c = colors.get(mode, "black")
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="{" ".join(path)}"/>')
        out.append(f'<text x="{w - 160}" y="{40 + 14 * i}" fill="{c}">{MODE_TEXT.get(mode, mode)}</text>')
    out.append("</svg>")
    return "\n".join(out)
