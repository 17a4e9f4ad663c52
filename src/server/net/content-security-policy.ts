/**
 * Reading and amending a response's Content-Security-Policy: shared by the security headers of every response
 * (http/security-headers.ts) and the identity provider's pages that carry an inline script of their own.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export const CSP = 'content-security-policy';

/** The `'sha256-…'` source of an inline script, for a page that carries one the server wrote itself. */
export function scriptHash(script: string): string {
  return `'sha256-${createHash('sha256').update(script).digest('base64')}'`;
}

type Directives = Map<string, string[]>;

export function parsePolicy(policy: string): Directives {
  const directives: Directives = new Map();
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name && !directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), sources);
  }
  return directives;
}

function printPolicy(directives: Directives): string {
  return [...directives].map(([name, sources]) => [name, ...sources].join(' ')).join('; ');
}

/** Adds an inline script's hash to the script-src of the policy the response carries so far. */
export function allowInlineScript(res: ServerResponse, script: string): void {
  const current = res.getHeader(CSP);
  if (typeof current !== 'string') return;
  const directives = parsePolicy(current);
  directives.set('script-src', [...(directives.get('script-src') ?? ["'self'"]), scriptHash(script)]);
  res.setHeader(CSP, printPolicy(directives));
}
