// One Python interpreter (Pyodide) for every widget of every page of the book open in the browser.
//
// Run as a SharedWorker (module, extendedLifetime) it outlives the page that started it: the
// reader who follows a link to the next chapter finds Python already running, and that page's
// widgets go live as soon as it has connected. Each page talks to it over its own port. Where
// there is no SharedWorker it is a page's dedicated Worker, and the next page restores the
// memory snapshot saved below instead of starting Python again.
// Protocol (postMessage, on the page's port):
//   page -> worker  {type: "init", root, base}          root: site root URL, base: Pyodide files URL
//                                                       (a worker named "book-widgets <build> <base>" has
//                                                       started already; see start() below)
//   worker -> page  {type: "ready", ms, marks, snapshot} | {type: "failed", message}
//   page -> worker  {type: "render", id, uid, name, params, predict}  params: JSON text;
//                                                       predict: params likely next (computed when idle)
//   worker -> page  {type: "result", id, json, ms, cached}  json: widgets.render_json's answer
//   page -> worker  {type: "predict", uid, name, predict, append}  only compute the likely next params
//                                                       (append: add to those still queued, else replace them)
//   worker -> page  {type: "predicted", uid, params, json}  one of them, for the page to keep
//   worker -> page  {type: "snapshot", marks, failed}   the snapshot for the next page is stored, or
//                                                       could not be (marks: the boot's, with its timings);
//                                                       "ready" says snapshot: true when none will follow
// Exercises (assets/js/exercises.js) start this file as a dedicated Worker of their own, which they
// terminate to stop a runaway kernel; init then carries snapshot: false (no snapshot taken at start,
// so the first Check does not wait for one) and exercises: true (the exercises' Python,
// exercises-py.zip, is fetched beside the rest; without it, at the first exercise message):
//   page -> worker  {type: "exercise", id, request}      request: JSON for calc.exercises.handle
//   worker -> page  {type: "exercise-result", id, json, ms} | {type: "exercise-result", id, interrupted: true, ms}
// Where the page is cross-origin isolated, its init also carries interrupt: an Int32Array over a
// SharedArrayBuffer, given to Pyodide (setInterruptBuffer). The page's Stop writes 2 (SIGINT) into
// it; Python raises KeyboardInterrupt at its next check (every 50 bytecodes or so), the request
// ends with interrupted: true, and this worker, its interpreter and what it imported stay for the
// next request. (A long call into C checks nothing: the page terminates the worker after a grace.)
// Module worker: pyodide.mjs is an ES module.
//
// Next-page speed: after the first boot the interpreter's memory, with calc and
// widgets already imported, is saved in the Cache API (Pyodide's memory
// snapshot); the next page restores it instead of starting Python again.  The
// snapshot is keyed on the content key of the Python code and Pyodide's build,
// and is dropped if it ever fails to restore.

let renderJson = null, pyodide = null, snapshotKey = null, snapshotSaved = false;
const marks = {};                          // boot phases, ms since boot started (for the benchmark)
const SNAPSHOT_CACHE = "book-widgets-snapshot";

// Downloads started before Pyodide asks for them: Pyodide requests the wasm and the
// standard library only after pyodide.mjs has loaded and run; the first fetch of such a
// URL gets the response already under way.
// The archives are gzipped files (PACKED = ".gz" in book-runtime.mjs); Pyodide asks
// for the plain name and gets the unpacked bytes.
const early = new Map();
const packed = new Map();                  // URL Pyodide asks for -> [the gzipped file holding it, its type]
const plainFetch = self.fetch.bind(self);
self.fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const started = early.get(url);
  if (started) { early.delete(url); return started; }
  if (packed.has(url)) return fetchUnpacked(...packed.get(url));
  return plainFetch(input, init);
};
// ``response``: a download of it already started (the wasm's, which picks its copy).
function prefetch(url, response) {
  const p = response || (packed.has(url) ? fetchUnpacked(...packed.get(url)) : plainFetch(url, { credentials: "same-origin" }));
  p.catch(() => {});                       // reported by Pyodide, which awaits the same promise
  early.set(url, p);
}
// Un-gzipped as it arrives, so the wasm compiler starts on the first bytes.
async function fetchUnpacked(url, type) {
  const res = await plainFetch(url, { credentials: "same-origin" });
  if (!res.ok || !res.body) return res;
  const reader = res.body.getReader();
  let head = new Uint8Array(0);
  while (head.length < 2) {                 // the first two bytes say whether it is still gzipped
    const { value, done } = await reader.read();
    if (done) break;
    const joined = new Uint8Array(head.length + value.length);
    joined.set(head); joined.set(value, head.length); head = joined;
  }
  const body = new ReadableStream({
    start(c) { if (head.length) c.enqueue(head); },
    async pull(c) {
      const { value, done } = await reader.read();
      if (!done) return c.enqueue(value);
      c.close();
      marks[`fetched ${url.split("/").pop().split(/[.?]/)[0]}`] ??= performance.now() - bootStart;
    },
    cancel(reason) { return reader.cancel(reason); },
  });
  const gzipped = head[0] === 0x1f && head[1] === 0x8b;   // else the host un-gzipped it on the way
  return new Response(gzipped ? body.pipeThrough(new DecompressionStream("gzip")) : body,
                      type ? { headers: { "Content-Type": type } } : undefined);
}

