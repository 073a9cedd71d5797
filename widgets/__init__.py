"""Interactive figures: one module per widget, each with ``PARAMS`` and ``render``.

The contract (small on purpose, after anywidget):

* ``PARAMS``: a list of :class:`Param` describing the controls.
* ``render(params) -> {"svg": str, "readouts": [[label, text], ...], "message": str | None}``
  where ``params`` has already been completed and checked by :func:`coerce`.

Optional, for widgets whose controls depend on each other:

* ``ranges(params) -> {name: (lo, hi)}``: a range that follows other params (the
  number of steps of an animation); the static HTML and the live slider use it.
* ``key_frames(params) -> [step, ...]``: an animation; print shows these steps side by side.
* ``print_frames(params) -> [(label, {param: value}), ...]``: not an animation, but print shows
  these states (the given parameters with each override) side by side.
* ``summary(params, readouts) -> str``: what a screen reader hears after a redraw (readouts by
  label); without it, the figure's ``<desc>``.
* ``Param(show_if=(other, values))`` hides a control unless ``other`` has one of
  ``values``; ``Param(play=True)`` gives a slider a play/pause button.

Everything here is pure Python (standard library + ``calc``) so the same code
draws the static figure at build time (CPython) and the live one in the
browser (Pyodide, in a Web Worker).  This module is the registry and the
static HTML; ``bundle.py`` ships the code to the browser.
"""
from __future__ import annotations

import importlib
import json
import math
import re
from dataclasses import dataclass, replace

from ._svg import esc, unesc

NAMES = ("roofline", "blockgrid", "attention-runner", "steps", "memory-budget", "collective-stepper",
         "parallel-planner")
TYPES = ("int", "float", "choice", "bool")
DEFAULT_WIDTH = 640          # layout width of the static figure (CSS px)
# The page's figure is drawn at two layout widths and scaled to its box: the wide one, and the
# phone's when the figure's box is narrower than NARROW_BELOW (a CSS container query in
# widgets.css shows one, widgets-host.js draws the live figure at the same width), so the box a
# figure takes never changes when it goes live.
NARROW_WIDTH = 340
NARROW_BELOW = 520
# A phone keeps a figure in view while its controls are used if it is at most this tall for its
# width (a 340 px wide figure 306 px tall leaves half a phone's screen to the controls).
STICKY_ASPECT = 0.9
LAYOUTS = (DEFAULT_WIDTH, NARROW_WIDTH)


@dataclass(frozen=True)
class Param:
    """One control.  ``options`` (choice) is a tuple of (value, label) pairs.

    ``log``: the slider moves over log2(value) in steps of ``step`` (so
    ``step=1`` gives powers of two).  ``control``: "slider" (default for
    numbers), "number", "select" (default for choices) or "radio".
    """
    name: str
    type: str
    label: str
    default: object
    min: float | None = None
    max: float | None = None
    step: float | None = None
    options: tuple = ()
    log: bool = False
    control: str = ""
    unit: str = ""
    wrap: bool = False       # angles: stepping past max comes back at min
    group: str = ""          # controls with the same group share a fieldset
    show_if: tuple = ()      # (other param, (values...)): the control shows only for those values
    play: bool = False       # slider with a play/pause button that steps it forward
    measured: bool = False   # a device choice that also takes the reader's measured devices (below)

    def __post_init__(self):
        if self.type not in TYPES:
            raise ValueError(f"{self.name}: type {self.type!r} not in {TYPES}")

    @property
    def kind(self) -> str:
        if self.control:
            return self.control
        return {"choice": "select", "bool": "checkbox"}.get(self.type, "slider")

    def to_json(self) -> dict:
        d = {"name": self.name, "type": self.type, "label": self.label,
             "default": self.default, "control": self.kind}
        for key in ("min", "max", "step", "unit"):
            if getattr(self, key) not in (None, ""):
                d[key] = getattr(self, key)
        if self.options:
            d["options"] = [list(o) for o in self.options]
        if self.log:
            d["log"] = True
        if self.wrap:
            d["wrap"] = True
        if self.show_if:
            d["show_if"] = [self.show_if[0], list(self.show_if[1])]
        if self.play:
            d["play"] = True
        if self.measured:
            d["measured"] = True
        return d

    def coerce(self, value):
        """The value as this parameter's type, clamped into range; default if unusable."""
        if value is None:
            return self.default
        try:
            if self.type == "bool":
                if isinstance(value, str):
                    return value.strip().lower() in ("1", "true", "yes", "on")
                return bool(value)
            if self.type == "choice":
                values = [str(v) for v, _ in self.options]
                return str(value) if str(value) in values else self.default
            number = float(value)
            if not math.isfinite(number):
                return self.default
        except (TypeError, ValueError):
            return self.default
        lo = self.min if self.min is not None else number
        hi = self.max if self.max is not None else number
        number = min(max(number, lo), hi)
        return int(round(number)) if self.type == "int" else float(number)


