// Exercises: the reader writes a kernel, the simulator (calc.sim, in Pyodide) checks it.
//
// filters/exercise.lua writes each exercise as <section class="exercise"> with the statement, the
// starter code, disabled buttons, a live status region, hidden hints and solution, and the page
// data (<script type="application/json" class="exercise-data">: the check's source, the reference
// kernel's counts measured at build time). A loader of a few hundred bytes in the page imports
// this module when an exercise comes near the screen; before that the page has loaded nothing
// for exercises but their markup and stylesheet.
//
// Here: the starter becomes a CodeMirror editor (./editor.js, bundled by scripts/editor_bundle.py);
// Run and Check go to a dedicated Web Worker (widgets-worker.js, the book's Pyodide runtime with
// calc) which calls calc.exercises.handle. Stop, or the exercise's time limit, ends a runaway
// kernel (`while True: pass`) without freezing the page: where the page is cross-origin isolated
// (the server, or the book's service worker once it controls the page, sends COOP and COEP) it
// interrupts Python in place through Pyodide's interrupt buffer, a SharedArrayBuffer (Python raises
// KeyboardInterrupt, the worker keeps its interpreter and imports: no restart); elsewhere (file://, a
// plain static host, a first visit), or when Python has not stopped within GRACE_MS (a long call
// into C checks no interrupt), it terminates that worker and starts a fresh one. Results: the
// verdict (announced), the sizes tried, each budget with the measured figure beside the limit, the
// per-line counts, and the kernel's point next to the reference's on a small roofline (or its HBM
// bytes beside the reference's and the least possible, for a kernel that does no arithmetic), and
// the same points under the roofs of the reader's own device when the device probe has stored one
// (window.BookDevice; else a line that leads to the probe).
// Progress (code, solved) lives in localStorage under "book-exercises"; nothing is sent anywhere.
import * as CM from "./editor.js";

const ROOT = new URL("../../", import.meta.url);
const STORE = "book-exercises";
const BOOT_NOTE = "Starting Python in your browser (the first time takes a few seconds)…";

// ------------------------------------------------------------------ progress (localStorage)
export const progress = {
  all() { try { return JSON.parse(localStorage.getItem(STORE)) || {}; } catch { return {}; } },
  get(id) { return this.all()[id] || null; },
  put(id, patch) {
    const all = this.all();
    all[id] = { ...(all[id] || {}), ...patch, updated: new Date().toISOString() };
    try { localStorage.setItem(STORE, JSON.stringify(all)); } catch { /* private mode: kept for this visit only */ }
  },
  drop(id) { const all = this.all(); delete all[id]; try { localStorage.setItem(STORE, JSON.stringify(all)); } catch {} },
};

// ------------------------------------------------------------------ the worker
let worker = null, ready = null, seq = 0;
const pending = new Map();               // id -> {resolve, reject}
// Stop in place needs memory shared with the worker, which a browser gives only to a cross-origin
// isolated page.
const INTERRUPTIBLE = globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === "function";
let interrupt = null;                    // Int32Array on a SharedArrayBuffer: Pyodide's interrupt buffer
const GRACE_MS = 3000;                   // a Stop in place not answered by then: terminate, as without isolation
// What the page can tell (window.BookExercises, below; tests and benchmarks/exercises_stop_bench.py):
// how Stop works here, how many workers this page started, the one now running.
const runtime = { interruptible: INTERRUPTIBLE, workersStarted: 0, worker: () => worker };

function startWorker() {
  worker = new Worker(new URL("widgets-worker.js", import.meta.url), { type: "module" });
  runtime.workersStarted += 1;
  warmed.clear();
  interrupt = INTERRUPTIBLE ? new Int32Array(new SharedArrayBuffer(4)) : null;
  const w = worker;
  ready = new Promise((resolve, reject) => {
    w.onmessage = (e) => {
      const m = e.data;
      if (m.type === "ready") resolve(m);
      else if (m.type === "failed") reject(new Error(m.message));
      else if (m.type === "exercise-result") {
        const p = pending.get(m.id);
        if (p) { pending.delete(m.id); p.resolve(m); }
      }
    };
    w.onerror = (e) => { e.preventDefault(); reject(new Error(e.message || "the Python worker failed to start")); };
  });
  ready.catch(() => {});
  w.postMessage({ type: "init", root: ROOT.href, base: new URL("pyodide/", ROOT).href, snapshot: false, exercises: true,
                  ...(interrupt ? { interrupt } : {}) });
}

