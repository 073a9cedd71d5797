// The device probe's worker: measures this browser's GPU (WebGPU) and CPU (WebAssembly SIMD).
// Started by device-probe.js when the reader presses its button, never on its own.
//
//   page -> worker  {type: "run", wasm: URL, relaxed: URL, gpu: bool, why: "save-data" | "none" (no GPU), quick: bool,
//                    gpuCapMs: number (quick only: the GPU part's time cap, for the tests)}
//   worker -> page  {type: "progress", done, total, label}
//                   {type: "result", result}      result: see `run` below (BookDevice stores it)
//                   {type: "failed", message}
//
// Method (after bhouston/webgpu-bench and STREAM): each figure is timed over batches of work long
// enough to beat the browser's coarse timers (performance.now() around the work; for the GPU
// around queue.submit() and onSubmittedWorkDone(), since timestamp queries are often missing),
// after a warm-up batch, the batch is grown until it lasts targetMs; then batches are repeated until
// the last five agree within 3 % or the figure's time cap is spent. Read,
// write and copy are measured in turn, a batch of each per round, so that they see the same load. A figure is the median rate with the slowest and
// fastest batch as its spread. `quick` (the tests) shrinks arrays, batches and caps: the same code.
"use strict";

const MiB = 1 << 20;
let CFG = null;

function settings(quick, software = false) {
  if (quick) return { targetMs: 4, capMs: 60, streamsCapMs: 180, strideCapMs: 30, minSamples: 3, maxSamples: 5, cpuBytes: 4 * MiB, gpuBytes: MiB,
    gpuGroups: 16, fmaIters: 32, fmaGroups: 4, gpuDeadlineMs: 60000 };
  const full = { targetMs: 100, capMs: 900, streamsCapMs: 2400, strideCapMs: 450, minSamples: 5, maxSamples: 15, cpuBytes: 256 * MiB, gpuBytes: 256 * MiB,
    gpuGroups: 4096, fmaIters: 1024, fmaGroups: 1024, gpuDeadlineMs: 7000 };
  // A software adapter (a CPU emulating a GPU) reads a few hundred MB/s: small arrays, or one
  // batch alone would take seconds. Its figures are not a GPU's anyway.
  return software ? { ...full, gpuBytes: 8 * MiB, gpuGroups: 64, fmaIters: 64, fmaGroups: 16 } : full;
}

const sleep0 = () => new Promise((r) => setTimeout(r, 0));

// Time `batch(n)` (n units of work, returns milliseconds), growing n until a batch lasts targetMs,
// then sampling until stable or capMs. Returns {median, lo, hi, n: batches} in units per second.
async function calibrate(batch) {
  await batch(1);                                       // warm-up (compilation, first touch): not counted
  let n = 1, ms = await batch(1);
  while (ms < CFG.targetMs && n < 1 << 24) {
    n = Math.max(n * 2, Math.ceil(n * CFG.targetMs / Math.max(ms, 0.05) * 1.1));
    ms = await batch(n);
  }
  return { n, first: n / ms * 1000 };                   // the batch that reached the target counts
}
const stable = (rates) => {
  if (rates.length < CFG.minSamples) return false;
  const last = rates.slice(-CFG.minSamples), lo = Math.min(...last), hi = Math.max(...last);
  return (hi - lo) / hi < 0.03;
};
function summary(rates) {
  const sorted = [...rates].sort((a, b) => a - b), mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, lo: sorted[0], hi: sorted[sorted.length - 1], n: rates.length };
}
// Several figures measured in turn, a batch of each per round (read, write and copy see the same
// moments of a busy machine, so that they can be compared), until each is stable or the cap.
async function measureMany(batches, capMs) {
  const cal = [];
  for (const b of batches) cal.push(await calibrate(b));
  const start = performance.now(), rates = cal.map((c) => [c.first]);
  // The cap holds even before minSamples (a machine busy with other work gives fewer batches,
  // and the reader sees how many).
  while (performance.now() - start < capMs && rates[0].length < CFG.maxSamples && rates.some((r) => !stable(r))) {
    for (let i = 0; i < batches.length; i++) {
      const ms = await batches[i](cal[i].n);
      // Much faster than calibrated (a load that has gone; a timer of 0.1 ms, unisolated pages'
      // resolution, may even read 0): not a sample, and the next batch twice as long.
      if (ms < CFG.targetMs / 4) { cal[i].n *= 2; continue; }
      rates[i].push(cal[i].n / ms * 1000);
    }
    await sleep0();
  }
  return rates.map(summary);
}
const measure = async (batch, capMs = CFG.capMs) => (await measureMany([batch], capMs))[0];
const scale = (f, k, unit) => ({ median: f.median * k, lo: f.lo * k, hi: f.hi * k, n: f.n, unit });

