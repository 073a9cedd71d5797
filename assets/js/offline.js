/* The book offline (bookbuild/html/offline): registers the service worker (sw.js at the site root),
 * offers "Keep this book offline" (in the top bar's panel and on the Editions page: the size first,
 * then progress, and a way to remove it), says when the page is read offline, and when a newer
 * edition is deployed offers to reload into it.  Opened as a file (file://) nothing is registered:
 * the panel says that offline reading needs the book served.
 * Loaded only where it has work (the loader in _includes/head.html; the Editions page loads it
 * itself): after the load of a page a worker of the book controls (a kept book: the offline and
 * update notices), or when the reader opens the Offline panel (window.bookOfflineOpen: the click
 * that loaded it, so the panel opens now) or the browser goes offline.  So the worker is registered
 * only for a reader who opens the panel (to keep the book) or the Editions page: a page the worker
 * controls fetches every file through it, which made the next visit to a widget 1.6-2x slower
 * than without a worker (a reader who never keeps the book paid that on every page), and a
 * first visit fetches nothing for the offline feature.
 * Test hook: window.bookOffline = {state, registration}. */
(function () {
  'use strict';
  if (window.bookOffline) return;
  const script = document.currentScript;
  const root = new URL('../../', script ? script.src : location.href);   // assets/js/offline.js
  const served = location.protocol === 'http:' || location.protocol === 'https:';
  const supported = served && 'serviceWorker' in navigator && window.isSecureContext;
  const state = { info: null, kept: false, progress: null, fromCache: false, error: null, update: null };
  const api = { state, registration: null };
  window.bookOffline = api;

  const css = `
.offline-panel{position:absolute;top:100%;right:.5rem;z-index:6;width:min(26rem,calc(100vw - 1rem));box-sizing:border-box;
  border:1px solid var(--rule);border-radius:6px;background:var(--bg);padding:.5rem 1rem;box-shadow:0 4px 12px rgba(0,0,0,.18)}
.offline-box{max-width:40rem;font-family:var(--font-ui);font-size:.95rem}
.offline-box p{margin:.25rem 0 .5rem}
.offline-box button{font:inherit;border-radius:4px;padding:.35rem .75rem;cursor:pointer;margin:.25rem .5rem .25rem 0;min-height:44px}
.offline-box .offline-keep{background:var(--accent);color:var(--bg);border:1px solid var(--accent)}
.offline-box .offline-forget{background:none;color:inherit;border:1px solid var(--muted)}
.offline-box progress{width:100%;max-width:24rem;height:.75rem;display:block}
.offline-box [hidden]{display:none}
.offline-notice{margin:.5rem auto;width:max-content;max-width:calc(100% - 1rem);box-sizing:border-box;
  background:var(--panel);color:var(--fg);border:1px solid var(--rule);font-family:var(--font-ui);font-size:.95rem;border-radius:6px;
  padding:.3rem .5rem .3rem .75rem;display:flex;gap:.5rem .75rem;align-items:center;flex-wrap:wrap}
.offline-notice[hidden],.offline-notice [hidden]{display:none}
.offline-notice span{flex:1 1 12rem}
.offline-notice button{font:inherit;background:var(--bg);color:var(--fg);border:1px solid var(--rule);border-radius:4px;padding:.3rem .75rem;min-height:44px;min-width:44px;cursor:pointer}
@media print{.offline-open,.offline-panel,.offline-notice{display:none}}`;

  const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
  const boxes = [];

  function makeBox() {
    const box = document.createElement('div');
    box.className = 'offline-box';
    box.innerHTML = '<p class="offline-what"></p><button type="button" class="offline-keep" hidden></button>' +
      '<progress class="offline-bar" hidden></progress><p class="offline-status" role="status" aria-live="polite"></p>' +
      '<button type="button" class="offline-forget" hidden>Remove the offline copy</button>';
    box.querySelector('.offline-keep').addEventListener('click', keep);
    box.querySelector('.offline-forget').addEventListener('click', forget);
    boxes.push(box);
    return box;
  }

  function render() {
    const size = state.info ? mb(state.info.total_bytes) : null;
    for (const box of boxes) {
      const what = box.querySelector('.offline-what');
      const keepButton = box.querySelector('.offline-keep');
      const bar = box.querySelector('.offline-bar');
      const status = box.querySelector('.offline-status');
      const forgetButton = box.querySelector('.offline-forget');
      if (!served) {
        what.textContent = 'Offline reading needs the book served over http:// or https:// (for example by python3 -m feedback serve --site): a book opened as a file cannot keep itself on this device.';
        keepButton.hidden = forgetButton.hidden = bar.hidden = true;
        continue;
      }
      if (!supported) {
        what.textContent = 'This browser cannot keep the book for offline reading (it needs service workers, on https:// or localhost).';
        keepButton.hidden = forgetButton.hidden = bar.hidden = true;
        continue;
      }
      what.textContent = 'Keep every page, the search, the figures and the widgets’ Python on this device, to read the book without a connection.' +
        (size ? ` It downloads ${size}.` : '');
      keepButton.textContent = size ? `Keep this book offline (${size})` : 'Keep this book offline';
      keepButton.hidden = state.kept || Boolean(state.progress);
      keepButton.disabled = !api.registration || !state.info;
      bar.hidden = !state.progress;
      if (state.progress) { bar.max = state.progress.total; bar.value = state.progress.done; }
      forgetButton.hidden = !state.kept || Boolean(state.progress);
      status.textContent = state.progress ? `Downloading: ${state.progress.done} of ${state.progress.total} files.`
        : state.error ? `Not kept: ${state.error}. Nothing was removed; try again when the connection is back.`
          : state.kept ? 'Kept on this device: the whole book opens without a connection.' : '';
    }
    const open = document.querySelector('.offline-open');
    notice();
  }

  // The notice sits in the page's flow under the top bar (it covers nothing) and can be dismissed:
  // "reading offline" for good on this device (localStorage), a newer edition for this visit.
  const DISMISSED = 'book-offline-notice-dismissed';
  const dismissed = (kind) => {
    try {
      return (kind === 'update' ? sessionStorage : localStorage).getItem(DISMISSED) === '1';
    } catch { return false; }
  };
  let noticeEl = null;
  function notice() {
    if (!noticeEl) return;
    const text = noticeEl.querySelector('span');
    const reload = noticeEl.querySelector('.offline-reload');
    const offline = navigator.onLine === false || state.fromCache;
    const kind = state.update ? 'update' : offline ? 'offline' : '';
    noticeEl.dataset.kind = kind;
    if (kind === 'update') {
      text.textContent = 'A newer edition of the book is available.';
    } else if (kind === 'offline') {
      text.textContent = state.kept ? 'You are reading offline: the copy kept on this device.'
        : 'You are reading offline: pages you have not opened before may not be here.';
    }
    reload.hidden = kind !== 'update';
    noticeEl.hidden = !kind || dismissed(kind);
  }

  function worker() {
    const reg = api.registration;
    return reg && (reg.active || reg.waiting || reg.installing);
  }
  function keep() {
    state.error = null;
    state.progress = { done: 0, total: state.info ? state.info.files : 1 };
    render();
    worker().postMessage({ type: 'keep' });
  }
  function forget() { worker().postMessage({ type: 'forget' }); }

  function onMessage(event) {
    const m = event.data || {};
    if (m.type === 'status') {
      state.kept = m.kept; state.fromCache = m.fromCache; state.progress = m.progress;
    } else if (m.type === 'progress') {
      state.progress = { done: m.done, total: m.total };
    } else if (m.type === 'kept') {
      state.kept = true; state.progress = null;
    } else if (m.type === 'keep-failed') {
      state.progress = null; state.error = m.message;
    } else if (m.type === 'forgotten') {
      state.kept = false; state.progress = null;
    } else {
      return;
    }
    render();
  }

  function offerUpdate(reg) {
    state.update = reg;
    render();
  }
  function watch(reg) {
    const track = (w) => w && w.addEventListener('statechange', () => {
      if (w.state === 'installed' && navigator.serviceWorker.controller) offerUpdate(reg);
    });
    if (reg.waiting && navigator.serviceWorker.controller) offerUpdate(reg);
    track(reg.installing);
    reg.addEventListener('updatefound', () => track(reg.installing));
  }

  async function register() {
    try {
      const reg = await navigator.serviceWorker.register(new URL('sw.js', root).href,
        { scope: root.pathname, updateViaCache: 'none' });
      api.registration = reg;
      watch(reg);
      const ready = await navigator.serviceWorker.ready;
      ready.active.postMessage({ type: 'status' });
    } catch (err) {
      state.error = err && err.message;
    }
    render();
  }

  function setUp() {
    const style = document.createElement('style');
    style.textContent = css;
    document.head.appendChild(style);
    // the top bar's button and its panel (bookbuild's page; a Quarto page has no .topbar-actions)
    const actions = document.querySelector('.topbar-actions');
    if (actions) {
      // in the page's HTML (bookbuild/html/templates/page.html), so that the top bar never shifts
      let open = actions.querySelector('.offline-open');
      if (!open) {
        open = document.createElement('button');
        open.type = 'button';
        open.className = 'offline-open';
        open.setAttribute('aria-expanded', 'false');
        open.setAttribute('aria-controls', 'offline-panel');
        open.textContent = 'Offline';
        actions.insertBefore(open, actions.querySelector('.pdf-link'));
      }
      const panel = document.createElement('section');
      panel.id = 'offline-panel';
      panel.className = 'offline-panel';
      panel.setAttribute('aria-label', 'Keep this book offline');
      panel.hidden = true;
      panel.appendChild(makeBox());
      actions.closest('header').appendChild(panel);
      const show = (on) => {
        panel.hidden = !on;
        open.setAttribute('aria-expanded', String(on));
      };
      const toggle = () => {
        show(panel.hidden);
        if (!panel.hidden) panel.querySelector('button:not([hidden])')?.focus();
      };
      open.addEventListener('click', toggle);
      if (window.bookOfflineOpen) toggle();          // the click that loaded this script
      panel.addEventListener('keydown', (e) => { if (e.key === 'Escape') { show(false); open.focus(); } });
    }
    for (const slot of document.querySelectorAll('[data-offline-panel]')) slot.appendChild(makeBox());
    noticeEl = document.createElement('div');
    noticeEl.className = 'offline-notice';
    noticeEl.setAttribute('role', 'status');
    noticeEl.hidden = true;
    noticeEl.innerHTML = '<span></span><button type="button" class="offline-reload" hidden>Reload</button>'
      + '<button type="button" class="offline-dismiss" aria-label="Dismiss this notice">Dismiss</button>';
    noticeEl.querySelector('.offline-reload').addEventListener('click', () => {
      const waiting = state.update && state.update.waiting;
      if (!waiting) return location.reload();
      navigator.serviceWorker.addEventListener('controllerchange', () => location.reload());
      waiting.postMessage({ type: 'skip-waiting' });
    });
    noticeEl.querySelector('.offline-dismiss').addEventListener('click', () => {
      try {
        (noticeEl.dataset.kind === 'update' ? sessionStorage : localStorage).setItem(DISMISSED, '1');
      } catch { /* storage refused: hidden for this page only */ }
      noticeEl.hidden = true;
    });
    const bar = document.querySelector('header.topbar');
    if (bar) bar.after(noticeEl);
    else document.body.prepend(noticeEl);
    window.addEventListener('online', render);
    window.addEventListener('offline', render);
    render();
    if (!supported) return;
    navigator.serviceWorker.addEventListener('message', onMessage);
    // Loaded where there is work (see the top): the worker is registered now (again where it is,
    // which only looks for an update).
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      // the offline step names the manifest in every page it made sw.js for; a site built without it
      // has no worker to register nor offline.json to read (a request for either would only fail)
      if (!document.querySelector('link[rel="manifest"]')) return;
      fetch(new URL('offline.json', root).href).then((r) => (r.ok ? r.json() : null))
        .then((info) => { state.info = info; render(); }).catch(() => {});
      register();
    };
    api.start = start;
    if (document.readyState === 'complete') start();
    else window.addEventListener('load', start);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
  else setUp();
}());
