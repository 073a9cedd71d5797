// Problems (filters/problem.lua): the reader types a number with its unit, Check grades it in the
// page (problem-units.js, the rules of calc.problems) as right, close (within the bands the
// problem shows) or wrong, and says why; "Show the worked answer" opens the working at any time,
// and a right or close answer opens it too. Nothing is sent. Progress is kept beside the
// exercises' (localStorage "book-exercises", entry = the problem's id: {kind: "problem", answer,
// verdict, solved, sawAnswer}), which the index's "Your exercises" block counts.
import { grade, unit as unitOf } from "./problem-units.js";

const STORE = "book-exercises";
const all = () => { try { return JSON.parse(localStorage.getItem(STORE)) || {}; } catch { return {}; } };
function put(id, patch) {
  const a = all();
  a[id] = { ...(a[id] || {}), kind: "problem", ...patch, page: location.pathname, updated: new Date().toISOString() };
  try { localStorage.setItem(STORE, JSON.stringify(a)); } catch { /* private mode: kept for this visit only */ }
}

const num = (x) => {
  const a = Math.abs(x);
  if (Number.isInteger(x) && a < 1e15) return x.toLocaleString("en-US").replace("-", "−");   // a count, exactly
  const s = a >= 1e5 || (a > 0 && a < 1e-3) ? x.toExponential(2) : Number(x.toPrecision(3)).toLocaleString("en-US", { maximumFractionDigits: 6 });
  return s.replace("-", "−");
};
const pct = (e) => (e * 100 >= 10 ? Math.round(e * 100) : Number((e * 100).toPrecision(2))) + "%";

function setup(box) {
  const id = box.dataset.problem, value = Number(box.dataset.value), unit = box.dataset.unit;
  const right = Number(box.dataset.right), close = Number(box.dataset.close), shown = box.dataset.shown;
  const form = box.querySelector(".problem-form"), input = box.querySelector(".problem-input");
  const result = box.querySelector(".problem-result"), show = box.querySelector(".problem-show");
  const worked = box.querySelector(".problem-worked");
  const inUnit = (x) => `${num(x)}${unit === "%" || unit === "×" ? unit : unit ? " " + unit : ""}`;

  function open(yes) {
    worked.hidden = !yes;
    show.setAttribute("aria-expanded", String(yes));
    show.textContent = yes ? "Hide the worked answer" : "Show the worked answer";
    if (yes) put(id, { sawAnswer: true });
  }
  const want = value / unitOf(unit).scale;              // the answer in its own unit
  function say(g) {
    result.className = "problem-result " + g.verdict;
    input.setAttribute("aria-invalid", String(g.verdict === "invalid"));
    const side = g.value > want ? "above" : "below";
    if (g.verdict === "invalid") {
      result.textContent = `Not read: ${g.message}.`;
    } else if (g.verdict === "right" && g.error === 0) {
      result.textContent = `Right: ${inUnit(g.value)}, exactly the answer.`;
    } else if (g.verdict === "right") {
      result.textContent = `Right: ${inUnit(g.value)} is within ${pct(g.error)} of the answer, ${shown}.`;
    } else if (g.verdict === "close") {
      result.textContent = `Close: ${inUnit(g.value)} is ${pct(g.error)} ${side} the answer, ${shown} ` +
        `(right is within ±${pct(right)}).`;
    } else {
      result.textContent = `Not yet: ${inUnit(g.value)} is more than ${pct(close)} ${side} the answer. ` +
        `Try again, or show the worked answer.`;
    }
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const g = grade(input.value, value, unit, right, close);
    say(g);
    if (g.verdict === "invalid") return;
    const saved = all()[id] || {};
    put(id, { answer: input.value, verdict: g.verdict, solved: Boolean(saved.solved || g.verdict === "right"),
      tries: (saved.tries || 0) + 1, title: box.querySelector(".problem-label").textContent });
    if (g.verdict === "right") box.classList.add("solved");
    if (g.verdict !== "wrong") open(true);
  });
  show.addEventListener("click", () => open(worked.hidden));

  const saved = all()[id];
  if (saved && saved.answer) {
    input.value = saved.answer;
    if (saved.solved) box.classList.add("solved");
    result.className = "problem-result";
    result.textContent = `Your last answer: ${saved.answer} (${saved.verdict}).`;
  }
}

document.querySelectorAll("section.problem[data-problem]").forEach(setup);
