import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

/** GitHub's anchor of a heading: lower case, spaces to dashes, punctuation other than dashes and underscores dropped. */
const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');

describe('the alert rules', () => {
  const rules = read('ops/prometheus/alerts.yml');
  const tests = read('ops/prometheus/alerts.test.yml');
  const names = [...rules.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);

  it('each have a runbook paragraph in the README under the anchor they name', () => {
    const headings = new Set([...read('README.md').matchAll(/^#{2,6} (.+)$/gm)].map((m) => anchor(m[1] ?? '')));
    const runbooks = [...rules.matchAll(/^\s+runbook: README\.md#(\S+)$/gm)].map((m) => m[1]);
    expect(names.length).toBeGreaterThanOrEqual(9);
    expect(runbooks).toHaveLength(names.length);
    expect(runbooks.filter((target) => !headings.has(target ?? ''))).toEqual([]);
    expect(runbooks).toEqual(names.map((name) => name?.toLowerCase()));
  });

  it('each have a promtool test where they fire and one where they do not', () => {
    for (const name of names) {
      const cases = [...tests.matchAll(new RegExp(`alertname: ${name}\\n\\s+exp_alerts:(.*)`, 'g'))].map((m) => m[1]?.trim());
      expect(cases, name).toContain('[]');
      expect(cases.filter((c) => c === ''), name).not.toHaveLength(0);
    }
  });
});
