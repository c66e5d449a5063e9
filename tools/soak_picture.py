"""The soak's picture: resident memory and threads of the bot over the run, and the move latency
of each move, as one small SVG file (no plotting library: the project has none)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

WIDTH, HEIGHT, PAD = 720, 170, 40


def _chart(y0: int, title: str, points: Sequence[tuple[float, float]], unit: str, colour: str) -> str:
    """One chart at height y0: a polyline of (x, y) scaled into the box, with its min and max."""
    box = (f'<rect x="{PAD}" y="{y0}" width="{WIDTH - 2 * PAD}" height="{HEIGHT - PAD}" fill="none" '
           f'stroke="#999"/><text x="{PAD}" y="{y0 - 6}" font-size="13">{title}</text>')
    if not points:
        return box
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x_lo, x_hi = min(xs), max(xs) or 1.0
    y_lo, y_hi = 0.0, max(ys) or 1.0
    w, h = WIDTH - 2 * PAD, HEIGHT - PAD

    def xy(x: float, y: float) -> str:
        px = PAD + (x - x_lo) / ((x_hi - x_lo) or 1.0) * w
        py = y0 + h - (y - y_lo) / (y_hi - y_lo) * h
        return f"{px:.1f},{py:.1f}"

    line = " ".join(xy(x, y) for x, y in points)
    return (box + f'<polyline fill="none" stroke="{colour}" stroke-width="1" points="{line}"/>'
            f'<text x="{WIDTH - PAD + 4}" y="{y0 + 10}" font-size="11">{y_hi:.0f} {unit}</text>'
            f'<text x="{WIDTH - PAD + 4}" y="{y0 + h}" font-size="11">0</text>')


def write_svg(path: Path, memory: Sequence[tuple[float, float]], threads: Sequence[tuple[float, float]],
              latency_ms: Sequence[float]) -> Path:
    """memory and threads: (seconds into the run, value) samples; latency_ms: one per move, in order."""
    charts = [("bot resident memory over the run (x: time)", memory, "MiB", "#1f77b4"),
              ("bot threads over the run (x: time)", threads, "", "#2ca02c"),
              ("move latency, gameState -> POST (x: move number)", list(enumerate(latency_ms)), "ms",
               "#d62728")]
    body = "".join(_chart(30 + i * (HEIGHT + 20), *c) for i, c in enumerate(charts))
    total = 30 + len(charts) * (HEIGHT + 20)
    path.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH + 40}" height="{total}" '
                    f'font-family="sans-serif">{body}</svg>\n')
    return path