// Warm the worker for one exercise (when it comes on screen, or its editor gets focus): the
// worker loads the exercises' Python, compiles this exercise's check and Runs its starter once at
// the small size (calc.exercises.handle's "warm"), so the reader's first Check pays for none of it. Once per exercise per worker; never
// before Python is up, so it does not start it sooner than startWhenQuiet would.
const warmed = new Set();
function warm(data) {
  if (!worker || warmed.has(data.id)) return;
  warmed.add(data.id);
  const w = worker;
  ready.then(() => {
    if (w !== worker) return;
    const request = JSON.stringify({ op: "warm", code: data.starter || "", exercise: { id: data.id, check: data.check } });
    w.postMessage({ type: "exercise", id: ++seq, request });     // its answer is for no one
  }, () => {});
}

function restartWorker(reason) {
  if (worker) worker.terminate();
  for (const p of pending.values()) p.reject(new Error(reason));
  pending.clear();
  startWorker();
}

// The reader's devices measured in this browser (measured-device.js; the roofline chapter's probe).
const measuredDevices = () => (window.BookDevice ? window.BookDevice.devices() : []);
const PROBE_URL = new URL("chapters/roofline.html#sec-roofline-yours", ROOT).href;

// ``sent``: {posted} once the request is the worker's; {cancelled: true} before that: not sent at all.
async function ask(op, code, data, extra = {}, sent = {}) {
  if (!worker) startWorker();
  await ready;
  if (sent.cancelled) throw new Error("stopped");
  sent.posted = true;
  const id = ++seq;
  const request = JSON.stringify({ op, code, exercise: { id: data.id, check: data.check, reference: data.reference }, ...extra });
  return new Promise((resolve, reject) => {
    // a Stop that came after the last answer is not this one's; while another exercise's request is
    // in the worker, a 2 there is that one's Stop, still to be seen
    if (interrupt && pending.size === 0) Atomics.store(interrupt, 0, 0);
    pending.set(id, { resolve, reject });
    worker.postMessage({ type: "exercise", id, request });
  });
}

// ------------------------------------------------------------------ small DOM helpers
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k in node && k !== "list") node[k] = v;
    else node.setAttribute(k, v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}
const NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}
function num(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString("en-US");
  if (a >= 1e-3 || a === 0) return String(Number(v.toPrecision(3)));
  return v.toExponential(2);
}
function seconds(v) {
  for (const [scale, unit] of [[1, "s"], [1e-3, "ms"], [1e-6, "µs"], [1e-9, "ns"]]) {
    if (v >= scale) return `${Number((v / scale).toPrecision(3))} ${unit}`;
  }
  return `${Number((v * 1e12).toPrecision(3))} ps`;
}
function si(v, unit) {
  if (!v) return `0 ${unit}`;
  const p = ["", "k", "M", "G", "T", "P"];
  let k = 0;
  while (Math.abs(v) >= 1000 && k < p.length - 1) { v /= 1000; k++; }
  return `${Number(v.toPrecision(3))} ${p[k]}${unit}`;
}