// ------------------------------------------------------------------------------------------ CPU
// A host that sends .wasm without application/wasm breaks instantiateStreaming: then the bytes.
async function load(url, imports) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  if ((response.headers.get("content-type") || "").startsWith("application/wasm")) return WebAssembly.instantiateStreaming(response, imports);
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}
async function cpuProbe(urls, step) {
  // One memory for two arrays (copy reads one, writes the other), as large as the browser gives,
  // from 2 × 256 MiB down: larger than any CPU's last-level cache from 2 × 32 MiB.
  let bytes = CFG.cpuBytes, memory = null;
  for (; bytes >= 4 * MiB; bytes /= 2) {
    try { memory = new WebAssembly.Memory({ initial: (2 * bytes) / 65536 + 1 }); break; } catch { memory = null; }
  }
  if (!memory) throw new Error("could not allocate memory for the CPU probe");
  const { instance } = await load(urls.wasm, { env: { memory } });
  const k = instance.exports, a = 65536, b = a + bytes;
  let fma = k.madd, fused = false;
  try {   // relaxed SIMD's fused multiply-add, where the browser has it
    const r = await load(urls.relaxed, {});
    fma = r.instance.exports.fma; fused = true;
  } catch { /* base SIMD: separate multiply and add */ }
  k.write(a, bytes, 1, 1.0); k.write(b, bytes, 1, 1.0);   // touch every page before timing
  const timed = (f) => async (n) => { const t = performance.now(); f(n); return performance.now() - t; };
  const out = { bytes, threads: 1 };
  step("CPU: read, write, copy");
  const [rd, wr, cp] = await measureMany([timed((n) => k.read(a, bytes, n)), timed((n) => k.write(b, bytes, n, 2.0)),
    timed((n) => k.copy(b, a, bytes, n))], CFG.streamsCapMs);
  out.read = scale(rd, bytes, "B/s"); out.write = scale(wr, bytes, "B/s"); out.copy = scale(cp, 2 * bytes, "B/s");
  // 96 FLOP per round (12 chains × 4 lanes × a multiply and an add); 2^16 rounds a unit.
  step("CPU: multiply-add"); out.fma = { ...scale(await measure(timed((n) => fma(n * 65536))), 96 * 65536, "FLOP/s"), fused };
  return out;
}

// ------------------------------------------------------------------------------------------ GPU
const WG = 256;
const shader = (f16) => `${f16 ? "enable f16;" : ""}
struct P { n: u32, stride: u32, iters: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4f>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(${WG})
fn read_bw(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let total = nw.x * ${WG}u;
  var acc = vec4f(0.0);
  for (var i = g.x; i < p.n; i += total) { acc += src[i]; }
  if (acc.x == -1.0) { dst[g.x] = acc; }          // never (the data are >= 0): keeps the loads
}
@compute @workgroup_size(${WG})
fn write_bw(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let total = nw.x * ${WG}u;
  for (var i = g.x; i < p.n; i += total) { dst[i] = vec4f(f32(i)); }
}
@compute @workgroup_size(${WG})
fn copy_bw(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let total = nw.x * ${WG}u;
  for (var i = g.x; i < p.n; i += total) { dst[i] = src[i]; }
}
// One f32 per read, thread t's k-th at element ((k * threads + t) * stride) mod n: stride 1 is
// coalesced (neighbouring threads, neighbouring words), larger strides spread a warp's reads.
@compute @workgroup_size(${WG})
fn strided(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) nw: vec3u) {
  let total = nw.x * ${WG}u;
  let mask = p.n * 4u - 1u;
  var acc = 0.0;
  for (var k = 0u; k < p.iters; k++) {
    let e = ((k * total + g.x) * p.stride) & mask;
    acc += src[e >> 2u][e & 3u];
  }
  if (acc == -1.0) { dst[g.x] = vec4f(acc); }
}
// 8 independent chains of vec4 fused multiply-adds: 64 FLOP per thread per iteration.
@compute @workgroup_size(${WG})
fn fma32(@builtin(global_invocation_id) g: vec3u) {
  let m = vec4f(0.999); let c = vec4f(0.001);
  let s0 = f32(g.x & 7u) * 0.01;
  var a0 = vec4f(1.0 + s0); var a1 = a0 + 0.1; var a2 = a0 + 0.2; var a3 = a0 + 0.3;
  var a4 = a0 + 0.4; var a5 = a0 + 0.5; var a6 = a0 + 0.6; var a7 = a0 + 0.7;
  for (var i = 0u; i < p.iters; i++) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  let s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (s.x == -1.0) { dst[g.x] = s; }
}
${f16 ? `@compute @workgroup_size(${WG})
fn fma16(@builtin(global_invocation_id) g: vec3u) {
  let m = vec4h(0.999h); let c = vec4h(0.001h);
  let s0 = f16(g.x & 7u) * 0.01h;
  var a0 = vec4h(1.0h + s0); var a1 = a0 + 0.1h; var a2 = a0 + 0.2h; var a3 = a0 + 0.3h;
  var a4 = a0 + 0.4h; var a5 = a0 + 0.5h; var a6 = a0 + 0.6h; var a7 = a0 + 0.7h;
  for (var i = 0u; i < p.iters; i++) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  let s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (s.x == -1.0h) { dst[g.x] = vec4f(s); }
}` : ""}`;

