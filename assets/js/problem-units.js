// Reading a reader's answer to a problem ("295", "0.3 kFLOP/byte", "1.2 TB/s", "80 GiB") and
// grading it: the same rules as calc/problems.py's unit, parse and grade, which the build uses;
// tests/fixtures/problem_units.json holds the cases both are tested on (tests/calc/test_problems.py
// runs them through this file with node). Nothing here touches the page.

const DIMS = ["FLOP", "B", "s", "J", "cycle"];
const d = (o = {}) => DIMS.map((k) => o[k] || 0);
const NONE = d();
const ATOMS = new Map();
for (const [names, scale, dim] of [
  [["FLOP", "FLOPs", "flop", "Flop", "Flops", "OP", "OPs", "op", "ops"], 1, d({ FLOP: 1 })],
  [["FLOPS", "flops"], 1, d({ FLOP: 1, s: -1 })],
  [["B", "byte", "bytes", "Byte", "Bytes"], 1, d({ B: 1 })],
  [["b", "bit", "bits"], 0.125, d({ B: 1 })],
  [["s", "sec", "secs", "second", "seconds"], 1, d({ s: 1 })],
  [["min", "mins", "minute", "minutes"], 60, d({ s: 1 })],
  [["h", "hr", "hrs", "hour", "hours"], 3600, d({ s: 1 })],
  [["day", "days"], 86400, d({ s: 1 })],
  [["Hz"], 1, d({ s: -1 })],
  [["J", "joule", "joules"], 1, d({ J: 1 })],
  [["W", "watt", "watts"], 1, d({ J: 1, s: -1 })],
  [["cycle", "cycles", "clk", "clock", "clocks"], 1, d({ cycle: 1 })],
  [["%", "percent"], 0.01, NONE],
  [["x", "×", "times"], 1, NONE],
  [["thousand"], 1e3, NONE], [["million"], 1e6, NONE], [["billion"], 1e9, NONE], [["trillion"], 1e12, NONE],
]) for (const n of names) ATOMS.set(n, [scale, dim]);
for (const n of ["token", "tok", "GPU", "param", "parameter", "element", "elem", "request", "req",
  "sequence", "seq", "thread", "warp", "block", "SM", "node", "layer", "head", "step",
  "user", "sector", "transaction", "instruction", "accelerator", "chip", "device",
  "server", "word", "row", "tile", "lane", "bank", "batch", "item", "value", "number"]) {
  ATOMS.set(n, [1, NONE]); ATOMS.set(n + "s", [1, NONE]);
}
for (const n of ["batches", "micro-batch", "micro-batches", "microbatch", "microbatches", "stage", "stages",
  "sample", "samples", "image", "images", "expert", "experts", "iteration", "iterations",
  "way", "ways", "pass", "passes", "wavefront", "wavefronts", "column", "columns", "replay", "replays",
  "wave", "waves", "grid", "grids", "kernel", "kernels", "launch", "launches", "cell", "cells"]) ATOMS.set(n, [1, NONE]);
/** Every unit word this module knows, with its scale and dimension (the test compares it with calc.problems'). */
export const ATOM_TABLE = Object.fromEntries([...ATOMS].map(([k, [s, dm]]) => [k, [s, dm]]));
const LOWER = new Map();
for (const [k, v] of ATOMS) if (k !== "b" && k !== "B") LOWER.set(k.toLowerCase(), v);
for (const k of ["byte", "bytes"]) LOWER.set(k, ATOMS.get("B"));
for (const k of ["bit", "bits"]) LOWER.set(k, ATOMS.get("b"));
const PREFIX_WORDS = [["kilo", 1e3], ["mega", 1e6], ["giga", 1e9], ["tera", 1e12], ["peta", 1e15], ["exa", 1e18],
  ["milli", 1e-3], ["micro", 1e-6], ["nano", 1e-9], ["pico", 1e-12],
  ["kibi", 2 ** 10], ["mebi", 2 ** 20], ["gibi", 2 ** 30], ["tebi", 2 ** 40]];
const PREFIXES = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50,
  k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  m: 1e-3, u: 1e-6, "µ": 1e-6, "μ": 1e-6, n: 1e-9, p: 1e-12, f: 1e-15 };
const PREFIX_KEYS = Object.keys(PREFIXES).sort((a, b) => b.length - a.length);
const same = (a, b) => a.every((x, i) => x === b[i]);
const key = (dim) => dim.join(",");
const KINDS = new Map([
  [NONE, "a plain number"], [d({ B: 1 }), "a size in bytes"], [d({ s: 1 }), "a time"],
  [d({ FLOP: 1 }), "a count of FLOPs"], [d({ FLOP: 1, s: -1 }), "a FLOP rate"], [d({ B: 1, s: -1 }), "a bandwidth"],
  [d({ FLOP: 1, B: -1 }), "an intensity (FLOP per byte)"], [d({ s: -1 }), "a rate per second"],
  [d({ J: 1 }), "an energy"], [d({ J: 1, s: -1 }), "a power"], [d({ cycle: 1 }), "a count of cycles"],
  [d({ J: 1, FLOP: -1 }), "an energy per FLOP"], [d({ J: 1, B: -1 }), "an energy per byte"],
].map(([k, v]) => [key(k), v]));

