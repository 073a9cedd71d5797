"""The reader's own device, measured in the browser by the book's device probe.

The probe (``assets/js/device-probe-worker.js``) times WebGPU and WebAssembly SIMD kernels;
``BookDevice.devices()`` (``assets/js/measured-device.js``) turns its stored result into dicts of
the shape of ``calc.specs``'s devices, and the widgets pass them to Python, where
:func:`device_from_dict` makes a :class:`calc.specs.Device` of them. Such a device is marked
``measured``: its figures are a browser's measurements on one machine on one day, never a
specification, and every label says so.

The dict::

    {"name": "yours-gpu" | "yours-cpu", "label": str, "kind": "gpu" | "cpu",
     "measured": {"date": ISO-8601, ...},
     "specs": {"mem_bw": {"value": bytes/s, "unit": "B/s", "note": str}},
     "peaks": {"fp32": {"value": FLOP/s, "unit": "FLOP/s", "note": str}, "fp16": {...}}}
"""
from __future__ import annotations

import math

from .dtypes import check_dtype
from .sources import Source, Spec
from .specs import Device

NAMES = ("yours-gpu", "yours-cpu")
PROBE = Source("Measured in this browser by the book's device probe", "the reader's browser", 0, None,
               where="the roofline chapter's device probe",
               note="a measurement on one machine and one day, not a specification")
MAX_RATE = 1e17   # above any device of this decade (a corrupt store, not a measurement)


def _figure(entry, what: str, unit: str) -> Spec:
    if not isinstance(entry, dict):
        raise ValueError(f"measured device: {what} is missing")
    value = entry.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value < MAX_RATE:
        raise ValueError(f"measured device: {what} must be a positive number of {unit}, not {value!r}")
    if entry.get("unit", unit) != unit:
        raise ValueError(f"measured device: {what} is in {entry.get('unit')!r}, expected {unit!r}")
    return Spec(float(value), unit, PROBE, str(entry.get("note", ""))[:300])


def device_from_dict(d: dict) -> Device:
    """A ``calc.specs.Device`` from a measured-device dict; ValueError naming what is wrong."""
    if not isinstance(d, dict):
        raise ValueError("measured device: expected a dict")
    name = d.get("name")
    if name not in NAMES:
        raise ValueError(f"measured device: name {name!r} is not one of {', '.join(NAMES)}")
    label = str(d.get("label") or name)[:120]
    if "measured" not in label:
        label = f"{label} (measured in this browser)"
    kind = d.get("kind") if d.get("kind") in ("gpu", "cpu") else "cpu"
    specs = {"mem_bw": _figure((d.get("specs") or {}).get("mem_bw"), "mem_bw", "B/s")}
    peaks = {}
    for dtype, entry in (d.get("peaks") or {}).items():
        check_dtype(dtype)
        peaks[(dtype, False)] = _figure(entry, f"the {dtype} peak", "FLOP/s")
    if ("fp32", False) not in peaks:
        raise ValueError("measured device: the fp32 peak is missing")
    date = str((d.get("measured") or {}).get("date", ""))[:10]
    return Device(name, label, kind, specs, peaks, measured=True,
                  notes=(f"measured in a browser{' on ' + date if date else ''}; not a specification",))


def devices_from(raw) -> dict[str, Device]:
    """``{name: Device}`` from the widgets' ``_measured`` parameter (a dict by name, or a list)."""
    if not raw:
        return {}
    items = raw.values() if isinstance(raw, dict) else raw
    out = {}
    for d in items:
        dev = device_from_dict(d)
        out[dev.name] = dev
    return out