const SOFTWARE = /swiftshader|llvmpipe|lavapipe|softpipe|microsoft basic render|warp/i;

async function gpuAdapter() {
  if (!self.navigator || !navigator.gpu) return { status: "none" };
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) return { status: "no-adapter" };
  const i = adapter.info || {};
  const info = { vendor: i.vendor || "", architecture: i.architecture || "", device: i.device || "", description: i.description || "" };
  const software = !!(i.isFallbackAdapter || adapter.isFallbackAdapter) || SOFTWARE.test(Object.values(info).join(" "));
  return { status: "ok", adapter, info, software };
}

async function gpuProbe(found, step, out) {
  const { adapter } = found;
  const lim = adapter.limits;
  let bytes = CFG.gpuBytes;
  while (bytes > 4 * MiB && (bytes > lim.maxStorageBufferBindingSize || bytes > lim.maxBufferSize)) bytes /= 2;
  const f16 = adapter.features.has("shader-f16");
  const device = await adapter.requestDevice({
    requiredFeatures: f16 ? ["shader-f16"] : [],
    requiredLimits: { maxStorageBufferBindingSize: bytes, maxBufferSize: bytes },
  });
  let lost = null;
  device.lost.then((info) => { lost = info.message || "the GPU device was lost"; });
  // A command buffer that fails validation runs nothing, in no time: any such error stops the probe.
  device.addEventListener("uncapturederror", (e) => { lost = `WebGPU error: ${e.error.message}`; });
  const module = device.createShaderModule({ code: shader(f16) });
  const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === "error");
  if (errors.length) throw new Error(`WGSL: ${errors.map((m) => `line ${m.lineNum}: ${m.message}`).join("; ")}`);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const src = device.createBuffer({ size: bytes, usage }), dst = device.createBuffer({ size: bytes, usage });
  const groups = Math.min(CFG.gpuGroups, lim.maxComputeWorkgroupsPerDimension);
  const sink = device.createBuffer({ size: Math.max(groups, CFG.fmaGroups) * WG * 16, usage });
  const n = bytes / 16;
  const uniform = (stride, iters) => {
    const u = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(u, 0, new Uint32Array([n, stride, iters, 0]));
    return u;
  };
  const pipelines = {};
  const pipeline = (entry) => (pipelines[entry] ??= device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: entry } }));

  // n dispatches of `entry` in one submission, timed to onSubmittedWorkDone().
  const kernel = (entry, out, groupsX, params) => {
    const pl = pipeline(entry), entries = [];
    const want = { read_bw: [0, 1, 2], write_bw: [1, 2], copy_bw: [0, 1, 2], strided: [0, 1, 2], fma32: [1, 2], fma16: [1, 2] }[entry];
    const buf = { 0: src, 1: out, 2: params };
    for (const b of want) entries.push({ binding: b, resource: { buffer: buf[b] } });
    const group = device.createBindGroup({ layout: pl.getBindGroupLayout(0), entries });
    return async (count) => {
      const enc = device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pl); pass.setBindGroup(0, group);
      for (let i = 0; i < count; i++) pass.dispatchWorkgroups(groupsX);
      pass.end();
      const t = performance.now();
      device.pushErrorScope("validation");
      device.queue.submit([enc.finish()]);
      const error = await device.popErrorScope();
      if (error) throw new Error(`WebGPU validation: ${error.message}`);
      await device.queue.onSubmittedWorkDone();
      if (lost) throw new Error(lost);
      return performance.now() - t;
    };
  };
  Object.assign(out, { adapter: found.info, software: found.software, f16, bytes, workgroup: WG, strided: [] });
  try {
    const plain = uniform(1, 0);
    await kernel("write_bw", src, groups, plain)(1);          // the data read are not zeros
    step("GPU: read, write, copy");
    const [rd, wr, cp] = await measureMany([kernel("read_bw", sink, groups, plain), kernel("write_bw", dst, groups, plain),
      kernel("copy_bw", dst, groups, plain)], CFG.streamsCapMs);
    out.read = scale(rd, bytes, "B/s"); out.write = scale(wr, bytes, "B/s"); out.copy = scale(cp, 2 * bytes, "B/s");
    const fmaParams = uniform(1, CFG.fmaIters), flop = CFG.fmaGroups * WG * CFG.fmaIters * 64;
    step("GPU: FP32 FMA"); out.fma32 = scale(await measure(kernel("fma32", sink, CFG.fmaGroups, fmaParams)), flop, "FLOP/s");
    if (f16) { step("GPU: FP16 FMA"); out.fma16 = scale(await measure(kernel("fma16", sink, CFG.fmaGroups, fmaParams)), flop, "FLOP/s"); }
    // The strided-read curve: useful bytes (4 per read) per second against the stride in words.
    const reads = 16, threads = groups * WG;
    for (const stride of [1, 2, 4, 8, 16, 32, 64]) {
      step(`GPU: strided read, stride ${stride}`);
      const f = await measure(kernel("strided", sink, groups, uniform(stride, reads)), CFG.strideCapMs);
      out.strided.push({ stride, ...scale(f, threads * reads * 4, "B/s") });
    }
  } finally {
    device.destroy();
  }
  return out;
}