export class UnitError extends Error {}

function dimText(dim) {
  const top = [], bottom = [];
  DIMS.forEach((n, i) => {
    if (dim[i] > 0) top.push(n + (dim[i] !== 1 ? `^${dim[i]}` : ""));
    if (dim[i] < 0) bottom.push(n + (dim[i] !== -1 ? `^${-dim[i]}` : ""));
  });
  if (!top.length && !bottom.length) return "a plain number";
  return (top.join("·") || "1") + (bottom.length ? "/" + bottom.join("·") : "");
}
export const describe = (dim) => KINDS.get(key(dim)) || "in " + dimText(dim);

function factor(word) {
  const m = /^(.+?)\^?([-+]?\d)?$/.exec(word);
  let base = m[1];
  const power = m[2] ? parseInt(m[2], 10) : 1;
  if (base.endsWith("^")) base = base.slice(0, -1);
  let found = ATOMS.get(base);
  if (!found) {
    for (const [pw, v] of PREFIX_WORDS) {
      const rest = base.slice(pw.length).toLowerCase();
      if (base.toLowerCase().startsWith(pw) && LOWER.has(rest)) { const [s, dm] = LOWER.get(rest); found = [v * s, dm]; break; }
    }
  }
  if (!found) {
    for (const p of PREFIX_KEYS) {
      const rest = base.slice(p.length);
      if (base.startsWith(p) && ATOMS.has(rest) && !same(ATOMS.get(rest)[1], NONE)) {
        const [s, dm] = ATOMS.get(rest); found = [PREFIXES[p] * s, dm]; break;
      }
    }
  }
  if (!found) throw new UnitError(`unknown unit “${base}” (units are case-sensitive: GB is gigabytes, Gb gigabits, ms milliseconds, MB/s a bandwidth)`);
  return [found[0] ** power, found[1].map((x) => x * power)];
}

export function unit(text) {
  let t = text.trim();
  t = t.replace(/\s+per\s+/g, "/").replace(/²/g, "^2").replace(/³/g, "^3").replace(/[⋅·]/g, "*");
  t = t.replace(/\s*([/*])\s*/g, "$1");
  if (!t) return { text, scale: 1, dim: NONE };
  if (/\s/.test(t)) throw new UnitError(`cannot read the unit “${text.trim()}” (write it as, say, GB/s or FLOP/B)`);
  let scale = 1, dim = d();
  for (const [, op, word] of t.matchAll(/(^|[/*])([^/*]+)/g)) {
    const [s, dm] = factor(word);
    const sign = op === "/" ? -1 : 1;
    scale *= s ** sign;
    dim = dim.map((a, i) => a + sign * dm[i]);
  }
  if (t.replace(/(^|[/*])([^/*]+)/g, "")) throw new UnitError(`cannot read the unit “${text.trim()}”`);
  return { text, scale, dim };
}

const NUMBER = /^\s*(?:~|≈|about\s+)?\s*([-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|[-+−]?\.\d+)(?:\s*(?:[eE]([-+−]?\d+)|(?:×|x|\*)\s*10\s*\^\s*([-+−]?\d+)))?\s*(.*?)\s*$/;

export function parse(text) {
  if (!text.trim()) throw new UnitError("type a number first, for example 295 or 1.2 TB/s");
  const m = NUMBER.exec(text.replace(/[\u00a0\u202f]/g, " "));
  if (!m) throw new UnitError(`“${text.trim()}” does not start with a number`);
  let num = parseFloat(m[1].replace(/,/g, "").replace("−", "-"));
  const exp = m[2] || m[3];
  if (exp) num *= 10 ** parseInt(exp.replace("−", "-"), 10);
  if (!m[4]) return [num, null];
  const typed = unit(m[4]);
  return [num * typed.scale, typed];
}

/** The page's verdict, as calc.problems.grade: {verdict: right|close|wrong|invalid, value, error, message}. */
export function grade(text, value, unitText, right, close) {
  const want = unit(unitText);
  let got, typed;
  try { [got, typed] = parse(text); } catch (e) {
    if (e instanceof UnitError) return { verdict: "invalid", value: null, error: null, message: e.message };
    throw e;
  }
  if (typed === null) got *= want.scale;
  else if (!same(typed.dim, want.dim)) {
    return { verdict: "invalid", value: null, error: null,
      message: `“${typed.text.trim()}” is ${describe(typed.dim)}, but this answer is ${describe(want.dim)}` +
        (unitText ? `: give it in ${unitText}` : "") };
  }
  const err = value ? Math.abs(got - value) / Math.abs(value) : Math.abs(got);
  const verdict = err <= right * (1 + 1e-9) ? "right" : err <= close * (1 + 1e-9) ? "close" : "wrong";
  return { verdict, value: got / want.scale, error: err, message: "" };
}
