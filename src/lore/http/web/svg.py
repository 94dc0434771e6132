"""The UI's pictures, drawn on the server as SVG: a fact's timeline on both time axes, a note's graph
neighbourhood, and the spaces with their `reads_from` / `accepts_from` arrows. Pure functions of
plain tuples.

Every piece of text is escaped here (memory text is data, never markup); colours come from classes
styled by lore.css (the page's Content-Security-Policy allows no inline style).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple
from urllib.parse import quote

from markupsafe import Markup, escape

from lore.core import ids


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


# --- timeline -----------------------------------------------------------------------------------


class Span(NamedTuple):
    """One version of a fact on both axes."""

    label: str  # "v2 · statement"
    recorded_at: datetime
    superseded_at: datetime | None
    valid_from: datetime
    valid_to: datetime | None
    state: str  # current | superseded | forgotten


TL_WIDTH, TL_LABEL, TL_RIGHT, TL_ROW, TL_TOP = 760, 250, 44, 44, 30


def timeline(spans: Sequence[Span], now: datetime) -> Markup:
    """One row per version: the upper bar is belief (recorded → superseded), the lower one validity
    (valid_from → valid_to); an open end runs to "now" and ends in an arrow. The time axis is ordinal
    (each distinct instant one step), so revisions seconds apart stay as readable as years apart."""
    instants = (t for s in spans for t in (s.recorded_at, s.superseded_at, s.valid_from, s.valid_to))
    points = sorted({t for t in instants if t is not None} | {now})
    index = {t: i for i, t in enumerate(points)}
    left, right = TL_LABEL + 12, TL_WIDTH - TL_RIGHT
    step = (right - left) / max(1, len(points) - 1)

    def x(t: datetime) -> float:
        return left + index[t] * step

    height = TL_TOP + len(spans) * TL_ROW + 34
    out = [
        f'<svg class="timeline" viewBox="0 0 {TL_WIDTH} {height}" width="{TL_WIDTH}" height="{height}" '
        f'role="img" aria-label="History of this fact: {len(spans)} version(s) on two time axes">'
    ]
    out.append('<text class="tl-head" x="8" y="16">version</text>')
    out.append(f'<text class="tl-head" x="{left}" y="16">believed ▬ / true in the world ▭</text>')
    now_x = x(now)
    axis_y = TL_TOP + len(spans) * TL_ROW + 4
    out.append(f'<line class="tl-now" x1="{_n(now_x)}" y1="{TL_TOP - 6}" x2="{_n(now_x)}" y2="{axis_y}"/>')
    for row, span in enumerate(spans):
        y = TL_TOP + row * TL_ROW
        out.append(
            f'<g class="tl-row tl-{escape(span.state)}" data-version="{row + 1}">'
            f'<text class="tl-label" x="8" y="{y + 14}">{_lines(span.label, 36, 8, y + 14, 15)}'
            f"<title>{escape(span.label)}</title></text>"
        )
        believed = f"believed {_when(span.recorded_at)} → {_when(span.superseded_at, 'now')}"
        true = f"true {_when(span.valid_from)} → {_when(span.valid_to, 'still true')}"
        believed_to, valid_to = span.superseded_at or now, span.valid_to or now
        cls = f"tl-believed tl-believed-{span.state}"
        believed_open, valid_open = span.superseded_at is None, span.valid_to is None
        out.append(_bar(x(span.recorded_at), x(believed_to), y + 6, 11, cls, believed_open, believed))
        out.append(_bar(x(span.valid_from), x(valid_to), y + 21, 8, "tl-valid", valid_open, true))
        out.append("</g>")
    out.append(f'<line class="tl-axis" x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}"/>')
    every = max(1, math.ceil(74 / step)) if step else 1
    shown: datetime | None = None
    for i, t in enumerate(points):
        tick = x(t)
        out.append(f'<line class="tl-tick" x1="{_n(tick)}" y1="{axis_y}" x2="{_n(tick)}" y2="{axis_y + 5}"/>')
        if t == now:
            out.append(f'<text class="tl-now-label" x="{_n(tick)}" y="{axis_y + 17}">now</text>')
        elif i % every == 0 and (i + every <= len(points) - 1 or points[-1] != now):
            # A date, or only the time when the previous label was the same day.
            label = t.strftime("%H:%M:%S") if shown and shown.date() == t.date() else t.strftime("%Y-%m-%d")
            out.append(f'<text class="tl-tick-label" x="{_n(tick)}" y="{axis_y + 17}">{label}</text>')
            shown = t
    out.append("</svg>")
    return Markup("".join(out))


def _lines(text: str, width: int, x: float, y: float, step: float, count: int = 2) -> str:
    """`text` wrapped at words into at most `count` tspans of about `width` characters (escaped);
    each but the last ends with a space, so that the element's text reads as the original."""
    words, lines = " ".join(text.split()).split(" "), [""]
    for word in words:
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            if len(lines) == count:
                lines[-1] = _short(lines[-1] + " " + word, width)
                break
            lines.append("")
        lines[-1] = f"{lines[-1]} {word}" if lines[-1] else word
    return "".join(
        f'<tspan x="{_n(x)}" y="{_n(y + i * step)}">{escape(line)}{" " if i < len(lines) - 1 else ""}</tspan>'
        for i, line in enumerate(lines)
    )


