/* Reader feedback: select a passage and "Suggest a change", or write in the feedback box at the end.
 *
 * Page contract: the text is in <main id="content">; <meta name="book-version" content="...">; and what the
 * build decided (bookbuild, from _quarto.yml `feedback:`):
 *   <meta name="feedback-endpoint" content="/api/feedback">   service mode: POST to the feedback service;
 *   <meta name="feedback-issue-url" content="https://github.com/OWNER/REPO/issues/new">   a prefilled issue;
 *   <meta name="feedback-email" content="errata@example.org">   a prefilled email.
 * With no endpoint the control is in link mode (issue, else email) and says so. With an endpoint, only a
 * network failure, 408, 429 or 5xx (not 501) keeps a suggestion waiting on this device to be retried; an
 * answer that shows there is no feedback service at that address (404, 405, 501, a refused CORS check, a
 * 2xx that is not the service's) or a refusal offers the other routes at once (issue, email, copy), and the
 * text stays in the form. Waiting suggestions are listed in the feedback box (send now, copy, discard).
 * A suggestion is anchored as a W3C Web Annotation TextQuoteSelector {exact, prefix, suffix} plus page,
 * section id and book version. Retries reuse the browser-made id, so the service stores each one once.
 * Test hook: window.bookFeedback = {mode, queue(): waiting items, flush(): Promise of {id: {kind, reason}}}.
 */
