// The book's service worker, written by bookbuild (bookbuild/html/offline/sw.js, made into the
// site's sw.js by Workbox's injectManifest: see sw_build.cjs). What it does:
// * pages: network first; a page of this build is kept for offline reading as it is visited;
// * styles, scripts, figures, search index: stale-while-revalidate, only copies of this build kept;
// * the Python runtime (pyodide/): cache first, in a cache named by its content key, so a new
//   runtime drops the old one; fetched only when the reader keeps the book (then a widget's
//   requests for it are answered from there);
// * "Keep this book offline" (a message from a page): every file of this build (the manifest below,
//   with revisions) and the runtime, with progress; "forget" removes every cache of the book.
// A page that the network sends from a newer build than this worker's gets its files from the
// network, and the worker looks for its update: a page never mixes two builds' files.
// Every response it answers carries Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy
// (ISOLATION), which a static host cannot send: a page this worker controls is cross-origin
// isolated, so an exercise's Stop interrupts Python in place (assets/js/exercises.js). The book
// loads nothing from another origin, so require-corp (in every browser with cross-origin isolation,
// unlike credentialless) blocks nothing. The worker registers only for a reader who opens the
// Offline panel or the Editions page (assets/js/offline.js): a first visit is not isolated, and its
// Stop restarts Python as before.
importScripts("__WORKBOX__/workbox-core.prod.js", "__WORKBOX__/workbox-routing.prod.js",
              "__WORKBOX__/workbox-strategies.prod.js", "__WORKBOX__/workbox-precaching.prod.js");

const BUILD = "__BUILD__";
const SIZE = __SIZE__;                     // bytes of the kept book without the runtime
const RUNTIME = __RUNTIME__;               // {key, files: [site-relative URLs], bytes}
const MANIFEST = self.__WB_MANIFEST;
const SCOPE = new URL(self.registration.scope);
const BOOK = "bnf-book";                   // the kept book (Workbox precache: revisioned entries)
const CHOICE = "bnf-offline-choice";       // one entry when the reader chose to keep the book
const PAGES = `bnf-pages-${BUILD}`;
const ASSETS = `bnf-assets-${BUILD}`;
const RUNTIME_CACHE = `bnf-runtime-${RUNTIME.key}`;
const OURS = new Set([BOOK, CHOICE, PAGES, ASSETS, RUNTIME_CACHE]);

const { PrecacheController } = workbox.precaching;
const { NetworkFirst, StaleWhileRevalidate, CacheFirst } = workbox.strategies;

const REVISION = new Map(MANIFEST.map((e) => [new URL(e.url, SCOPE).href, e.revision]));
let progress = null;                       // {done, total} while a download runs
const newerClients = new Set();            // pages the network sent from a newer build
const cachedClients = new Set();           // pages served from a cache because the network failed

const broadcast = async (message) => {
  for (const client of await self.clients.matchAll({ includeUncontrolled: true, type: "window" })) client.postMessage(message);
};
const step = () => { if (progress) { progress.done += 1; broadcast({ type: "progress", ...progress }); } };
const book = new PrecacheController({ cacheName: BOOK, plugins: [{ cacheDidUpdate: step }] });
book.addToCacheList(MANIFEST);

async function hex(buffer) {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 32);
}
// The URL a file is kept under: no query or fragment, a folder's index.html.
function key(url) {
  const u = new URL(url);
  u.search = ""; u.hash = "";
  if (u.pathname.endsWith("/")) u.pathname += "index.html";
  return u.href;
}
// Whether a response is this build's copy of a file in the manifest.
async function ofThisBuild(url, response) {
  const want = REVISION.get(key(url));
  return Boolean(want) && want === await hex(await response.clone().arrayBuffer());
}
const onlyThisBuild = { cacheWillUpdate: async ({ request, response }) => (response && response.ok && await ofThisBuild(request.url, response) ? response : null) };
const byKey = { cacheKeyWillBeUsed: async ({ request }) => key(request.url) };
const kept = async (url) => book.matchPrecache(key(url));

const pages = new NetworkFirst({
  cacheName: PAGES,
  plugins: [byKey, onlyThisBuild, {
    fetchDidSucceed: async ({ request, response, event }) => {
      if (response.ok && response.type === "basic" && REVISION.size && !(await ofThisBuild(request.url, response))) {
        newerClients.add(event.resultingClientId);
        self.registration.update().catch(() => {});
      }
      return response;
    },
    cachedResponseWillBeUsed: async ({ cachedResponse, event }) => {
      if (cachedResponse) cachedClients.add(event.resultingClientId);
      return cachedResponse;
    },
    handlerDidError: async ({ request, event }) => {
      const hit = await kept(request.url);
      if (hit) { cachedClients.add(event.resultingClientId); return hit; }
      return new Response(OFFLINE_PAGE, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } });
    },
  }],
});
const assets = new StaleWhileRevalidate({ cacheName: ASSETS, plugins: [byKey, onlyThisBuild] });
const runtime = new CacheFirst({
  cacheName: RUNTIME_CACHE,
  plugins: [{
    cacheWillUpdate: async ({ response }) => (response && response.status === 200 ? response : null),
    // The worker asks for the gzipped wasm only from a host that does not compress it; offline,
    // the plain one kept beside it does (the worker checks the first bytes before un-gzipping).
    handlerDidError: async ({ request }) => (request.url.includes(".wasm.gz")
      ? caches.match(request.url.replace(/\.wasm\.gz.*$/, ".wasm"), { cacheName: RUNTIME_CACHE }) : undefined),
  }],
});