def _when(t: datetime | None, open_end: str = "") -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S UTC") if t is not None else open_end


def _bar(x1: float, x2: float, y: float, h: float, cls: str, open_end: bool, title: str) -> str:
    width = max(4.0, x2 - x1)
    arrow = ""
    if open_end:
        tip = x1 + width
        arrow = (
            f'<path class="{cls} tl-open" d="M{_n(tip)} {_n(y - 2)} L{_n(tip + 7)} {_n(y + h / 2)} '
            f'L{_n(tip)} {_n(y + h + 2)} Z"/>'
        )
    return (
        f'<rect class="{cls}" x="{_n(x1)}" y="{_n(y)}" width="{_n(width)}" height="{_n(h)}" rx="2">'
        f"<title>{escape(title)}</title></rect>{arrow}"
    )


# --- a note's neighbourhood ---------------------------------------------------------------------


class Node(NamedTuple):
    """A note as a box of the graph: its title (or first words) and kind."""

    lineage: int
    title: str
    kind: str


class Arc(NamedTuple):
    """An edge seen from the note in the middle."""

    other: int
    relation: str
    outgoing: bool  # centre -relation-> other


NODE_W, NODE_H = 190, 40


def _clip(cx: float, cy: float, dx: float, dy: float, hw: float, hh: float) -> tuple[float, float]:
    """Where a ray from a box centre (cx, cy) in direction (dx, dy) leaves the box."""
    scale = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return cx + dx * scale, cy + dy * scale


def _node(x: float, y: float, title: str, sub: str, cls: str, href: str | None) -> str:
    box = (
        f'<rect class="{cls}" x="{_n(x - NODE_W / 2)}" y="{_n(y - NODE_H / 2)}" width="{NODE_W}" '
        f'height="{NODE_H}" rx="8"/>'
        f'<text class="node-title" x="{_n(x)}" y="{_n(y - 3)}">{escape(_short(title, 26))}</text>'
        f'<text class="node-sub" x="{_n(x)}" y="{_n(y + 12)}">{escape(sub)}</text>'
    )
    if href is None:
        return f"<g>{box}</g>"
    return f'<a href="{escape(href)}"><title>{escape(title)}</title>{box}</a>'


def neighbourhood(center: Node, nodes: Mapping[int, Node], arcs: Sequence[Arc]) -> Markup:
    """The note in the middle, its neighbours (one edge away) around it; arrows point along each
    edge's direction and say its relation. Neighbours are links to their own pages."""
    grouped: dict[tuple[int, bool], list[str]] = {}
    for arc in arcs:
        if arc.other in nodes:
            grouped.setdefault((arc.other, arc.outgoing), []).append(arc.relation)
    others = list(dict.fromkeys(other for other, _ in grouped))
    width = 900
    cx, cy = width / 2, 200.0
    spots: dict[int, tuple[float, float]] = {}
    for i, other in enumerate(others):
        if len(others) <= 2:  # one row: the neighbours right (and left) of the note
            spots[other] = (cx + (320 if i == 0 else -320), cy)
            continue
        angle = -math.pi / 2 + 2 * math.pi * i / len(others)
        spots[other] = (cx + 300 * math.cos(angle), cy + 150 * math.sin(angle))
    ys = [cy, *(y for _, y in spots.values())]  # fit the height to the drawing
    top = min(ys) - NODE_H / 2 - 24
    height = max(ys) + NODE_H / 2 + 24 - top
    out = [
        f'<svg class="graph" viewBox="0 {_n(top)} {width} {_n(height)}" width="{width}" '
        f'height="{_n(height)}" role="img" aria-label="Notes linked to n_{center.lineage}: {len(others)}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path class="arrow-head" d="M0 0 L10 5 L0 10 z"/></marker></defs>',
    ]
    for (other, outgoing), relations in grouped.items():
        ox, oy = spots[other]
        both = (other, not outgoing) in grouped
        dx, dy = ox - cx, oy - cy
        length = math.hypot(dx, dy) or 1.0
        shift = 7.0 if both else 0.0
        px, py = -dy / length * shift * (1 if outgoing else -1), dx / length * shift * (1 if outgoing else -1)
        a = _clip(cx + px, cy + py, dx, dy, NODE_W / 2 + 2, NODE_H / 2 + 2)
        b = _clip(ox + px, oy + py, -dx, -dy, NODE_W / 2 + 4, NODE_H / 2 + 4)
        start, end = (a, b) if outgoing else (b, a)
        label = ", ".join(relations)
        mx, my = (start[0] + end[0]) / 2 + px * 1.6, (start[1] + end[1]) / 2 + py * 1.6 - 5
        out.append(
            f'<g class="edge" data-relation="{escape(label)}">'
            f'<line x1="{_n(start[0])}" y1="{_n(start[1])}" x2="{_n(end[0])}" y2="{_n(end[1])}" '
            'marker-end="url(#arrow)"/>'
            f'<text class="edge-label" x="{_n(mx)}" y="{_n(my)}">{escape(label)}</text></g>'
        )
    out.append(
        _node(cx, cy, center.title, f"{ids.note(center.lineage)} · {center.kind}", "node node-center", None)
    )
    for other in others:
        node = nodes[other]
        x, y = spots[other]
        out.append(
            _node(
                x,
                y,
                node.title,
                f"{ids.note(node.lineage)} · {node.kind}",
                "node",
                f"/notes/{ids.note(other)}",
            )
        )
    out.append("</svg>")
    return Markup("".join(out))


