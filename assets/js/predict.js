// Predict-then-reveal.
//
// filters/predict.lua writes each `.callout.predict` box's controls into the page: radio choices
// in a fieldset with "Lock in my answer", or a "Your prediction" text field with "Commit". This
// script gives them their behaviour. The next collapsible callout after the box (the reveal,
// class predict-reveal) stays shut until the reader commits; then it opens and the chosen option
// is marked. Answers are remembered per page in localStorage; "Change my answer" takes it back.
// Nothing here changes the page's layout before the reader acts: the lock note is the
// stylesheet's (glossary.css), shown while the reveal lacks `predict-unlocked`. Printing shows
// everything. Glossary terms' popovers are book.js's.
// The chapter map's figure becomes inline SVG so that its boxes are links.
(() => {
  "use strict";
  const store = {
    get(k) { try { return JSON.parse(localStorage.getItem(k)); } catch { return null; } },
    set(k, v) { try { localStorage.setItem(k, JSON.stringify(v)); } catch { /* private mode */ } },
  };

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

  // Lock a reveal: it refuses to open until unlock(); the stylesheet shows why.
  function lock(reveal) {
    const summary = reveal.tagName === "DETAILS" ? reveal.querySelector(":scope > summary")
      : reveal.querySelector(".callout-header");
    if (!summary) return { unlock() {} };
    reveal.open = false;
    summary.setAttribute("aria-disabled", "true");
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
        reveal.classList.add("predict-unlocked");
        summary.removeAttribute("aria-disabled");
        if (!open) return;
        if (reveal.tagName === "DETAILS") reveal.open = true;
        else reveal.querySelector(".callout-collapse")?.classList.add("show");
      },
    };
  }

  function setupChoices(box, group, key, reveal) {
    const inputs = [...group.querySelectorAll("input[type=radio]")];
    const actions = group.nextElementSibling;
    const button = actions.querySelector(".predict-commit");
    const change = actions.querySelector(".predict-change");
    const status = actions.querySelector(".predict-status");
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
      // An answer restored on load says nothing: a status line appearing would move the page.
      status.textContent = !open ? "" : reveal ? "Answer locked in: the reveal below is open." : "Answer locked in.";
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

  function setupText(box, actions, key, reveal) {
    const input = actions.querySelector(".predict-text");
    const button = actions.querySelector(".predict-commit");
    const change = actions.querySelector(".predict-change");
    const status = actions.querySelector(".predict-status");
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
      status.textContent = open ? "Prediction committed." : "";
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
    const group = box.querySelector("fieldset.predict-choices");
    const actions = box.querySelector(".predict-actions");
    if (group) setupChoices(box, group, key, reveal);
    else if (actions) setupText(box, actions, key, reveal);
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
