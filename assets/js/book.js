// Reader-side behaviour of every page: theme, sidebar, tabsets, copy buttons,
// cross-reference previews and offline search (Pagefind, loaded on first use).
(() => {
  "use strict";
  const root = new URL(document.querySelector('meta[name="site-root"]')?.content || "./", location.href);
  const store = {
    get(k) { try { return localStorage.getItem(k); } catch { return null; } },
    set(k, v) { try { localStorage.setItem(k, v); } catch { /* private mode */ } },
  };

  // Dark mode: follows the system until the reader chooses.
  const toggle = document.querySelector(".theme-toggle");
  toggle?.addEventListener("click", () => {
    const el = document.documentElement;
    const dark = el.dataset.theme ? el.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    el.dataset.theme = dark ? "light" : "dark";
    store.set("book-theme", el.dataset.theme);
  });

  // Sidebar on phones.
  const sidebar = document.getElementById("sidebar");
  const sideBtn = document.querySelector(".sidebar-toggle");
  sideBtn?.addEventListener("click", () => {
    const open = sidebar.classList.toggle("open");
    sideBtn.setAttribute("aria-expanded", String(open));
  });

  // Tabsets: one group stays in step across the page and is remembered across pages.
  function selectTab(tabset, key, focus) {
    const tabs = [...tabset.querySelectorAll(':scope > [role="tablist"] > [role="tab"]')];
    const target = tabs.find((t) => t.dataset.tab === key);
    if (!target) return false;
    for (const t of tabs) {
      const on = t === target;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
    }
    if (focus) target.focus();
    return true;
  }
  function selectGroup(group, key, origin) {
    for (const ts of document.querySelectorAll(`.panel-tabset[data-group="${CSS.escape(group)}"]`)) {
      if (ts !== origin) selectTab(ts, key, false);
    }
    store.set("book-tabset-" + group, key);
  }
  for (const ts of document.querySelectorAll(".panel-tabset")) {
    const group = ts.dataset.group;
    const saved = group && store.get("book-tabset-" + group);
    if (saved) selectTab(ts, saved, false);
    ts.querySelector('[role="tablist"]').addEventListener("click", (e) => {
      const tab = e.target.closest('[role="tab"]');
      if (!tab) return;
      selectTab(ts, tab.dataset.tab, false);
      if (group) selectGroup(group, tab.dataset.tab, ts);
    });
    ts.querySelector('[role="tablist"]').addEventListener("keydown", (e) => {
      const tabs = [...ts.querySelectorAll('[role="tab"]')];
      const i = tabs.indexOf(document.activeElement);
      if (i < 0) return;
      let j = null;
      if (e.key === "ArrowRight") j = (i + 1) % tabs.length;
      if (e.key === "ArrowLeft") j = (i - 1 + tabs.length) % tabs.length;
      if (e.key === "Home") j = 0;
      if (e.key === "End") j = tabs.length - 1;
      if (j === null) return;
      e.preventDefault();
      selectTab(ts, tabs[j].dataset.tab, true);
      if (group) selectGroup(group, tabs[j].dataset.tab, ts);
    });
  }

  // Copy buttons on code blocks (format.html code-copy: false turns them off).
  const copyOff = document.querySelector('meta[name="code-copy"][content="false"]');
  for (const block of copyOff ? [] : document.querySelectorAll("div.sourceCode, pre:not(.sourceCode)")) {
    if (block.closest("div.sourceCode") && block.tagName === "PRE") continue;
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "copy-code";
    block.classList.add("has-copy");
    btn.textContent = "Copy";
    btn.setAttribute("aria-label", "Copy code to clipboard");
    btn.addEventListener("click", async () => {
      const code = block.querySelector("code") || block;
      try {
        await navigator.clipboard.writeText(code.innerText);
        btn.textContent = "Copied";
      } catch {
        btn.textContent = "Press Ctrl+C";
        const range = document.createRange();
        range.selectNodeContents(code);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
      }
      setTimeout(() => (btn.textContent = "Copy"), 1500);
    });
    block.appendChild(btn);
  }

  // Cross-reference previews on hover and focus.
  let tip = null;
  function showPreview(a) {
    const title = a.dataset.xrefTitle;
    if (!title) return;
    tip = tip || Object.assign(document.createElement("div"), { className: "xref-preview", role: "tooltip", id: "xref-preview" });
    tip.textContent = `${a.textContent}: ${title}`;
    document.body.appendChild(tip);
    const r = a.getBoundingClientRect();
    tip.style.left = `${Math.max(8, Math.min(r.left + scrollX, scrollX + innerWidth - tip.offsetWidth - 8))}px`;
    tip.style.top = `${r.bottom + scrollY + 6}px`;
    a.setAttribute("aria-describedby", "xref-preview");
  }
  function hidePreview() { tip?.remove(); }
  for (const a of document.querySelectorAll("a.xref")) {
    a.addEventListener("mouseenter", () => showPreview(a));
    a.addEventListener("focus", () => showPreview(a));
    a.addEventListener("mouseleave", hidePreview);
    a.addEventListener("blur", hidePreview);
  }

  // Search: a dialog over Pagefind's index, fetched from this site only.
  let dialog = null;
  let pagefind = null;
  async function openSearch() {
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.className = "search-dialog";
      dialog.setAttribute("aria-label", "Search the book");
      dialog.innerHTML = '<input type="search" placeholder="Search the book…" aria-label="Search terms">' +
        '<p class="search-status" role="status"></p><ol class="search-results"></ol>';
      document.body.appendChild(dialog);
      const input = dialog.querySelector("input");
      let seq = 0;
      input.addEventListener("input", async () => {
        const n = ++seq;
        const q = input.value.trim();
        const list = dialog.querySelector(".search-results");
        const status = dialog.querySelector(".search-status");
        if (!q) { list.innerHTML = ""; status.textContent = ""; return; }
        try {
          pagefind = pagefind || await import(new URL("pagefind/pagefind.js", root).href);
          const res = await pagefind.debouncedSearch(q, {}, 150);
          if (!res || n !== seq) return;
          const data = await Promise.all(res.results.slice(0, 10).map((r) => r.data()));
          if (n !== seq) return;
          status.textContent = `${res.results.length} result${res.results.length === 1 ? "" : "s"}`;
          list.innerHTML = "";
          for (const d of data) {
            const li = document.createElement("li");
            const a = document.createElement("a");
            a.href = d.url;
            a.textContent = d.meta?.title || d.url;
            const p = document.createElement("p");
            p.innerHTML = d.excerpt; // Pagefind escapes page text and adds <mark>
            li.append(a, p);
            list.appendChild(li);
          }
        } catch (err) {
          status.textContent = "Search is unavailable: " + err.message;
        }
      });
    }
    dialog.showModal();
    dialog.querySelector("input").focus();
  }
  document.querySelector(".search-open")?.addEventListener("click", openSearch);
  document.addEventListener("keydown", (e) => {
    if ((e.key === "/" || (e.key === "k" && (e.ctrlKey || e.metaKey))) &&
        !e.target.closest?.("input, textarea, select, [contenteditable]")) {
      e.preventDefault();
      openSearch();
    }
  });

  // On-page contents: mark the section being read.
  const tocLinks = new Map([...document.querySelectorAll(".toc a")].map((a) => [a.getAttribute("href").slice(1), a]));
  if (tocLinks.size && "IntersectionObserver" in window) {
    const obs = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) {
          for (const a of tocLinks.values()) a.classList.remove("active");
          tocLinks.get(e.target.id)?.classList.add("active");
        }
      }
    }, { rootMargin: "0px 0px -70% 0px" });
    for (const id of tocLinks.keys()) {
      const el = document.getElementById(id);
      if (el) obs.observe(el);
    }
  }
})();