// The wasm is 9.2 MB, 3.3 MB gzipped.  Asked for as it is, a host that compresses it in transit
// (GitHub Pages, Netlify, the book's own server) sends the 3.3 MB, the browser's network process
// unpacks them and V8 compiles as they stream (and can keep the compiled code for the next
// visit); over loopback (an author's preview, the tests) the bytes cost nothing either way.  Only
// a host that sends it uncompressed over a real network gets the copy that our own Pyodide has
// gzipped beside it (libdeflate, 4% less than a host's gzip) instead, unpacked on this thread:
// about 0.1 s of it on a 2-core machine, which on loopback made the cold landing 0.17 s slower.
const LOOPBACK = /^(localhost|127(\.\d+){3}|\[::1\])$/;
async function wasmResponse(url) {
  const res = await plainFetch(url, { credentials: "same-origin" });
  if (!res.ok || res.headers.get("Content-Encoding") || LOOPBACK.test(self.location.hostname)) {
    // streaming compilation insists on the wasm type, which a few hosts do not send
    return !res.ok || /^application\/wasm\b/.test(res.headers.get("Content-Type") || "") ? res
      : new Response(res.body, { status: res.status, headers: { "Content-Type": "application/wasm" } });
  }
  res.body?.cancel().catch(() => {});
  marks.wasmGzipped = true;
  return fetchUnpacked(`${url}.gz`, "application/wasm");
}

async function cachedSnapshot(url) {
  try {
    const cache = await caches.open(SNAPSHOT_CACHE);
    const hit = await cache.match(url);
    return hit ? unpackPages(new Uint8Array(await hit.arrayBuffer())) : null;
  } catch { return null; }                 // no Cache API (plain http, private mode): boot normally
}

// Half of a fresh interpreter's memory is pages of zeros: the snapshot is stored without them.
// Layout: "BKZ1", u32 length, u32 page size, u32 page count, one byte per page (1 = stored),
// then the stored pages in order.
const PAGE = 65536;
function packPages(bytes) {
  if (bytes.byteOffset % 4) bytes = bytes.slice();
  const count = Math.ceil(bytes.length / PAGE);
  const kept = new Uint8Array(count);
  const words = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
  let stored = 0;
  for (let p = 0; p < count; p++) {
    const end = Math.min(words.length, (p + 1) * (PAGE >> 2));
    for (let i = p * (PAGE >> 2); i < end; i++) if (words[i] !== 0) { kept[p] = 1; break; }
    if (!kept[p]) for (let i = end << 2; i < Math.min(bytes.length, (p + 1) * PAGE); i++) if (bytes[i]) { kept[p] = 1; break; }
    stored += kept[p];
  }
  const out = new Uint8Array(16 + count + stored * PAGE);
  const head = new DataView(out.buffer);
  out.set([66, 75, 90, 49]);                 // "BKZ1"
  head.setUint32(4, bytes.length, true); head.setUint32(8, PAGE, true); head.setUint32(12, count, true);
  out.set(kept, 16);
  let at = 16 + count;
  for (let p = 0; p < count; p++) {
    if (!kept[p]) continue;
    const page = bytes.subarray(p * PAGE, Math.min(bytes.length, (p + 1) * PAGE));
    out.set(page, at); at += PAGE;
  }
  return out;
}
function unpackPages(packed) {
  if (packed[0] !== 66 || packed[1] !== 75 || packed[2] !== 90 || packed[3] !== 49) return null;
  const head = new DataView(packed.buffer, packed.byteOffset);
  const length = head.getUint32(4, true), page = head.getUint32(8, true), count = head.getUint32(12, true);
  const out = new Uint8Array(length);      // zeroed: only the stored pages are copied in
  let at = 16 + count;
  for (let p = 0; p < count; p++) {
    if (!packed[16 + p]) continue;
    const n = Math.min(page, length - p * page);
    out.set(packed.subarray(at, at + n), p * page); at += page;
  }
  return out;
}

