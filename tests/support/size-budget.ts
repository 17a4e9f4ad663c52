import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { createWebHandler, CLIENT_DIR } from '../../src/server/http/web.ts';
import { AUTH_STEP_COOKIE, AUTH_STEP_PAGES } from '../../src/lib/auth-step.ts';
import { SIGNED_IN_COOKIE } from '../../src/lib/routes.ts';

/**
 * Size budgets of the browser bundles (issue 2), measured on the built pages as a browser receives them:
 * a static shell's JS ≤ 5 KB gzip (none without a form), the wallet island's initial JS ≤ 100 KB gzip,
 * each lazily loaded screen ≤ 30 KB gzip beyond what the initial load already brought.
 */
const KB = 1024;
const SHELLS_WITHOUT_FORM = ['/auth', '/auth/login', '/auth/signup', '/auth/signup/email/success', '/auth/forgot-success', '/terms', '/privacy', '/error/B2C_USM0027'];
// Pages with a form or a script-driven hand-over (the OpenID redirect and callback pages).
// The e-mail login page as the provider sends the browser there (with an interaction; without one it redirects).
const SHELLS_WITH_FORM = ['/auth/login/email?uid=budget', '/auth/signup/email', '/auth/forgot', '/auth/forgot/some-code', '/auth/signup/confirm/some-code', '/auth/login/start', '/auth/callback', '/auth/silent'];
const ISLAND_PAGES = ['/home'];
/**
 * Lazy chunks with a budget of their own: the analytics SDK (RudderStack's bundled build, plugins included, about
 * 50 KB gzip) loads after the first screen is drawn and never delays a screen (README, Analytics).
 */
const OWN_BUDGETS: Array<[RegExp, number]> = [[/^_astro\/analytics-sdk\.[\w-]+\.js$/, 52 * KB]];

const gz = (text: string | Buffer) => gzipSync(text, { level: 9 }).length;
const read = (file: string) => readFileSync(join(CLIENT_DIR, file));