// ------------------------------------------------------------------ the roofline (or bytes) figure
function roofline(mine, ref, minimum) {
  const W = 320, H = 190, L = 46, R = 10, T = 12, B = 34;
  const fig = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
  if (!(mine.flops > 0)) {
    // No arithmetic: a copy has no point on a log roofline (intensity 0). Its bytes instead.
    const rows = [["yours", mine.hbm_bytes], ["reference", ref ? ref.hbm_bytes : null], ["least possible", minimum]]
      .filter((r) => r[1] !== null && r[1] !== undefined);
    const max = Math.max(...rows.map((r) => r[1]), 1);
    fig.setAttribute("height", 26 * rows.length + 36);
    fig.setAttribute("viewBox", `0 0 ${W} ${26 * rows.length + 36}`);
    const title = `HBM bytes: ${rows.map((r) => `${r[0]} ${num(r[1])}`).join(", ")}. The kernel does no arithmetic, so it has no point on the roofline; its time bound is its bytes over the HBM bandwidth.`;
    fig.append(svg("title", {}, title));
    fig.setAttribute("aria-label", title);
    rows.forEach(([name, v], i) => {
      const y = 8 + i * 26, w = Math.max(2, (W - 200) * v / max);
      fig.append(svg("text", { x: 0, y: y + 13 }, name));
      fig.append(svg("rect", { x: 100, y, width: w, height: 16, fill: i === 0 ? "var(--accent)" : "var(--muted)" }));
      fig.append(svg("text", { x: 104 + w, y: y + 13 }, `${num(v)} B`));
    });
    fig.append(svg("text", { x: 0, y: 26 * rows.length + 26 }, `time bound ${seconds(mine.time_s)}: the bytes at ${si(mine.mem_bw, "B/s")}`));
    return fig;
  }
  const pts = [mine, ref].filter((p) => p && p.flops > 0 && p.intensity > 0);
  const ridge = mine.peak_flops / mine.mem_bw;
  const xs = pts.map((p) => p.intensity).concat([ridge]);
  const x0 = Math.pow(10, Math.floor(Math.log10(Math.min(...xs)) - 0.3));
  const x1 = Math.pow(10, Math.ceil(Math.log10(Math.max(...xs)) + 0.3));
  const y1 = mine.peak_flops * 2, y0 = Math.min(x0 * mine.mem_bw, ...pts.map((p) => p.flops_per_s)) / 2;
  const X = (v) => L + (W - L - R) * (Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0));
  const Y = (v) => T + (H - T - B) * (1 - (Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)));
  const title = `Roofline of ${mine.label || mine.device} (${mine.dtype}): your kernel at ${num(mine.intensity)} FLOP per HBM byte, `
    + `${si(mine.flops_per_s, "FLOP/s")} at best` + (ref && ref.intensity ? `; the reference at ${num(ref.intensity)} FLOP/B, ${si(ref.flops_per_s, "FLOP/s")}` : "")
    + `. The ridge is at ${num(ridge)} FLOP/B.`;
  fig.append(svg("title", {}, title));
  fig.setAttribute("aria-label", title);
  fig.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "var(--muted)" }));
  fig.append(svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "var(--muted)" }));
  const roof = `M${X(x0)},${Y(x0 * mine.mem_bw)} L${X(ridge)},${Y(mine.peak_flops)} L${X(x1)},${Y(mine.peak_flops)}`;
  fig.append(svg("path", { d: roof, fill: "none", stroke: "var(--fg)", "stroke-width": 1.5 }));
  fig.append(svg("text", { x: L + 2, y: H - 6 }, `${num(x0)}`));
  fig.append(svg("text", { x: W - R - 30, y: H - 6 }, `${num(x1)}`));
  fig.append(svg("text", { x: (L + W) / 2 - 40, y: H - 6 }, "FLOP per HBM byte"));
  // The compute roof's value inside the plot, at its top left: above the sloped roof, where no
  // point can be (at x = 2 the axis ran through it: "19.5 TF|LOP/s").
  fig.append(svg("text", { x: L + 4, y: Y(mine.peak_flops) + 4 }, si(mine.peak_flops, "FLOP/s").replace(" ", "\u00a0")));
  // The points' names under the roof and to the right of each point (the roof rises to the right,
  // so nothing is drawn there), the second below the first where they would meet; above and to
  // the left of a point too near the axis.
  const placed = [];
  const mark = (p, name, colour) => {
    if (!p || !(p.intensity > 0)) return;
    const cx = X(p.intensity), cy = Y(p.flops_per_s), width = 6.2 * name.length;
    fig.append(svg("circle", { cx, cy, r: 5, fill: colour, stroke: "var(--bg)" }));
    let x = cx + 8, y = cy + 15, anchor = "start";
    for (const q of placed) {
      if (Math.abs(q.y - y) < 13 && x < q.x + q.width && q.x < x + width) y = q.y + 13;
    }
    if (y > H - B - 3) { x = cx - 8; y = cy - 9; anchor = "end"; }
    placed.push({ x: anchor === "end" ? x - width : x, y, width });
    fig.append(svg("text", { x, y, "text-anchor": anchor }, name));
  };
  mark(mine, "your kernel", "var(--accent)");
  mark(ref, "reference", "var(--muted)");
  return fig;
}

