// The book's service worker, made by Workbox's injectManifest from the built site's own file list.
// Usage: node sw_build.cjs <site dir> <sw source> <runtime json>; prints {count, size, build, workbox}.
// Revisions are SHA-256 (not Workbox's default MD5) so that the worker can check, with
// crypto.subtle, whether a page the network sends belongs to its own build.
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
// Only the two parts of workbox-build this uses: its index loads generateSW's bundler too, half
// of this script's time when the site has changed.
const { injectManifest } = require("workbox-build/build/inject-manifest");
const { copyWorkboxLibraries } = require("workbox-build/build/lib/copy-workbox-libraries");

const [site, src, runtimeJson] = process.argv.slice(2);
const MODULES = ["workbox-core", "workbox-routing", "workbox-strategies", "workbox-precaching"];

const sha = (file) => crypto.createHash("sha256").update(fs.readFileSync(path.join(site, file))).digest("hex").slice(0, 32);
const config = {
  globDirectory: site,
  globPatterns: ["**/*"],
  // Not in the kept book: the worker itself and its libraries, the hosts' header rules (_headers), the Python runtime (its own
  // versioned cache, fetched only when the reader asks or a widget loads it), the downloads
  // (PDF, EPUB: cached when the reader downloads them) and KaTeX's older font formats (every
  // browser that runs a service worker takes the woff2).
  globIgnores: ["sw.js", "offline.json", "_headers", "workbox-v*/**", "pyodide/**", "pdf/**", "**/*.pdf", "**/*.epub",
                "assets/katex/fonts/*.ttf", "assets/katex/fonts/*.woff"],
  maximumFileSizeToCacheInBytes: 64 * 1024 * 1024,
};
let manifestEntries = null;     // as Workbox lists them, with our revisions (one pass over the files)
const transform = async (entries) => {
  manifestEntries = entries.map((e) => ({ ...e, revision: sha(e.url) }));
  return { manifest: manifestEntries, warnings: [] };
};

(async () => {
  const runtime = JSON.parse(runtimeJson);
  for (const old of fs.readdirSync(site).filter((n) => /^workbox-v/.test(n))) fs.rmSync(path.join(site, old), { recursive: true });
  const dir = await copyWorkboxLibraries(site);
  // Only the production builds of the four modules the worker loads.
  for (const name of fs.readdirSync(path.join(site, dir))) {
    if (!MODULES.some((m) => name === `${m}.prod.js`)) fs.rmSync(path.join(site, dir, name));
  }
  const tmp = path.join(site, ".sw-src.js");
  fs.writeFileSync(tmp, fs.readFileSync(src, "utf8")
    .replaceAll("__WORKBOX__", () => dir)
    .replaceAll("__RUNTIME__", () => JSON.stringify(runtime)));
  let count, size;
  try {
    ({ count, size } = await injectManifest({ ...config, manifestTransforms: [transform], swSrc: tmp,
      swDest: path.join(site, "sw.js"), globIgnores: [...config.globIgnores, ".sw-src.js"] }));
  } finally {
    fs.rmSync(tmp);
  }
  // The build's name and size come from the list just made: put in after it (neither placeholder
  // is in the list itself).
  const build = crypto.createHash("sha256").update(JSON.stringify(manifestEntries)).digest("hex").slice(0, 16);
  const out = path.join(site, "sw.js");
  fs.writeFileSync(out, fs.readFileSync(out, "utf8").replaceAll("__BUILD__", () => build).replaceAll("__SIZE__", () => String(size)));
  process.stdout.write(JSON.stringify({ count, size, build, workbox: dir }));
})().catch((err) => { console.error(err && err.stack || err); process.exit(1); });
