// Reader-side behaviour of every page: theme, sidebar, tabsets, copy buttons,
// cross-reference previews and offline search (Pagefind, loaded on first use).
(() => {
  "use strict";
  const root = new URL(document.querySelector('meta[name="site-root"]')?.content || "./", location.href);
  const store = {
    get(k) { try { return localStorage.getItem(k); } catch { return null; } },
    set(k, v) { try { localStorage.setItem(k, v); } catch { /* private mode */ } },
  };

  // Dark mode: follows the system until the reader chooses. The button is a toggle for "dark".
  const toggle = document.querySelector(".theme-toggle");
  const systemDark = matchMedia("(prefers-color-scheme: dark)");
  const isDark = () => {
    const t = document.documentElement.dataset.theme;
    return t ? t === "dark" : systemDark.matches;
  };
  const showTheme = () => toggle?.setAttribute("aria-pressed", String(isDark()));
  showTheme();
  systemDark.addEventListener?.("change", showTheme);
  toggle?.addEventListener("click", () => {
    const el = document.documentElement;
    el.dataset.theme = isDark() ? "light" : "dark";
    store.set("book-theme", el.dataset.theme);
    showTheme();
  });

  // The chapters drawer on phones: a backdrop, closed by a tap outside, Escape or a chosen link;
  // focus moves into it and back to its button. Closed, it is inert (no Tab stops off screen).
  const sidebar = document.getElementById("sidebar");
  const sideBtn = document.querySelector(".sidebar-toggle");
  const narrow = matchMedia("(max-width: 900px)");
  const backdrop = Object.assign(document.createElement("div"), { className: "drawer-backdrop", hidden: true });
  document.body.append(backdrop);
  function setDrawer(open, focus = true) {
    if (!sidebar || !sideBtn) return;
    sidebar.classList.toggle("open", open);
    sideBtn.setAttribute("aria-expanded", String(open));
    backdrop.hidden = !open;
    sidebar.inert = narrow.matches && !open;
    if (!focus) return;
    if (open) (sidebar.querySelector('[aria-current="page"]') || sidebar.querySelector("a"))?.focus();
    else sideBtn.focus();
  }
  sideBtn?.addEventListener("click", () => setDrawer(!sidebar.classList.contains("open")));
  backdrop.addEventListener("click", () => setDrawer(false));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && sidebar?.classList.contains("open")) { e.preventDefault(); setDrawer(false); }
  });
  sidebar?.addEventListener("focusout", (e) => {   // Tab past its last link: the drawer closes behind
    if (sidebar.classList.contains("open") && narrow.matches && e.relatedTarget && !sidebar.contains(e.relatedTarget)) {
      setDrawer(false, false);
    }
  });
  narrow.addEventListener?.("change", () => setDrawer(false, false));
  setDrawer(false, false);

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

  // Copy buttons (written by the build beside each listing; none under format.html code-copy: false).
  for (const btn of document.querySelectorAll("button.copy-code")) {
    const block = btn.parentElement;
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
  }

  // Tables: a header cell with nothing in it (the corner of a two-way table) is a plain cell.
  for (const th of document.querySelectorAll("main th")) {
    if (th.textContent.trim() || th.querySelector("img, svg, [aria-label]")) continue;
    const td = document.createElement("td");
    td.className = th.className;
    th.replaceWith(td);
  }

  // Scroll regions: whatever scrolls sideways (code, tables, wide equations) can be scrolled from
  // the keyboard (it takes focus, labelled), says so to a screen reader, and shows an edge shadow
  // on the side that has more. (The build puts tables and figures in boxes that scroll.)
  function nameOf(el, n) {
    const fig = el.closest("figure, .panel-tabset, .cell, [id^='tbl-'], [id^='lst-']");
    const cap = fig?.querySelector("figcaption, caption, .listing-caption")?.textContent.trim();
    const kind = el.matches(".katex-display") ? "Equation" : el.matches("pre") ? "Code" : el.matches(".figure-scroll") ? "Figure" : "Table";
    const lang = el.matches("pre") ? (el.className.match(/\b(python|cpp|cuda|c|bash|sh|json|yaml)\b/)?.[1] || "") : "";
    return `${kind}${lang ? " (" + lang + ")" : ""} ${n}${cap ? ": " + cap.slice(0, 60) : ""}, scrolls sideways`;
  }
  const scrollers = [...document.querySelectorAll("main pre, main .table-scroll, main .hw-table, main .figure-scroll, main .katex-display")]
    .filter((el) => !el.closest(".widget") && !el.parentElement.closest(".hw-table, .table-scroll"));
  // On a wide screen the margin column beside the text is mostly empty: a listing, table or
  // figure that would scroll sideways by no more than its width takes it (wide-listing, book.css),
  // as the build does for those it knows to be wide. Narrower again, it gives it back.
  const wideScreen = matchMedia("(min-width: 1300px)");
  function widen(el) {
    const holder = el.closest("div.sourceCode, figure, .table-scroll, .hw-table") || el;
    if (holder.closest(".widget, section.exercise, .callout, .panel-tabset")) return;
    if (!wideScreen.matches) {
      if (holder.dataset.widened) { holder.classList.remove("wide-listing"); delete holder.dataset.widened; }
      return;
    }
    if (holder.classList.contains("wide-listing") || el.scrollWidth <= el.clientWidth + 1) return;
    const main = document.querySelector("main");
    const room = main ? parseFloat(getComputedStyle(main).marginRight) || 0 : 0;
    if (el.scrollWidth - el.clientWidth <= room) { holder.classList.add("wide-listing"); holder.dataset.widened = "1"; }
  }
  function markScroll(el, n) {
    widen(el);
    const scrolls = el.scrollWidth > el.clientWidth + 1;
    el.classList.toggle("scrolls", scrolls);
    if (scrolls) {
      el.tabIndex = 0;
      el.setAttribute("role", "region");
      el.setAttribute("aria-label", nameOf(el, n));
    } else if (el.hasAttribute("role")) {
      el.removeAttribute("tabindex"); el.removeAttribute("role"); el.removeAttribute("aria-label");
    }
    el.classList.toggle("more-right", scrolls && el.scrollLeft + el.clientWidth < el.scrollWidth - 1);
    el.classList.toggle("more-left", scrolls && el.scrollLeft > 1);
  }
  const relabel = () => scrollers.forEach((el, i) => markScroll(el, i + 1));
  relabel();
  for (const [i, el] of scrollers.entries()) el.addEventListener("scroll", () => markScroll(el, i + 1), { passive: true });
  if ("ResizeObserver" in window) new ResizeObserver(relabel).observe(document.querySelector("main") || document.body);

  // Long listings (the CUDA kernels run to a hundred lines) are folded by the build; the button
  // after one unfolds it.
  for (const more of document.querySelectorAll("main button.unfold")) {
    const holder = more.previousElementSibling;
    const lines = more.textContent.match(/\d+/)?.[0];
    more.addEventListener("click", () => {
      const folded = holder.classList.toggle("folded");
      more.setAttribute("aria-expanded", String(!folded));
      more.textContent = folded ? `Show all ${lines} lines` : "Fold the listing";
      if (folded) holder.scrollIntoView({ block: "nearest" });
      relabel();
    });
  }

  // Widgets: each one's controls get a name of their own (several widgets of a kind on a page).
  const formNames = new Map();
  for (const form of document.querySelectorAll(".widget-controls[aria-label]")) {
    const base = form.getAttribute("aria-label");
    const head = form.closest("section")?.querySelector(":scope > h2, :scope > h3")?.textContent.replace(/^[\d.]+\s*/, "").trim();
    let name = head ? `${base}: ${head}` : base;
    const seen = formNames.get(name) || 0;
    formNames.set(name, seen + 1);
    if (seen) name += ` (${seen + 1})`;
    form.setAttribute("aria-label", name);
  }


  // Popovers (glossary terms, cross-references): shown on hover and focus, kept while the pointer
  // is over the trigger or the popover, hidden by Escape or leaving (WCAG 1.4.13). A tap or click on
  // a term pins its definition in place, with a link to the glossary inside.
  function popover(className, id) {
    const box = Object.assign(document.createElement("div"), { className, id });
    let owner = null, timer = 0, quiet = null;   // quiet: focus given back after Escape shows nothing
    // A hide waits for the pointer to reach the popover; while one is pending the box says so
    // (data-leaving), so a script or a test can tell a popover that stays from one about to go.
    const cancel = () => { clearTimeout(timer); if ("leaving" in box.dataset) delete box.dataset.leaving; };
    const api = {
      box,
      get owner() { return owner; },
      show(trigger, content, pinned = false) {
        cancel();
        owner?.removeAttribute("aria-describedby");
        owner = trigger;
        box.replaceChildren(...content);
        box.classList.toggle("pinned", pinned);
        trigger.after(box);              // right after its trigger: Tab reaches what it holds
        trigger.setAttribute("aria-describedby", id);
        api.place();
      },
      // Below its trigger, or above it when there is more room there than the popover needs
      // below; never taller than the room it opens into (its content scrolls inside).
      place() {
        if (!owner) return;
        box.style.maxHeight = "";
        const host = box.offsetParent || document.body;
        const hr = host.getBoundingClientRect(), r = owner.getBoundingClientRect();
        const below = innerHeight - r.bottom - 14, above = r.top - 14;
        const need = box.offsetHeight;
        const up = need > below && above > below;
        const room = Math.max(80, up ? above : below);
        if (need > room) box.style.maxHeight = `${room}px`;
        const width = box.offsetWidth, height = Math.min(need, room);
        const left = Math.max(8, Math.min(r.left, innerWidth - width - 8)) - hr.left;
        box.style.left = `${left}px`;
        box.style.top = `${(up ? r.top - 6 - height : r.bottom + 6) - hr.top}px`;
      },
      hide() {
        cancel();
        if (!owner) return;
        const t = owner;
        owner = null;
        t.removeAttribute("aria-describedby");
        const had = box.contains(document.activeElement);
        box.remove();
        if (had) { quiet = t; t.focus({ preventScroll: true }); }
      },
      later() { cancel(); box.dataset.leaving = ""; timer = setTimeout(() => api.hide(), 300); },
      hover(trigger, make) {
        trigger.addEventListener("mouseenter", () => { if (!box.classList.contains("pinned") || owner !== trigger) api.show(trigger, make()); });
        trigger.addEventListener("mouseleave", () => { if (!box.classList.contains("pinned")) api.later(); });
        trigger.addEventListener("focus", () => { if (owner !== trigger && quiet !== trigger) api.show(trigger, make()); });
        trigger.addEventListener("blur", (e) => {
          if (quiet === trigger) quiet = null;
          if (!box.contains(e.relatedTarget) && !box.classList.contains("pinned")) api.hide();
        });
      },
    };
    box.addEventListener("mouseenter", cancel);
    box.addEventListener("mouseleave", () => { if (!box.classList.contains("pinned")) api.later(); });
    box.addEventListener("focusout", (e) => { if (!box.contains(e.relatedTarget) && e.relatedTarget !== owner) api.hide(); });
    document.addEventListener("keydown", (e) => { if (e.key === "Escape" && owner) { e.preventDefault(); api.hide(); } });
    document.addEventListener("pointerdown", (e) => { if (owner && !box.contains(e.target) && e.target !== owner && !owner.contains(e.target)) api.hide(); });
    return api;
  }

  // Glossary terms (filters/glossary.lua gives each its definition in data-definition).
  const termPop = popover("term-popover", "term-popover");
  const termContent = (a, withLink) => {
    const parts = [Object.assign(document.createElement("strong"), { textContent: a.dataset.term || a.textContent }),
      document.createTextNode(": " + a.dataset.definition)];
    if (withLink) {
      const go = Object.assign(document.createElement("a"), { href: a.href, className: "term-go", textContent: "Open in the glossary" });
      const line = Object.assign(document.createElement("span"), { className: "term-go-line" });
      line.append(go);
      parts.push(line);
    }
    return parts;
  };
  for (const a of document.querySelectorAll("a.term[data-definition]")) {
    a.removeAttribute("title");        // the popover replaces the browser's tooltip
    if (a.closest(".terms-box")) continue;   // there the definition is printed beside the term
    termPop.hover(a, () => termContent(a, false));
    a.addEventListener("click", (e) => {
      if (e.ctrlKey || e.metaKey || e.shiftKey || e.button) return;   // a new tab: the glossary
      e.preventDefault();
      if (termPop.owner === a && termPop.box.classList.contains("pinned")) { termPop.hide(); return; }
      termPop.show(a, termContent(a, true), true);
    });
  }

  // Cross-reference previews: the figure, table or equation itself (fetched from its page when it
  // is on another one), or the section's title.
  const xrefPop = popover("xref-preview", "xref-preview");
  const pagesFetched = new Map();
  async function target(a) {
    const url = new URL(a.href, location.href);
    const id = decodeURIComponent(url.hash.slice(1));
    if (!id) return null;
    let doc = document;
    if (url.pathname !== location.pathname) {
      const key = url.origin + url.pathname;
      if (!pagesFetched.has(key)) pagesFetched.set(key, fetch(key).then((r) => r.text()).then((t) => new DOMParser().parseFromString(t, "text/html")));
      doc = await pagesFetched.get(key);
    }
    const found = doc.getElementById(id);
    if (!found || found.tagName === "SECTION") return null;
    const copy = document.importNode(found.matches(".equation") ? found : (found.closest("figure") || found), true);
    for (const n of [copy, ...copy.querySelectorAll("[id]")]) n.removeAttribute("id");
    for (const img of copy.querySelectorAll("img[src]")) img.src = new URL(img.getAttribute("src"), url).href;
    for (const n of copy.querySelectorAll("a, button, input, [tabindex]")) n.setAttribute("tabindex", "-1");
    copy.querySelector(".anchor")?.remove();
    return copy;
  }
  for (const a of document.querySelectorAll("a.xref")) {
    const title = a.dataset.xrefTitle;
    const text = () => [Object.assign(document.createElement("p"), { textContent: title ? `${a.textContent}: ${title}` : a.textContent })];
    xrefPop.hover(a, () => {
      target(a).then((copy) => {
        if (!copy || xrefPop.owner !== a) return;
        xrefPop.box.replaceChildren(copy);
        xrefPop.place();                                              // its new size
        for (const img of copy.querySelectorAll("img")) if (!img.complete) img.addEventListener("load", () => xrefPop.owner === a && xrefPop.place(), { once: true });
      }).catch(() => {});
      return text();
    });
  }

  // Search: a dialog over Pagefind's index, fetched from this site only. Results link to the
  // section that matched (Pagefind's sub-results), ten at a time; arrow keys move through them;
  // Escape, the Close button or a tap outside closes it. The page opened marks the words searched.
  let dialog = null;
  let pagefind = null;
  const PAGE = 10;
  const loadPagefind = async () => {
    if (!pagefind) {
      pagefind = await import(new URL("pagefind/pagefind.js", root).href);
      await pagefind.options({ highlightParam: "highlight" });
    }
    return pagefind;
  };
  // Pagefind's highlight words are its index's ("all-reduce" becomes "allreduce", found nowhere on
  // the page): the page opened marks the reader's own words instead.
  let words = [];
  const withWords = (url) => {
    const u = new URL(url, location.href);
    u.searchParams.delete("highlight");
    for (const w of words) u.searchParams.append("highlight", w);
    return u.pathname + u.search + u.hash;
  };
  // A sub-result's weight: its hits, as Pagefind scores them (its own UI puts the sections with the
  // most hits first): a chapter's first link is the section that teaches a term, not its opening.
  const weight = (r) => (r.weighted_locations || []).reduce((sum, w) => sum + (w.balanced_score || w.weight || 1), 0)
    || (r.locations || []).length;
  // The glossary's sections are its letters: a hit there links to the entry that holds the best one
  // (each entry is an element with an id "term-…"), with the page's excerpt, and no "A", "B", "C".
  function glossaryEntry(d) {
    const entries = (d.anchors || []).filter((x) => x.id.startsWith("term-"));
    if (!entries.length) return null;
    const hits = [...(d.weighted_locations || [])].sort((x, y) => (y.balanced_score || 0) - (x.balanced_score || 0));
    const at = hits.length ? hits[0].location : (d.locations || [])[0];
    const entry = entries.filter((x) => x.location <= at).pop();
    return entry ? entry.id : null;
  }
  function resultItem(d) {
    const li = document.createElement("li");
    const entry = glossaryEntry(d);
    const url = entry ? d.url.split("#")[0] + "#" + entry : d.url;
    const a = Object.assign(document.createElement("a"), { href: withWords(url), className: "search-page", textContent: d.meta?.title || d.url });
    const p = document.createElement("p");
    p.innerHTML = d.excerpt; // Pagefind escapes page text and adds <mark>
    li.append(a, p);
    const subs = entry ? [] : (d.sub_results || []).filter((r) => r.url !== d.url && new URL(r.url, location.href).hash)
      .map((r, i) => [weight(r), i, r]).sort((x, y) => y[0] - x[0] || x[1] - y[1]).slice(0, 3).map(([, , r]) => r);
    if (subs.length) {
      const ul = Object.assign(document.createElement("ul"), { className: "search-subs" });
      for (const r of subs) {
        const sli = document.createElement("li");
        const sa = Object.assign(document.createElement("a"), { href: withWords(r.url), textContent: r.title });
        const sp = document.createElement("p");
        sp.innerHTML = r.excerpt;
        sli.append(sa, sp);
        ul.append(sli);
      }
      li.append(ul);
    }
    return li;
  }
  async function openSearch() {
    if (!dialog) {
      dialog = document.createElement("dialog");
      dialog.className = "search-dialog";
      dialog.setAttribute("aria-label", "Search the book");
      dialog.innerHTML = '<div class="search-bar"><input type="search" placeholder="Search the book…" aria-label="Search terms">' +
        '<button type="button" class="search-close" aria-label="Close search">Close</button></div>' +
        '<p class="search-status" role="status"></p><ol class="search-results"></ol>' +
        '<button type="button" class="search-more" hidden>More results</button>';
      document.body.appendChild(dialog);
      const input = dialog.querySelector("input");
      const list = dialog.querySelector(".search-results");
      const status = dialog.querySelector(".search-status");
      const more = dialog.querySelector(".search-more");
      let seq = 0, results = [], shown = 0;
      async function showMore() {
        const n = seq;
        const data = await Promise.all(results.slice(shown, shown + PAGE).map((r) => r.data()));
        if (n !== seq) return;
        for (const d of data) list.appendChild(resultItem(d));
        shown += data.length;
        more.hidden = shown >= results.length;
        more.textContent = `More results (${results.length - shown} left)`;
      }
      input.addEventListener("input", async () => {
        const n = ++seq;
        const q = input.value.trim();
        if (!q) { list.innerHTML = ""; status.textContent = ""; more.hidden = true; return; }
        try {
          const pf = await loadPagefind();
          const res = await pf.debouncedSearch(q, {}, 150);
          if (!res || n !== seq) return;
          results = res.results; shown = 0;
          words = q.split(/\s+/).filter(Boolean);
          list.innerHTML = "";
          status.textContent = `${results.length} result${results.length === 1 ? "" : "s"}`;
          await showMore();
        } catch (err) {
          status.textContent = "Search is unavailable: " + err.message;
        }
      });
      more.addEventListener("click", () => {
        const first = list.children.length;
        showMore().then(() => list.children[first]?.querySelector("a")?.focus());
      });
      dialog.querySelector(".search-close").addEventListener("click", () => dialog.close());
      dialog.addEventListener("click", (e) => {   // a tap on the backdrop, outside the box
        if (e.target !== dialog) return;
        const r = dialog.getBoundingClientRect();
        if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) dialog.close();
      });
      dialog.addEventListener("keydown", (e) => {
        if (e.key === "Escape") { e.preventDefault(); dialog.close(); return; }   // not "clear the field first"
        if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
        const stops = [input, ...list.querySelectorAll("a")];
        const i = stops.indexOf(document.activeElement);
        if (i < 0) return;
        e.preventDefault();
        stops[Math.max(0, Math.min(stops.length - 1, i + (e.key === "ArrowDown" ? 1 : -1)))].focus();
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
  if (new URLSearchParams(location.search).has("highlight")) {
    import(new URL("pagefind/pagefind-highlight.js", root).href).then(({ default: Highlight }) => {
      new Highlight({ highlightParam: "highlight", markContext: "main", addStyles: false,
        markOptions: { className: "search-hit", exclude: ["[data-pagefind-ignore]", "[data-pagefind-ignore] *"] } });
      if (!location.hash) document.querySelector("main .search-hit")?.scrollIntoView({ block: "center" });
    }).catch(() => {});
  }

  // On phones the contents list sits in the text, just below the chapter's title (put there by
  // the build); choosing an entry closes it.
  const inlineToc = document.querySelector(".toc-inline");
  inlineToc?.addEventListener("click", (e) => { if (e.target.closest("a")) inlineToc.open = false; });

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