// ------------------------------------------------------------------ the marked line
// The line an error or a failed budget names, as a CodeMirror line decoration (CodeMirror redraws
// its own DOM, so a class set on a line element by hand does not last).
const setBad = CM.StateEffect.define();
const badLine = CM.StateField.define({
  create: () => CM.Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (e.is(setBad)) {
        deco = e.value === null ? CM.Decoration.none
          : CM.Decoration.set([CM.Decoration.line({ class: "exercise-bad-line" }).range(e.value)]);
      }
    }
    return deco;
  },
  provide: (f) => CM.EditorView.decorations.from(f),
});

// ------------------------------------------------------------------ one exercise
const LINE_COLUMNS = [["global_requests", "global requests"], ["sectors", "sectors"], ["bank_conflicts", "bank conflicts"],
                      ["shared_requests", "shared requests"], ["divergent", "divergent"], ["flops", "FLOPs"]];

class Exercise {
  constructor(section) {
    this.section = section;
    this.data = JSON.parse(section.querySelector("script.exercise-data").textContent);
    this.id = this.data.id;
    const $ = (s) => section.querySelector(s);
    this.buttons = { run: $(".exercise-run"), check: $(".exercise-check"), stop: $(".exercise-stop"),
                     reset: $(".exercise-reset"), hint: $(".exercise-hint-next"), solution: $(".exercise-show-solution"),
                     gpu: $(".exercise-gpu") };
    this.last = null;                                     // the last Run's or Check's answer: its figures go in the GPU script
    this.status = $(".exercise-status");
    this.results = $(".exercise-results");
    this.hints = [...section.querySelectorAll(".exercise-hint")];
    this.solution = $(".exercise-solution");
    this.busy = false;
    this.mountEditor();
    const saved = progress.get(this.id);
    if (saved && saved.solved) section.classList.add("solved");
    this.shownHints = 0;
    this.bind();
    addEventListener("bookdevice:change", () => this.remeasured());
    // the first Check finds this exercise's check compiled (warm): on screen, or the editor focused
    section.addEventListener("focusin", () => { if (!worker) startWorker(); warm(this.data); });
    if (window.IntersectionObserver) {
      const seen = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting) && worker) { warm(this.data); if (warmed.has(this.id)) seen.disconnect(); }
      });
      seen.observe(section);
      this.seen = seen;
      warmingSoon.add(this);
    }
    this.say(saved && saved.code && saved.code !== this.data.starter
      ? "Your code from your last visit is in the editor. Run tries it on a small input; Check tests it."
      : "Run tries your kernel on a small input; Check tests it at every size and against the budgets.");
  }

  mountEditor() {
    const block = this.section.querySelector(".exercise-editor .sourceCode, .exercise-editor pre");
    const saved = progress.get(this.id);
    const doc = saved && typeof saved.code === "string" ? saved.code : this.data.starter;
    const host = el("div", { class: "exercise-cm" });
    block.replaceWith(host);
    const keysId = `${this.id}-keys`;
    this.view = new CM.EditorView({
      parent: host,
      state: CM.EditorState.create({
        doc,
        extensions: [
          CM.lineNumbers(), CM.highlightActiveLineGutter(), CM.history(), CM.drawSelection(),
          CM.indentOnInput(), CM.bracketMatching(), CM.indentUnit.of("    "), badLine, CM.EditorView.lineWrapping,
          CM.syntaxHighlighting(CM.classHighlighter), CM.python(),
          // Tab indents once the reader has typed in the editor since it took focus; before that it
          // moves on, as everywhere on the page (a Tab from the statement came in and indented
          // line 1: "unexpected indent"). Escape then Tab leaves at any time (CodeMirror's own).
          CM.keymap.of([...CM.defaultKeymap, ...CM.historyKeymap,
            { key: "Tab", run: (v) => this.typed && CM.indentWithTab.run(v), shift: (v) => this.typed && CM.indentWithTab.shift(v) }]),
          CM.EditorView.focusChangeEffect.of((state, focusing) => { if (!focusing) this.typed = false; return null; }),
          CM.EditorView.contentAttributes.of({ "aria-label": `Kernel code for the exercise: ${this.data.title}`,
                                               "aria-describedby": keysId }),
          CM.EditorView.updateListener.of((u) => {
            if (u.transactions.some((t) => t.isUserEvent("input") || t.isUserEvent("delete") || t.isUserEvent("select"))) this.typed = true;
            if (u.docChanged) this.saveSoon();
          }),
        ],
      }),
    });
  }

  code() { return this.view.state.doc.toString(); }

  saveSoon() {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => progress.put(this.id, { code: this.code(), page: location.pathname,
                                                               title: this.data.title }), 300);
  }

  bind() {
    const b = this.buttons;
    for (const key of ["run", "check", "reset", "hint", "solution", "gpu"]) if (b[key]) b[key].disabled = false;
    b.hint.disabled = this.hints.length === 0;
    b.run.addEventListener("click", () => this.go("run"));
    b.check.addEventListener("click", () => this.go("check"));
    b.stop.addEventListener("click", () => this.stop("Stopped.", "Your code is unchanged."));
    b.reset.addEventListener("click", () => this.reset());
    b.hint.addEventListener("click", () => this.nextHint());
    b.solution.addEventListener("click", () => this.showSolution());
    if (b.gpu) b.gpu.addEventListener("click", () => this.saveGpuScript());
  }

  // "Run on an NVIDIA GPU": calc.gpuscript writes the script in the worker from the editor's kernel,
  // the check and the last answer's figures; it is saved from a Blob (no server, works offline).
  async saveGpuScript() {
    if (this.busy) return;
    this.setBusy(true);
    this.say(!worker ? BOOT_NOTE : "Writing the script…");
    try {
      const answer = await ask("gpuscript", this.code(), this.data, { result: this.last, title: this.data.title });
      const out = JSON.parse(answer.json);
      if (!out.script) throw new Error(out.error || out.message || "no script came back");
      const url = URL.createObjectURL(new Blob([out.script], { type: "text/x-python" }));
      const a = el("a", { href: url, download: out.filename, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      this.say(`Saved ${out.filename}. On a machine with an NVIDIA GPU: pip install numba-cuda numpy, then ` +
               `python3 ${out.filename} checks your kernel and prints the Nsight Compute command` +
               (this.last ? ", with this page's figures beside its counters." : " (press Check first to have this page's figures beside its counters)."));
    } catch (err) {
      this.say(`The script could not be written: ${err.message}`, "fail");
    } finally {
      this.setBusy(false);
    }
  }

  say(text, kind = "") {
    this.status.replaceChildren(el("p", { class: `exercise-message ${kind}`.trim() }, text));
  }

  setBusy(busy) {
    this.busy = busy;
    this.buttons.run.disabled = this.buttons.check.disabled = busy;
    if (this.buttons.gpu) this.buttons.gpu.disabled = busy;
    this.buttons.stop.disabled = !busy;
    this.section.setAttribute("aria-busy", busy ? "true" : "false");
  }

  async go(op) {
    if (this.busy) return;
    this.setBusy(true);
    this.results.replaceChildren();
    this.clearLine();
    const booting = !worker;
    this.say(booting ? BOOT_NOTE : op === "run" ? "Running…" : "Checking…");
    const code = this.code();
    progress.put(this.id, { code, page: location.pathname, title: this.data.title });
    const limit = (this.data.time_limit || 10) * 1000;
    let timer = null;
    this.sent = {};
    const run = ask(op, code, this.data, op === "check" ? { measured: measuredDevices() } : {}, this.sent);
    // the time limit starts when Python is ready (the first boot is not the kernel's time)
    ready.then(() => { if (this.busy) timer = setTimeout(() => this.stop(
      `Stopped after ${this.data.time_limit || 10} s: the kernel did not finish (a loop without an exit?).`), limit); });
    try {
      const answer = await run;
      clearTimeout(timer);
      if (answer.interrupted) {                           // our Stop (or the time limit), in place
        this.stopping ||= { message: "Stopped.", after: "", t0: performance.now() };
        return this.stopDone("interrupt");
      }
      const result = JSON.parse(answer.json);
      if (this.stopping) this.stopDone(null);            // it finished before the interrupt reached it
      this.setBusy(false);
      if (op === "run") this.showRun(result); else this.showCheck(result);
    } catch (err) {
      clearTimeout(timer);
      if (!this.stopped) {
        this.setBusy(false);
        this.say(`The simulator could not run: ${err.message}`, "fail");
      }
    } finally {
      this.stopped = false;
    }
  }

  // Stop: in place through the interrupt buffer where the page is isolated (go() sees the
  // interrupted answer and calls stopDone), else, or after GRACE_MS without that answer, a new worker.
  stop(message, after = "") {
    if (!this.busy || this.stopping) return;
    this.stopped = this.stopping = { message, after, t0: performance.now() };
    if (interrupt && worker && !this.sent.posted) {
      // Python is still starting and has not been given the kernel: it is not sent
      this.sent.cancelled = true;
      this.stopDone("interrupt");
    } else if (interrupt && worker) {
      this.say("Stopping…");
      Atomics.store(interrupt, 0, 2);                     // SIGINT: KeyboardInterrupt at Python's next check
      this.stopping.grace = setTimeout(() => { if (this.stopping) this.stopByRestart(); }, GRACE_MS);
    } else {
      this.stopByRestart();
    }
  }

  stopByRestart() {
    restartWorker("stopped");                             // go()'s pending request is rejected: it says nothing
    this.stopDone("restart");
  }

  // how: "interrupt" (the same worker goes on), "restart" (a new one), null (the run ended by itself)
  stopDone(how) {
    const s = this.stopping;
    if (!s) return;
    clearTimeout(s.grace);
    this.stopping = null;
    if (!how) return;
    this.setBusy(false);
    const python = how === "interrupt" ? "Python stopped your kernel and is ready for the next Run." : "Python restarted.";
    this.say([s.message, python, s.after].filter(Boolean).join(" "), "fail");
    this.section.dispatchEvent(new CustomEvent("exercise:stopped", { bubbles: true,
      detail: { how, ms: performance.now() - s.t0, workersStarted: runtime.workersStarted,
                posted: Boolean(this.sent && this.sent.posted) } }));   // posted: Python had the kernel
  }

  reset() {
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: this.data.starter } });
    for (const h of this.hints) h.hidden = true;
    this.solution.hidden = true;
    this.shownHints = 0;
    this.updateHintButton();
    this.results.replaceChildren();
    this.clearLine();
    progress.put(this.id, { code: this.data.starter });
    this.say("Back to the starter code; the hints are hidden again.");
  }

  updateHintButton() {
    const b = this.buttons.hint, n = this.hints.length;
    b.disabled = this.shownHints >= n;
    b.textContent = this.shownHints >= n ? "No more hints" : `Hint (${this.shownHints + 1} of ${n})`;
  }

  nextHint() {
    if (this.shownHints >= this.hints.length) return;
    const h = this.hints[this.shownHints++];
    h.hidden = false;
    h.setAttribute("tabindex", "-1");
    h.focus({ preventScroll: false });
    this.updateHintButton();
  }

  showSolution() {
    if (!this.solution.hidden) { this.solution.focus(); return; }
    if (!window.confirm("Show the reference solution? Trying once more, or a hint, teaches more.")) return;
    this.solution.hidden = false;
    this.solution.setAttribute("tabindex", "-1");
    this.solution.focus();
    progress.put(this.id, { sawSolution: true });
  }

  markLine(line) {
    if (!line || line > this.view.state.doc.lines) return null;
    const at = this.view.state.doc.line(line);
    this.view.dispatch({ effects: setBad.of(at.from), selection: { anchor: at.from }, scrollIntoView: true });
    return at;
  }

  clearLine() { this.view.dispatch({ effects: setBad.of(null) }); }

  lineButton(line) {
    return el("button", { type: "button", onclick: () => { this.markLine(line); this.view.focus(); } }, `Go to line ${line}`);
  }

  showRun(r) {
    this.last = r;
    if (!r.ok) {
      this.say(`Run failed: ${r.message}`, "fail");
      if (r.line) { this.markLine(r.line); this.results.append(this.lineButton(r.line)); }
      return;
    }
    this.say(`Ran at size ${r.size} in ${num(r.ms)} ms.`);
    const out = Object.entries(r.outputs).map(([k, v]) =>
      `${k} = [${v.join(", ")}${r.lengths[k] > v.length ? ", …" : ""}]`).join("\n");
    this.results.append(el("p", { class: "exercise-subhead" }, `Output, launch ${r.launch}`), el("pre", {}, out));
    this.results.append(this.linesTable(r.lines, `Counts per line at size ${r.size}`));
  }

  showCheck(r) {
    this.last = r;
    // built off the page and put in at once with the verdict: one style and layout pass
    const results = this.results;
    this.results = document.createDocumentFragment();
    try { this.buildCheck(r); } finally {
      const built = this.results;
      this.results = results;
      results.replaceChildren(built);
    }
    const verdict = r.passed ? `Passed: ${r.message}.` : `Not yet: ${r.message}`;
    this.say(verdict, r.passed ? "pass" : "fail");
    if (r.line) this.markLine(r.line);
  }

  buildCheck(r) {
    if (r.passed) {
      this.section.classList.add("solved");
      progress.put(this.id, { solved: true, solvedAt: new Date().toISOString() });
    }
    if (r.line) this.results.append(this.lineButton(r.line));
    if (r.sizes && r.sizes.length) {
      const list = el("ul", { class: "exercise-sizes", "aria-label": "Sizes tried" });
      for (const s of r.sizes) list.append(el("li", { class: s.ok ? "ok" : "bad" }, `n = ${s.size} ${s.ok ? "✓" : "✗"}`));
      this.results.append(el("p", { class: "exercise-subhead" }, "Sizes tried"), list);
    }
    if (r.stage === "mismatch" && r.element) {
      this.results.append(el("p", {}, `At size ${r.size}, ${r.element}: expected ${num(r.expected)}, got ${typeof r.got === "number" ? num(r.got) : r.got}.`));
    }
    if (r.budgets && r.budgets.length) {
      const t = el("table", {}, el("caption", {}, `Budgets at size ${r.measure}`),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Budget"), el("th", { scope: "col" }, "Measured"),
                                 el("th", { scope: "col" }, "Limit"), el("th", { scope: "col" }, "Met"))));
      const body = el("tbody");
      for (const b of r.budgets) {
        body.append(el("tr", {}, el("td", {}, el("code", {}, b.budget)), el("td", {}, num(b.measured)),
                               el("td", {}, `${b.op} ${num(b.limit)}`), el("td", { class: b.ok ? "yes" : "no" }, b.ok ? "yes" : "no")));
      }
      t.append(body);
      this.results.append(el("div", { class: "exercise-table-wrap", tabindex: "0", role: "region", "aria-label": "Budgets" }, t));
    }
    if (r.lines && r.lines.length) this.results.append(this.linesTable(r.lines, `Counts per line at size ${r.measure}`));
    if (r.point) {
      this.lastCheck = r;
      this.roofs = el("div", { class: "exercise-roofs" });
      this.results.append(el("p", { class: "exercise-subhead" }, r.point.flops > 0 ? "On the roofline" : "HBM traffic"), this.roofs);
      this.drawRoofs();
    } else {
      this.lastCheck = null;
    }
  }

  // The kernel on the exercise's datasheet device and, beside it, on the reader's own device when
  // the probe has measured one (its points computed in Python: calc.exercises.measured_points);
  // else a line that leads to the probe.
  drawRoofs() {
    const r = this.lastCheck, ref = this.data.reference || {}, box = this.roofs;
    const arithmetic = r.point.flops > 0;
    const sheet = r.point.label || r.point.device;
    const figure = (svgNode, caption, cls = "") => el("figure", { class: `exercise-roof ${cls}`.trim() }, svgNode,
      el("figcaption", {}, caption));
    box.replaceChildren(figure(roofline(r.point, ref.point, ref.minimum),
      arithmetic ? `${sheet}: the datasheet's roofs` : `${sheet}, datasheet bandwidth`));
    const measured = (r.measured_points || []).filter((m) => m.point);
    const broken = (r.measured_points || []).filter((m) => m.error);
    for (const m of broken) box.append(el("p", { class: "exercise-roof-note" }, `Your stored measurement could not be used: ${m.error}.`));
    if (!measured.length) {
      if (!broken.length) {
        box.append(el("p", { class: "exercise-roof-invite" },
          el("a", { href: PROBE_URL }, "Measure this device"),
          " (the roofline chapter, about 15 s, nothing leaves the browser) to see your kernel against your own machine's roofs too."));
      }
      return;
    }
    if (!arithmetic) {
      for (const m of measured) {
        box.append(el("p", { class: "exercise-roof-yours" },
          `On ${m.label.charAt(0).toLowerCase()}${m.label.slice(1)}: time bound ${seconds(m.point.time_s)}, the same bytes at ${si(m.point.mem_bw, "B/s")}.`));
      }
      return;
    }
    const slot = el("div", { class: "exercise-roof-slot" });
    const show = (m) => slot.replaceChildren(figure(roofline(m.point, m.reference_point, ref.minimum),
      `${m.label}${m.dtype_note ? `: ${m.dtype_note}` : ""}. The FLOPs and bytes are the simulator's for the ${sheet}; only the roofs are yours.`,
      "exercise-roof-yours"));
    if (measured.length > 1) {
      const id = `${this.id}-roof-device`;
      const pick = el("select", { id }, ...measured.map((m, i) => el("option", { value: String(i) }, m.label)));
      pick.addEventListener("change", () => show(measured[Number(pick.value)]));
      box.append(el("div", { class: "exercise-roof-yours-box" },
        el("p", { class: "exercise-roof-pick" }, el("label", { htmlFor: id }, "Your device "), pick), slot));
    } else {
      box.append(el("div", { class: "exercise-roof-yours-box" }, slot));
    }
    show(measured[0]);
  }

  // The probe measured (or the reader deleted) a device after this check: place the same points again.
  async remeasured() {
    const r = this.lastCheck;
    if (!r || this.busy || !this.roofs || !this.roofs.isConnected) return;
    try {
      const answer = await ask("place", "", this.data, { measured: measuredDevices(),
        result: { point: r.point, reference_point: r.reference_point } });
      if (r !== this.lastCheck) return;
      r.measured_points = JSON.parse(answer.json).measured_points || [];
      this.drawRoofs();
    } catch { /* a stopped worker: the next Check draws them */ }
  }

  linesTable(rows, caption) {
    const used = LINE_COLUMNS.filter(([k]) => rows.some((r) => r[k]));
    // The figures first, the code last: a long line (a trailing comment) is cut at the box's edge
    // (exercises.css), never pushing the numbers out of sight; its whole text is the cell's title.
    const head = el("tr", {}, el("th", { scope: "col" }, "Line"),
      ...used.map(([, label]) => el("th", { scope: "col" }, label)), el("th", { scope: "col", class: "src" }, "Code"));
    const body = el("tbody");
    for (const r of rows) {
      body.append(el("tr", {}, el("td", {}, String(r.line)), ...used.map(([k]) => el("td", {}, num(r[k]))),
        el("td", { class: "src", title: r.source }, r.source)));
    }
    const t = el("table", {}, el("caption", {}, caption), el("thead", {}, head), body);
    return el("div", { class: "exercise-table-wrap", tabindex: "0", role: "region", "aria-label": caption }, t);
  }
}

