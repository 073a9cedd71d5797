// The index page's "Your exercises" block (calc.exercises.progress_html): how many of each
// chapter's exercises this browser has solved, and the reader's own copy of their progress.
// The progress is assets/js/exercises.js's localStorage entry "book-exercises" ({exercise id:
// {code, solved, ...}}, and assets/js/problems.js's entries for problems: {problem id: {kind: "problem",
// answer, verdict, solved, tries}}). Export writes it to a file, Import merges a file back (an exercise solved
// in either stays solved; the newer code wins), Reset forgets every exercise after a confirmation.
// Nothing is sent anywhere.
(() => {
  "use strict";
  const STORE = "book-exercises";
  const box = document.querySelector(".exercise-progress");
  if (!box) return;
  const status = box.querySelector(".exercise-progress-status");
  const read = () => { try { return JSON.parse(localStorage.getItem(STORE)) || {}; } catch { return {}; } };
  const write = (all) => { try { localStorage.setItem(STORE, JSON.stringify(all)); return true; } catch { return false; } };

  function show() {
    const all = read();
    for (const li of box.querySelectorAll("li[data-exercises]")) {
      const ids = li.dataset.exercises.split(/\s+/).filter(Boolean);
      const solved = ids.filter((id) => all[id] && all[id].solved).length;
      const started = ids.filter((id) => all[id] && all[id].code !== undefined).length;
      const count = li.querySelector(".exercise-progress-count");
      if (count) count.textContent = `${solved} of ${ids.length} solved` + (started > solved ? `, ${started - solved} started` : "");
      // problems (assets/js/problems.js): right once, or tried
      const pids = (li.dataset.problems || "").split(/\s+/).filter(Boolean);
      const right = pids.filter((id) => all[id] && all[id].solved).length;
      const tried = pids.filter((id) => all[id] && all[id].tries).length;
      const pcount = li.querySelector(".problem-progress-count");
      if (pcount) pcount.textContent = `${right} of ${pids.length} problems right` + (tried > right ? `, ${tried - right} tried` : "");
    }
  }

  box.querySelector(".exercise-export").addEventListener("click", () => {
    const blob = new Blob([JSON.stringify({ book: "bytes-not-flops", exercises: read() }, null, 1)], { type: "application/json" });
    const a = Object.assign(document.createElement("a"), { href: URL.createObjectURL(blob), download: "bytes-not-flops-exercises.json" });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    status.textContent = "Your progress was saved to bytes-not-flops-exercises.json.";
  });

  const input = box.querySelector(".exercise-import");
  box.querySelector(".exercise-import-open").addEventListener("click", () => input.click());
  input.addEventListener("change", async () => {
    const file = input.files && input.files[0];
    if (!file) return;
    try {
      const data = JSON.parse(await file.text());
      const incoming = data && data.exercises;
      if (!incoming || typeof incoming !== "object") throw new Error("this is not a progress file of this book");
      const all = read();
      let n = 0;
      for (const [id, v] of Object.entries(incoming)) {
        if (!/^(ex|prob)-[\w-]+$/.test(id) || !v || typeof v !== "object") continue;
        const mine = all[id] || {};
        const newer = !mine.updated || (v.updated && v.updated > mine.updated);
        all[id] = { ...(newer ? { ...mine, ...v } : { ...v, ...mine }), solved: Boolean(mine.solved || v.solved) };
        n++;
      }
      status.textContent = write(all) ? `Imported ${n} exercise${n === 1 ? "" : "s"}.` : "This browser does not let the page store anything.";
    } catch (err) {
      status.textContent = `Nothing imported: ${err.message}.`;
    }
    input.value = "";
    show();
  });

  box.querySelector(".exercise-reset-all").addEventListener("click", () => {
    if (!window.confirm("Forget your code, solved exercises and answered problems in this browser, for the whole book?")) return;
    try { localStorage.removeItem(STORE); } catch { /* nothing stored */ }
    status.textContent = "Every exercise is back to its starting code.";
    show();
  });
  show();
})();