// For the benchmark: when the wasm module is compiled, and when it is instantiated.
let bootStart = 0;
WebAssembly.instantiateStreaming = async (source, imports) => {
  const module = await WebAssembly.compileStreaming(source);
  marks.compiled ??= performance.now() - bootStart;
  const instance = await WebAssembly.instantiate(module, imports);
  marks.wasm ??= performance.now() - bootStart;
  return { module, instance };
};

async function boot(where) {
  const { root, base } = where;
  const t0 = bootStart = performance.now();
  marks.epoch = performance.timeOrigin + t0;   // when boot began, on the page's clock too
  const py = new URL("pyodide/", root);
  // Everything the interpreter needs, fetched in parallel.
  const config = import(new URL("book-runtime.mjs", py).href);
  const pyodideModule = import(new URL("pyodide.mjs", base).href);
  const asmModule = import(new URL("pyodide.asm.mjs", base).href);
  const wasm = new URL("pyodide.asm.wasm", base).href;
  prefetch(wasm, base === py.href && "DecompressionStream" in self ? wasmResponse(wasm) : null);
  for (const m of [pyodideModule, asmModule]) m.catch(() => {});   // reported where awaited
  const { KEY, LOCK, PACKED = "" } = await config;
  const stdlib = new URL(`python_stdlib.zip?v=${KEY}`, py).href;
  if (PACKED) packed.set(stdlib, [new URL(`python_stdlib.zip${PACKED}?v=${KEY}`, py).href]);
  prefetch(stdlib);
  snapshotKey = new URL(`snapshot-bkz1-${KEY}.bin`, py).href;   // KEY covers the Pyodide release
  const snapshot = cachedSnapshot(snapshotKey);
  const bookUrl = new URL(`book-py.zip${PACKED}?v=${KEY}`, py).href;
  const bookZip = (PACKED ? fetchUnpacked(bookUrl) : plainFetch(bookUrl)).then((r) => {
    if (!r.ok) throw new Error(`book-py.zip: HTTP ${r.status}`);
    return r.arrayBuffer();
  });
  bookZip.catch(() => {});                 // reported below, where it is awaited
  if (where.exercises) exercisesArchive(py, KEY, PACKED);
  const { loadPyodide } = await pyodideModule;
  const asm = asmModule.then((m) => m.default);   // loadPyodide awaits it: no need to wait here
  marks.module = performance.now() - t0;
  const options = (snap) => ({
    indexURL: base,
    stdLibURL: stdlib,
    lockFileContents: LOCK,                // no package index to fetch: we install no packages
    packageBaseUrl: base,
    createPyodideModule: asm,
    env: { PYTHONDONTWRITEBYTECODE: "1" },
    fsInit: async (FS) => { FS.writeFile("/lib/book-py.zip", new Uint8Array(await bookZip)); },
    ...(snap ? { _loadSnapshot: snap } : { _makeSnapshot: true }),
  });
  const snap = await snapshot;
  marks.snapshotRead = performance.now() - t0;
  marks.snapshot = snap ? snap.byteLength : 0;
  if (snap) {
    try {
      pyodide = await loadPyodide(options(snap));
      renderJson = pyodide.pyimport("widgets").render_json;
      marks.interpreter = performance.now() - t0;
    } catch (err) {
      console.warn("[widgets] stale snapshot dropped:", err && err.message);
      caches.open(SNAPSHOT_CACHE).then((c) => c.delete(snapshotKey));
      pyodide = null; renderJson = null; marks.snapshot = 0;
    }
  }
  if (!renderJson) {
    pyodide = await loadPyodide(options(null));
    marks.interpreter = performance.now() - t0;
    // Only the package: each widget module is imported by its first render, so the
    // widgets on screen draw before the others load (all are imported before a snapshot).
    // Called from JS rather than through runPython, whose machinery (tokenize) the
    // widgets never need.
    pyodide.pyimport("sys").path.insert(0, "/lib/book-py.zip");
    renderJson = pyodide.pyimport("widgets").render_json;
    pyodide.pyimport("gc").freeze();
  } else {
    snapshotSaved = true;
  }
  marks.widgets = performance.now() - t0;
  marks.heapBytes = pyodide._module.HEAP8.length;
  return performance.now() - t0;
}