# --- spaces -------------------------------------------------------------------------------------


class Flow(NamedTuple):
    source: str
    target: str
    kind: str  # reads (source reads_from target) | writes (source may write into target)

    @property
    def verb(self) -> str:
        return "reads" if self.kind == "reads" else "writes to"


SPACE_W, SPACE_H = 150, 44


def spaces_map(names: Sequence[str], flows: Sequence[Flow], default: str | None) -> Markup:
    """Each space a box; `A reads B` and `B writes to A` (A's accepts_from lists B) as arrows, curved
    apart when several join the same two spaces."""
    n = len(names)
    width = 760
    height = 130 if n <= 2 else 200 + 34 * min(n, 10)
    cx, cy = width / 2, height / 2
    spots: dict[str, tuple[float, float]] = {}
    for i, name in enumerate(names):
        if n == 1:
            spots[name] = (cx, cy)
        elif n == 2:
            spots[name] = (cx + (-190 if i == 0 else 190), cy)
        else:
            angle = -math.pi / 2 + 2 * math.pi * i / n
            spots[name] = (cx + 270 * math.cos(angle), cy + (height / 2 - 40) * math.sin(angle))
    out = [
        f'<svg class="spaces-map" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="Spaces and who reads or writes into whom: {len(flows)} arrow(s)">',
        "<defs>"
        '<marker id="arrow-reads" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path class="arrow-reads" d="M0 0 L10 5 L0 10 z"/></marker>'
        '<marker id="arrow-writes" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path class="arrow-writes" d="M0 0 L10 5 L0 10 z"/></marker></defs>',
    ]
    seen: dict[tuple[str, str], int] = {}
    for flow in flows:
        if flow.source not in spots or flow.target not in spots or flow.source == flow.target:
            continue
        k = seen.get((flow.source, flow.target), 0)
        seen[(flow.source, flow.target)] = k + 1
        (x1, y1), (x2, y2) = spots[flow.source], spots[flow.target]
        dx, dy = x2 - x1, y2 - y1
        length = math.hypot(dx, dy) or 1.0
        bend = 26 + 30 * k
        qx, qy = (x1 + x2) / 2 - dy / length * bend, (y1 + y2) / 2 + dx / length * bend
        a = _clip(x1, y1, qx - x1, qy - y1, SPACE_W / 2 + 2, SPACE_H / 2 + 2)
        b = _clip(x2, y2, qx - x2, qy - y2, SPACE_W / 2 + 5, SPACE_H / 2 + 5)
        mx, my = 0.25 * a[0] + 0.5 * qx + 0.25 * b[0], 0.25 * a[1] + 0.5 * qy + 0.25 * b[1]
        mx, my = mx - dy / length * 10, my + dx / length * 10 + 4  # just outside the curve
        out.append(
            f'<g class="flow flow-{flow.kind}" data-from="{escape(flow.source)}" '
            f'data-to="{escape(flow.target)}">'
            f"<title>{escape(flow.source)} {flow.verb} {escape(flow.target)}</title>"
            f'<path d="M{_n(a[0])} {_n(a[1])} Q{_n(qx)} {_n(qy)} {_n(b[0])} {_n(b[1])}" '
            f'marker-end="url(#arrow-{flow.kind})"/>'
            f'<text class="flow-label" x="{_n(mx)}" y="{_n(my)}">{flow.verb}</text></g>'
        )
    for name in names:
        x, y = spots[name]
        sub = "default space" if name == default else "space"
        out.append(
            f'<a href="/facts?space={quote(name, safe="")}"><title>{escape(name)}</title>'
            f'<rect class="space-box{" space-default" if name == default else ""}" x="{_n(x - SPACE_W / 2)}" '
            f'y="{_n(y - SPACE_H / 2)}" width="{SPACE_W}" height="{SPACE_H}" rx="10"/>'
            f'<text class="node-title" x="{_n(x)}" y="{_n(y - 2)}">{escape(_short(name, 20))}</text>'
            f'<text class="node-sub" x="{_n(x)}" y="{_n(y + 13)}">{sub}</text></a>'
        )
    out.append("</svg>")
    return Markup("".join(out))