def get(name: str):
    """The widget module called ``name``."""
    if name not in NAMES:
        raise KeyError(f"unknown widget {name!r}; known: {', '.join(NAMES)}")
    return importlib.import_module(f"{__name__}.{name.replace('-', '_')}")


def states(name: str) -> list[dict]:
    """Parameter sets that take widget ``name`` through its states: the defaults, the widget's
    EXAMPLES, every choice, both booleans and both ends of every number.  The build draws them all
    under Pyodide (widgets/prep_runtime.mjs) and the tests check each figure."""
    mod = get(name)
    cases = [{}] + [dict(e) for e in getattr(mod, "EXAMPLES", [])]
    for p in mod.PARAMS:
        if p.type == "choice":
            cases += [{p.name: v} for v, _ in p.options]
        elif p.type == "bool":
            cases += [{p.name: True}, {p.name: False}]
        else:
            cases += [{p.name: p.min}, {p.name: p.max}]
    return cases


def spec(name: str) -> list[dict]:
    return [p.to_json() for p in get(name).PARAMS]


def coerce(name: str, raw: dict | None) -> dict:
    """Complete ``raw`` with defaults and bring each value into its type and range.

    Keys starting with ``_`` (layout hints such as ``_width``) pass through.  A device choice
    marked ``measured`` also takes "yours-gpu" / "yours-cpu" when ``_measured`` carries that device
    (see ``device``)."""
    raw = dict(raw or {})
    out = {p.name: p.coerce(raw.get(p.name)) for p in get(name).PARAMS}
    mine = raw.get("_measured")
    if isinstance(mine, dict) and mine:
        out["_measured"] = mine
        for p in get(name).PARAMS:
            if p.measured and raw.get(p.name) in mine:
                out[p.name] = raw[p.name]
    width = raw.get("_width")
    try:
        out["_width"] = int(min(max(float(width), 300), 900)) if width is not None else DEFAULT_WIDTH
    except (TypeError, ValueError):
        out["_width"] = DEFAULT_WIDTH
    return out


def problems(name: str, raw: dict) -> list[str]:
    """What is wrong with an author's initial parameters (the widget div's attributes), each as a
    sentence naming the valid choices.  ``coerce`` forgives all of these in the browser; a book's
    source must not rely on that (a mistyped device silently drew the default one)."""
    if name not in NAMES:
        return [f"unknown widget {name!r}; the widgets are {', '.join(NAMES)}"]
    params = {p.name: p for p in get(name).PARAMS}
    out = []
    for key, value in raw.items():
        p = params.get(key)
        if key.startswith("_"):
            continue
        if p is None:
            out.append(f"widget {name!r} has no parameter {key!r}; its parameters are {', '.join(params)}")
        elif p.type == "choice" and str(value) not in [str(v) for v, _ in p.options]:
            out.append(f"{key}={value!r} is not a choice of widget {name!r}; the choices are "
                       + ", ".join(str(v) for v, _ in p.options))
        elif p.type == "bool" and str(value).strip().lower() not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            out.append(f"{key}={value!r} is not a boolean (true or false)")
        elif p.type in ("int", "float"):
            try:
                number = float(value)
            except (TypeError, ValueError):
                out.append(f"{key}={value!r} is not a number")
                continue
            if not math.isfinite(number) or (p.min is not None and number < p.min) or \
                    (p.max is not None and number > p.max):
                out.append(f"{key}={value!r} is outside {'' if p.min is None else f'{p.min:g}'}.."
                           f"{'' if p.max is None else f'{p.max:g}'}")
            elif p.type == "int" and not number.is_integer():
                out.append(f"{key}={value!r} is not a whole number")
    return out


def device(params: dict, key: str):
    """The ``calc.specs.Device`` that parameter ``key`` chooses: a datasheet device by name, or the
    reader's device measured in this browser ("yours-gpu", "yours-cpu"), which the page passes as
    ``_measured``: ``{name: dict}``, the dicts of ``BookDevice.devices()`` (assets/js/
    measured-device.js), made into a Device by ``calc.measured.device_from_dict``."""
    value = params[key]
    if value in (params.get("_measured") or {}):
        from calc import measured
        return measured.device_from_dict(params["_measured"][value])
    from calc import specs
    return specs.device(value)


def render(name: str, raw: dict | None = None) -> dict:
    """Coerce ``raw`` and render; the result also carries the coerced ``params``."""
    params = coerce(name, raw)
    module = get(name)
    result = module.render(params)          # may bring a value into range (e.g. a step number)
    result.setdefault("message", None)
    result["summary"] = summary(module, params, result)
    if hasattr(module, "ranges"):
        result["ranges"] = {k: list(v) for k, v in module.ranges(params).items()}
    result["params"] = {k: v for k, v in params.items() if not k.startswith("_")}
    return result