async function saveSnapshot() {
  if (snapshotSaved || !pyodide || !snapshotKey) return;
  snapshotSaved = true;
  const t0 = performance.now();
  try {
    // Everything imported and moved out of the collector's way (gc.freeze) before the copy.
    pyodide.runPython("import gc, widgets\nfor _n in widgets.NAMES:\n    widgets.get(_n)\ngc.collect()\ngc.freeze()\n");
    const packed = packPages(pyodide.makeMemorySnapshot());
    marks.snapshotMade = performance.now() - t0;
    const cache = await caches.open(SNAPSHOT_CACHE);
    for (const old of await cache.keys()) await cache.delete(old);
    await cache.put(snapshotKey, new Response(packed, { headers: { "Content-Type": "application/octet-stream" } }));
    marks.snapshotStored = performance.now() - t0;
    for (const port of snapshotWatchers) port.postMessage({ type: "snapshot", marks });
    snapshotWatchers.clear();
  } catch (err) {
    console.warn("[widgets] no snapshot saved:", err && err.message);
    for (const port of snapshotWatchers) port.postMessage({ type: "snapshot", marks, failed: true });
    snapshotWatchers.clear();
  }
}

// Renders are pure functions of (widget, params): keep recent answers, and while idle
// compute the ones a page predicts next (the neighbouring slider or key step), so a
// reader stepping through values gets an answer that is already there.
const CACHE_MAX = 96;
const answers = new Map();                 // key -> json (insertion order = age)
let predictions = [];                      // [{port, uid, name, params}] still to compute
let predicting = 0;

const keyOf = (name, params) => {
  const p = JSON.parse(params);
  return name + JSON.stringify(Object.keys(p).sort().map((k) => [k, p[k]]));
};

function compute(name, params) {
  const key = keyOf(name, params);
  let json = answers.get(key);
  if (json !== undefined) { answers.delete(key); answers.set(key, json); return [json, true]; }
  try { json = renderJson(name, params); }
  catch (err) { json = JSON.stringify({ error: String(err && err.message || err).slice(-500) }); }
  answers.set(key, json);
  if (answers.size > CACHE_MAX) answers.delete(answers.keys().next().value);
  return [json, false];
}

// The exercises' modules (calc.exercises and the simulator) ship in their own archive, which only
// this worker's exercise role fetches (widgets/bundle.py EXERCISE_MODULES); they join the calc
// package from it.
let exercisesZip = null, exercisesLoaded = null;
function exercisesArchive(py, key, packedExt) {
  if (exercisesZip) return exercisesZip;
  const url = new URL(`exercises-py.zip${packedExt}?v=${key}`, py).href;
  exercisesZip = (packedExt ? fetchUnpacked(url) : plainFetch(url)).then((r) => {
    if (!r.ok) throw new Error(`exercises-py.zip: HTTP ${r.status}`);
    return r.arrayBuffer();
  });
  exercisesZip.catch(() => {});            // reported where awaited
  return exercisesZip;
}
async function loadExercises() {
  if (!exercisesZip) {
    const { KEY, PACKED = "" } = await import(new URL("pyodide/book-runtime.mjs", runtimeRoot).href);
    exercisesArchive(new URL("pyodide/", runtimeRoot), KEY, PACKED);
  }
  pyodide.FS.writeFile("/lib/exercises-py.zip", new Uint8Array(await exercisesZip));
  pyodide.pyimport("calc").__path__.append("/lib/exercises-py.zip/calc");
}

