/**
 * The installable web app's service worker (issue 36 item 5). It keeps the shell (the wallet page, served the same
 * for every route of the island) and the static assets, so the app opens offline and the browser offers to install
 * it. It never touches anything else: /api, /oidc, /auth, /sandbox, /tg, /operator and every non-GET request go to
 * the network as if it were not there, so no answer with money in it is ever cached. `npm run build` writes the
 * build's version into VERSION (astro.config.mjs): a new build is a new worker with a new cache, and the old
 * caches are deleted when it takes over.
 */
/* global self, caches, fetch */
const VERSION = 'development';
const CACHE = `wallet-${VERSION}`;
/** Where the cached shell of the island's pages is kept: one copy, whatever route it was fetched for. */
const SHELL = '/home';
const PRECACHE = ['/favicon.svg', '/manifest.webmanifest', '/icons/icon-192.png', '/icons/icon-512.png', '/icons/maskable-512.png'];
/** The island's routes (src/lib/routes.ts), but /tg: Telegram's mini app is never served from here. */
const APP_PAGES = /^\/(home|settings|swap|exchange|buy|sell|select-asset|manage-assets|notifications)(\/|$)/;
const STATIC = /^\/(_astro|coins|icons)\/|^\/(favicon\.svg|manifest\.webmanifest)$/;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(PRECACHE))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name.startsWith('wallet-') && name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

/** Only a complete answer of our own origin is kept (never a redirect, an error or an opaque answer). */
const keepable = (response) => response.ok && response.type === 'basic' && !response.redirected;

/** Hashed assets never change under their name: the cache first, the network for what is not in it yet. */
async function fromCacheFirst(request) {
  const cache = await caches.open(CACHE);
  const cached = await cache.match(request);
  if (cached) return cached;
  const response = await fetch(request);
  if (keepable(response)) await cache.put(request, response.clone());
  return response;
}

/** The page from the network while there is one (it keeps the shell fresh), the kept shell offline. */
async function pageFromNetworkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (keepable(response)) await cache.put(SHELL, response.clone());
    return response;
  } catch (error) {
    const shell = await cache.match(SHELL);
    if (shell) return shell;
    throw error;
  }
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    if (APP_PAGES.test(url.pathname)) event.respondWith(pageFromNetworkFirst(request));
    return;
  }
  if (STATIC.test(url.pathname) && !url.search) event.respondWith(fromCacheFirst(request));
});
