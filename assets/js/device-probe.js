// The device probe's page side: the section the roofline chapter carries (bookfigs/probe.py writes
// its markup). The reader presses "Measure this device"; device-probe-worker.js measures in a
// worker; the result is kept by BookDevice (measured-device.js) in this browser and becomes
// "your device" in the widgets' device choices, the hardware appendix and the exercises.
// Never starts on its own. `?probe=quick` in the page's address shortens every batch (tests).
(() => {
  "use strict";
  const script = document.currentScript ? document.currentScript.src : location.href;
  const query = new URLSearchParams(location.search);
  const quick = query.get("probe") === "quick";
  const gpuCapMs = quick && query.has("probe-gpu-cap") ? Number(query.get("probe-gpu-cap")) : undefined;   // tests
  const conn = navigator.connection;
  const saveData = !!(conn && conn.saveData);

  const si = (x, unit) => {
    const p = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]].find(([v]) => x >= v) || [1, ""];
    const v = x / p[0];
    return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${p[1]}${unit}`;
  };
  // The spread as "107–775 MB/s": both ends in the median's prefix.
  const pct = (f) => {
    const p = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"], [1, ""]].find(([v]) => f.median >= v) || [1, ""];
    const n = (x) => { const v = x / p[0]; return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2); };
    return `${n(f.lo)}–${n(f.hi)} ${p[1]}${f.unit}`;
  };
  const mib = (b) => `${Math.round(b / 2 ** 20)} MiB`;
  const el = (tag, props = {}, ...kids) => { const e = Object.assign(document.createElement(tag), props); e.append(...kids); return e; };

  // What the probe cannot do in this browser, said before the reader presses anything.
  function plan() {
    if (saveData) return "Save-Data is on, so the probe will measure the CPU only: the GPU part allocates about 0.5 GB of GPU memory and runs the GPU hard.";
    if (!navigator.gpu) return "This browser has no WebGPU, so the probe will measure the CPU only (WebAssembly SIMD).";
    return null;   // the page's own sentence (bookfigs/probe.py): what the probe does where it can
  }

  function table(caption, rows, head) {
    const t = el("table", { className: "device-probe-table" });
    t.append(el("caption", { textContent: caption }));
    const thead = el("thead"); const hr = el("tr");
    for (const h of head) hr.append(el("th", { scope: "col", textContent: h }));
    thead.append(hr); t.append(thead);
    const tb = el("tbody");
    for (const r of rows) { const tr = el("tr"); tr.append(el("th", { scope: "row", textContent: r[0] })); for (const c of r.slice(1)) tr.append(el("td", { textContent: c })); tb.append(tr); }
    t.append(tb);
    return el("div", { className: "device-probe-scroll", tabIndex: 0 }, t);
  }
  const row = (label, f) => [label, si(f.median, f.unit), pct(f), String(f.n)];
  const HEAD = ["Figure", "Median", "Spread", "Batches"];
  const SPREAD = "Spread: the slowest and the fastest batch.";

  function gpuMessage(r) {
    switch (r.gpuStatus) {
      case "none": return "No GPU figures: this browser has no WebGPU. Only the CPU was measured.";
      case "no-adapter": return "No GPU figures: WebGPU gave no adapter (it may be turned off or blocked for this GPU). Only the CPU was measured.";
      case "save-data": return "No GPU figures: Save-Data is on, so only the CPU was measured.";
      case "error": return `No GPU figures: the GPU probe failed (${r.gpuError || "unknown error"}). Only the CPU was measured.`;
      default: return "";
    }
  }

  // What the strided figures show: on a GPU they fall as the stride grows (coalescing's saving);
  // where they do not (a software adapter, on the CPU), the sentence says so rather than point at
  // a fall that is not there.
  function strideSays(g) {
    const s = g.strided, first = s[0], last = s[s.length - 1];
    if (s.length > 1 && last.median < 0.9 * first.median) return "the fall with the stride is what coalescing saves.";
    const seen = `stride ${first.stride}: ${si(first.median, first.unit)}; stride ${last.stride}: ${si(last.median, last.unit)}`;
    return `on a GPU the figure falls as the stride grows, and that fall is what coalescing saves. Here it does not fall (${seen})`
      + (g.software ? ": this adapter runs on the CPU, where there is no coalescing to see." : ", so these figures show no saving from coalescing.");
  }

  function showResult(box, r, compare) {
    const out = box.querySelector(".device-probe-results");
    out.replaceChildren();
    if (!r) { out.hidden = true; return; }
    out.hidden = false;
    const devs = window.BookDevice.devices(r);
    out.append(el("p", { className: "device-probe-when" }, `Measured in this browser on ${r.date.slice(0, 10)}, in ${(r.elapsedMs / 1000).toFixed(1)} s${r.quick ? " (quick test mode: short batches, small arrays)" : ""}. These are measurements, not specifications.`));
    const msg = gpuMessage(r);
    if (msg) out.append(el("p", { className: "device-probe-note" }, msg));
    if (r.gpu && r.gpu.read) {
      const g = r.gpu, a = g.adapter || {};
      const name = [a.description, a.vendor, a.architecture].filter(Boolean).join(", ") || "the browser does not name it";
      if (g.software) out.append(el("p", { className: "device-probe-note" },
        `The WebGPU adapter is a software one (${name}): a CPU emulating a GPU. Its figures are shown below, but they are not a GPU's, and the widgets do not offer it as your GPU.`));
      // the worker's reason names its subject ("the GPU part reached its 7 s cap…"): said once here
      if (g.stopped) out.append(el("p", { className: "device-probe-note" }, `The GPU part stopped early: ${g.stopped.replace(/^the GPU part /, "it ")}. The figures it had measured are below.`));
      const rows = [["Read", g.read], ["Write", g.write], ["Copy (read + write)", g.copy], ["FP32 FMA", g.fma32], ["FP16 FMA (shader-f16)", g.fma16]]
        .filter(([, f]) => f).map(([label, f]) => row(label, f));
      out.append(el("p", {}, `Arrays of ${mib(g.bytes)}; bandwidth counts every byte read or written. ${SPREAD}`));
      out.append(table(`GPU through WebGPU: ${name}`, rows, HEAD));
      if (g.strided && g.strided.length) {
        out.append(el("p", {}, `The strided read: useful bytes per second (4 per read) when neighbouring threads read words this far apart. Stride 1 is coalesced; ${strideSays(g)}`));
        out.append(table("GPU strided read",
          g.strided.map((s) => [`stride ${s.stride}`, si(s.median, s.unit), pct(s), String(s.n)]), ["Stride (words)", "Median", "Spread", "Batches"]));
      }
    }
    const c = r.cpu;
    out.append(el("p", {}, `Arrays of ${mib(c.bytes)}, ${c.bytes >= 64 * 2 ** 20 ? "larger than a last-level cache" : "small enough to stay in a cache (quick test mode): not main memory's bandwidth"}. ${SPREAD}`));
    out.append(table("CPU through WebAssembly SIMD, one thread",
      [row("Read", c.read), row("Write", c.write), row("Copy (read + write)", c.copy),
       row(c.fma.fused ? "FP32 FMA (relaxed SIMD, fused)" : "FP32 multiply + add (SIMD)", c.fma)], HEAD));
    if (compare && devs.length) {
      const items = devs.map((d) => {
        const peak = d.peaks.fp32.value, bw = d.specs.mem_bw.value;
        return el("li", {}, `${d.label}: ${si(peak, "FLOP/s")} FP32 over ${si(bw, "B/s")} is a ridge point of ${(peak / bw).toPrecision(3)} FLOP/B.`);
      });
      items.push(el("li", {}, `${compare.label}: ${si(compare.fp32, "FLOP/s")} FP32 over ${si(compare.bw, "B/s")} is ${compare.ridge.toPrecision(3)} FLOP/B (${compare.source || "its datasheet"}).`));
      out.append(el("p", {}, "Ridge points, FP32 (a kernel below its ridge is limited by memory):"), el("ul", { className: "device-probe-ridges" }, ...items));
    }
    out.append(el("p", {}, devs.length
      ? `The roofline widgets now offer ${devs.map((d) => `“${d.label}”`).join(" and ")} in their device lists, and the hardware appendix shows ${devs.length === 1 ? "it" : "them"} below the datasheet devices.`
      : "Nothing here could become a device of the book."));
  }

  function wire(box) {
    if (box.dataset.wired) return;
    box.dataset.wired = "1";
    const run = box.querySelector("[data-probe=run]"), del = box.querySelector("[data-probe=delete]");
    const status = box.querySelector(".device-probe-status"), bar = box.querySelector("progress");
    const compare = box.dataset.compare ? JSON.parse(box.dataset.compare) : null;
    const said = plan();   // changed only where the probe cannot do it all (the rare case moves the page)
    if (said) box.querySelector(".device-probe-plan").textContent = said;
    const refresh = () => {
      const r = window.BookDevice.get();
      showResult(box, r, compare);
      del.hidden = !r;
      run.textContent = r ? "Measure again (about 15 s)" : "Measure this device (about 15 s)";
      if (!box.dataset.running) status.textContent = r ? "A measurement is stored in this browser." : "Nothing measured yet.";
    };
    refresh();
    addEventListener(window.BookDevice.EVENT, () => { if (!box.dataset.running) refresh(); });
    del.addEventListener("click", () => {
      window.BookDevice.clear();
      status.textContent = "The measurement was deleted from this browser.";
      run.focus();
    });
    run.addEventListener("click", () => {
      if (box.dataset.running) return;
      box.dataset.running = "1"; run.disabled = true; del.disabled = true;
      bar.hidden = false; bar.value = 0;
      status.textContent = "Measuring… keep this tab in front; the page stays usable.";
      const worker = new Worker(new URL("device-probe-worker.js", script));
      const end = (text) => {
        worker.terminate(); delete box.dataset.running; run.disabled = false; del.disabled = false; bar.hidden = true;
        refresh(); status.textContent = text;
      };
      worker.onmessage = ({ data }) => {
        if (data.type === "progress") { bar.max = data.total; bar.value = data.done; bar.setAttribute("aria-valuetext", data.label); }
        else if (data.type === "result") { window.BookDevice.save(data.result); end("Done: the result is stored in this browser."); }   // its time is in the result's first line
        else if (data.type === "failed") end(`The probe failed: ${data.message}. Nothing was stored.`);
      };
      worker.onerror = (e) => { e.preventDefault(); end("The probe could not start in this browser. Nothing was stored."); };
      worker.postMessage({ type: "run", quick, gpuCapMs, gpu: !saveData && !!navigator.gpu, why: saveData ? "save-data" : "none",
        wasm: new URL("../wasm/cpu-probe.wasm", script).href, relaxed: new URL("../wasm/cpu-probe-relaxed.wasm", script).href });
    });
  }

  const all = () => document.querySelectorAll(".device-probe").forEach(wire);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", all, { once: true });
  else all();
})();
