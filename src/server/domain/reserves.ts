/**
 * Proof of reserves (README "Proof of reserves"; `npm run custody -- reserves`): at one moment, a Merkle sum tree of
 * every user's balances per asset (src/lib/reserves.ts; each leaf a hash of a secret nonce and the balances), its
 * root and totals, and what the custody holds address by address, each address signing a message that names the
 * proof and its root. Published as one JSON document; each user gets their nonce, leaf and path to check inclusion.
 */
import type pg from 'pg';
import { unitsFromRowOrZero } from '../db/amounts.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { COINS, findCoin, type Network } from '../../lib/currencies.ts';
import { buildSumTree, leafHash, type PathStep } from '../../lib/reserves.ts';
import { ChainUnsupportedError, type AddressHolding } from '../adapters/chains/port.ts';
import type { ReserveSignature, ReserveSigner } from '../adapters/keys/port.ts';
import { inTransaction } from '../db/transaction.ts';

export type ReserveAsset = { currency: string; network: string; decimals: number };

export type ReserveAddress = { address: string; balances: Record<string, string>; proof: ReserveSignature };

export type ReservesProof = {
  version: 1;
  id: string;
  asOf: string;
  /** What every address signs: names the proof and the root of the liabilities. */
  message: string;
  assets: ReserveAsset[];
  /** Atomic units as decimal strings; `root.sums` in the order of `assets`. */
  liabilities: { root: { hash: string; sums: string[] }; leaves: number; totals: Record<string, string> };
  /** Per network: `signed` with its addresses, or `simulated` where a stand-in runs it (the devnet holds nothing on a chain). */
  holdings: { network: Network; status: 'signed' | 'simulated'; addresses: ReserveAddress[] }[];
  /** What the signed addresses hold per asset, in atomic units. */
  reserves: Record<string, string>;
};

/** A user's part of a proof: enough to recompute their leaf and walk to the root. */
export type ReserveLeaf = { proofId: string; asOf: string; nonce: string; leaf: string; balances: string[]; path: { side: 'left' | 'right'; hash: string; sums: string[] }[] };

export type ReserveChain = { networks: readonly Network[]; addressHoldings?(network: Network): Promise<AddressHolding[]> };

const wire = (sums: readonly bigint[]) => sums.map(String);
const wirePath = (path: readonly PathStep[]) => path.map((step) => ({ side: step.side, hash: step.hash, sums: wire(step.sums) }));

