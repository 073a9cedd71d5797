// One Python interpreter (Pyodide) per page, shared by every widget on it.
// Protocol (postMessage):
//   page -> worker  {type: "init", root, base}          root: site root URL, base: Pyodide files URL
//   worker -> page  {type: "ready", ms, marks, snapshot} | {type: "failed", message}
//   page -> worker  {type: "render", id, name, params}  params: JSON text
//   worker -> page  {type: "result", id, json, ms}      json: widgets.render_json's answer
//   page -> worker  {type: "idle"}                      the page is idle: save a snapshot if none
// Module worker: pyodide.mjs is an ES module.
//
// Next-page speed: after the first boot the interpreter's memory, with calc and
// widgets already imported, is saved in the Cache API (Pyodide's memory
// snapshot); the next page restores it instead of starting Python again.  The
// snapshot is keyed on the content key of the Python code and Pyodide's build,
// and is dropped if it ever fails to restore.

let renderJson = null, pyodide = null, snapshotKey = null, snapshotSaved = false;
const marks = {};                          // boot phases, ms since boot started (for the benchmark)
const queue = [];
const SNAPSHOT_CACHE = "book-widgets-snapshot";

async function cachedSnapshot(url) {
  try {
    const cache = await caches.open(SNAPSHOT_CACHE);
    const hit = await cache.match(url);
    return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
  } catch { return null; }                 // no Cache API (plain http, private mode): boot normally
}

async function boot({ root, base }) {
  const t0 = performance.now();
  const py = new URL("pyodide/", root);
  // Everything the interpreter needs, fetched in parallel.
  const config = import(new URL("book-runtime.mjs", py).href);
  const pyodideModule = import(new URL("pyodide.mjs", base).href);
  pyodideModule.catch(() => {});           // a failure is reported where it is awaited
  const { KEY, LOCK } = await config;
  snapshotKey = new URL(`snapshot-${KEY}-${LOCK.info.version}.bin`, py).href;
  const snapshot = cachedSnapshot(snapshotKey);
  const bookZip = fetch(new URL(`book-py.zip?v=${KEY}`, py)).then((r) => {
    if (!r.ok) throw new Error(`book-py.zip: HTTP ${r.status}`);
    return r.arrayBuffer();
  });
  bookZip.catch(() => {});                 // reported below, where it is awaited
  const { loadPyodide } = await pyodideModule;
  marks.module = performance.now() - t0;
  const options = (snap) => ({
    indexURL: base,
    stdLibURL: new URL(`python_stdlib.zip?v=${KEY}`, py).href,
    lockFileContents: LOCK,                // no package index to fetch: we install no packages
    packageBaseUrl: base,
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
    pyodide.runPython("import sys\nsys.path.insert(0, '/lib/book-py.zip')\nimport widgets\n" +
                      "for _n in widgets.NAMES:\n    widgets.get(_n)\n");
    renderJson = pyodide.pyimport("widgets").render_json;
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
  try {
    const bytes = pyodide.makeMemorySnapshot();
    const cache = await caches.open(SNAPSHOT_CACHE);
    for (const old of await cache.keys()) await cache.delete(old);
    await cache.put(snapshotKey, new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } }));
  } catch (err) {
    console.warn("[widgets] no snapshot saved:", err && err.message);
  }
}

function render(msg) {
  const t0 = performance.now();
  let json;
  try { json = renderJson(msg.name, msg.params); }
  catch (err) { json = JSON.stringify({ error: String(err && err.message || err).slice(-500) }); }
  postMessage({ type: "result", id: msg.id, json, ms: performance.now() - t0 });
}

self.onmessage = (event) => {
  const msg = event.data;
  if (msg.type === "init") {
    boot(msg).then(
      (ms) => { postMessage({ type: "ready", ms, marks }); queue.splice(0).forEach(render); },
      (err) => postMessage({ type: "failed", message: String(err && err.message || err) }),
    );
  } else if (msg.type === "render") {
    if (renderJson) render(msg); else queue.push(msg);
  } else if (msg.type === "idle") {
    saveSnapshot();
  }
};