// ------------------------------------------------------------------------------------------ run
async function run(msg) {
  CFG = settings(!!msg.quick);
  const gpuCap = msg.quick && Number.isFinite(msg.gpuCapMs) ? msg.gpuCapMs : null;   // tests: the cap's own path
  const t0 = performance.now();
  const found = msg.gpu ? await gpuAdapter().catch((e) => ({ status: "error", message: String(e && e.message || e) }))
    : { status: msg.why || "none" };          // "save-data", or "none": the page has no WebGPU
  const total = 2 + (found.status === "ok" ? 2 + 7 + (found.adapter.features.has("shader-f16") ? 1 : 0) : 0);
  let done = 0;
  // The GPU part stops at its time cap (the CPU part, after it, has its own caps per figure).
  // The cap counts from the GPU's first figure (after the adapter, device and shaders are ready).
  let gpuStart = 0;
  const step = (label) => {
    if (label.startsWith("GPU") && !gpuStart) gpuStart = performance.now();
    else if (label.startsWith("GPU") && performance.now() - gpuStart > CFG.gpuDeadlineMs) {
      throw Object.assign(new Error(`the GPU part reached its ${CFG.gpuDeadlineMs / 1000} s cap before ${label.slice(5)}`), { cap: true });
    }
    postMessage({ type: "progress", done: done++, total, label });
  };
  const result = { version: 1, date: new Date().toISOString(), browser: navigator.userAgent, quick: !!msg.quick, gpuStatus: found.status };
  if (found.status === "ok") {
    CFG = settings(!!msg.quick, found.software);
    if (gpuCap !== null) CFG.gpuDeadlineMs = gpuCap;
    const gpu = {};
    try { result.gpu = await gpuProbe(found, step, gpu); }
    catch (e) {
      // At the time cap the figures measured so far are kept (and the reader told what is missing).
      if (e && e.cap && gpu.read) { result.gpu = gpu; gpu.stopped = e.message; }
      else { result.gpuStatus = "error"; result.gpuError = String(e && e.message || e); }
    }
    done = Math.max(done, total - 2);
  } else if (found.message) result.gpuError = found.message;
  result.cpu = await cpuProbe(msg, step);
  result.elapsedMs = performance.now() - t0;
  postMessage({ type: "progress", done: total, total, label: "done" });
  postMessage({ type: "result", result });
}

onmessage = ({ data }) => {
  if (data.type === "run") run(data).catch((e) => postMessage({ type: "failed", message: String(e && e.message || e) }));
};