// ------------------------------------------------------------------ start
const made = new WeakSet();
const warmingSoon = new Set();           // exercises watched for coming on screen (warm)
function enhance(section) {
  if (made.has(section)) return;
  made.add(section);
  try { new Exercise(section); } catch (err) {
    const s = section.querySelector(".exercise-status");
    if (s) s.textContent = `This exercise could not start: ${err.message}`;
    console.error(err);
  }
}
document.querySelectorAll("section.exercise").forEach(enhance);
// Python starts once the first exercise is near and the page is quiet, so the reader's first
// Check finds it ready. On a page with widgets, quiet means after the widgets' runtime has started
// and stored its snapshot ("widgets:runtime-settled", widgets-host.js): a second interpreter booting
// beside the widgets' took the CPU their start needed (the roofline widget's cold landing 1.3x
// slower on two cores), and started later it restores that snapshot instead of booting afresh.
// A Run or Check before then starts it at once (ask).
function startWhenQuiet() {
  let begun = false;
  const begin = () => {
    if (begun) return;
    begun = true;
    const go = () => {
      if (!worker) startWorker();
      for (const ex of warmingSoon) {          // those already on screen: warm them now
        const r = ex.section.getBoundingClientRect();
        if (r.bottom > 0 && r.top < innerHeight) warm(ex.data);
      }
    };
    if (window.requestIdleCallback) requestIdleCallback(go, { timeout: 2000 }); else setTimeout(go, 200);
  };
  const W = window.BookWidgets;
  if (!document.querySelector(".widget[data-widget]") || (W && (W.runtimeSettled || W.phase === "failed"))) {
    begin();
    return;
  }
  document.addEventListener("widgets:runtime-settled", begin, { once: true });
  setTimeout(begin, 15000);              // the widgets' script never came (blocked, or failed to load)
}
if (document.querySelector("section.exercise")) startWhenQuiet();
window.BookExercises = Object.assign(runtime, { progress, restartWorker: () => restartWorker("restart") });