/** Builds, signs and stores a proof of the ledger as it is now; answers the published document. */
export async function publishReserves(pool: pg.Pool, deps: { chain: ReserveChain; sign: ReserveSigner; origin: string }): Promise<ReservesProof> {
  const id = randomUUID();
  // One snapshot: every balance read at the same instant of the ledger.
  const { asOf, rows } = await inTransaction(pool, async (client) => {
    const now = await client.query<{ now: Date }>('SELECT now()');
    const balances = await client.query<{ user_id: string; currency: string | null; total: string | null }>(
      `SELECT u.id AS user_id, b.currency, sum(b.available + b.on_hold)::text AS total
         FROM users u
         LEFT JOIN wallet_accounts w ON w.user_id = u.id
         LEFT JOIN ledger_accounts a ON a.wallet_account_id = w.id AND a.kind = 'USER'
         LEFT JOIN ledger_balances b ON b.ledger_account_id = a.id
        GROUP BY u.id, b.currency`,
    );
    return { asOf: (now.rows[0]?.now ?? new Date()).toISOString(), rows: balances.rows };
  }, { begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' });
  const currencies = [...new Set([...COINS.map((c) => c.currency), ...rows.flatMap((r) => (r.currency ? [r.currency] : []))])];
  const assets = currencies.map((currency) => {
    const coin = findCoin(currency);
    return { currency, network: coin?.network ?? 'UNKNOWN', decimals: coin?.decimals ?? 0 };
  });
  const byUser = new Map<string, bigint[]>();
  for (const row of rows) {
    const sums = byUser.get(row.user_id) ?? currencies.map(() => 0n);
    if (row.currency) sums[currencies.indexOf(row.currency)] = unitsFromRowOrZero(row.total, 'total');
    byUser.set(row.user_id, sums);
  }
  const leaves = [...byUser].map(([userId, sums]) => {
    const nonce = randomBytes(32).toString('hex');
    return { userId, nonce, sums, hash: leafHash(nonce, sums) };
  });
  const tree = buildSumTree(leaves, currencies.length);
  const message = `Proof of reserves ${id} of ${deps.origin} at ${asOf}, liabilities root ${tree.root.hash}`;

  const holdings: ReservesProof['holdings'] = [];
  const reserves: Record<string, bigint> = {};
  for (const network of deps.chain.networks) {
    let held: AddressHolding[];
    try {
      if (!deps.chain.addressHoldings) throw new ChainUnsupportedError('no holdings by address');
      held = await deps.chain.addressHoldings(network);
    } catch (error) {
      if (error instanceof ChainUnsupportedError) {
        holdings.push({ network, status: 'simulated', addresses: [] });
        continue;
      }
      // A proof that leaves out a network's coins would understate the reserves: nothing is published.
      throw error;
    }
    const addresses: ReserveAddress[] = [];
    for (const holding of held) {
      for (const [currency, units] of Object.entries(holding.balances)) reserves[currency] = (reserves[currency] ?? 0n) + units;
      const balances = Object.fromEntries(Object.entries(holding.balances).map(([currency, units]) => [currency, String(units)]));
      addresses.push({ address: holding.address, balances, proof: await deps.sign({ network, path: holding.path }, message) });
    }
    holdings.push({ network, status: 'signed', addresses });
  }

  const proof: ReservesProof = {
    version: 1,
    id,
    asOf,
    message,
    assets,
    liabilities: { root: { hash: tree.root.hash, sums: wire(tree.root.sums) }, leaves: leaves.length, totals: Object.fromEntries(currencies.map((c, i) => [c, String(tree.root.sums[i] ?? 0n)])) },
    holdings,
    reserves: Object.fromEntries(Object.entries(reserves).map(([currency, units]) => [currency, String(units)])),
  };
  await inTransaction(pool, async (client) => {
    await client.query('INSERT INTO reserve_proofs (id, as_of, root_hash, body) VALUES ($1, $2, $3, $4)', [id, asOf, tree.root.hash, JSON.stringify(proof)]);
    for (let start = 0; start < leaves.length; start += 1000) {
      const chunk = leaves.slice(start, start + 1000);
      await client.query(
        `INSERT INTO reserve_leaves (proof_id, user_id, position, nonce, leaf_hash, balances, path)
         SELECT $1, u, p, n, h, b::jsonb, pa::jsonb FROM unnest($2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) AS t(u, p, n, h, b, pa)`,
        [
          id,
          chunk.map((l) => l.userId),
          chunk.map((_, i) => start + i),
          chunk.map((l) => l.nonce),
          chunk.map((l) => l.hash),
          chunk.map((l) => JSON.stringify(wire(l.sums))),
          chunk.map((l) => JSON.stringify(wirePath(tree.paths.get(l.hash) ?? []))),
        ],
      );
    }
  });
  return proof;
}

/** The newest published proof, or undefined before the first. */
export async function latestReserves(pool: pg.Pool): Promise<ReservesProof | undefined> {
  const row = await pool.query<{ body: ReservesProof }>('SELECT body FROM reserve_proofs ORDER BY as_of DESC LIMIT 1');
  return row.rows[0]?.body;
}

/** The user's leaf in the newest proof; undefined when there is none or the user signed up after it. */
export async function reserveLeafOf(pool: pg.Pool, userId: string): Promise<ReserveLeaf | undefined> {
  const row = await pool.query<{ proof_id: string; as_of: Date; nonce: string; leaf_hash: string; balances: string[]; path: ReserveLeaf['path'] }>(
    `SELECT l.proof_id, p.as_of, l.nonce, l.leaf_hash, l.balances, l.path
       FROM reserve_leaves l JOIN reserve_proofs p ON p.id = l.proof_id
      WHERE l.user_id = $1 AND p.id = (SELECT id FROM reserve_proofs ORDER BY as_of DESC LIMIT 1)`,
    [userId],
  );
  const found = row.rows[0];
  return found && { proofId: found.proof_id, asOf: found.as_of.toISOString(), nonce: found.nonce, leaf: found.leaf_hash, balances: found.balances, path: found.path };
}
