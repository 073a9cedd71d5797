"""The device probe's section, as raw HTML for a chapter cell (``Markdown(probe.section_markdown())``)
and for the browser tests' fixture page: a button the reader presses, what it will do, a status
line, a progress bar and the results (filled by ``assets/js/device-probe.js``).

The comparison the results print beside the reader's ridge point (the H100 SXM's FP32 one) comes
from ``calc.specs``, with its sources, like every other figure of the book.
"""
from __future__ import annotations

import json
from html import escape

from calc import specs

COMPARE = "h100-sxm"


def compare() -> dict:
    """The datasheet device the results compare with: label, FP32 peak, bandwidth, ridge point, and
    the document (and places in it) both figures come from."""
    dev = specs.device(COMPARE)
    sources = [dev.peaks[("fp32", False)].source, dev.spec("mem_bw").source]
    where = "; ".join(dict.fromkeys(f"{s.where}" for s in sources))
    return {"label": dev.label.removeprefix("NVIDIA "), "fp32": dev.peak_flops("fp32"), "bw": dev.mem_bw,
            "ridge": dev.ridge_point("fp32"), "source": f"{sources[0].title}, {where}"}


def section_html(script_src: str = "../assets/js/device-probe.js") -> str:
    data = escape(json.dumps(compare(), separators=(",", ":")), quote=True)
    return f"""<section class="device-probe" id="device-probe" aria-label="Measure this device" data-compare="{data}">
<p><strong>Measure this device.</strong> The button runs small benchmarks in this browser for about
15 seconds: memory bandwidth (read, write, copy) and multiply-add throughput, on the GPU through WebGPU
where the browser has it, and on one CPU core through WebAssembly. Nothing is sent anywhere: the
result stays in this browser's storage until you delete it, and becomes “your device” in the
widgets' device lists and the hardware appendix.</p>
<p class="device-probe-plan">The probe will measure the GPU through WebGPU (if the browser gives it a GPU
adapter), then the CPU through WebAssembly SIMD.</p>
<p class="device-probe-nojs">The probe needs JavaScript, which is off in this browser.</p>
<div class="device-probe-actions">
<button type="button" data-probe="run">Measure this device (about 15 s)</button>
<button type="button" data-probe="delete" hidden>Delete the measurement</button>
</div>
<progress hidden max="1" value="0" aria-label="Measurement progress"></progress>
<p class="device-probe-status" role="status">Nothing measured yet.</p>
<div class="device-probe-results" hidden></div>
</section>
<script defer src="{escape(script_src.rsplit("/", 1)[0] + "/measured-device.js", quote=True)}"></script>
<script defer src="{escape(script_src, quote=True)}"></script>"""


def section_markdown() -> str:
    """For an ``#| output: asis`` cell: the section as a raw HTML block (HTML formats only)."""
    return f"```{{=html}}\n{section_html()}\n```\n"