function staticImports(code: string): string[] {
  return [...code.matchAll(/(?:import|export)\s*(?:[\w*${}\s,]+from\s*)?["'`](\.\.?\/[^"'`]+\.js)["'`]/g)].map((m) => m[1] ?? '');
}
function dynamicImports(code: string): string[] {
  return [...code.matchAll(/import\(\s*["'`](\.\.?\/[^"'`]+\.js)["'`]\s*\)/g)].map((m) => m[1] ?? '');
}
function resolveFrom(file: string, spec: string): string {
  return join(file, '..', spec).replace(/^\/+/, '');
}
/** The file and everything it statically imports, transitively. */
function closure(entry: string, into = new Set<string>()): Set<string> {
  if (into.has(entry)) return into;
  into.add(entry);
  const code = read(entry).toString();
  for (const spec of staticImports(code)) closure(resolveFrom(entry, spec), into);
  return into;
}

type PageJs = { inline: number; files: Set<string>; lazy: Set<string> };

function scriptsOf(html: string): PageJs {
  const files = new Set<string>();
  let inline = 0;
  for (const match of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
    const src = /\bsrc="([^"]+)"/.exec(match[1] ?? '')?.[1];
    if (src) closure(src.replace(/^\//, ''), files);
    else inline += gz(match[2] ?? '');
  }
  // Astro islands name their component and renderer in attributes rather than script tags.
  for (const match of html.matchAll(/\b(?:component-url|renderer-url)="([^"]+)"/g)) closure((match[1] ?? '').replace(/^\//, ''), files);
  const lazy = new Set<string>();
  for (const file of files) for (const spec of dynamicImports(read(file).toString())) lazy.add(resolveFrom(file, spec));
  return { inline, files, lazy };
}

const sum = (files: Iterable<string>) => [...files].reduce((total, file) => total + gz(read(file)), 0);

const web = await createWebHandler();
const server = createServer((req, res) => web(req, res, () => res.end()));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const origin = `http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}`;
// The wallet's paths answer a device where nobody signed in with a redirect (and the entry pages a signed-in one):
// each page is asked for as the device that sees it.
const html = async (path: string) => {
  const signedIn = ISLAND_PAGES.includes(path);
  // A step's outcome page shows only after its form's step (else it goes back to the flow's start).
  const step = Object.entries(AUTH_STEP_PAGES).find(([, pages]) => pages.done === path)?.[0];
  const cookie = signedIn ? `${SIGNED_IN_COOKIE}=1` : step ? `${AUTH_STEP_COOKIE}=${step}` : undefined;
  const answer = await fetch(origin + path, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}, not the page to measure`);
  return answer.text();
};

const failures: string[] = [];
const rows: string[] = [];
function check(label: string, bytes: number, limit: number) {
  rows.push(`${bytes <= limit ? 'ok  ' : 'OVER'} ${label.padEnd(48)} ${(bytes / KB).toFixed(1).padStart(6)} KB gzip (budget ${limit / KB} KB)`);
  if (bytes > limit) failures.push(label);
}

try {
  for (const path of SHELLS_WITHOUT_FORM) {
    const js = scriptsOf(await html(path));
    check(`shell ${path} (no form: no JS)`, js.inline + sum(js.files), 0);
  }
  for (const path of SHELLS_WITH_FORM) {
    const js = scriptsOf(await html(path));
    check(`shell ${path}`, js.inline + sum(js.files), 5 * KB);
  }
  // The self-hosted font (issue 19 item 21): woff2 subsets only, shown at once in the fallback (swap), and small:
  // each file ≤ 50 KB, all of them together (Latin, Cyrillic, currency signs) ≤ 80 KB.
  for (const path of ['/auth/login', ...ISLAND_PAGES]) {
    const page = await html(path);
    const sheets = [...page.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"/g)].map((m) => read((m[1] ?? '').replace(/^\//, '')).toString());
    const css = [page, ...sheets].join('\n');
    const faces = [...css.matchAll(/@font-face\s*{([^}]*)}/g)].map((m) => m[1] ?? '');
    const files = [...new Set(faces.flatMap((face) => [...face.matchAll(/url\(["']?\/?([^"')]+)["']?\)/g)].map((m) => m[1] ?? '')))];
    const bad = files.filter((file) => !file.endsWith('.woff2')).length + faces.filter((face) => !/font-display:\s*swap/.test(face)).length;
    check(`fonts ${path}: ${files.length} woff2 files, swap (others: ${bad})`, bad === 0 && files.length > 0 ? 0 : 1, 0);
    let total = 0;
    for (const file of files) {
      const bytes = read(file).length;
      total += bytes;
      check(`  font ${file.replace(/^_astro\//, '')}`, bytes, 50 * KB);
    }
    check(`  fonts ${path}: all`, total, 80 * KB);
  }
  // The operator console (issue 30) is an island of its own: none of its files is in a user's page or lazy chunk.
  const operator = scriptsOf(await html('/operator'));
  const consoleEntry = [...operator.files].find((file) => /console\.[\w-]+\.js$/.test(file));
  if (!consoleEntry) failures.push('/operator loads no console island');
  check('operator console /operator: initial (not a user page)', operator.inline + sum(operator.files), 150 * KB);
  for (const path of ISLAND_PAGES) {
    const js = scriptsOf(await html(path));
    if (js.files.size === 0) failures.push(`${path} loads no wallet island`);
    const reachable = new Set(js.files);
    for (const chunk of js.lazy) closure(chunk, reachable);
    if (consoleEntry && reachable.has(consoleEntry)) failures.push(`${path} can load the operator console's code`);
    check(`wallet island ${path}: initial`, js.inline + sum(js.files), 100 * KB);
    const seen = new Set(js.files);
    const queue = [...js.lazy];
    for (const chunk of queue) {
      if (seen.has(chunk)) continue;
      const own = [...closure(chunk)].filter((file) => !seen.has(file));
      const budget = OWN_BUDGETS.find(([pattern]) => pattern.test(chunk))?.[1] ?? 30 * KB;
      check(`  lazy ${chunk.replace(/^_astro\//, '')}`, sum(own), budget);
      for (const file of own) {
        seen.add(file);
        for (const spec of dynamicImports(read(file).toString())) queue.push(resolveFrom(file, spec));
      }
    }
  }
} finally {
  server.close();
}

console.log(rows.join('\n'));
if (failures.length) {
  console.error(`size budget exceeded: ${failures.join(', ')}`);
  process.exit(1);
}
console.log('size budgets: all within limits');