(() => {
  'use strict';

  const QUEUE_KEY = 'bookFeedback.queue.v1';
  const CONTEXT_CHARS = 32;
  const MAX_EXACT = 2000;
  const MAX_SUGGESTION = 5000;
  const RETRY_BASE_MS = 2000;
  const RETRY_MAX_MS = 5 * 60 * 1000;
  const REQUEST_TIMEOUT_MS = 10000;
  const MAX_QUEUE = 50;
  const MAX_AGE_MS = 30 * 24 * 3600 * 1000;
  const MAX_LINK = 8000;
  const SHORTCUT = 'Alt+Shift+S';
  const UI = 'data-feedback-ui';
  const NO_SERVICE = new Set([404, 405, 501]);

  const meta = (name) => (document.querySelector(`meta[name="${name}"]`)?.content || '').trim();
  const config = {
    endpoint: meta('feedback-endpoint'),
    issueUrl: meta('feedback-issue-url'),
    email: meta('feedback-email'),
    version: meta('book-version') || 'unknown',
  };
  const mode = config.endpoint ? 'service' : config.issueUrl ? 'issue' : config.email ? 'email' : '';
  const main = document.querySelector('main#content');
  const hostOf = (url) => { try { return new URL(url, location.href).host; } catch { return ''; } };
  const originOf = (url) => { try { return new URL(url, location.href).origin; } catch { return ''; } };
  const crossOrigin = !!config.endpoint && originOf(config.endpoint) !== location.origin;

  // ---- the queue: localStorage, or memory when storage is unavailable --------------------------------
  // An item: {payload, attempts, next, created, stuck?: reason}. A stuck item is not retried on its own
  // (the address answered that it takes no suggestions, or refused this one): it stays for the reader.

  const storage = (() => {
    try {
      localStorage.setItem(QUEUE_KEY + '.probe', '1');
      localStorage.removeItem(QUEUE_KEY + '.probe');
      return localStorage;
    } catch {
      return null;
    }
  })();
  let memoryQueue = [];
  let suggestReading = null; // set by mountSelectionButton: quote the paragraph being read

  function loadQueue() {
    if (!storage) return memoryQueue;
    try {
      const items = JSON.parse(storage.getItem(QUEUE_KEY) || '[]');
      return Array.isArray(items) ? items.filter((i) => i && i.payload && i.payload.id) : [];
    } catch {
      return [];
    }
  }

  function updateQueue(change) {
    const now = Date.now();
    const items = change(loadQueue()).filter((i) => now - i.created < MAX_AGE_MS).slice(-MAX_QUEUE);
    memoryQueue = items;
    if (storage) {
      try {
        storage.setItem(QUEUE_KEY, JSON.stringify(items));
      } catch { /* full or blocked: the memory copy still retries while the page is open */ }
    }
    renderQueue();
  }

  // ---- sending ------------------------------------------------------------------------------------------

  /* One POST. Resolves to {kind: 'sent'|'queued'|'unavailable'|'failed', reason, after?}. */
  async function post(payload) {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), REQUEST_TIMEOUT_MS);
    let res;
    try {
      res = await fetch(config.endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(payload),
        credentials: 'omit',
        signal: abort.signal,
      });
    } catch {
      if (abort.signal.aborted) return { kind: 'queued', after: 0, reason: 'the feedback service did not answer in time' };
      if (navigator.onLine === false) return { kind: 'queued', after: 0, reason: 'you are offline' };
      // Cross-origin, a refused CORS check and an unreachable host look the same to a page. A request
      // the page cannot read (no-cors) still tells them apart: it succeeds only if the host answered.
      if (crossOrigin && await answers(config.endpoint)) {
        return { kind: 'unavailable', reason: `${hostOf(config.endpoint)} does not accept suggestions from this site` };
      }
      return { kind: 'queued', after: 0, reason: 'the feedback service is unreachable' };
    } finally {
      clearTimeout(timer);
    }
    const body = await res.json().catch(() => null);
    const error = body && typeof body.error === 'string' ? body.error : '';
    if ((res.status === 200 || res.status === 201) && body?.id === payload.id) return { kind: 'sent' };
    // The same text sent again soon: the service keeps the first copy and answers with its id.
    if (res.status === 200 && body?.status === 'duplicate' && typeof body.id === 'string' && body.id) {
      return { kind: 'sent', duplicate: true };
    }
    if (res.status === 429 || res.status === 408 || (res.status >= 500 && !NO_SERVICE.has(res.status))) {
      const after = Number(res.headers.get('Retry-After')) * 1000 || 0;
      return { kind: 'queued', after, reason: error || `the feedback service answered ${res.status}` };
    }
    if (error && !NO_SERVICE.has(res.status)) return { kind: 'failed', reason: error };
    // 404/405/501, or an answer that is not the service's (a static host, a login page): nobody stores it.
    return { kind: 'unavailable', reason: `there is no feedback service at this address (it answered ${res.status})` };
  }

  async function answers(url) {
    try {
      await fetch(url, { mode: 'no-cors', credentials: 'omit', cache: 'no-store' });
      return true;
    } catch {
      return false;
    }
  }

  function backoff(attempts, atLeastMs) {
    const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempts);
    return Math.max(atLeastMs, ceiling / 2 + Math.random() * (ceiling / 2)); // "equal jitter"
  }

  let flushing = null;
  let retryTimer = null;

  /* Send waiting submissions: 'all' (the reader's "Send now", stuck ones too), 'waiting' (page load, back
   * online) or 'due' (those whose retry time has come). Resolves to a Map id → {kind, reason}. */
  async function flush(which = 'all') {
    while (flushing) await flushing;
    flushing = sendQueued(which);
    try {
      return await flushing;
    } finally {
      flushing = null;
      scheduleRetry();
    }
  }

  async function sendQueued(which) {
    const results = new Map();
    if (!config.endpoint) return results;
    for (const item of loadQueue()) {
      if (which !== 'all' && (item.stuck || (which === 'due' && item.next > Date.now()))) continue;
      const result = await post(item.payload);
      results.set(item.payload.id, result);
      const id = item.payload.id;
      if (result.kind === 'sent') {
        updateQueue((items) => items.filter((i) => i.payload.id !== id));
        announce(result.duplicate ? 'Already received, thank you: the same suggestion was sent a moment ago, and it is kept once.'
          : item.attempts ? 'A suggestion saved earlier has now been sent. Thank you!' : 'Thank you: your suggestion was sent.', 'sent');
      } else if (result.kind === 'queued') {
        updateQueue((items) => items.map((i) => (i.payload.id === id
          ? { ...i, stuck: undefined, attempts: i.attempts + 1, next: Date.now() + backoff(i.attempts, result.after) } : i)));
        if (!item.attempts) announce(`Saved on this device: ${result.reason}. It will be sent automatically when the service can be reached.`, 'queued');
        break; // the service is down or busy: the others wait for the same retry
      } else {
        // Kept, not dropped: the reader decides (another route, copy, discard) in the list of waiting ones.
        updateQueue((items) => items.map((i) => (i.payload.id === id ? { ...i, stuck: result.reason } : i)));
        if (item.attempts) announce(`A suggestion saved earlier could not be sent: ${result.reason}. It is kept at the end of this page.`, 'failed');
      }
    }
    return results;
  }

  function scheduleRetry() {
    clearTimeout(retryTimer);
    const items = loadQueue().filter((i) => !i.stuck);
    if (!items.length || !config.endpoint) return;
    const next = Math.min(...items.map((i) => i.next));
    retryTimer = setTimeout(() => flush('due'), Math.max(0, next - Date.now()));
  }

  function newId() {
    if (crypto.randomUUID) return crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16)); // not a secure context: same RFC 4122 version 4 layout
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  /* Text the service accepts: well-formed Unicode, no control characters other than tab and newlines. */
  function clean(text) {
    const wellFormed = text.toWellFormed ? text.toWellFormed() : text;
    return wellFormed.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, ' ');
  }

  /* Returns {kind, reason, payload}: 'sent', 'queued' (will retry), 'unavailable' or 'failed' (not sent:
   * the reader is offered the other routes) or 'opened' (link mode). */
  function makePayload({ suggestion, quote, section }) {
    const payload = { id: newId(), page: location.pathname, section, version: config.version, suggestion: clean(suggestion) };
    if (quote) payload.selector = { type: 'TextQuoteSelector', exact: quote.exact, prefix: quote.prefix, suffix: quote.suffix };
    return payload;
  }

  async function submit({ suggestion, name, email, quote, section }) {
    const payload = makePayload({ suggestion, quote, section });
    if (mode !== 'service') return { ...openLink(payload), payload }; // no await before: the click is the reader's
    if (name) payload.name = clean(name);
    if (email) payload.email = email;
    updateQueue((items) => [...items, { payload, attempts: 0, next: 0, created: Date.now() }]);
    const results = await flush('waiting');
    const result = results.get(payload.id);
    if (!result) {
      // Not tried: an older suggestion ahead of it could not be sent either.
      announce('Saved on this device: the feedback service cannot be reached right now. It will be sent automatically.', 'queued');
      return { kind: 'queued', payload };
    }
    if (result.kind === 'unavailable' || result.kind === 'failed') {
      updateQueue((items) => items.filter((i) => i.payload.id !== payload.id)); // the form keeps the text
    }
    return { ...result, payload };
  }

  // ---- other routes: a prefilled issue or email, or the reader's clipboard ------------------------------

  const oneLine = (text) => text.replace(/\s+/g, ' ');
  // At most about n characters, cut after a whole word (with … when cut).
  const cutAtWord = (text, n) => {
    if (text.length <= n) return text;
    const cut = text.slice(0, n + 1).replace(/\s+\S*$/, '');
    return `${cut.length >= n / 2 ? cut : text.slice(0, n)}…`;
  };

  /* {title, body}: what a person reads in an issue, an email or the clipboard. */
  function describe(p, exactLimit = MAX_EXACT) {
    const where = p.page + (p.section ? `#${p.section}` : '');
    const lines = [`**Page:** ${where}`, `**Book version:** ${p.version}`, ''];
    let title = `Suggestion for ${where}`;
    if (p.selector) {
      const { exact, prefix, suffix } = p.selector;
      const shown = exact.length > exactLimit ? `${exact.slice(0, exactLimit)}…` : exact;
      title += `: "${cutAtWord(oneLine(exact), 60)}"`;
      lines.push('**Passage:**', ...shown.split('\n').map((l) => `> ${l}`), '',
        `**Context:** …${oneLine(prefix)}[${oneLine(shown)}]${oneLine(suffix)}…`, '');
    }
    lines.push('**Suggestion:**', '', p.suggestion, '', `<!-- feedback-id: ${p.id} -->`);
    return { title, body: lines.join('\n') };
  }

  function issueHref(p, exactLimit) {
    const { title, body } = describe(p, exactLimit);
    const url = new URL(config.issueUrl, location.href);
    url.searchParams.set('title', title);
    url.searchParams.set('body', body);
    return url.href;
  }

  function mailHref(p, exactLimit) {
    const { title, body } = describe(p, exactLimit);
    // encodeURIComponent, not URLSearchParams: mail programs do not read '+' as a space.
    return `mailto:${config.email}?subject=${encodeURIComponent(title)}&body=${encodeURIComponent(body)}`;
  }

  /* The link for a route, with a long passage shortened to fit; null when it cannot fit. */
  function routeHref(route, payload) {
    const make = route === 'issue' ? issueHref : mailHref;
    for (const limit of [MAX_EXACT, 200]) {
      const href = make(payload, limit);
      if (href.length <= MAX_LINK) return href;
    }
    return null;
  }

  const ROUTES = [
    { route: 'issue', on: () => !!config.issueUrl, label: 'Open a pre-filled issue' },
    { route: 'email', on: () => !!config.email, label: 'Write an email' },
  ];

  /* Links to every configured route and a copy button, for a suggestion that was not sent. */
  function routeLinks(payload) {
    const links = ROUTES.filter((r) => r.on()).map((r) => {
      const href = routeHref(r.route, payload);
      return href && el('a', { class: 'fb-route', href, target: '_blank', rel: 'noopener noreferrer' }, r.label);
    }).filter(Boolean);
    return [...links, copyButton(payload)];
  }

  function copyButton(payload) {
    const button = el('button', { type: 'button', class: 'fb-route' }, 'Copy the suggestion');
    button.addEventListener('click', async () => {
      const { title, body } = describe(payload);
      const ok = await copyText(`${title}\n\n${body}`, button);
      // Said on the button too: behind an open dialog the status region is inert and covered.
      button.textContent = ok ? 'Copied' : 'Could not copy';
      setTimeout(() => { button.textContent = 'Copy the suggestion'; }, 4000);
      announce(ok ? 'Copied: paste it wherever you can reach the authors.' : 'Could not copy: please select the text and copy it yourself.', ok ? 'sent' : 'failed');
    });
    return button;
  }

  async function copyText(text, near) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch { /* not a secure context, or no permission: the older way */ }
    const area = el('textarea', { readonly: true, 'aria-hidden': 'true', tabindex: '-1', class: 'fb-copy-area' });
    area.value = text;
    near.after(area); // beside the button: inside an open modal dialog, the rest of the page is inert
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch { /* ok stays false */ }
    area.remove();
    near.focus();
    return ok;
  }

  /* Link mode: open the prefilled issue (or email) in the reader's gesture. */
  function openLink(payload) {
    const href = routeHref(mode, payload);
    if (!href) {
      const reason = `it is too long for ${mode === 'issue' ? 'an issue link' : 'an email link'}; please shorten it`;
      return { kind: 'failed', reason };
    }
    const link = el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, mode === 'issue' ? 'open the issue' : 'write the email');
    link.click();
    announce(mode === 'issue'
      ? 'A pre-filled issue opened in a new tab: review it and press "Create". If nothing opened, '
      : 'A pre-filled email opened in your email program: review it and send it. If nothing opened, ', 'opened', link, '.');
    return { kind: 'opened', href };
  }

  // ---- anchoring: TextQuoteSelector and section id ---------------------------------------------------------

  // A widget's drawing, controls and readouts are no passage to suggest a change to (a drag on a
  // figure is the reader turning it); its caption is prose like any other.
  const inWidget = (node) => {
    const e = node.nodeType === 1 ? node : node.parentElement;
    return !!e?.closest('.widget[data-widget]') && !e.closest('figcaption');
  };
  const isOwnUi = (node) => !!(node.nodeType === 1 ? node : node.parentElement)?.closest(`[${UI}]`);

  // Text a reader does not read as part of a passage: a heading's number and its "#" permalink, a
  // formula's drawing and its TeX (its MathML's text is the formula, once), the phone's contents
  // list (hidden on a desktop, but in the page), and what the page hides from everyone.
  const UNREAD = 'script, style, template, .header-section-number, .anchor, .katex-html, annotation, '
    + '.toc-inline, [hidden], [aria-hidden="true"]:not(.katex-mathml *)';

  function textIndex() {
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (n.parentElement.closest(`[${UI}], ${UNREAD}`) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const nodes = [];
    let text = '';
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      nodes.push({ node: n, start: text.length });
      text += n.data;
    }
    return { text, nodes };
  }

  function offsetOf(index, container, offset) {
    const hit = index.nodes.find((n) => n.node === container);
    if (hit) return hit.start + offset;
    const point = document.createRange();
    point.setStart(container, offset);
    const after = index.nodes.find((n) => point.comparePoint(n.node, 0) >= 0);
    return after ? after.start : index.text.length;
  }

  function quoteOf(range) {
    const index = textIndex();
    let start = offsetOf(index, range.startContainer, range.startOffset);
    let end = offsetOf(index, range.endContainer, range.endOffset);
    while (start < end && /\s/.test(index.text[start])) start++;
    while (end > start && /\s/.test(index.text[end - 1])) end--;
    if (start >= end) return null;
    let prefix = index.text.slice(Math.max(0, start - CONTEXT_CHARS), start);
    let suffix = index.text.slice(end, end + CONTEXT_CHARS);
    if (/^[\udc00-\udfff]/.test(prefix)) prefix = prefix.slice(1); // never split a surrogate pair
    if (/[\ud800-\udbff]$/.test(suffix)) suffix = suffix.slice(0, -1);
    return { exact: clean(index.text.slice(start, end)), prefix: clean(prefix), suffix: clean(suffix) };
  }

  /* The nearest enclosing <section id>, or a heading with an id that comes before the passage inside it. */
  function sectionOf(node) {
    const elem = node.nodeType === 1 ? node : node.parentElement;
    const section = elem.closest('section[id]');
    const enclosing = section && main.contains(section) && !isOwnUi(section) ? section : null;
    let heading = null;
    for (const h of main.querySelectorAll('h1[id], h2[id], h3[id], h4[id], h5[id], h6[id]')) {
      if (isOwnUi(h)) continue;
      if (h.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING) heading = h;
      else break;
    }
    if (heading && (!enclosing || enclosing.contains(heading))) {
      // a section's own heading (the build gives it an id for search) stands for its section
      const own = heading.parentElement;
      return own && own.matches('section[id]') && own.firstElementChild === heading ? own.id : heading.id;
    }
    return enclosing ? enclosing.id : '';
  }

  function selectedRange() {
    const sel = document.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
    const range = sel.getRangeAt(0);
    const inMain = main.contains(range.startContainer) && main.contains(range.endContainer);
    return inMain && !isOwnUi(range.startContainer) && !isOwnUi(range.endContainer)
      && !inWidget(range.startContainer) && !inWidget(range.endContainer) ? range.cloneRange() : null;
  }

  // ---- user interface ---------------------------------------------------------------------------------------

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === false || v == null) continue;
      node.setAttribute(k, v === true ? '' : v);
    }
    node.append(...children);
    return node;
  }

  let status;
  let statusTimer;
  /* The aria-live region: what happened to a submission, for screen readers and on screen. */
  function announce(message, kind, ...extra) {
    if (!status) return;
    clearTimeout(statusTimer);
    status.replaceChildren(message, ...extra);
    status.dataset.kind = kind;
    const seconds = { failed: 30, opened: 60, unavailable: 30 }[kind] || 12;
    statusTimer = setTimeout(() => status.replaceChildren(), seconds * 1000); // empty: hidden by CSS
  }

  /* What this control does with a suggestion, in words: decided by the build, shown on every form. */
  function modeNote() {
    if (mode === 'service') {
      return `Sent to the book's feedback service${crossOrigin ? ` at ${hostOf(config.endpoint)}` : ''}. `
        + 'If it cannot be reached, your suggestion waits on this device and is sent later.';
    }
    if (mode === 'issue') {
      return `This opens a pre-filled issue on ${hostOf(config.issueUrl)} (an account there is needed); nothing is sent until you submit it there. `
        + (config.email ? `No account? Write an email to ${config.email}, or copy the suggestion and send it any way you like.`
          : 'No account? Copy the suggestion and send it any way you like.');
    }
    return `This opens a pre-filled email to ${config.email} in your email program; nothing is sent until you send it. `
      + 'Or copy the suggestion and send it any way you like.';
  }

  /* Beside a link mode's own button: the other configured route and the clipboard, always offered
     (a reader without an account on the code host, or without an email program, still has a way). */
  function otherRoutes() {
    if (mode === 'service') return [];
    const others = ROUTES.filter((r) => r.route !== mode && r.on())
      .map((r) => el('button', { type: 'button', class: 'fb-route fb-alt', 'data-route': r.route }, r.label));
    return [...others, el('button', { type: 'button', class: 'fb-route fb-alt', 'data-route': 'copy' }, 'Copy the suggestion')];
  }

  const SEND_LABEL = { service: 'Send', issue: 'Open an issue', email: 'Write an email' };

  function buildForm(idPrefix) {
    const field = (name, labelText, control) => el('div', { class: 'fb-field' },
      el('label', { for: `${idPrefix}-${name}` }, labelText), control);
    const form = el('form', { class: 'fb-form', 'data-mode': mode },
      field('suggestion', 'Your suggestion', el('textarea', {
        id: `${idPrefix}-suggestion`, name: 'suggestion', required: true, maxlength: MAX_SUGGESTION, rows: 4,
      })),
      mode === 'service' ? el('div', { class: 'fb-row' },
        field('name', 'Name (optional)', el('input', { id: `${idPrefix}-name`, name: 'name', maxlength: 100, autocomplete: 'name' })),
        field('email', 'Email (optional, if you would like a reply)', el('input', {
          id: `${idPrefix}-email`, name: 'email', type: 'email', maxlength: 254, autocomplete: 'email',
        }))) : '',
      el('p', { class: 'fb-note', id: `${idPrefix}-mode` }, modeNote()),
      // role=alert: read out where it appears (the status region is inert behind an open modal dialog).
      el('div', { class: 'fb-error', id: `${idPrefix}-error`, role: 'alert', hidden: true }),
      el('div', { class: 'fb-actions' }, el('button', { type: 'submit', class: 'fb-send' }, SEND_LABEL[mode]), ...otherRoutes()));
    form.elements.suggestion.setAttribute('aria-describedby', `${idPrefix}-error ${idPrefix}-mode`);
    return form;
  }

  /* Wires a form to submit(); calls done() when the suggestion left the form (sent, queued, opened). */
  function onSubmit(form, context, done) {
    form.addEventListener('click', async (event) => {
      const button = event.target.closest && event.target.closest('.fb-alt[data-route]');
      if (!button || !form.reportValidity()) return;
      const payload = makePayload({ suggestion: form.elements.suggestion.value, ...context() });
      if (button.dataset.route === 'copy') {
        const { title, body } = describe(payload);
        const ok = await copyText(`${title}\n\n${body}`, button);
        button.textContent = ok ? 'Copied' : 'Could not copy';
        setTimeout(() => { button.textContent = 'Copy the suggestion'; }, 4000);
        announce(ok ? 'Copied: paste it wherever you can reach the authors.' : 'Could not copy: please select the text and copy it yourself.', ok ? 'sent' : 'failed');
        return;
      }
      const href = routeHref(button.dataset.route, payload);
      if (href) el('a', { href, target: '_blank', rel: 'noopener noreferrer' }).click();
    });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const error = form.querySelector('.fb-error');
      error.hidden = true;
      if (!form.reportValidity()) return;
      const send = form.querySelector('.fb-send');
      send.disabled = true;
      try {
        const result = await submit({
          suggestion: form.elements.suggestion.value,
          name: form.elements.name?.value.trim(),
          email: form.elements.email?.value.trim(),
          ...context(),
        });
        if (result.kind === 'failed' || result.kind === 'unavailable') {
          const message = `Not sent: ${result.reason}. Nothing was saved; your text is still here.`;
          const routes = routeLinks(result.payload); // those that fit, and the clipboard
          error.replaceChildren(el('p', {}, message),
            ...(routes.length ? [el('p', {}, 'Send it another way:'), el('div', { class: 'fb-routes' }, ...routes)] : []));
          error.hidden = false;
          (error.querySelector('.fb-route') || form.elements.suggestion).focus();
        } else {
          form.reset();
          done();
        }
      } finally {
        send.disabled = false;
      }
    });
  }

  function mountStatus() {
    // Present (and empty) from the start: screen readers announce changes only in a region they already know.
    status = el('div', { class: 'fb-status', role: 'status', 'aria-live': 'polite', [UI]: true });
    document.body.append(status);
  }

  let queueView = null;

  /* The waiting suggestions, in the feedback box: how many, why, and send now / copy / discard. */
  function renderQueue() {
    if (!queueView) return;
    const items = loadQueue();
    queueView.hidden = !items.length;
    if (!items.length) {
      queueView.replaceChildren();
      return;
    }
    const waiting = items.filter((i) => !i.stuck).length;
    const sendNow = el('button', { type: 'button', class: 'fb-send fb-send-now' }, 'Send now');
    sendNow.addEventListener('click', async () => {
      sendNow.disabled = true;
      const results = await flush('all');
      if ([...results.values()].some((r) => r.kind === 'queued')) {
        announce('Still waiting: the feedback service cannot be reached yet.', 'queued');
      }
    });
    queueView.replaceChildren(
      el('h3', { id: 'fb-queue-title' }, `Waiting on this device: ${items.length}`),
      el('p', { class: 'fb-hint' }, waiting
        ? 'These could not reach the feedback service yet; they are retried automatically while the book is open.'
        : 'These could not be sent here. Send them another way, or discard them.'),
      el('ul', { class: 'fb-queue-list' }, ...items.map(queueItem)),
      el('div', { class: 'fb-actions' }, sendNow));
  }

  function queueItem(item) {
    const text = oneLine(item.payload.suggestion);
    const discard = el('button', { type: 'button', class: 'fb-route' }, 'Discard');
    discard.setAttribute('aria-label', `Discard "${text.slice(0, 40)}"`);
    discard.addEventListener('click', () => {
      updateQueue((items) => items.filter((i) => i.payload.id !== item.payload.id));
      announce('Discarded.', 'sent');
      (queueView.querySelector('button') || document.getElementById('fb-box-suggestion'))?.focus();
    });
    const why = item.stuck ? `Not sent: ${item.stuck}.` : `Tried ${item.attempts} time${item.attempts === 1 ? '' : 's'}.`;
    return el('li', {},
      el('p', { class: 'fb-queue-text' }, text.length > 120 ? `${text.slice(0, 120)}…` : text),
      el('p', { class: 'fb-hint' }, why),
      el('div', { class: 'fb-routes' }, ...(item.stuck ? routeLinks(item.payload) : [copyButton(item.payload)]), discard));
  }

  function mountBox() {
    let box = document.getElementById('feedback-box');
    if (!box) {
      box = el('section', { id: 'feedback-box', 'aria-labelledby': 'fb-box-title' });
      main.append(box);
    }
    box.classList.add('fb-box');
    box.setAttribute(UI, '');
    if (!box.querySelector('h2, h3')) box.append(el('h2', { id: 'fb-box-title' }, 'Feedback on this page'));
    if (box.querySelector('form')) return;
    const quoteOne = el('button', { type: 'button', class: 'fb-paragraph', 'aria-keyshortcuts': SHORTCUT },
      'Comment on a paragraph');
    quoteOne.addEventListener('click', () => suggestReading?.());
    box.append(el('p', { class: 'fb-hint' },
      'Spotted a mistake or something unclear? Tell us here. To comment on one passage, select it and choose ',
      el('q', {}, 'Suggest a change'), ' (or press ', el('kbd', {}, SHORTCUT),
      '); with nothing selected, the same keys quote the paragraph you are reading.'), quoteOne);
    const form = buildForm('fb-box');
    onSubmit(form, () => ({ section: '' }), () => {});
    box.append(form);
    if (mode === 'service') {
      queueView = el('div', { class: 'fb-queue', id: 'fb-queue', role: 'region', 'aria-labelledby': 'fb-queue-title', hidden: true });
      box.append(queueView);
      renderQueue();
      window.addEventListener('storage', (e) => { if (e.key === QUEUE_KEY) renderQueue(); }); // another tab
    }
  }

  function mountDialog() {
    // Scrolls when long, so it takes focus: a keyboard can scroll it too.
    const quoteView = el('blockquote', { class: 'fb-quote', tabindex: '0', 'aria-labelledby': 'fb-dialog-quote-label' });
    const form = buildForm('fb-dialog');
    const cancel = el('button', { type: 'button', class: 'fb-cancel' }, 'Cancel');
    form.querySelector('.fb-actions').append(cancel);
    // Without a selection the quote is a whole paragraph, and these move it: a keyboard or a screen
    // reader chooses the passage by hearing it (the quote is a live region) instead of selecting it.
    const prev = el('button', { type: 'button', class: 'fb-move' }, 'Previous paragraph');
    const next = el('button', { type: 'button', class: 'fb-move' }, 'Next paragraph');
    const moves = el('div', { class: 'fb-moves', hidden: true }, prev, next);
    let step = null;
    const show = (got) => {
      current = { quote: got.quote, section: got.section };
      quoteView.textContent = got.quote.exact.replace(/\s+/g, ' '); // a paragraph's source line breaks are not the reader's
      prev.disabled = !got.hasPrev;
      next.disabled = !got.hasNext;
    };
    for (const [button, dir] of [[prev, -1], [next, 1]]) {
      button.addEventListener('click', () => {
        const got = step?.(dir);
        if (got) show(got);
        if (button.disabled) (dir < 0 ? next : prev).focus();
      });
    }
    const dialog = el('dialog', { class: 'fb-dialog', 'aria-labelledby': 'fb-dialog-title', [UI]: true },
      el('h2', { id: 'fb-dialog-title' }, 'Suggest a change'),
      el('p', { class: 'fb-quote-label', id: 'fb-dialog-quote-label' }, 'About this passage:'), quoteView, moves, form);
    let current = null;
    let returnFocus = null;
    cancel.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => { returnFocus?.focus?.({ preventScroll: true }); });
    onSubmit(form, () => current, () => dialog.close());
    document.body.append(dialog);
    return {
      open(quote, section, stepper = null) {
        current = { quote, section };
        returnFocus = document.activeElement;
        quoteView.textContent = quote.exact;
        step = stepper?.move;
        moves.hidden = !stepper;
        quoteView.setAttribute('aria-live', stepper ? 'polite' : 'off');
        if (stepper) show({ quote, section, ...stepper.ends() });
        form.querySelector('.fb-error').hidden = true;
        dialog.showModal(); // modal: focus stays inside, Escape closes
        form.elements.suggestion.focus();
      },
    };
  }

  function mountSelectionButton(dialog) {
    const button = el('button', {
      type: 'button', class: 'fb-suggest', [UI]: true, hidden: true,
      'aria-keyshortcuts': SHORTCUT, title: `Suggest a change to the selected text (${SHORTCUT})`,
    }, 'Suggest a change');
    document.body.append(button);
    let pending = null;
    let hideTimer = null;

    const place = () => {
      if (!pending) return;
      const rects = pending.getClientRects();
      const last = rects[rects.length - 1] || pending.getBoundingClientRect();
      const width = button.offsetWidth || 160;
      button.style.left = `${Math.max(8, Math.min(window.innerWidth - width - 8, last.right - width / 2))}px`;
      button.style.top = `${Math.min(window.innerHeight - 52, Math.max(8, last.bottom + 8))}px`;
    };
    const hide = () => { button.hidden = true; };

    const openFor = (range) => {
      const quote = quoteOf(range);
      if (!quote) return;
      if (quote.exact.length > MAX_EXACT) {
        announce(`The selected passage is too long (over ${MAX_EXACT} characters): please select a shorter one.`, 'failed');
        return;
      }
      hide();
      dialog.open(quote, sectionOf(range.startContainer));
    };

    document.addEventListener('selectionchange', () => {
      clearTimeout(hideTimer);
      const range = selectedRange();
      if (range) {
        pending = range;
        button.hidden = false;
        place();
      } else if (document.activeElement !== button) {
        hideTimer = setTimeout(hide, 300); // a tap on the button may clear the selection first
      }
    });
    button.addEventListener('mousedown', (e) => e.preventDefault()); // keep the selection
    button.addEventListener('click', () => pending && openFor(pending));
    window.addEventListener('scroll', place, { passive: true });
    window.addEventListener('resize', place, { passive: true });

    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !button.hidden) {
        hide();
        return;
      }
      if (!(e.altKey && e.shiftKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyS')) return;
      const target = e.target;
      if (target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
      e.preventDefault();
      const range = selectedRange() || (button.hidden ? null : pending);
      if (range) openFor(range);
      else suggestReading();
    });

    // The paragraph being read: the one holding focus, else the first on screen below the top bar.
    const PASSAGES = 'p, li, dd, figcaption, td, th';
    const passages = () => [...main.querySelectorAll(PASSAGES)].filter((b) => !isOwnUi(b) && !inWidget(b)
      && !(b.tagName === 'LI' && b.querySelector('p, ul, ol')) // a list item of paragraphs: its paragraphs
      && !b.closest(`${UNREAD}, .page-meta, .predict-choices, .cite-this, .page-nav`) && b.textContent.trim() && b.checkVisibility());
    const passageAt = (b) => {
      const range = document.createRange();
      range.selectNodeContents(b);
      const quote = quoteOf(range);
      if (quote && quote.exact.length > MAX_EXACT) { // a very long paragraph: its beginning
        quote.suffix = clean(quote.exact.slice(MAX_EXACT) + ' ' + quote.suffix).slice(0, CONTEXT_CHARS);
        quote.exact = quote.exact.slice(0, MAX_EXACT).trimEnd();
      }
      return quote && { quote, section: sectionOf(b) };
    };
    suggestReading = () => {
      const list = passages();
      const focused = document.activeElement;
      let at = focused && main.contains(focused) ? list.findIndex((b) => b.contains(focused)) : -1;
      if (at < 0) {
        const top = Math.max(0, document.querySelector('.topbar')?.getBoundingClientRect().bottom || 0);
        at = list.findIndex((b) => { const r = b.getBoundingClientRect(); return r.bottom > top + 4 && r.top < innerHeight; });
        // none on screen (the feedback box at the end): the last one above it
        if (at < 0) at = list.findLastIndex((b) => b.getBoundingClientRect().bottom <= top + 4);
      }
      const first = at >= 0 && passageAt(list[at]);
      if (!first) {
        document.getElementById('fb-box-suggestion')?.focus();
        announce('Select a passage first to suggest a change to it, or write in the feedback box.', 'hint');
        return;
      }
      const ends = () => ({ hasPrev: at > 0, hasNext: at < list.length - 1 });
      const move = (dir) => {
        for (let i = at + dir; i >= 0 && i < list.length; i += dir) {
          const got = passageAt(list[i]);
          if (got) {
            at = i;
            list[i].scrollIntoView({ block: 'nearest' });
            return { ...got, ...ends() };
          }
        }
        return null;
      };
      hide();
      dialog.open(first.quote, first.section, { move, ends });
    };
  }

  // ---- start ---------------------------------------------------------------------------------------------

  window.bookFeedback = {
    mode,
    queue: () => loadQueue().map((i) => structuredClone(i)),
    flush: () => flush('all').then((results) => Object.fromEntries(results)), // {id: {kind, reason}}
  };
  if (main && mode) {
    mountStatus();
    mountBox();
    mountSelectionButton(mountDialog());
  }
  if (mode === 'service') {
    window.addEventListener('online', () => flush('waiting'));
    if (loadQueue().some((i) => !i.stuck)) flush('waiting');
  }
})();
