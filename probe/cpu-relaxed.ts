// The probe's fused multiply-add, in its own module: relaxed SIMD's f32x4.relaxed_madd (fused on
// CPUs with FMA), which a browser without relaxed SIMD cannot even load; the worker then keeps
// cpu.ts's separate multiply and add. Same chains and FLOP count as cpu.ts's madd: 96 per round.
export function fma(iters: i32): f32 {
  const m = f32x4.splat(0.999), c = f32x4.splat(0.001);
  let x0 = f32x4.splat(1.0), x1 = f32x4.splat(1.1), x2 = f32x4.splat(1.2), x3 = f32x4.splat(1.3);
  let x4 = f32x4.splat(1.4), x5 = f32x4.splat(1.5), x6 = f32x4.splat(1.6), x7 = f32x4.splat(1.7);
  let x8 = f32x4.splat(1.8), x9 = f32x4.splat(1.9), xa = f32x4.splat(2.0), xb = f32x4.splat(2.1);
  for (let i = 0; i < iters; i++) {
    x0 = f32x4.relaxed_madd(x0, m, c); x1 = f32x4.relaxed_madd(x1, m, c);
    x2 = f32x4.relaxed_madd(x2, m, c); x3 = f32x4.relaxed_madd(x3, m, c);
    x4 = f32x4.relaxed_madd(x4, m, c); x5 = f32x4.relaxed_madd(x5, m, c);
    x6 = f32x4.relaxed_madd(x6, m, c); x7 = f32x4.relaxed_madd(x7, m, c);
    x8 = f32x4.relaxed_madd(x8, m, c); x9 = f32x4.relaxed_madd(x9, m, c);
    xa = f32x4.relaxed_madd(xa, m, c); xb = f32x4.relaxed_madd(xb, m, c);
  }
  const s = f32x4.add(f32x4.add(f32x4.add(x0, x1), f32x4.add(x2, x3)),
                      f32x4.add(f32x4.add(f32x4.add(x4, x5), f32x4.add(x6, x7)),
                                f32x4.add(f32x4.add(x8, x9), f32x4.add(xa, xb))));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3);
}
