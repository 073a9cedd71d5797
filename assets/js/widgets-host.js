// Page side of the widgets: finds every .widget[data-widget], starts one shared
// Python worker when a widget nears the viewport (or on idle, or on touch/focus),
// wires the controls that the static HTML already contains, and swaps in each
// new figure.  Host API: window.BookWidgets.mount(el) / .unmount(el) / .start().
//
// Page contract: <meta name="site-root" content="../"> (page -> site root);
// optional <meta name="pyodide-base" content="https://.../full/"> (CDN instead of <root>/pyodide/).
// Generic SVG hooks: [data-set='{"p":v}'] click merges into params;
// <svg data-keys='{"ArrowLeft":{"p":-15}}'> arrow keys on the focused figure;
// <svg data-drag='{"p":[per_px_x, per_px_y]}'> pointer drag.
(() => {
  "use strict";
  if (window.BookWidgets) return;
  const TIMEOUT_MS = 20000;
  const hostSrc = document.currentScript ? document.currentScript.src : location.href;
  const meta = (n) => { const m = document.querySelector(`meta[name="${n}"]`); return m && m.content; };
  const root = new URL(meta("site-root") || "./", location.href);
  const base = new URL(meta("pyodide-base") || "pyodide/", root);

  let worker = null, phase = "idle", failure = "", timer = 0, nextId = 1;
  const mounted = new Map();      // element -> widget record
  const waiting = new Map();      // request id -> widget record
  const stats = { readyMs: null, startedAt: null, liveAt: {}, updates: [], renderMs: [] };

  const setState = (w, state, text) => { w.el.dataset.state = state; w.status.textContent = text; };

  function fail(message) {
    if (phase === "failed") return;
    phase = "failed"; failure = message; clearTimeout(timer);
    if (worker) { worker.terminate(); worker = null; }
    for (const w of mounted.values()) setState(w, "failed", message);
    console.warn("[widgets]", message);
  }

  function start() {
    if (worker || phase === "failed" || !mounted.size) return;
    if (location.protocol === "file:") {
      return fail("Static figure: interactive widgets need the book served over http(s), not opened as a file.");
    }
    phase = "loading"; stats.startedAt = performance.now();
    for (const w of mounted.values()) setState(w, "loading", "Loading the interactive version…");
    try { worker = new Worker(new URL("widgets-worker.js", hostSrc), { type: "module" }); }
    catch (err) { return fail(`Static figure: this browser cannot run the interactive version (${err.message}).`); }
    timer = setTimeout(() => fail(`Static figure: the interactive version did not load within ${TIMEOUT_MS / 1000} s.`), TIMEOUT_MS);
    worker.onerror = (e) => { e.preventDefault(); fail("Static figure: the interactive version could not be loaded."); };
    worker.onmessage = onMessage;
    worker.postMessage({ type: "init", root: root.href, base: base.href });
  }

  function onMessage({ data }) {
    if (data.type === "ready") {
      phase = "ready"; clearTimeout(timer); stats.readyMs = data.ms; stats.marks = data.marks;
      for (const w of mounted.values()) request(w);
    } else if (data.type === "failed") {
      fail(`Static figure: the interactive version failed to start (${data.message}).`);
    } else if (data.type === "result") {
      const w = waiting.get(data.id);
      waiting.delete(data.id);
      if (!w) return;
      w.inflight = 0; stats.renderMs.push(data.ms);
      if (!mounted.has(w.el)) return;
      apply(w, JSON.parse(data.json));
      if (w.pending) { w.pending = false; send(w); }
    }
  }

  function request(w) {
    if (w.dirtySince == null) w.dirtySince = performance.now();
    if (phase !== "ready") return start();
    if (w.inflight) { w.pending = true; return; }   // latest value wins
    send(w);
  }

  function send(w) {
    const id = nextId++;
    waiting.set(id, w); w.inflight = id;
    const width = w.width || 640;          // kept by a ResizeObserver: no forced layout here
    worker.postMessage({ type: "render", id, name: w.name, params: JSON.stringify({ ...w.params, _width: width }) });
  }

  function apply(w, data) {
    if (data.error) {
      w.message.hidden = false; w.message.textContent = `Could not redraw: ${data.error}`;
      return;
    }
    w.svgBox.innerHTML = data.svg;
    w.readouts.replaceChildren(...data.readouts.map(([k, v]) => {
      const row = document.createElement("div");
      const dt = document.createElement("dt"); dt.textContent = k;
      const dd = document.createElement("dd"); dd.textContent = v;
      row.append(dt, dd); return row;
    }));
    w.message.hidden = !data.message; w.message.textContent = data.message || "";
    if (!w.pending) { w.params = data.params; syncControls(w); }
    prepareFigure(w);
    if (w.el.dataset.state !== "live") {
      w.fieldset.disabled = false;
      stats.liveAt[w.name] = performance.now();
      setState(w, "live", "Interactive: change the controls to redraw.");
      if ([...mounted.values()].every((m) => m.el.dataset.state === "live")) {
        // Let the worker keep a snapshot for the next page, once the page is quiet.
        const idle = window.requestIdleCallback || ((f) => setTimeout(f, 500));
        idle(() => worker && worker.postMessage({ type: "idle" }), { timeout: 5000 });
      }
    }
    if (w.dirtySince != null && !w.pending) {
      stats.updates.push(performance.now() - w.dirtySince); w.dirtySince = null;
    }
    w.el.dispatchEvent(new CustomEvent("widget:render", { detail: data }));
  }

  // --- controls -------------------------------------------------------------
  const fmt = (p, v) => (p.type === "int" ? Number(v).toLocaleString("en-US") : String(v)) +
    (!p.unit ? "" : p.unit === "°" || p.unit === "%" ? p.unit : ` ${p.unit}`);

  function readControl(p, el) {
    if (p.type === "bool") return el.checked;
    if (p.type === "choice") return el.value;
    let v = Number(el.value);
    if (el.dataset.log) v = 2 ** v;
    return p.type === "int" ? Math.round(v) : v;
  }

  // Write a control only when its value differs: writing forces style and layout work.
  function syncControls(w) {
    for (const el of w.form.elements) {
      const p = w.spec[el.name];
      if (!p) continue;
      const v = w.params[p.name];
      if (el.type === "checkbox") { if (el.checked !== !!v) el.checked = !!v; }
      else if (el.type === "radio") { const on = el.value === String(v); if (el.checked !== on) el.checked = on; }
      else if (el.type === "range") {
        if (readControl(p, el) === v) continue;
        el.value = el.dataset.log ? Math.log2(v) : v;
        el.setAttribute("aria-valuetext", fmt(p, v));
        const out = el.parentElement.querySelector("output");
        if (out) out.textContent = fmt(p, v);
      } else if (readControl(p, el) !== v && !(el === document.activeElement && el.value === "")) el.value = String(v);
    }
  }

  function onInput(w, e) {
    const el = e.target, p = w.spec[el.name];
    if (!p || (el.type === "radio" && !el.checked)) return;
    if (el.type === "number" && el.value === "") return;   // mid-typing
    const v = readControl(p, el);
    if (el.type === "range") {
      const out = el.parentElement.querySelector("output");
      if (out) out.textContent = fmt(p, v);
      el.setAttribute("aria-valuetext", fmt(p, v));
    }
    w.params = { ...w.params, [p.name]: v };
    request(w);
  }

  function nudge(w, changes) {
    const next = { ...w.params };
    for (const [name, delta] of Object.entries(changes)) {
      const p = w.spec[name];
      if (!p) continue;
      let v = Number(next[name]) + delta;
      if (p.wrap) { const span = p.max - p.min + (p.step || 1); v = ((v - p.min) % span + span) % span + p.min; }
      else v = Math.min(p.max, Math.max(p.min, v));
      if (p.step) v = p.min + Math.round((v - p.min) / p.step) * p.step;
      next[name] = p.type === "int" ? Math.round(v) : v;
    }
    w.params = next; syncControls(w); request(w);
  }

  // A figure that declares keys or drags becomes focusable and says how to use it.
  function prepareFigure(w) {
    const svg = w.svgBox.querySelector("svg");
    const keys = svg && svg.dataset.keys;
    if (keys) {
      w.svgBox.tabIndex = 0;
      w.svgBox.setAttribute("aria-label", svg.dataset.keysHelp || "Figure: use the arrow keys to change the view");
    } else { w.svgBox.removeAttribute("tabindex"); w.svgBox.removeAttribute("aria-label"); }
    w.svgBox.classList.toggle("widget-draggable", !!(svg && svg.dataset.drag));
  }

  function wireFigure(w, signal) {
    const box = w.svgBox;
    box.addEventListener("keydown", (e) => {
      const svg = box.querySelector("svg");
      if (w.el.dataset.state !== "live" || !svg || !svg.dataset.keys) return;
      const change = JSON.parse(svg.dataset.keys)[e.key];
      if (!change) return;
      e.preventDefault(); nudge(w, change);
    }, { signal });
    let drag = null;
    box.addEventListener("pointerdown", (e) => {
      const svg = box.querySelector("svg");
      if (w.el.dataset.state !== "live" || !svg || !svg.dataset.drag) return;
      drag = { x: e.clientX, y: e.clientY, moved: false, map: JSON.parse(svg.dataset.drag), start: { ...w.params } };
    }, { signal });
    box.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 5) return;
      if (!drag.moved) { drag.moved = true; box.setPointerCapture(e.pointerId); }
      const change = {};
      for (const [name, [fx, fy]] of Object.entries(drag.map)) change[name] = drag.start[name] + fx * dx + fy * dy - w.params[name];
      nudge(w, change);
    }, { signal });
    const end = () => { if (drag && drag.moved) w.suppressClick = true; drag = null; };
    box.addEventListener("pointerup", end, { signal });
    box.addEventListener("pointercancel", end, { signal });
    box.addEventListener("click", (e) => {
      if (w.suppressClick) { w.suppressClick = false; return; }
      const target = e.target.closest && e.target.closest("[data-set]");
      if (!target || w.el.dataset.state !== "live") return;
      w.params = { ...w.params, ...JSON.parse(target.dataset.set) };
      syncControls(w); request(w);
    }, { signal });
  }

  // --- mount / unmount ---------------------------------------------------------
  const resizer = "ResizeObserver" in window
    ? new ResizeObserver((entries) => {
      for (const e of entries) {
        const w = [...mounted.values()].find((m) => m.svgBox === e.target);
        const width = Math.round(e.contentRect.width);
        if (!w || !width || Math.abs(width - (w.width || 0)) < 8) continue;
        const first = !w.width;
        w.width = width;
        if (!first && w.el.dataset.state === "live") request(w);   // re-lay out for the new width
      }
    })
    : null;

  const observer = "IntersectionObserver" in window
    ? new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) start(); }, { rootMargin: "800px 0px" })
    : null;

  function mount(el) {
    if (mounted.has(el)) return mounted.get(el);
    const spec = {};
    for (const p of JSON.parse(el.dataset.spec || "[]")) spec[p.name] = p;
    const ac = new AbortController();
    const w = {
      el, spec, ac, name: el.dataset.widget, params: JSON.parse(el.dataset.params || "{}"),
      svgBox: el.querySelector(".widget-svg"), readouts: el.querySelector(".widget-readouts"),
      form: el.querySelector(".widget-controls"), fieldset: el.querySelector(".widget-controls fieldset"),
      status: el.querySelector(".widget-status"), message: el.querySelector(".widget-message"),
      inflight: 0, pending: false, dirtySince: null,
    };
    mounted.set(el, w);
    const signal = ac.signal;
    w.form.addEventListener("input", (e) => onInput(w, e), { signal });
    w.form.addEventListener("change", (e) => { if (e.target.type !== "range") onInput(w, e); }, { signal });
    w.form.addEventListener("submit", (e) => e.preventDefault(), { signal });
    for (const ev of ["pointerenter", "focusin", "touchstart"]) el.addEventListener(ev, start, { signal, passive: true });
    wireFigure(w, signal);
    if (phase === "failed") setState(w, "failed", failure);
    else if (phase === "ready") { setState(w, "loading", "Loading the interactive version…"); request(w); }
    else if (phase === "loading") setState(w, "loading", "Loading the interactive version…");
    if (resizer) resizer.observe(w.svgBox); else w.width = Math.round(w.svgBox.clientWidth);
    if (observer) observer.observe(el); else start();
    return w;
  }

  function unmount(el) {
    const w = mounted.get(el);
    if (!w) return;
    w.ac.abort();
    if (observer) observer.unobserve(el);
    if (resizer) resizer.unobserve(w.svgBox);
    mounted.delete(el);
    w.fieldset.disabled = true;
    setState(w, "static", "Static figure.");
  }

  function mountAll() {
    document.querySelectorAll(".widget[data-widget]").forEach(mount);
    if (!mounted.size) return;
    // A widget already on screen: start now rather than after the first observer callback.
    if ([...mounted.keys()].some((el) => el.getBoundingClientRect().top < innerHeight + 800)) start();
    const idle = window.requestIdleCallback || ((f) => setTimeout(f, 1500));
    const preload = () => idle(start, { timeout: 3000 });
    if (document.readyState === "complete") preload(); else addEventListener("load", preload, { once: true });
  }

  window.BookWidgets = { mount, unmount, start, stats, get phase() { return phase; } };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll, { once: true });
  else mountAll();
})();
