// Predict-then-reveal.
//
// A `.callout.predict` whose body holds a list becomes a set of radio choices with a
// "Lock in my answer" button; without a list it gets a "Your prediction" text box and a
// "Commit" button. The next collapsible callout after it (the reveal) stays shut until the
// reader commits; then it opens and the chosen option is marked. Answers are remembered
// per page in localStorage; "Change my answer" takes it back. Printing shows everything
// (glossary.css). Glossary terms' popovers are book.js's.
// The chapter map's figure becomes inline SVG so that its boxes are links.
(() => {
  "use strict";
  const store = {
    get(k) { try { return JSON.parse(localStorage.getItem(k)); } catch { return null; } },
    set(k, v) { try { localStorage.setItem(k, JSON.stringify(v)); } catch { /* private mode */ } },
  };
  const LOCKED = "Choose an answer first";

  function el(tag, props = {}, ...children) {
    const node = Object.assign(document.createElement(tag), props);
    node.append(...children);
    return node;
  }

  // The reveal: the next callout after the predict box, if it is a collapsible one.
  function revealOf(box) {
    for (let n = box.nextElementSibling; n; n = n.nextElementSibling) {
      if (!n.classList.contains("callout")) continue;
      if (n.tagName === "DETAILS") return n;
      if (n.querySelector(":scope .callout-collapse")) return n; // Quarto's own HTML
      return null;
    }
    return null;
  }

  // Lock a reveal: its title says why, and it refuses to open until unlock().
  function lock(reveal) {
    const summary = reveal.tagName === "DETAILS" ? reveal.querySelector(":scope > summary")
      : reveal.querySelector(".callout-header");
    if (!summary) return { unlock() {} };
    reveal.open = false;
    reveal.classList.add("predict-locked");
    summary.setAttribute("aria-disabled", "true");
    const note = el("span", { className: "predict-lock-note", textContent: LOCKED });
    summary.append(note);
    let locked = true;
    const stop = (e) => {
      if (!locked) return;
      if (e.type === "keydown" && e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      e.stopPropagation();
    };
    summary.addEventListener("click", stop, true);
    summary.addEventListener("keydown", stop, true);
    reveal.addEventListener("toggle", () => { if (locked && reveal.open) reveal.open = false; });
    return {
      unlock(open) {
        locked = false;
        reveal.classList.remove("predict-locked");
        summary.removeAttribute("aria-disabled");
        note.remove();
        if (!open) return;
        if (reveal.tagName === "DETAILS") reveal.open = true;
        else reveal.querySelector(".callout-collapse")?.classList.add("show");
      },
    };
  }

  function setupChoices(box, list, key, reveal, n) {
    const question = box.querySelector(".callout-body > p");
    if (question && !question.id) question.id = `predict-q-${n}`;
    const group = el("fieldset", { className: "predict-choices" });
    if (question) group.setAttribute("aria-labelledby", question.id);
    else group.append(el("legend", { textContent: "Your prediction" }));
    const inputs = [...list.children].map((li, i) => {
      const input = el("input", { type: "radio", name: `predict-${n}`, value: String(i) });
      const text = el("span", { className: "predict-option" });
      text.append(...li.childNodes);
      group.append(el("label", { className: "predict-choice" }, input, text));
      return input;
    });
    const button = el("button", { type: "button", className: "predict-commit", textContent: "Lock in my answer", disabled: true });
    const status = el("p", { className: "predict-status", role: "status" });
    const change = el("button", { type: "button", className: "predict-change", textContent: "Change my answer", hidden: true });
    list.replaceWith(group);
    group.after(el("div", { className: "predict-actions" }, button, change, status));
    group.addEventListener("change", () => { button.disabled = false; });

    function commit(choice, open) {
      const input = inputs[choice];
      if (!input) return;
      input.checked = true;
      for (const i of inputs) i.disabled = true;
      input.closest("label").classList.add("chosen");
      input.closest("label").append(el("span", { className: "predict-badge", textContent: "your answer" }));
      button.hidden = true;
      change.hidden = false;
      box.classList.add("predict-done");
      status.textContent = !reveal ? "Answer locked in." : open ? "Answer locked in: the reveal below is open."
        : "Your earlier answer: the reveal below is unlocked.";
      reveal?.gate.unlock(open);
    }
    button.addEventListener("click", () => {
      const picked = inputs.findIndex((i) => i.checked);
      if (picked < 0) return;
      store.set(key, { choice: picked });
      commit(picked, true);
    });
    change.addEventListener("click", () => {
      for (const i of inputs) i.disabled = false;
      for (const l of group.querySelectorAll(".chosen")) l.classList.remove("chosen");
      for (const b of group.querySelectorAll(".predict-badge")) b.remove();
      box.classList.remove("predict-done");
      change.hidden = true;
      button.hidden = false;
      button.disabled = false;
      status.textContent = "Choose again, then lock in your answer.";
      (inputs.find((i) => i.checked) || inputs[0]).focus();
    });
    const saved = store.get(key);
    if (saved && Number.isInteger(saved.choice)) commit(saved.choice, false);
  }

  function setupText(box, key, reveal, n) {
    const body = box.querySelector(".callout-body") || box;
    const input = el("input", { type: "text", id: `predict-text-${n}`, className: "predict-text", autocomplete: "off" });
    const button = el("button", { type: "button", className: "predict-commit", textContent: "Commit" });
    const status = el("p", { className: "predict-status", role: "status" });
    const change = el("button", { type: "button", className: "predict-change", textContent: "Change my prediction", hidden: true });
    body.append(el("div", { className: "predict-actions" },
      el("label", { htmlFor: input.id, textContent: "Your prediction" }), input, button, change, status));
    change.addEventListener("click", () => {
      input.readOnly = false;
      box.classList.remove("predict-done");
      change.hidden = true;
      button.hidden = false;
      status.textContent = "Edit your prediction, then commit it.";
      input.focus();
    });
    function commit(text, open) {
      input.value = text;
      input.readOnly = true;
      button.hidden = true;
      change.hidden = false;
      box.classList.add("predict-done");
      status.textContent = open || !reveal ? "Prediction committed." : "Your earlier prediction: the reveal below is unlocked.";
      reveal?.gate.unlock(open);
    }
    const go = () => {
      const text = input.value.trim();
      if (!text) { status.textContent = "Write a prediction first."; input.focus(); return; }
      store.set(key, { text });
      commit(text, true);
    };
    button.addEventListener("click", go);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); go(); } });
    const saved = store.get(key);
    if (saved && typeof saved.text === "string") commit(saved.text, false);
  }

  // An answer is stored under the page and its question's text, so that adding a question
  // above it does not hand it another question's answer.
  function hash(text) {
    let h = 5381;
    for (let i = 0; i < text.length; i++) h = ((h * 33) ^ text.charCodeAt(i)) >>> 0;
    return h.toString(36);
  }
  document.querySelectorAll(".callout.predict").forEach((box, n) => {
    const key = `book-predict:${location.pathname}:${hash(box.querySelector(".callout-body")?.textContent.trim() || String(n))}`;
    const revealEl = revealOf(box);
    const reveal = revealEl ? { el: revealEl, gate: lock(revealEl) } : null;
    const list = box.querySelector(":scope .callout-body > ul, :scope .callout-body > ol");
    if (list) setupChoices(box, list, key, reveal, n);
    else setupText(box, key, reveal, n);
  });

  // Chapter map (appendices/chapter-map.qmd): the figure's SVG goes inline so that its boxes,
  // which Graphviz drew as links, lead to the chapters. If the fetch fails the image stays.
  for (const img of document.querySelectorAll(".chapter-map img[src$='.svg']")) {
    fetch(img.src).then((r) => (r.ok ? r.text() : Promise.reject(r.status))).then((text) => {
      const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
      if (svg.nodeName !== "svg") return;
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", img.alt);
      img.replaceWith(document.importNode(svg, true));
    }).catch(() => {});
  }
})();
