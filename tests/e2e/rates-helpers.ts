import pg from 'pg';
import type { TestApp } from './fixtures.ts';

/**
 * Sets reference USD prices (whole units or decimals, per base asset) in the rates walk's own row, as the walk would
 * (no walk runs in these tests), then waits out the second the server keeps prices cached.
 */
export async function setReferencePrices(app: TestApp, prices: Record<string, string>): Promise<void> {
  const scaled = Object.fromEntries(Object.entries(prices).map(([asset, usd]) => [asset, scale(usd)]));
  await writeWalk(app, { prices: scaled });
}

/**
 * Takes the current price of these assets or fiats away (the walk's `withheld` list; [] gives them back), as a market
 * feed that stopped answering would: their last value stays known, nothing is quoted in them.
 */
export async function withholdPrices(app: TestApp, codes: string[]): Promise<void> {
  await writeWalk(app, { withheld: codes });
}

async function writeWalk(app: TestApp, value: Record<string, unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: app.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO app_setting (key, value) VALUES ('rates.walk', $1) ON CONFLICT (key) DO UPDATE SET value = app_setting.value || excluded.value, updated_at = now()`,
      [value],
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
