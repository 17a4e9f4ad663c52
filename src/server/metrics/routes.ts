/**
 * The `route` label of the HTTP series: the gateway's own pattern (`/api/:account/asset`) rather than the raw path,
 * so ids, addresses and hashes never become label values, and a small fixed set outside /api. Every label value
 * comes from a bounded set: a pattern the gateway registered, `unmatched`, or one of the fixed names below.
 */

type Node = { literal: Map<string, Node>; param?: Node; pattern?: string; rest?: string };

/** The identity provider's endpoints by their first segment; anything else under /oidc is `/oidc/*`. */
const OIDC_ENDPOINTS = new Set(['auth', 'token', 'jwks', 'me', 'session', 'interaction', '.well-known', 'reg']);

/** Raw paths remembered with their label; cleared when full, so a crawl of random paths cannot grow it. */
const CACHE_LIMIT = 2_000;

const node = (): Node => ({ literal: new Map() });

function insert(root: Node, pattern: string): void {
  let at = root;
  for (const segment of pattern.split('/').slice(1)) {
    if (segment === '*') {
      at.rest ??= pattern;
      return;
    }
    if (segment.startsWith(':')) at = at.param ??= node();
    else {
      let next = at.literal.get(segment);
      if (!next) at.literal.set(segment, (next = node()));
      at = next;
    }
  }
  at.pattern ??= pattern;
}

/** A literal segment wins over a parameter, a parameter over a trailing wildcard, as the router itself prefers. */
function match(at: Node, segments: readonly string[], i: number): string | undefined {
  if (i === segments.length) return at.pattern ?? at.rest;
  const segment = segments[i] as string;
  const literal = at.literal.get(segment);
  const found = (literal && match(literal, segments, i + 1)) ?? (at.param && segment !== '' ? match(at.param, segments, i + 1) : undefined);
  return found ?? at.rest;
}

function outsideApi(path: string): string {
  if (path === '/oidc' || path.startsWith('/oidc/')) {
    const first = path.split('/')[2] ?? '';
    return OIDC_ENDPOINTS.has(first) ? `/oidc/${first}` : '/oidc/*';
  }
  if (path.startsWith('/sandbox/')) return '/sandbox/*';
  if (path.startsWith('/_astro/')) return '/_astro/*';
  return 'page';
}

/** `patterns`: the gateway's endpoints as Hono registered them (`ApiRoute.path`). Paths come without their query. */
export function createRouteLabels(patterns: readonly string[]): (path: string) => string {
  const root = node();
  for (const pattern of patterns) insert(root, pattern);
  const cache = new Map<string, string>();
  return (path) => {
    const known = cache.get(path);
    if (known !== undefined) return known;
    const label = path === '/api' || path.startsWith('/api/') ? (match(root, path.split('/').slice(1), 0) ?? 'unmatched') : outsideApi(path);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(path, label);
    return label;
  };
}
