// The layer rules bite: the project's dependency-cruiser config, run over a fixture tree that breaks them, reports each break.
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { beforeAll, describe, expect, it } from 'vitest';
import configuration from '../../support/dependency-cruiser.config.ts';

const fixtureRoot = fileURLToPath(new URL('./fixtures', import.meta.url));

async function violations(): Promise<string[]> {
  const { options, ...ruleSet } = configuration;
  const { output } = await cruise(['src'], { ...options, ruleSet, validate: true, baseDir: fixtureRoot });
  return (output as ICruiseResult).summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} -> ${to}`).sort();
}

describe('layer rules', () => {
  let found: string[] = [];
  beforeAll(async () => {
    found = await violations();
  });

  it('fails a domain file that imports http', () => {
    expect(found).toContain('domain-not-to-outer-layers: src/server/domain/breaks-layers.ts -> src/server/http/status.ts');
  });

  it('fails an import cycle, even one of type-only imports', () => {
    expect(found).toContain('no-cycles: src/stores/first.ts -> src/stores/second.ts');
  });

  it('fails an identity provider file that imports http or an adapter implementation', () => {
    expect(found).toContain('idp-not-to-http: src/server/idp/breaks-layers.ts -> src/server/http/status.ts');
    expect(found).toContain('idp-not-to-adapter-implementations: src/server/idp/breaks-layers.ts -> src/server/adapters/chains/devnet.ts');
  });

  it('fails a ledger write outside orders/ and lets orders/ write', () => {
    expect(found).toContain('ledger-writes-only-from-orders: src/server/domain/writes-ledger.ts -> src/server/domain/ledger-writes.ts');
    expect(found.filter((line) => line.includes('domain/orders/'))).toEqual([]);
  });

  it('lets the domain and the identity provider name an adapter port, and reports nothing else', () => {
    expect(found.filter((line) => line.includes('uses-port'))).toEqual([]);
    expect(new Set(found.map((line) => line.split(':')[0]))).toEqual(
      new Set(['domain-not-to-outer-layers', 'no-cycles', 'idp-not-to-http', 'idp-not-to-adapter-implementations', 'ledger-writes-only-from-orders']),
    );
  });
});
