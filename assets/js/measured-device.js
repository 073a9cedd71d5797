// The reader's measured device: what the device probe (device-probe.js, in the roofline chapter)
// stored in this browser, as devices of the book. Loaded by the probe's section, and by the loader in
// _includes/head.html on a page that shows a measured device when one is stored.
//
// API, for the widgets host, the hardware appendix and the exercises:
//   BookDevice.KEY              the localStorage key ("bytes-not-flops/measured-device/v1")
//   BookDevice.get()            the stored probe result (JSON object, see device-probe-worker.js), or null
//   BookDevice.save(result)     store a result (the probe does this); fires the change event
//   BookDevice.clear()          delete it; fires the change event
//   BookDevice.devices()        [device, ...]: "yours-gpu" (a hardware WebGPU adapter was measured)
//                               and "yours-cpu", each a dict of the shape of calc.specs's devices,
//                               which Python turns into a calc.specs.Device with
//                               calc.measured.device_from_dict:
//                               {name, label, kind, measured: {date, browser, ...},
//                                specs: {mem_bw: {value, unit: "B/s", note}},
//                                peaks: {fp32: {value, unit: "FLOP/s", note}, fp16?: {...}}}
//   BookDevice.device(name)     one of them by name, or null
//   window event "bookdevice:change"   after save or clear, here or in another tab, and once when
//                               this script runs if a device is stored
// Nothing here leaves the browser.
(() => {
  "use strict";
  if (window.BookDevice) return;
  const KEY = "bytes-not-flops/measured-device/v1";
  const EVENT = "bookdevice:change";

  const positive = (x) => typeof x === "number" && Number.isFinite(x) && x > 0;
  const figure = (f) => f && positive(f.median) ? f : null;

  function get() {
    try {
      const data = JSON.parse(localStorage.getItem(KEY) || "null");
      return data && data.version === 1 && data.cpu ? data : null;
    } catch { return null; }
  }
  function save(result) {
    localStorage.setItem(KEY, JSON.stringify(result));
    dispatchEvent(new CustomEvent(EVENT, { detail: result }));
  }
  function clear() {
    localStorage.removeItem(KEY);
    dispatchEvent(new CustomEvent(EVENT, { detail: null }));
  }
  addEventListener("storage", (e) => { if (e.key === KEY || e.key === null) dispatchEvent(new CustomEvent(EVENT, { detail: get() })); });

  // The memory roof is the best of the three streams (as STREAM's best kernel sets a CPU's roof).
  function bestStream(part) {
    let best = null;
    for (const k of ["read", "write", "copy"]) {
      const f = figure(part[k]);
      if (f && (!best || f.median > best.f.median)) best = { k, f };
    }
    return best;
  }
  const day = (iso) => String(iso || "").slice(0, 10);

  function gpuName(gpu) {
    const a = gpu.adapter || {};
    const name = [a.description, a.vendor && a.architecture ? `${a.vendor} ${a.architecture}` : a.vendor].find((s) => s && String(s).trim());
    return name ? String(name).trim().slice(0, 60) : "WebGPU adapter";
  }

  function devices(result = get()) {
    if (!result) return [];
    const out = [], date = day(result.date), browser = result.browser || "";
    const gpu = result.gpu;
    if (gpu && !gpu.software) {
      const bw = bestStream(gpu), fp32 = figure(gpu.fma32);
      if (bw && fp32) {
        const peaks = { fp32: { value: fp32.median, unit: "FLOP/s", note: `FP32 FMA, median of ${fp32.n} batches, measured ${date}` } };
        const fp16 = figure(gpu.fma16);
        if (fp16) peaks.fp16 = { value: fp16.median, unit: "FLOP/s", note: `FP16 FMA (WebGPU shader-f16), median of ${fp16.n} batches, measured ${date}` };
        out.push({
          name: "yours-gpu", label: `Your GPU: ${gpuName(gpu)} (measured in this browser)`, kind: "gpu",
          measured: { date: result.date, browser, adapter: gpu.adapter || {}, bytes: gpu.bytes },
          specs: { mem_bw: { value: bw.f.median, unit: "B/s", note: `WebGPU ${bw.k} of ${gpu.bytes} B, the best of read, write and copy; median of ${bw.f.n} batches, measured ${date}` } },
          peaks,
        });
      }
    }
    const cpu = result.cpu, bw = bestStream(cpu), fma = figure(cpu.fma);
    if (bw && fma) {
      out.push({
        name: "yours-cpu", label: "Your CPU, one core (measured in this browser)", kind: "cpu",
        measured: { date: result.date, browser, bytes: cpu.bytes, threads: 1 },
        specs: { mem_bw: { value: bw.f.median, unit: "B/s", note: `WebAssembly SIMD ${bw.k} of ${cpu.bytes} B on one thread, the best of read, write and copy; median of ${bw.f.n} batches, measured ${date}` } },
        peaks: { fp32: { value: fma.median, unit: "FLOP/s", note: `${cpu.fma.fused ? "fused multiply-add (relaxed SIMD)" : "multiply and add (SIMD)"} on one thread, median of ${fma.n} batches, measured ${date}` } },
      });
    }
    return out;
  }
  const device = (name) => devices().find((d) => d.name === name) || null;

  // ---- the hardware appendix: a row per measured device under the datasheet devices -------------
  const si = (x, unit) => {
    const p = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]].find(([v]) => x >= v) || [1, ""];
    const v = x / p[0];
    return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${p[1]}${unit}`;
  };
  function appendixRows() {
    const table = document.querySelector("#tbl-hardware-summary table, table#tbl-hardware-summary");
    if (!table || !table.tBodies[0]) return;
    for (const tr of table.querySelectorAll("tr.measured-row")) tr.remove();
    const body = table.tBodies[0], cols = table.rows[0].cells.length;
    for (const d of devices()) {
      const tr = document.createElement("tr");
      tr.className = "measured-row";
      const peakKey = d.peaks.fp16 ? "fp16" : "fp32";
      const peak = d.peaks[peakKey].value, bw = d.specs.mem_bw.value;
      const cells = [
        `${d.label.replace(" (measured in this browser)", "")}: measured in this browser on ${day(d.measured.date)}, not a specification`,
        si(bw, "B/s"),
        "—",
        `${si(peak, "FLOP/s")} ${peakKey === "fp16" ? "FP16" : "FP32"} FMA`,
        `${(peak / bw).toPrecision(3)} FLOP/B`,
      ].slice(0, cols);
      const model = body.rows[0] ? [...body.rows[0].cells] : [];   // the table's own alignment per column
      cells.forEach((text, i) => {
        const td = document.createElement("td"); td.textContent = text;
        if (model[i] && model[i].style.textAlign) td.style.textAlign = model[i].style.textAlign;
        tr.append(td);
      });
      body.append(tr);
    }
    const note = document.getElementById("measured-device-note");
    if (note) note.hidden = !devices().length;
  }

  // ---- prose that invites the measurement (.measured-ridge, the data-movement chapter): the
  // reader's own thresholds (FP32 FLOP per byte, the figure the prose gives for its laptop) -------
  function proseRidges() {
    for (const box of document.querySelectorAll(".measured-ridge")) {
      let out = box.querySelector(".measured-ridge-yours");
      const devs = devices();
      if (!devs.length) { if (out) out.remove(); continue; }
      if (!out) { out = document.createElement("span"); out.className = "measured-ridge-yours"; box.append(out); }
      const each = devs.map((d) => `${d.label.replace(" (measured in this browser)", "")}, ${(d.peaks.fp32.value / d.specs.mem_bw.value).toPrecision(3)} FLOP per byte`);
      out.textContent = ` Measured in this browser on ${day(devs[0].measured.date)} (FP32, not a specification): ${each.join("; ")}.`;
    }
  }

  window.BookDevice = { KEY, EVENT, get, save, clear, devices, device };
  addEventListener(EVENT, appendixRows);
  addEventListener(EVENT, proseRidges);
  // widgets-host.js loads async and may have mounted its widgets before this deferred script ran:
  // it adds the stored devices to their lists on this event, as after a measurement.
  if (get()) dispatchEvent(new CustomEvent(EVENT, { detail: get() }));
  const atLoad = () => { appendixRows(); proseRidges(); };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", atLoad, { once: true });
  else atLoad();
})();