let handleExercise = null;
async function exercise(port, msg) {
  const t0 = performance.now();
  let json;
  try {
    if (!handleExercise) {
      exercisesLoaded ??= loadExercises();
      await exercisesLoaded;
    }
    handleExercise ??= pyodide.pyimport("calc.exercises").handle;
    json = handleExercise(msg.request);
  } catch (err) {
    if (err && err.type === "KeyboardInterrupt") {         // the page's Stop, through the interrupt buffer
      port.postMessage({ type: "exercise-result", id: msg.id, interrupted: true, ms: performance.now() - t0 });
      return;
    }
    json = JSON.stringify({ passed: false, ok: false, stage: "internal", line: null,
                            message: String(err && err.message || err).slice(-800) });
  }
  port.postMessage({ type: "exercise-result", id: msg.id, json, ms: performance.now() - t0 });
  // the Check ran without the cyclic collector (calc.exercises.handle): collect now, while the
  // reader reads the answer, so that the next Check starts clean
  setTimeout(() => { try { pyodide.pyimport("gc").collect(); } catch { /* nothing to free */ } }, 0);
}

function render(port, msg) {
  const t0 = performance.now();
  const [json, cached] = compute(msg.name, msg.params);
  port.postMessage({ type: "result", id: msg.id, json, ms: performance.now() - t0, cached });
  predict(port, msg);
}

// Predicted answers go to the page as well, which then redraws without a round trip.
function predict(port, msg) {
  const more = (msg.predict || []).map((params) => ({ port, uid: msg.uid, name: msg.name, params }));
  // a reader's move replaces that page's idle guesses
  predictions = (msg.append ? predictions : predictions.filter((p) => p.port !== port)).concat(more);
  if (!predicting && predictions.length) predicting = setTimeout(predictNext, 0);
}

function predictNext() {                    // one per task, so a real request never waits long
  predicting = 0;
  const next = predictions.shift();
  if (!next) return;
  const [json] = compute(next.name, next.params);
  next.port.postMessage({ type: "predicted", uid: next.uid, params: next.params, json });
  if (predictions.length) predicting = setTimeout(predictNext, 0);
}

let booting = null, bootMs = 0, ports = 0;
const queue = [];                          // [port, msg]: renders asked for before Python was ready
const snapshotWatchers = new Set();        // ports told when the snapshot is stored
let runtimeRoot = null;
function start(where) {
  if (booting) return;
  runtimeRoot = where.root;
  booting = boot(where).then((ms) => { bootMs = ms; return ms; });
  booting.catch(() => {});                 // told to each page that connects (serve), not left unhandled
}

// The worker's name says where the Pyodide files are: the pages name it
// "book-widgets <build> <Pyodide URL>" (widgets-host.js, and the head script of bookbuild's
// pages), and it lives in <site root>/assets/js/.  So Python starts as soon as this script has
// run, not when the page's port and first message arrive: on a cold page that is about 0.1 s
// later, because the page's main thread, busy parsing and laying out the chapter, relays the
// connection.  The page's "init" says the same and then only joins.
const named = /^book-widgets \S* (\S+)$/.exec(self.name || "");
if (named) start({ root: new URL("../../", self.location.href).href, base: named[1] });

function serve(port) {
  port.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === "init") {
      const first = ports++ === 0;           // the page that started Python (its boot is its own)
      start(msg);
      booting.then(
        () => {
          if (msg.interrupt) pyodide.setInterruptBuffer(msg.interrupt);
          // snapshot: the next page's snapshot is stored already (restored from it, or an earlier
          // page's); otherwise a "snapshot" message follows once it is (or once it failed)
          port.postMessage({ type: "ready", ms: first ? bootMs : 0, reused: !first, marks, snapshot: snapshotSaved });
          if (first && msg.snapshot !== false) {
            // The page's figures are already the build's drawings (they go live without Python), so
            // the snapshot for the next page is taken first: a reader who moves on within a second
            // or two (a visit to look something up) still leaves it behind.
            snapshotWatchers.add(port);
            saveSnapshot();
          }
          for (const [p, m] of queue.splice(0)) (m.type === "exercise" ? exercise : render)(p, m);
        },
        (err) => {
          port.postMessage({ type: "failed", message: String(err && err.message || err) });
          if (first && "onconnect" in self) setTimeout(() => self.close(), 1000);   // the next page tries afresh
        },
      );
    } else if (msg.type === "render") {
      if (renderJson) render(port, msg); else queue.push([port, msg]);
    } else if (msg.type === "exercise") {
      if (renderJson) exercise(port, msg); else queue.push([port, msg]);
    } else if (msg.type === "predict") {
      if (renderJson) predict(port, msg);
    }
  };
}

if ("onconnect" in self) self.onconnect = (event) => serve(event.ports[0]);   // SharedWorker
else serve(self);                                                               // dedicated Worker
