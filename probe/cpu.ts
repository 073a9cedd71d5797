// The book's CPU probe: WebAssembly SIMD kernels for memory bandwidth and multiply-add throughput.
// Built with AssemblyScript (npm `assemblyscript`, see package.json "build:probe") into
// assets/wasm/cpu-probe.wasm; assets/js/device-probe-worker.js times them.
// Memory is the page's (--importMemory): the worker sizes it to arrays larger than any last-level
// cache and passes byte offsets. Sizes are multiples of 64 bytes; pointers 16-byte aligned.

// Sum of every float in [ptr, ptr + bytes), `reps` times: four independent v128 accumulators, so
// the loads, not the adds' latency, set the pace. Returned so that the work cannot be removed.
export function read(ptr: usize, bytes: usize, reps: i32): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  const end = ptr + bytes;
  for (let r = 0; r < reps; r++) {
    for (let p = ptr; p < end; p += 64) {
      a0 = f32x4.add(a0, v128.load(p));
      a1 = f32x4.add(a1, v128.load(p, 16));
      a2 = f32x4.add(a2, v128.load(p, 32));
      a3 = f32x4.add(a3, v128.load(p, 48));
    }
  }
  const s = f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3);
}

// Fills [ptr, ptr + bytes) with `value`, `reps` times.
export function write(ptr: usize, bytes: usize, reps: i32, value: f32): void {
  const v = f32x4.splat(value);
  const end = ptr + bytes;
  for (let r = 0; r < reps; r++) {
    for (let p = ptr; p < end; p += 64) {
      v128.store(p, v);
      v128.store(p, v, 16);
      v128.store(p, v, 32);
      v128.store(p, v, 48);
    }
  }
}

// Copies `bytes` from src to dst, `reps` times (STREAM's Copy: one read and one write per byte).
export function copy(dst: usize, src: usize, bytes: usize, reps: i32): void {
  const end = src + bytes;
  for (let r = 0; r < reps; r++) {
    let d = dst;
    for (let p = src; p < end; p += 64) {
      const x0 = v128.load(p), x1 = v128.load(p, 16), x2 = v128.load(p, 32), x3 = v128.load(p, 48);
      v128.store(d, x0);
      v128.store(d, x1, 16);
      v128.store(d, x2, 32);
      v128.store(d, x3, 48);
      d += 64;
    }
  }
}

// `iters` rounds of a multiply and an add on twelve independent 4-lane accumulators: 96 FLOP per
// round (a multiply and an add per lane). WebAssembly's base SIMD has no fused multiply-add, so
// this is a separate multiply and add; twelve chains cover their latency. x ← x·0.999 + 0.001
// stays near 1 (no overflow, no subnormals).
export function madd(iters: i32): f32 {
  const m = f32x4.splat(0.999), c = f32x4.splat(0.001);
  let x0 = f32x4.splat(1.0), x1 = f32x4.splat(1.1), x2 = f32x4.splat(1.2), x3 = f32x4.splat(1.3);
  let x4 = f32x4.splat(1.4), x5 = f32x4.splat(1.5), x6 = f32x4.splat(1.6), x7 = f32x4.splat(1.7);
  let x8 = f32x4.splat(1.8), x9 = f32x4.splat(1.9), xa = f32x4.splat(2.0), xb = f32x4.splat(2.1);
  for (let i = 0; i < iters; i++) {
    x0 = f32x4.add(f32x4.mul(x0, m), c); x1 = f32x4.add(f32x4.mul(x1, m), c);
    x2 = f32x4.add(f32x4.mul(x2, m), c); x3 = f32x4.add(f32x4.mul(x3, m), c);
    x4 = f32x4.add(f32x4.mul(x4, m), c); x5 = f32x4.add(f32x4.mul(x5, m), c);
    x6 = f32x4.add(f32x4.mul(x6, m), c); x7 = f32x4.add(f32x4.mul(x7, m), c);
    x8 = f32x4.add(f32x4.mul(x8, m), c); x9 = f32x4.add(f32x4.mul(x9, m), c);
    xa = f32x4.add(f32x4.mul(xa, m), c); xb = f32x4.add(f32x4.mul(xb, m), c);
  }
  const s = f32x4.add(f32x4.add(f32x4.add(x0, x1), f32x4.add(x2, x3)),
                      f32x4.add(f32x4.add(f32x4.add(x4, x5), f32x4.add(x6, x7)),
                                f32x4.add(f32x4.add(x8, x9), f32x4.add(xa, xb))));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3);
}