const ISOLATION = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
// ``response`` with the isolation headers (a copy: a response's headers cannot be changed). Left as
// it is: an opaque or redirect response (a navigation follows its redirect itself) and one that
// states its own policy.
function isolated(response) {
  if (!response || !response.status || response.type === "opaqueredirect" || response.headers.has("Cross-Origin-Embedder-Policy")) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
const answer = (event, response) => event.respondWith(Promise.resolve(response).then(isolated));

const OFFLINE_PAGE = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not kept offline</title><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem">
<h1>This page is not kept offline</h1><p>You are offline, and this page was not kept on this device.
Open the book again when you are online, and choose “Keep this book offline” to read all of it without a connection.</p>
<p><a href="${SCOPE.href}index.html">Back to the book’s first page</a></p></body></html>`;

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== SCOPE.origin || !url.pathname.startsWith(SCOPE.pathname) || url.pathname === `${SCOPE.pathname}sw.js`) return;
  if (url.pathname === `${SCOPE.pathname}offline.json`) {   // what this worker keeps, also offline
    answer(event, new Response(JSON.stringify({ build: BUILD, files: MANIFEST.length + RUNTIME.files.length,
      bytes: SIZE, runtime_bytes: RUNTIME.bytes, total_bytes: SIZE + RUNTIME.bytes }), { headers: { "Content-Type": "application/json" } }));
  } else if (request.mode === "navigate") {
    answer(event, pages.handle({ event, request }));
  } else if (url.pathname.startsWith(`${SCOPE.pathname}pyodide/`)) {
    // Kept in its cache when the reader kept the book; otherwise left to the browser (its HTTP and
    // compiled-wasm caches), as without a worker, so that a widget lands as fast as before.
    if (isKept === false) return;
    answer(event, (isKept === true ? Promise.resolve(true) : chosen())
      .then((k) => (k ? runtime.handle({ event, request }) : fetch(request))));
  } else if (newerClients.has(event.clientId)) {
    // a newer build's page: its files from the server, never a copy (the HTTP cache's either)
    answer(event, fetch(new Request(request, { cache: "no-cache" })));
  } else {
    answer(event, kept(request.url).then((hit) => hit || assets.handle({ event, request })));
  }
});

let isKept = null;                         // whether the reader kept the book (null: not read yet)
const chosen = async () => (isKept = (await caches.has(CHOICE)) && Boolean(await (await caches.open(CHOICE)).match("kept")));
chosen();

async function keep(event) {
  const cache = await caches.open(CHOICE);
  await cache.put("kept", new Response(JSON.stringify({ build: BUILD, at: Date.now() })));
  isKept = true;
  const have = new Set((await (await caches.open(BOOK)).keys()).map((r) => r.url));
  const rt = await caches.open(RUNTIME_CACHE);
  const runtimeMissing = [];
  for (const f of RUNTIME.files) if (!(await rt.match(new URL(f, SCOPE).href))) runtimeMissing.push(new URL(f, SCOPE).href);
  const keys = [...book.getURLsToCacheKeys().values()];
  progress = { done: keys.filter((k) => have.has(k)).length + RUNTIME.files.length - runtimeMissing.length,
               total: keys.length + RUNTIME.files.length };
  broadcast({ type: "progress", ...progress });
  try {
    // Workbox's precache fills its cache only during an install event: this one is the reader's.
    await book.install({ type: "install", waitUntil: (p) => event.waitUntil(p) });
    for (const url of runtimeMissing) {
      const [response, done] = runtime.handleAll({ event, request: new Request(url, { credentials: "same-origin" }) });
      await response; await done; step();
    }
    broadcast({ type: "kept", build: BUILD });
  } catch (err) {
    broadcast({ type: "keep-failed", message: String(err && err.message || err) });
  } finally {
    progress = null;
  }
}

async function forget() {
  isKept = false;
  for (const name of await caches.keys()) if (name.startsWith("bnf-")) await caches.delete(name);
  broadcast({ type: "forgotten" });
}

self.addEventListener("message", (event) => {
  const { type } = event.data || {};
  if (type === "status") {
    event.waitUntil(chosen().then((isKept) => event.source.postMessage({
      type: "status", build: BUILD, kept: isKept, bytes: SIZE + RUNTIME.bytes, progress,
      fromCache: cachedClients.has(event.source.id), newer: newerClients.has(event.source.id),
    })));
  } else if (type === "keep") {
    event.waitUntil(keep(event));
  } else if (type === "forget") {
    event.waitUntil(forget());
  } else if (type === "skip-waiting") {
    self.skipWaiting();
  }
});

self.addEventListener("install", (event) => {
  // A reader who kept the book gets the new build's changed files before this worker takes over.
  event.waitUntil(chosen().then((isKept) => (isKept ? book.install(event) : undefined)));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    if (await chosen()) await book.activate(event);     // drops the files no longer in the build
    for (const name of await caches.keys()) if (name.startsWith("bnf-") && !OURS.has(name)) await caches.delete(name);
    // No clients.claim(): a first visit stays as it would be without a worker (its widget's runtime
    // fetched by the browser alone); the worker serves the pages opened after it.
  })());
});
