import pg from 'pg';
import type { TestApp } from './fixtures.ts';

/**
 * Sets reference USD prices (whole units or decimals, per base asset) in the rates walk's own row, as the walk would
 * (no walk runs in these tests), then waits out the second the server keeps prices cached.
 */
export async function setReferencePrices(app: TestApp, prices: Record<string, string>): Promise<void> {
  const scaled = Object.fromEntries(Object.entries(prices).map(([asset, usd]) => [asset, scale(usd)]));
  const client = new pg.Client({ connectionString: app.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO app_setting (key, value) VALUES ('rates.walk', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()`,
      [{ prices: scaled }],
    );
  } finally {
    await client.end();
  }
  await new Promise((resolve) => setTimeout(resolve, 1_100));
}

/** "1.02" → "102000000": 8 decimals, as the walk stores them. */
function scale(usd: string): string {
  const [whole = '0', fraction = ''] = usd.split('.');
  return (BigInt(whole) * 10n ** 8n + BigInt(fraction.padEnd(8, '0').slice(0, 8) || '0')).toString();
}
