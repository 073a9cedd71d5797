// Page side of the widgets: finds every .widget[data-widget], starts one shared
// Python worker as soon as it runs (on Save-Data or a slow connection: when a widget
// nears the viewport or is touched), wires the controls that the static HTML already
// contains, and swaps in each new figure.
// Host API: window.BookWidgets.mount(el) / .unmount(el) / .start().
//
// Page contract: the script lives in <site root>/assets/js/ (or <meta name="site-root" content="../">);
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
  // the site root: bookbuild's <meta name="site-root">, else two folders above this script
  // (assets/js/), which is how a page rendered by Quarto finds it
  const root = meta("site-root") ? new URL(meta("site-root"), location.href) : new URL("../../", hostSrc);
  const base = new URL(meta("pyodide-base") || "pyodide/", root);

  let worker = null, phase = "idle", failure = "", timer = 0, nextId = 1;
  const mounted = new Map();      // element -> widget record
  const byUid = new Map();        // widget record by its number (predicted answers name it)
  let nextUid = 1;
  const waiting = new Map();      // request id -> widget record
  const stats = { readyMs: null, startedAt: null, liveAt: {}, drawnAt: {}, updates: [], renderMs: [], applyMs: [] };

  // f when the page is idle (at most timeoutMs away); without requestIdleCallback, after fallbackMs.
  const whenIdle = (f, timeoutMs, fallbackMs) =>
    window.requestIdleCallback ? requestIdleCallback(f, { timeout: timeoutMs }) : setTimeout(f, fallbackMs);

  // Save-Data, or a 2G/3G connection: nothing is downloaded until a reader comes near a widget
  // or touches one (about 4.5 MB the first time).  Otherwise the runtime starts at once.
  const conn = navigator.connection;
  const frugal = !!(conn && (conn.saveData || /2g|3g/.test(conn.effectiveType || "")));

  const setState = (w, state, text) => { w.el.dataset.state = state; w.status.textContent = text; };

  function fail(message) {
    if (phase === "failed") return;
    phase = "failed"; failure = message; clearTimeout(timer);
    if (worker) { worker.terminate(); worker = null; }
    for (const w of mounted.values()) setState(w, "failed", message);
    console.warn("[widgets]", message);
  }

  function start() {
    if (mounted.size) boot();
  }

  // The worker: shared by the book's pages and kept for a while after this one is left
  // (extendedLifetime), so the next chapter finds Python running; else this page's own.  The page
  // template's head script does the same (bookbuild/templates/page.html) with the same name, which
  // carries the build and the Pyodide files' URL: pages of another build get a worker of their own.
  const workerName = `book-widgets ${meta("book-version") || ""} ${base.href}`;
  function connect(url, name) {
    if (!window.SharedWorker) return new Worker(url, { type: "module", name });   // the name starts it (widgets-worker.js)
    const shared = new SharedWorker(url, { type: "module", name, extendedLifetime: true });
    return {
      postMessage: (m) => shared.port.postMessage(m),
      set onmessage(f) { shared.port.onmessage = f; },
      set onerror(f) { shared.onerror = f; },
      terminate() { shared.port.close(); },
    };
  }

  function boot() {
    if (worker || phase === "failed") return;
    if (location.protocol === "file:") {
      return fail("Static figure: interactive widgets need the book served over http(s), not opened as a file.");
    }
    phase = "loading"; stats.startedAt = performance.now();
    for (const w of mounted.values()) setState(w, "loading", "Loading the interactive version…");
    // The book's pages start the worker in their head (bookbuild/templates/page.html), before
    // this script has even arrived: take it over, with what it has said so far.
    const early = window.BookWidgetsEarly;
    if (early) { worker = early.worker; stats.startedAt = early.at; }
    else {
      try { worker = connect(new URL("widgets-worker.js", hostSrc), workerName); }
      catch (err) { return fail(`Static figure: this browser cannot run the interactive version (${err.message}).`); }
      worker.postMessage({ type: "init", root: root.href, base: base.href });
    }
    timer = setTimeout(() => fail(`Static figure: the interactive version did not load within ${TIMEOUT_MS / 1000} s.`), TIMEOUT_MS);
    worker.onerror = (e) => { e.preventDefault(); fail("Static figure: the interactive version could not be loaded."); };
    worker.onmessage = onMessage;
    if (early) for (const e of early.queue.splice(0)) (e.type === "error" ? worker.onerror : onMessage)(e);
  }

  function onMessage({ data }) {
    if (data.type === "ready") {
      phase = "ready"; clearTimeout(timer); stats.readyMs = data.ms; stats.marks = data.marks; stats.readyAt = performance.now();
      stats.reused = !!data.reused;      // Python was already running (the shared worker of an earlier page)
      for (const w of mounted.values()) wake(w);
      if (data.reused || data.snapshot) runtimeSettled();
    } else if (data.type === "snapshot") {
      stats.marks = data.marks;
      runtimeSettled();
    } else if (data.type === "failed") {
      fail(`Static figure: the interactive version failed to start (${data.message}).`);
      runtimeSettled();
    } else if (data.type === "predicted") {
      const w = byUid.get(data.uid);
      if (!w) return;
      w.ahead.set(canon(JSON.parse(data.params)), data.json);
      if (w.ahead.size > 16) w.ahead.delete(w.ahead.keys().next().value);
    } else if (data.type === "result") {
      const w = waiting.get(data.id);
      waiting.delete(data.id);
      if (settleWanted) queueMicrotask(settled);      // after this answer's own follow-ups
      if (!w) return;
      w.inflight = 0; stats.renderMs.push(data.ms); if (data.cached) stats.cached = (stats.cached || 0) + 1;
      const background = w.redraw && !w.pending && w.dirtySince == null;
      if (w.redraw) { w.redraw = false; redrawBusy = false; queueMicrotask(redrawNext); }
      if (!mounted.has(w.el)) return;
      const answer = JSON.parse(data.json);
      if (background && movesThePage(w, answer)) { stats.drawnAt[w.name] ??= performance.now(); return; }
      const t = performance.now();
      apply(w, answer); w.lastJson = data.json;
      stats.applyMs.push(performance.now() - t);
      if (w.pending) { w.pending = false; send(w); }
    }
  }

  // The runtime is ready.  A figure still showing what the build drew (the same Python, these
  // params, this layout width) needs no drawing before its controls work: it goes live at once
  // and Python draws it again in the background, which changes nothing on screen unless the two
  // disagree.  Any other figure is drawn first.
  function wake(w) {
    if (w.el.dataset.state === "live") return;
    keepOneLayout(w);
    if (w.dirtySince == null && w.builtKeys.has(canon({ ...w.params, ...extras(w) }))) {
      goLive(w); redrawing.push(w); redrawNext();
    } else request(w);
  }

  // A background drawing whose text differs from the build's (the runner's floating-point
  // residuals: the browser's exp() is not the build's) could wrap a line differently and move
  // the page under the reader: the build's figure, which Python drew too, stays until a move.
  function movesThePage(w, data) {
    if (data.error || (data.message || "") !== (w.message.hidden ? "" : w.message.textContent)) return true;
    const rows = w.readouts.children;
    return rows.length !== data.readouts.length ||
      data.readouts.some(([k, v], i) => rows[i].firstChild.textContent !== k || rows[i].lastChild.textContent !== v);
  }

  // Those background drawings go to the worker one at a time, so that a reader's move is never
  // queued behind all of them.
  const redrawing = [];
  let redrawBusy = false;
  function redrawNext() {
    while (!redrawBusy && phase === "ready" && redrawing.length) {
      const w = redrawing.shift();
      if (!mounted.has(w.el) || w.inflight || w.lastJson) continue;   // the reader's move draws it
      w.redraw = true; redrawBusy = true; send(w);
    }
  }

  function request(w) {
    if (w.dirtySince == null) w.dirtySince = performance.now();
    if (phase !== "ready") return start();
    if (w.inflight) { w.pending = true; return; }   // latest value wins
    const ahead = w.ahead.get(canon({ ...w.params, ...extras(w) }));
    if (ahead !== undefined) {                       // predicted: draw now, no round trip
      stats.renderMs.push(0); stats.cached = (stats.cached || 0) + 1;
      const t = performance.now();
      apply(w, JSON.parse(ahead)); w.lastJson = ahead;
      stats.applyMs.push(performance.now() - t);
      worker.postMessage({ type: "predict", uid: w.uid, name: w.name, predict: predictions(w) });
      return;
    }
    send(w);
  }

  // Params as a key that does not depend on the order of their names.
  const canon = (p) => JSON.stringify(Object.keys(p).sort().map((k) => [k, p[k]]));

  function predictions(w, names, limit) {
    const more = extras(w);
    return likelyNext(w, names, limit).map((p) => JSON.stringify({ ...p, ...more }));
  }

  // While the page is idle after going live: a step either way on every slider of every widget,
  // so that a reader's first move, wherever it is, draws without a round trip.  Sliders come
  // before number fields (which readers type into more than they step), up to eight steps.
  function predictFirstMoves() {
    for (const w of mounted.values()) {
      const names = Object.values(w.spec).filter(numeric)
        .sort((a, b) => (a.control === "number") - (b.control === "number")).map((p) => p.name);
      const predict = predictions(w, names, 8);
      if (predict.length) worker.postMessage({ type: "predict", uid: w.uid, name: w.name, predict, append: true });
    }
  }

  function send(w) {
    const id = nextId++;
    waiting.set(id, w); w.inflight = id;
    const params = JSON.stringify({ ...w.params, ...extras(w) });
    worker.postMessage({ type: "render", id, uid: w.uid, name: w.name, params, predict: predictions(w) });
  }

  // The params a reader is likely to ask for next: one step either way on the control last
  // moved, and the figure's arrow keys.  The worker computes them while it is idle.
  const numeric = (p) => p && (p.type === "int" || p.type === "float") && p.min != null && p.max != null;

  function likelyNext(w, names = [w.lastParam], limit = 4) {
    const out = [], seen = new Set([JSON.stringify(w.params)]);
    const add = (params) => { const k = JSON.stringify(params); if (!seen.has(k)) { seen.add(k); out.push(params); } };
    for (const p of names.map((n) => w.spec[n]).filter(numeric)) {
      // One step as the slider takes it: on its own grid (log2 of the value for a log slider),
      // so that 2 ** 13 is predicted as 8192, not as 2 ** (log2(5793) + 0.5) = 8193.
      const step = p.step || 1, lo = p.log ? Math.log2(p.min) : p.min;
      const decimals = Math.min(12, (String(step).split(".")[1] || "").length + 4);   // 0.1 * 3 is 0.3
      // A reader stepping one way (held arrow key, a slow drag) gets two steps ahead that way; a
      // control just focused, two either way (a second key press comes before Python could draw
      // the step after the first on a slow phone).
      const ahead = p.name !== w.lastParam ? [1, -1] : w.lastDir ? [w.lastDir, 2 * w.lastDir, -w.lastDir] : [1, -1, 2, -2];
      for (const dir of ahead) {
        const v = Number(w.params[p.name]);
        const x = (p.log ? Math.log2(v) : v) + dir * step;
        const snapped = Number((lo + Math.round((x - lo) / step) * step).toFixed(decimals));
        let next = p.log ? 2 ** snapped : snapped;
        next = Math.min(p.max, Math.max(p.min, p.type === "int" ? Math.round(next) : next));
        add({ ...w.params, [p.name]: next });
      }
    }
    const svg = w.svgBox.querySelector("svg");
    if (svg && svg.dataset.keys) {
      for (const [key, change] of Object.entries(JSON.parse(svg.dataset.keys))) {
        if (key === "Home" || key === "End") continue;
        add(stepped(w, change));
      }
    }
    return out.slice(0, limit);
  }

  function apply(w, data) {
    if (data.error) {
      w.message.hidden = false; w.message.textContent = `Could not redraw: ${data.error}`;
      stopPlay(w);
      return;
    }
    keepOneLayout(w);
    patchSvg(w.svgBox, data.svg);
    patchReadouts(w.readouts, data.readouts);
    if (w.message.hidden !== !data.message) w.message.hidden = !data.message;
    if (w.message.textContent !== (data.message || "")) w.message.textContent = data.message || "";
    if (data.ranges) applyRanges(w, data.ranges);
    if (!w.pending) { w.params = data.params; syncControls(w); }
    prepareFigure(w);
    announce(w, data);
    stats.drawnAt[w.name] ??= performance.now();
    // widgets.css keeps a phone's figure in view above its controls if it leaves them room.  The
    // build decided for its figure; a reader's change (never the page's own, which would move
    // the page under the reader) decides again, by the same rule and from the drawing's viewBox:
    // reading the laid-out height here would force a layout of the page inside every redraw.
    if (w.dirtySince != null && layoutWidth(w) === NARROW) w.el.classList.toggle("widget-sticky", aspect(w) <= STICKY_ASPECT);
    if (w.room != null) peek(w, true);   // the new figure's height
    if (w.el.dataset.state !== "live") goLive(w);
    if (w.dirtySince != null && !w.pending) {
      stats.updates.push(performance.now() - w.dirtySince); w.dirtySince = null;
    }
    if (w.playing && !w.pending) schedulePlay(w);
    w.el.dispatchEvent(new CustomEvent("widget:render", { detail: data }));
  }

  // On a phone, while the reader uses a control, the drawing stays in view above it: a short one
  // (widget-sticky) as it is, a taller one (peek) pinned at the top and scaled to at most
  // PEEK_SHARE of the screen's height.  Either only if it leaves the control in use in view below
  // it (w.room: the height between the top of the screen's pinned place and that control); a
  // drawing that would need to be smaller than MIN_PEEK of its size to fit is not pinned (its text
  // would be too small to read).  A transform, so nothing on the page moves.
  const PEEK_SHARE = 0.45, STICKY_ASPECT = 0.9, MIN_PEEK = 0.75, GAP = 6;   // = widgets.STICKY_ASPECT
  // Height over width of the figure's drawing (its viewBox), without asking for a layout.
  function aspect(w) {
    const box = w.svgBox.querySelector("svg")?.viewBox?.baseVal;
    return box && box.width ? box.height / box.width : 0;
  }
  // Called in every redraw while peeking, so it reads no layout: the window's height is kept from
  // resize events (reading innerHeight makes the browser lay the page out first).
  let viewportHeight = innerHeight;
  addEventListener("resize", () => { viewportHeight = innerHeight; }, { passive: true });
  function peek(w, on) {
    const h = aspect(w) * (w.width || NARROW);
    on = on && layoutWidth(w) === NARROW && h > 0;
    const room = w.room ?? Infinity;
    const sticky = w.el.classList.contains("widget-sticky");
    let peeking = false;
    if (on && !sticky) {
      const scale = Math.floor(100 * Math.min(1, PEEK_SHARE * viewportHeight / h, room / h)) / 100;
      peeking = scale >= MIN_PEEK;
      if (peeking && String(scale) !== w.peekScale) { w.peekScale = String(scale); w.el.style.setProperty("--wg-peek", scale); }
    }
    const unpinned = sticky && on && h > room;
    if (w.el.classList.contains("widget-peek") !== peeking) w.el.classList.toggle("widget-peek", peeking);
    if (w.el.classList.contains("widget-unpinned") !== unpinned) w.el.classList.toggle("widget-unpinned", unpinned);
  }
  // The control in use: the room above it, measured when the reader touches or focuses it and
  // again as the page scrolls under the pinned drawing.
  function measureRoom(w, control) {
    if (layoutWidth(w) !== NARROW || !control) return;
    const top = parseFloat(getComputedStyle(w.svgBox).scrollMarginTop) || 0;   // the pinned place (widgets.css)
    w.room = control.getBoundingClientRect().top - top - GAP;
  }
  function controlOf(w, target) {
    const c = target && target.closest && target.closest(".wc");
    return c && w.form.contains(c) ? c : null;
  }
  let inUse = null;   // the widget whose control (w.control: a tapped slider takes no focus) is in use
  addEventListener("scroll", () => {
    if (!inUse || !inUse.control) return;
    measureRoom(inUse, inUse.control); peek(inUse, true);
  }, { passive: true });
  function use(w, target) {
    const c = controlOf(w, target);
    if (!c || layoutWidth(w) !== NARROW) return;
    measureRoom(w, c); inUse = w; w.control = c; peek(w, true);
  }
  function release(w) {
    if (inUse === w) inUse = null;
    w.room = null; w.control = null; peek(w, false);
  }

  // Screen readers hear a short summary (computed in Python: widgets.summary) after each redraw the
  // reader caused, not after the background redraws of the same parameters, nor while playing.
  function announce(w, data) {
    const key = canon(data.params || {});
    if (!data.summary || w.playing || w.el.dataset.state !== "live" || key === w.heard) return;
    w.heard = key;
    w.live.textContent = data.summary;
  }

  function goLive(w) {
    w.fieldset.disabled = false;
    prepareFigure(w);
    stats.liveAt[w.name] = performance.now();
    setState(w, "live", "Interactive: change the controls.");
    if (![...mounted.values()].every((m) => m.el.dataset.state === "live")) return;
    // Once the page is quiet: the first moves computed ahead, the redraw path warmed up.
    whenIdle(() => {
      if (!worker) return;
      warmUp(); predictFirstMoves();
    }, 5000, 500);
  }

  // The runtime has done its page-load work: Python is up and the snapshot for the next page is
  // stored (or it failed). Said once (stats.runtimeSettledAt, a "widgets:runtime-settled" event on
  // document) for work that would compete with it for the CPU: the exercises' own interpreter
  // (exercises.js) starts after it, and then restores that snapshot instead of starting afresh.
  function runtimeSettled() {
    if (stats.runtimeSettledAt != null) return;
    stats.runtimeSettledAt = performance.now();
    document.dispatchEvent(new CustomEvent("widgets:runtime-settled"));
  }

  // Every widget live, drawn, its warm-up done and nothing in flight: the page has nothing more to
  // do until the reader moves. Said once per page (stats.settledAt, a "widgets:settled" event on
  // document), for scripts and tests that wait for the page to be quiet instead of for a time.
  let settleWanted = false;
  function settled() {
    settleWanted = stats.settledAt == null;
    if (!settleWanted || waiting.size || redrawing.length || redrawBusy) return;   // the last answer calls again
    settleWanted = false;
    stats.settledAt = performance.now();
    document.dispatchEvent(new CustomEvent("widgets:settled"));
  }

  // Once, while the page is idle: redraw each figure with the answer it already shows.  Nothing
  // in the DOM changes, but the parse-and-compare path is compiled and warm, so a reader's first
  // move redraws in about 1 ms instead of about 10.
  // One figure per idle period, so the warm-up itself never makes a long task.
  function warmUp(queue = [...mounted.values()]) {
    const w = queue.shift();
    if (!w) return settled();
    if (w.lastJson && mounted.has(w.el) && !w.inflight && !w.playing) {
      const data = JSON.parse(w.lastJson);
      if (!data.error) { patchSvg(w.svgBox, data.svg); patchReadouts(w.readouts, data.readouts); }
    }
    if (queue.length) whenIdle(() => warmUp(queue), 5000, 50);
    else settled();
  }

  // Replace only what changed: re-parsing is cheap, but new nodes cost style, layout and paint.
  // A figure whose parts changed in number (the runner's N) is faster to rebuild than to morph
  // part by part (measured with style and layout included); its root element stays, and with it
  // focus and listeners.
  const scratch = document.createElement("template");
  function patchSvg(box, svgText) {
    const old = box.firstElementChild;
    scratch.innerHTML = svgText;
    const next = scratch.content.firstElementChild;
    if (!old || !next || old.nodeName !== next.nodeName) { box.replaceChildren(scratch.content); return; }
    if (old.childNodes.length === next.childNodes.length) return morph(old, next);
    syncAttributes(old, next);
    old.replaceChildren(...next.childNodes);
  }

  function syncAttributes(a, b) {
    const ba = b.attributes;
    for (let i = 0; i < ba.length; i++) {
      const { name, value } = ba[i];
      if (a.getAttribute(name) !== value) a.setAttribute(name, value);
    }
    const aa = a.attributes;
    for (let i = aa.length - 1; i >= 0; i--) if (!b.hasAttribute(aa[i].name)) a.removeAttribute(aa[i].name);
  }

  function morph(a, b) {
    syncAttributes(a, b);
    // Walk both child lists by siblings (indexing a live NodeList after an insertion walks it
    // again); a subtree the browser finds equal is left alone.
    let x = a.firstChild, y = b.firstChild;
    while (y) {
      const nextY = y.nextSibling;
      if (!x) a.appendChild(y);
      else {
        const nextX = x.nextSibling;
        if (x.nodeType !== y.nodeType || x.nodeName !== y.nodeName) a.replaceChild(y, x);
        else if (x.nodeType === 1) { if (!x.isEqualNode(y)) morph(x, y); }
        else if (x.nodeValue !== y.nodeValue) x.nodeValue = y.nodeValue;
        x = nextX;
      }
      y = nextY;
    }
    while (x) { const nextX = x.nextSibling; x.remove(); x = nextX; }
  }

  function patchReadouts(dl, rows) {
    for (let i = 0; i < rows.length; i++) {
      let row = dl.children[i];
      if (!row) {
        row = document.createElement("div");
        row.append(document.createElement("dt"), document.createElement("dd"));
        dl.append(row);
      }
      const [k, v] = rows[i];
      if (row.firstChild.textContent !== k) row.firstChild.textContent = k;
      if (row.lastChild.textContent !== v) row.lastChild.textContent = v;
    }
    while (dl.children.length > rows.length) dl.lastElementChild.remove();
  }

  // A parameter whose range depends on others (e.g. the number of steps).
  function applyRanges(w, ranges) {
    for (const [name, [lo, hi]] of Object.entries(ranges)) {
      const p = w.spec[name];
      if (!p) continue;
      p.min = lo; p.max = hi;
      const el = w.form.elements[name];
      if (el && el.type === "range") {
        if (el.min !== String(lo)) el.min = lo;
        if (el.max !== String(hi)) el.max = hi;
      }
    }
  }

  // --- play / pause (a slider with a play button steps itself forward) ---------
  const PLAY_MS = 900;
  function togglePlay(w, button) {
    if (w.playing) return stopPlay(w);
    const p = w.spec[button.dataset.play];
    if (!p || w.el.dataset.state !== "live") return;
    w.playing = p.name; button.textContent = "Pause"; button.setAttribute("aria-pressed", "true");
    if (Number(w.params[p.name]) >= p.max) { w.params = { ...w.params, [p.name]: p.min }; syncControls(w); request(w); }
    else schedulePlay(w);
  }
  function schedulePlay(w) {
    clearTimeout(w.playTimer);
    w.playTimer = setTimeout(() => {
      const p = w.spec[w.playing];
      if (!p || !w.playing) return;
      if (Number(w.params[p.name]) >= p.max) return stopPlay(w);
      nudge(w, { [p.name]: 1 });
    }, PLAY_MS);
  }
  function stopPlay(w) {
    if (!w.playing) return;
    w.playing = null; clearTimeout(w.playTimer);
    const b = w.form.querySelector(".wc-play");
    if (b) { b.textContent = "Play"; b.setAttribute("aria-pressed", "false"); }
  }

  // --- controls -------------------------------------------------------------
  // Thousands separators by hand: the first toLocaleString call loads ICU's number formats,
  // 10-20 ms on a reader's first slider move.
  const grouped = (v) => String(Math.round(Number(v))).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  // A byte count is shown in the largest binary unit it fills (65,536 KiB: "64 MiB"), as
  // widgets/__init__.py's _format_value writes the static control.
  const IEC = ["B", "KiB", "MiB", "GiB", "TiB"];
  function bytesText(v, unit) {
    let i = IEC.indexOf(unit);
    while (v >= 1024 && i < IEC.length - 1) { v /= 1024; i += 1; }
    if (Number.isInteger(v)) return `${grouped(v)} ${IEC[i]}`;
    const r = Number(v.toPrecision(3));
    return `${r >= 100 ? grouped(r) : r.toFixed(2 - Math.floor(Math.log10(r)))} ${IEC[i]}`;
  }
  const fmt = (p, v) => (IEC.includes(p.unit) && p.type !== "choice" && v > 0) ? bytesText(Number(v), p.unit) :
    (p.type === "int" ? grouped(v) : String(v)) +
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
    for (const box of w.form.querySelectorAll("[data-when]")) {
      const show = Object.entries(JSON.parse(box.dataset.when)).every(([k, vals]) => vals.includes(String(w.params[k])));
      if (box.hidden === show) box.hidden = !show;
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
    if (w.playing) stopPlay(w);
    if (typeof v === "number" && w.lastParam === p.name && v !== w.params[p.name]) w.lastDir = Math.sign(v - w.params[p.name]);
    else if (w.lastParam !== p.name) w.lastDir = 0;
    w.lastParam = p.name;
    w.params = { ...w.params, [p.name]: v };
    if (p.show_if || w.form.querySelector("[data-when]")) syncControls(w);
    request(w);
  }

  function nudge(w, changes) {
    w.lastParam = null;
    w.params = stepped(w, changes); syncControls(w); request(w);
  }

  function stepped(w, changes) {
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
    return next;
  }

  // A figure that declares keys or drags becomes focusable and says how to use it.
  // The figure's box takes keys (and says how) if the drawing asks for them. Set only when it
  // changes: each redraw comes here, and a rewritten label updates the accessibility tree.
  function prepareFigure(w) {
    const box = w.svgBox, svg = box.querySelector("svg");
    const label = svg && svg.dataset.keys ? svg.dataset.keysHelp || "Figure: use the arrow keys to change the view" : null;
    if (box.getAttribute("aria-label") !== label) {
      if (label) { box.tabIndex = 0; box.setAttribute("aria-label", label); }
      else { box.removeAttribute("tabindex"); box.removeAttribute("aria-label"); }
    }
    const draggable = !!(svg && svg.dataset.drag);
    if (box.classList.contains("widget-draggable") !== draggable) box.classList.toggle("widget-draggable", draggable);
  }

  function wireFigure(w, signal) {
    const box = w.svgBox;
    box.addEventListener("focus", () => {
      if (phase === "ready") worker.postMessage({ type: "predict", uid: w.uid, name: w.name, predict: predictions(w) });
    }, { signal });
    box.addEventListener("keydown", (e) => {
      const svg = box.querySelector("svg");
      if (w.el.dataset.state !== "live" || !svg || !svg.dataset.keys) return;
      const change = JSON.parse(svg.dataset.keys)[e.key];
      if (!change) return;
      e.preventDefault(); stopPlay(w); nudge(w, change);
    }, { signal });
    let drag = null;
    // A drag turns the figure (widgets.css gives it touch-action: none, so a finger does too);
    // a second finger is left alone.
    box.addEventListener("pointerdown", (e) => {
      const svg = box.querySelector("svg");
      if (!e.isPrimary || w.el.dataset.state !== "live" || !svg || !svg.dataset.drag) return;
      drag = { x: e.clientX, y: e.clientY, moved: false, map: JSON.parse(svg.dataset.drag), start: { ...w.params } };
    }, { signal });
    box.addEventListener("pointermove", (e) => {
      if (!drag || !e.isPrimary) return;
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

  // --- layout ----------------------------------------------------------------
  // A figure is drawn at one of two layout widths and scaled to its box (the SVG has a
  // viewBox): the phone's when the box is narrower than NARROW_BELOW, else the wide one.
  // The build drew both (widgets.static_html) and widgets.css shows the one this width
  // takes, so going live, which draws at the same width, never changes the figure's box.
  const WIDE = 640, NARROW = 340, NARROW_BELOW = 520;   // = widgets.DEFAULT_WIDTH, NARROW_WIDTH, NARROW_BELOW
  const layoutWidth = (w) => (w.width == null || w.width >= NARROW_BELOW ? WIDE : NARROW);

  // The build's copy for the other width goes once the figure is Python's to draw.
  function keepOneLayout(w) {
    if (w.oneLayout) return;
    w.oneLayout = true;
    if (w.width == null && w.svgBox.clientWidth) w.width = w.svgBox.clientWidth;
    const keep = String(layoutWidth(w));
    for (const svg of w.svgBox.querySelectorAll(":scope > svg[data-layout]")) {
      if (svg.dataset.layout === keep) delete svg.dataset.layout; else svg.remove();
    }
  }

  const resizer = "ResizeObserver" in window     // widths without forcing a layout
    ? new ResizeObserver((entries) => {
      for (const e of entries) {
        const w = [...mounted.values()].find((m) => m.svgBox === e.target);
        const width = e.contentRect.width;
        if (!w || !width) continue;
        const before = layoutWidth(w);
        w.width = width;
        if (layoutWidth(w) !== before && w.el.dataset.state === "live") request(w);   // re-lay out
      }
    })
    : null;

  // --- the reader's measured devices ---------------------------------------------
  // A device choice marked `measured` (widgets.Param) also lists the devices the device probe
  // stored in this browser (BookDevice, assets/js/measured-device.js): "yours-gpu", "yours-cpu".
  // A render that draws one sends its dict to Python as `_measured` (widgets.device).
  const measuredDevices = () => (window.BookDevice ? window.BookDevice.devices() : []);
  const isMine = (v) => typeof v === "string" && v.startsWith("yours-");
  function extras(w) {
    const out = { _width: layoutWidth(w) };
    const chosen = Object.values(w.spec).filter((p) => p.measured && isMine(w.params[p.name])).map((p) => w.params[p.name]);
    if (chosen.length) {
      out._measured = {};
      for (const d of measuredDevices()) if (chosen.includes(d.name)) out._measured[d.name] = d;
    }
    return out;
  }
  function addMeasured(w) {
    const devs = measuredDevices();
    let reset = false;
    for (const p of Object.values(w.spec)) {
      if (!p.measured) continue;
      const sel = w.form.elements[p.name];
      if (!sel || sel.tagName !== "SELECT") continue;
      for (const o of sel.querySelectorAll("option[data-measured]")) o.remove();
      const before = [...sel.options].find((o) => o.value !== "none") || null;
      for (const d of devs) {
        const o = new Option(d.label, d.name);
        o.dataset.measured = "";
        sel.add(o, before);
      }
      if (isMine(w.params[p.name]) && !devs.some((d) => d.name === w.params[p.name])) {   // deleted
        w.params = { ...w.params, [p.name]: p.default }; reset = true;
      }
      if (sel.value !== String(w.params[p.name])) sel.value = String(w.params[p.name]);
    }
    return reset;
  }
  addEventListener("bookdevice:change", () => {
    for (const w of mounted.values()) {
      const reset = addMeasured(w);
      w.ahead.clear();
      const mine = Object.values(w.spec).some((p) => p.measured && isMine(w.params[p.name]));
      if (reset || mine) { syncControls(w); if (w.el.dataset.state === "live") request(w); }
    }
  });

  // --- mount / unmount ---------------------------------------------------------
  // Started at once (see `frugal`), or when a widget comes within a screen's height.
  const observer = "IntersectionObserver" in window
    ? new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) start(); }, { rootMargin: "100% 0px" })
    : null;

  function mount(el) {
    if (mounted.has(el)) return mounted.get(el);
    const spec = {};
    for (const p of JSON.parse(el.dataset.spec || "[]")) spec[p.name] = p;
    const ac = new AbortController();
    const w = {
      el, spec, ac, name: el.dataset.widget, params: JSON.parse(el.dataset.params || "{}"),
      svgBox: el.querySelector(".widget-svg"), figure: el.querySelector(".widget-figure"), readouts: el.querySelector(".widget-readouts"),
      form: el.querySelector(".widget-controls"), fieldset: el.querySelector(".widget-controls fieldset"),
      status: el.querySelector(".widget-status"), message: el.querySelector(".widget-message"),
      inflight: 0, pending: false, dirtySince: null, playing: null, playTimer: 0,
      uid: nextUid++, ahead: new Map(),
    };
    // What the figures in the page show (one per layout width).
    w.builtKeys = new Set([...w.svgBox.querySelectorAll(":scope > svg[data-layout]")]
      .map((svg) => canon({ ...w.params, _width: Number(svg.dataset.layout) })));
    w.heard = canon(w.params);                                  // what a screen reader was last told
    byUid.set(w.uid, w);
    w.live = el.querySelector(".widget-live");
    if (!w.live) {   // screen readers hear each redraw's summary (announce)
      w.live = document.createElement("p"); w.live.className = "widget-live"; w.live.setAttribute("aria-live", "polite");
      el.append(w.live);
    }
    mounted.set(el, w);
    addMeasured(w);
    const signal = ac.signal;
    w.form.addEventListener("input", (e) => onInput(w, e), { signal });
    w.form.addEventListener("change", (e) => { if (e.target.type !== "range") onInput(w, e); }, { signal });
    w.form.addEventListener("submit", (e) => e.preventDefault(), { signal });
    // A control that gets focus is about to move: have its neighbouring values computed.
    w.form.addEventListener("focusin", (e) => {
      const p = w.spec[e.target.name];
      if (!p || phase !== "ready" || !(p.type === "int" || p.type === "float")) return;
      w.lastParam = p.name; w.lastDir = 0;                     // which way it goes is not known yet
      worker.postMessage({ type: "predict", uid: w.uid, name: w.name, predict: predictions(w) });
    }, { signal });
    w.form.addEventListener("click", (e) => {
      const b = e.target.closest && e.target.closest(".wc-play");
      if (b) { e.preventDefault(); togglePlay(w, b); }
    }, { signal });
    for (const ev of ["pointerdown", "focusin", "touchstart"]) el.addEventListener(ev, start, { signal, passive: true });
    // While the reader uses a control, a phone's figure too tall to stay in view above the controls
    // is pinned at the top of the screen, smaller (peek).
    w.form.addEventListener("pointerdown", (e) => use(w, e.target), { signal, passive: true });
    w.form.addEventListener("focusin", (e) => use(w, e.target), { signal });
    el.addEventListener("focusout", (e) => { if (!el.contains(e.relatedTarget)) release(w); }, { signal });
    document.addEventListener("pointerdown", (e) => { if (!el.contains(e.target)) release(w); }, { signal, passive: true });
    wireFigure(w, signal);
    if (phase === "failed") setState(w, "failed", failure);
    else if (phase === "idle" && frugal) setState(w, "static", "Static figure: tap it to load the live one.");
    else if (phase === "ready") { setState(w, "loading", "Loading the interactive version…"); wake(w); }
    else if (phase === "loading") setState(w, "loading", "Loading the interactive version…");
    if (resizer) resizer.observe(w.svgBox); else w.width = w.svgBox.clientWidth;
    if (observer) observer.observe(el); else start();
    return w;
  }

  function unmount(el) {
    const w = mounted.get(el);
    if (!w) return;
    stopPlay(w);
    w.ac.abort();
    if (observer) observer.unobserve(el);
    if (resizer) resizer.unobserve(w.svgBox);
    mounted.delete(el); byUid.delete(w.uid);
    w.fieldset.disabled = true;
    setState(w, "static", "Static figure.");
  }

  function mountAll() {
    document.querySelectorAll(".widget[data-widget]").forEach(mount);
  }

  // For tests and scripts that wait on a condition: is this widget still drawing (a request in
  // flight or queued, or playing)? Has the worker answered every move likelyNext predicts for it?
  const busy = (el) => { const w = mounted.get(el); return !!(w && (w.inflight || w.pending || w.playing)); };
  const aheadReady = (el) => {
    const w = mounted.get(el);
    return !!w && likelyNext(w).every((p) => w.ahead.has(canon({ ...p, _width: layoutWidth(w) })));
  };
  window.BookWidgets = { mount, unmount, start, stats, workerName, busy, aheadReady, get phase() { return phase; },
                         get runtimeSettled() { return stats.runtimeSettledAt != null; } };
  // This script comes only with pages that have widgets, first in their head: start the
  // runtime now (or take over the one the page started), unless the reader saves data.
  if (!frugal || window.BookWidgetsEarly) boot();
  else runtimeSettled();                   // nothing starts before the reader comes near a widget
  // Mounting needs the widgets' markup and the page's styles (a figure's box is measured), not the
  // page's deferred scripts, which run between the end of parsing ("interactive") and
  // DOMContentLoaded: on a next visit Python answers before those have run. So: at "interactive"
  // when every stylesheet is in, else at DOMContentLoaded.
  const styled = () => [...document.querySelectorAll('link[rel="stylesheet"]')].every((l) => l.sheet);
  if (document.readyState === "loading") {
    document.addEventListener("readystatechange", () => {
      if (document.readyState === "interactive" && styled()) mountAll();
    });
    document.addEventListener("DOMContentLoaded", mountAll, { once: true });
  } else mountAll();
})();