def summary(module, params: dict, result: dict) -> str:
    """One short sentence a screen reader hears after each redraw (the host puts it in a polite
    live region): the widget's ``summary(params, readouts)`` if it has one, else the figure's
    <desc>. Readouts are the numbers Python computed for this drawing, by label."""
    own = getattr(module, "summary", None)
    if own:
        return own(params, dict(result["readouts"]))
    desc = result["svg"].partition("<desc>")[2].partition("</desc>")[0]
    return unesc(desc)        # esc's inverse: the html module would load its entities at start-up


def render_json(name: str, raw_json: str) -> str:
    """Browser entry point: JSON in, JSON out (one string crosses the worker boundary)."""
    try:
        return json.dumps(render(name, json.loads(raw_json)))
    except Exception as exc:  # the page shows the message and keeps the last figure
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"})


# --------------------------------------------------------------------------- HTML

def _attr(value) -> str:
    return esc(value if isinstance(value, str) else json.dumps(value, separators=(",", ":")))


def _slider_position(p: Param, value) -> float:
    return round(math.log2(value), 4) if p.log else value


def _control_html(p: Param, value) -> str:
    label = esc(p.label)
    name = _attr(p.name)
    if p.kind == "checkbox":
        checked = " checked" if value else ""
        return (f'<label class="wc wc-check"><input type="checkbox" name="{name}"{checked}>'
                f'<span>{label}</span></label>')
    if p.kind == "radio":
        items = "".join(
            f'<label><input type="radio" name="{name}" value="{_attr(str(v))}"'
            f'{" checked" if str(v) == str(value) else ""}><span>{esc(t)}</span></label>'
            for v, t in p.options)
        return f'<fieldset class="wc wc-radio"><legend>{label}</legend>{items}</fieldset>'
    if p.kind == "select":
        opts = "".join(
            f'<option value="{_attr(str(v))}"{" selected" if str(v) == str(value) else ""}>{esc(t)}</option>'
            for v, t in p.options)
        return f'<label class="wc wc-select"><span>{label}</span><select name="{name}">{opts}</select></label>'
    lo, hi, step = p.min, p.max, p.step if p.step is not None else (1 if p.type == "int" else "any")
    if p.log:
        lo, hi = math.log2(p.min), math.log2(p.max)
    rng = f' min="{_attr(lo)}" max="{_attr(hi)}" step="{_attr(step)}"'
    shown = esc(_format_value(p, value))
    if p.kind == "number":
        return (f'<label class="wc wc-number"><span>{label}</span>'
                f'<input type="number" name="{name}" value="{_attr(value)}"{rng} inputmode="numeric"></label>')
    log = ' data-log="2"' if p.log else ""
    return (f'<label class="wc wc-slider"><span>{label}</span>'
            f'<input type="range" name="{name}" value="{_attr(_slider_position(p, value))}"{rng}{log}'
            f' aria-valuetext="{_attr(shown)}">'
            f'<output>{shown}</output></label>')


def _shown(p: Param, values) -> bool:
    return not p.show_if or str(values.get(p.show_if[0])) in [str(v) for v in p.show_if[1]]


def _full_control_html(p: Param, values, ranges) -> str:
    """A control with its current range, its play button, hidden when ``show_if`` says so."""
    if p.name in ranges:
        p = replace(p, min=ranges[p.name][0], max=ranges[p.name][1])
    html = _control_html(p, values[p.name])
    if p.play:
        html = (f'<div class="wc wc-player"><button type="button" class="wc-play" data-play="{_attr(p.name)}"'
                f' aria-pressed="false">Play</button>{html}</div>')
    if p.show_if:
        when = _attr({p.show_if[0]: [str(v) for v in p.show_if[1]]})
        tag_end = html.index(" ")
        html = f"{html[:tag_end]} data-when='{when}'{'' if _shown(p, values) else ' hidden'}{html[tag_end:]}"
    return html


def _controls_html(params_spec, values, ranges=None) -> str:
    """Controls in order; consecutive params of one ``group`` share a fieldset with a legend."""
    out, i, ranges = [], 0, ranges or {}
    while i < len(params_spec):
        group = params_spec[i].group
        j = i + 1
        while group and j < len(params_spec) and params_spec[j].group == group:
            j += 1
        inner = "".join(_full_control_html(p, values, ranges) for p in params_spec[i:j])
        out.append(f'<fieldset class="wc-group"><legend>{esc(group)}</legend>{inner}</fieldset>'
                   if group else inner)
        i = j
    return "".join(out)


# A byte count in one of these units is shown in the largest it fills (65,536 KiB reads "64 MiB",
# as calc.fmt.bytes_iec would put it), so a slider over bytes agrees with readouts in MiB and GiB.
# widgets-host.js's ``fmt`` does the same when the value changes.
IEC_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _format_bytes(value: float, unit: str) -> str:
    i = IEC_UNITS.index(unit)
    while value >= 1024 and i < len(IEC_UNITS) - 1:
        value, i = value / 1024, i + 1
    if float(value).is_integer():
        return f"{int(value):,} {IEC_UNITS[i]}"
    r = float(f"{value:.3g}")                        # three significant figures, as calc.fmt.num
    text = f"{r:,.0f}" if r >= 100 else f"{r:.{2 - math.floor(math.log10(r))}f}"
    return f"{text} {IEC_UNITS[i]}"


def _format_value(p: Param, value) -> str:
    if p.unit in IEC_UNITS and p.type in ("int", "float") and value > 0:
        return _format_bytes(value, p.unit)
    text = f"{value:,}" if p.type == "int" else f"{value:g}" if p.type == "float" else str(value)
    return f"{text}{p.unit}" if p.unit in ("°", "%") else f"{text} {p.unit}".strip()


def readouts_html(readouts) -> str:
    rows = "".join(f"<div><dt>{esc(str(k))}</dt><dd>{esc(str(v))}</dd></div>"
                   for k, v in readouts)
    return f'<dl class="widget-readouts">{rows}</dl>'


def static_html(name: str, raw: dict | None = None, caption_html: str = "") -> str:
    """The complete widget root: static figure (at both layout widths), (disabled) controls right
    under it (a phone keeps the figure in view above them), the message under the controls (so
    that one appearing never moves them), readouts, status line.

    The page is right before any script runs; the host script only enables the
    controls and takes over the figure."""
    result = render(name, raw)
    params = result["params"]
    module = get(name)
    narrow = render(name, {**params, "_width": NARROW_WIDTH})
    sticky = " widget-sticky" if _aspect(narrow["svg"]) <= STICKY_ASPECT else ""
    figures = "".join(_tag_layout(r["svg"], width) for r, width in ((result, DEFAULT_WIDTH), (narrow, NARROW_WIDTH)))
    controls = _controls_html(module.PARAMS, params, result.get("ranges"))
    title = getattr(module, "TITLE", name)
    message = result.get("message") or ""
    caption = f"<figcaption>{caption_html}</figcaption>" if caption_html.strip() else ""
    return (
        f'<div class="widget{sticky}" data-widget="{_attr(name)}" data-state="static"'
        f" data-params='{_attr(params)}' data-spec='{_attr(spec(name))}'>"
        f'<figure class="widget-figure"><div class="widget-svg">{figures}</div>{caption}</figure>'
        f'<form class="widget-controls" aria-label="{_attr(title)} controls" onsubmit="return false">'
        f'<fieldset disabled>{controls}</fieldset></form>'
        f'<p class="widget-message" aria-live="polite"{"" if message else " hidden"}>{esc(message)}</p>'
        f'{readouts_html(result["readouts"])}'
        f'<p class="widget-status" role="status">Static figure until Python has loaded.</p>'
        f"</div>"
    )


def _aspect(svg: str) -> float:
    """Height over width of a figure, from its viewBox."""
    _, _, w, h = map(float, re.search(r'viewBox="([^"]+)"', svg).group(1).split())
    return h / w


def _tag_layout(svg: str, width: int) -> str:
    """The static figure drawn at ``width``, marked for widgets.css and the host.  The phone's
    copy names its own ids (a marker in the hidden copy would not be drawn)."""
    assert svg.startswith("<svg ")
    if width != DEFAULT_WIDTH:
        svg = re.sub(r'(\bid="|url\(#)(wg-[\w-]+)', rf"\1\2-{width}", svg)
    return f'<svg data-layout="{width}" {svg[5:]}'


def standalone_svg(name: str, raw: dict | None = None) -> str:
    """The SVG as a file of its own (PDF, image export): carries a print stylesheet."""
    from ._svg import PRINT_CSS
    result = render(name, raw)
    svg = result["svg"]
    tall = result.get("print_height")   # a widget whose box is kept as tall as its tallest state
    if tall:                            # ends, on paper, where its drawing does (no controls below)
        x, y, w, h = re.search(r'viewBox="([^"]+)"', svg).group(1).split()
        if int(tall) < float(h):
            svg = svg.replace(f'viewBox="{x} {y} {w} {h}"', f'viewBox="{x} {y} {w} {int(tall)}"', 1)
            svg = re.sub(r'(<svg\b[^>]*?\sheight=")[^"]*"', rf'\g<1>{int(tall)}"', svg, count=1)
    head, sep, rest = svg.partition(">")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{head}{sep}<style>{PRINT_CSS}</style>{rest}'
