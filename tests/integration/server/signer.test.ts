import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unitsOf } from '../../../src/lib/money.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../../src/server/config.ts';
import { openCustody, type Custody } from '../../../src/server/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { SignerCallError, SignerUnavailableError } from '../../../src/server/adapters/signer/channel.ts';
import { connectSigner, type Signer } from '../../../src/server/signer/remote.ts';
import { HotWalletShortError, type SignedWithdrawal } from '../../../src/server/adapters/chains/port.ts';
import { orderColdSweep } from '../../../src/server/domain/custody-movements.ts';
import { litecoinCustody } from '../../support/litecoin-custody.ts';
import { quietLog, waitFor } from '../../support/custody.ts';
import type { Litecoind } from '../../support/litecoind.ts';
import { launchServer, launchWorker } from '../../support/server.ts';
import { approvalSealer } from '../../../src/server/domain/signing.ts';
import { listUnsealedWithdrawals, resealWithdrawal } from '../../../src/server/domain/withdrawals/review.ts';

/**
 * Issue 31 item 1 on Litecoin Core regtest: the signer is a process of its own (`npm run signer`), the only one with
 * WALLET_SEED; the worker's custody holds public keys only and asks it to sign by id. It refuses what the ledger does
 * not show held and approved as it was approved, and a kill -9 mid-signing loses nothing and signs nothing twice.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('the signer process on Litecoin Core regtest', { timeout: 300_000 }, () => {
  const token = randomBytes(32).toString('hex');
  // The server under test signs nothing itself (WORKERS=off); its withdrawals are sealed with the channel's token.
  const lc = litecoinCustody({ env: { SIGNER_TOKEN: token }, jobs: ['chain.deposits'], emailPrefix: 'signer' });
  let node: Litecoind;
  let database: Database;
  let env: Record<string, string>;
  let signerDir: string;
  let socket: string;
  let signerProcess: ChildProcess | undefined;
  let remote: Custody;
  let local: Custody;
  let signer: Signer;
  /** HOT_WALLET_MAX, COLD_WALLET and UTXO_CONSOLIDATE_BELOW, the same for the signer and the worker. */
  let hotCold: Record<string, string>;
  let cold: string;

  /** `npm run signer` on its own DATA_DIR and socket, with the seed; resolves once it answers. */
  const startSignerProcess = async () => {
    const child = spawn(process.execPath, ['src/server/signer/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env, ...hotCold, SIGNER: 'external', SIGNER_SOCKET: socket, DATA_DIR: signerDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    signerProcess = child;
    await waitFor('the signer answers', async () => {
      if (child.exitCode !== null) throw new Error(`the signer exited: ${stderr}`);
      return signer.call({ op: 'hello' }).then(
        () => true,
        () => false,
      );
    }, 120_000).catch((error: unknown) => {
      throw new Error(`${String(error)}: ${stderr}`);
    });
    return child;
  };
  const kill9 = async (child: ChildProcess) => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  /** One round of the worker's withdrawal job on the keyless custody. */
  const workRemote = async () => {
    for (const job of remote.jobs) if (job.name.startsWith('chain.')) await job.run();
  };
  const row = async (id: string) =>
    (await database.pool.query<{ state: string; tx_hash: string | null }>('SELECT state, tx_hash FROM withdrawals WHERE id = $1', [id])).rows[0];
  const refusal = async (request: Parameters<Signer['call']>[0]) => {
    const error = await signer.call(request).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SignerCallError);
    return (error as SignerCallError).code;
  };

  beforeAll(async () => {
    ({ node, database, env, custody: local } = await lc.start());
    signerDir = await mkdtemp(join(tmpdir(), 'signer-'));
    socket = join(signerDir, 'signer.sock');
    signer = connectSigner({ path: socket, token });
    cold = await node.newAddress();
    // A ceiling of 1 LTC, a cold wallet, and consolidation at the regtest fallback rate (5 litoshi/vB).
    hotCold = { HOT_WALLET_MAX: 'LITECOIN:1', COLD_WALLET: `LITECOIN:${cold}`, UTXO_CONSOLIDATE_BELOW: 'LITECOIN:10' };
    await startSignerProcess();
    // The worker as jobs/main.ts composes it, without the seed: public keys and the signer's channel.
    const { WALLET_SEED: _seed, ...withoutSeed } = env;
    // The keyless worker runs the hot-cold job: the signer signs its cold sweeps and consolidations.
    const config = loadConfig({ ...withoutSeed, ...hotCold, SIGNER: 'external', SIGNER_SOCKET: socket, DATA_DIR: await mkdtemp(join(tmpdir(), 'signer-worker-')) }, '0.0.0-test');
    expect(config.walletSeed).toBeUndefined();
    remote = await openCustody(config, quietLog, database.pool, { owner: false, signing: 'signer' });
    expect(remote.keys.signing).toBe(false);
  }, 300_000);
  afterAll(async () => {
    if (signerProcess && signerProcess.exitCode === null) await kill9(signerProcess);
    await remote?.close();
    await lc.close();
  });

  it('derives the same deposit addresses from the extended public keys as from the seed', async () => {
    for (const index of [0, 1, 7, 0x7fffffff]) {
      expect(await remote.addresses.derive(remote.keys, 'LITECOIN', index)).toBe(await local.addresses.derive(local.keys, 'LITECOIN', index));
    }
    expect(await remote.addresses.derive(remote.keys, 'TON', 3)).toBe(await local.addresses.derive(local.keys, 'TON', 3));
    expect(() => remote.keys.derive("m/84'/1'/0'/0/1").privateKey).not.toThrow();
    expect(remote.keys.derive("m/84'/1'/0'/0/1").privateKey).toBeNull();
  });

  it('runs the hot-cold job in the keyless worker', () => {
    expect(remote.jobs.map((job) => job.name).filter((name) => name.endsWith(':LITECOIN') && name.startsWith('custody.'))).toEqual(['custody.movements:LITECOIN', 'custody.hot-cold:LITECOIN']);
  });

  it('pays a withdrawal signed by the signer process from the ledger-held order', async () => {
    const user = await lc.funded('paid', '2');
    const to = await node.newAddress();
    const made = await lc.withdraw(user, '0.5', to);
    expect(made.status).toBe(200);
    await workRemote();
    expect((await row(made.body.id))?.state).toBe('BROADCAST');
    await waitFor('withdrawal completed', async () => {
      await node.mine(1);
      await workRemote();
      return (await row(made.body.id))?.state === 'COMPLETED';
    }, 30_000);
    // The recipient gets amount less the withdrawal fee (0.001), once.
    expect(await node.received(to)).toBe(49_900_000n);
    // Set back to PENDING in the database, sealed and held as approved: its settlement says it was paid.
    await database.pool.query(`UPDATE withdrawals SET state = 'PENDING' WHERE id = $1`, [made.body.id]);
    const again = await signer.call({ op: 'withdrawal', id: made.body.id }).then(() => undefined, (e: unknown) => e);
    expect(again).toBeInstanceOf(SignerCallError);
    expect(again).toMatchObject({ code: 'NOT_APPROVED', message: expect.stringContaining('already paid') });
    await database.pool.query(`UPDATE withdrawals SET state = 'COMPLETED' WHERE id = $1`, [made.body.id]);
  });

  it('refuses an unknown id, an unapproved order and one whose amount, destination or fee changed after approval', async () => {
    expect(await refusal({ op: 'withdrawal', id: randomUUID() })).toBe('UNKNOWN_ORDER');
    expect(await refusal({ op: 'withdrawal', id: 'not-an-id' })).toBe('BAD_REQUEST');
    expect(await refusal({ op: 'batch', id: randomUUID() })).toBe('UNKNOWN_ORDER');
    expect(await refusal({ op: 'sweep', reference: `sweep:${randomUUID()}` })).toBe('UNKNOWN_ORDER');
    const user = await lc.funded('tamper', '3');
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push((await lc.withdraw(user, '0.2', await node.newAddress())).body.id);
    const [address, amount, fee, review] = ids as [string, string, string, string];
    const before = (await database.pool.query<{ id: string; to_address: string; fee: string; approval_seal: string }>('SELECT id, to_address, fee::text, approval_seal FROM withdrawals WHERE id = ANY($1::uuid[])', [ids])).rows;
    const thief = await node.newAddress();
    await database.pool.query('UPDATE withdrawals SET to_address = $2 WHERE id = $1', [address, thief]);
    await database.pool.query('UPDATE withdrawals SET amount = amount * 2 WHERE id = $1', [amount]);
    await database.pool.query('UPDATE withdrawals SET fee = 0 WHERE id = $1', [fee]);
    await database.pool.query(`UPDATE withdrawals SET state = 'UNDER_REVIEW' WHERE id = $1`, [review]);
    expect(await refusal({ op: 'withdrawal', id: address })).toBe('TAMPERED');
    expect(await refusal({ op: 'withdrawal', id: amount })).toBe('TAMPERED');
    expect(await refusal({ op: 'withdrawal', id: fee })).toBe('TAMPERED');
    expect(await refusal({ op: 'withdrawal', id: review })).toBe('NOT_APPROVED');
    // A seal copied from another withdrawal does not fit either.
    await database.pool.query('UPDATE withdrawals SET approval_seal = (SELECT approval_seal FROM withdrawals WHERE id = $2) WHERE id = $1', [address, ids[3]]);
    expect(await refusal({ op: 'withdrawal', id: address })).toBe('TAMPERED');
    // The worker leaves them PENDING with their holds: nothing reached the chain.
    await workRemote();
    for (const id of [address, amount, fee]) expect(await row(id)).toEqual({ state: 'PENDING', tx_hash: null });
    expect(await node.received(thief, 0)).toBe(0n);
    // Put back as approved: then they are paid as any other (the ledger audit at the end balances).
    await database.pool.query(`UPDATE withdrawals SET amount = amount / 2 WHERE id = $1`, [amount]);
    await database.pool.query(`UPDATE withdrawals SET state = 'PENDING' WHERE id = $1`, [review]);
    for (const w of before) await database.pool.query('UPDATE withdrawals SET to_address = $2, fee = $3, approval_seal = $4 WHERE id = $1', [w.id, w.to_address, w.fee, w.approval_seal]);
    expect(((await signer.call({ op: 'withdrawal', id: address })) as SignedWithdrawal).txHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('loses nothing and signs nothing twice when the signer is killed with -9 mid-signing', async () => {
    const user = await lc.funded('kill', '3');
    const to = await node.newAddress();
    const made = await lc.withdraw(user, '0.7', to);
    const id = made.body.id;
    // The signer signs (and keeps what it signed) but dies before anyone records it: the worker never got the bytes.
    const first = (await signer.call({ op: 'withdrawal', id })) as SignedWithdrawal;
    await kill9(signerProcess!);
    expect(await row(id)).toEqual({ state: 'PENDING', tx_hash: null });
    // Meanwhile the worker cannot sign: the withdrawal waits with its hold.
    await workRemote();
    expect(await row(id)).toEqual({ state: 'PENDING', tx_hash: null });
    await expect(signer.call({ op: 'hello' })).rejects.toBeInstanceOf(SignerUnavailableError);
    // Back up, it gives the same bytes: one transaction, whoever asks and however often.
    const restarted = await startSignerProcess();
    const again = (await signer.call({ op: 'withdrawal', id })) as SignedWithdrawal;
    expect(again).toEqual(first);
    // Killed while the worker's own request is in flight: the worker retries later; still one transaction.
    const working = workRemote();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await kill9(restarted);
    await working;
    await startSignerProcess();
    await workRemote();
    await waitFor('withdrawal completed', async () => {
      await node.mine(1);
      await workRemote();
      return (await row(id))?.state === 'COMPLETED';
    }, 30_000);
    expect((await row(id))?.tx_hash).toBe(first.txHash);
    expect(await node.received(to)).toBe(69_900_000n);
    const wallet = await node.wallet.call<{ txids: string[] }[]>('listreceivedbyaddress', 0, false, false, to);
    expect(wallet[0]?.txids).toEqual([first.txHash]);
  });

  it('runs the worker and the gateway without WALLET_SEED in their environment', async () => {
    const { WALLET_SEED: _seed, ...withoutSeed } = env;
    const shared = { ...withoutSeed, SIGNER: 'external', SIGNER_SOCKET: socket, WORKERS: 'off' };
    const worker = launchWorker({ ...shared, DATA_DIR: await mkdtemp(join(tmpdir(), 'signer-worker-')) }, { alone: true });
    const gateway = await launchServer({ ...shared, DATA_DIR: await mkdtemp(join(tmpdir(), 'signer-gateway-')) });
    try {
      // Up and serving (the worker running its jobs), neither with the seed in its environment.
      expect((await fetch(`${gateway.url}/api/health`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(worker.process.exitCode, worker.output()).toBeNull();
      for (const pid of [worker.process.pid, gateway.process.pid]) {
        const environ = await readFile(`/proc/${pid}/environ`, 'utf8');
        expect(environ).toContain(`SIGNER_SOCKET=${socket}`);
        expect(environ).not.toContain('WALLET_SEED');
      }
      // The signer's does hold it.
      expect(await readFile(`/proc/${signerProcess?.pid}/environ`, 'utf8')).toContain('WALLET_SEED=');
    } finally {
      await worker.stop();
      await gateway.stop();
    }
  });

  const job = (name: string) => {
    const found = remote.jobs.find((j) => j.name === name);
    if (!found) throw new Error(`the worker has no job ${name}`);
    return found;
  };
  type MovementRow = { id: string; state: string; amount: string; to_address: string; tx_hash: string | null };
  const movements = async (kind: 'COLD' | 'CONSOLIDATION') =>
    (await database.pool.query<MovementRow>('SELECT id, state, amount::text, to_address, tx_hash FROM custody_movements WHERE kind = $1 ORDER BY created_at', [kind])).rows;
  const held = async () => (await remote.chain.holdings('LITECOIN')).LTC ?? 0n;
  /** Blocks mined one at a time, the chain read and the worker's custody movements confirmed after each. */
  const settle = async (blocks = 3) => {
    for (let i = 0; i < blocks; i += 1) {
      await node.mine(1);
      await lc.work();
      await job('custody.movements:LITECOIN').run();
    }
  };

  it('consolidates the deposit outputs into the hot wallet through the signer process (UTXO_CONSOLIDATE_BELOW)', async () => {
    await lc.funded('consolidate', '0.3');
    const deposits = await database.pool.query<{ tx_hash: string; vout: number }>(
      `SELECT tx_hash, vout FROM utxo_outputs WHERE network = 'LITECOIN' AND key_chain = 0 AND spent_tx IS NULL AND reserved_by IS NULL ORDER BY tx_hash, vout`,
    );
    expect(deposits.rows.length).toBeGreaterThan(0);
    // The keyless worker's round: the signer builds and signs it; the worker records and sends it.
    await job('custody.hot-cold:LITECOIN').run();
    const [consolidation, ...more] = await movements('CONSOLIDATION');
    expect(more).toEqual([]);
    expect(consolidation?.state).toBe('BROADCAST');
    // On chain: one output, to a change address of the custody's hot wallet, spending exactly the deposit outputs.
    const tx = await node.rpc.call<{ vin: { txid: string; vout: number }[]; vout: { scriptPubKey: { address?: string; addresses?: string[] } }[] }>('getrawtransaction', consolidation?.tx_hash, true);
    expect(tx.vout.map((o) => o.scriptPubKey.address ?? o.scriptPubKey.addresses?.[0])).toEqual([consolidation?.to_address]);
    expect((await database.pool.query(`SELECT 1 FROM utxo_change_addresses WHERE network = 'LITECOIN' AND address = $1`, [consolidation?.to_address])).rowCount).toBe(1);
    expect(tx.vin.map((i) => ({ tx_hash: i.txid, vout: i.vout })).sort((a, b) => `${a.tx_hash}:${a.vout}`.localeCompare(`${b.tx_hash}:${b.vout}`))).toEqual(deposits.rows);
    await settle();
    expect((await movements('CONSOLIDATION'))[0]?.state).toBe('COMPLETED');
    expect((await database.pool.query(`SELECT key_chain FROM utxo_outputs WHERE tx_hash = $1`, [consolidation?.tx_hash])).rows).toEqual([{ key_chain: 1 }]);
    // Asked for another consolidation than the network's next one, the signer refuses.
    expect(await refusal({ op: 'consolidation', reference: `consolidation:${randomUUID()}`, network: 'LITECOIN' })).toBe('NOT_APPROVED');
  });

  it('sweeps the excess above HOT_WALLET_MAX to the cold address on chain, signed by the signer process', async () => {
    await lc.funded('ceiling', '2');
    // The round consolidates the new deposit output first; the sweep waits until that movement is booked.
    await job('custody.hot-cold:LITECOIN').run();
    expect(await movements('COLD')).toEqual([]);
    await settle();
    const before = await held();
    expect(before).toBeGreaterThan(200_000_000n);
    await job('custody.hot-cold:LITECOIN').run();
    const [sweep, ...more] = await movements('COLD');
    expect(more).toEqual([]);
    expect(sweep).toMatchObject({ state: 'BROADCAST', to_address: cold, amount: (before - 100_000_000n).toString() });
    // In flight: a second round sweeps nothing more.
    await job('custody.hot-cold:LITECOIN').run();
    expect(await movements('COLD')).toHaveLength(1);
    await settle();
    expect((await movements('COLD'))[0]?.state).toBe('COMPLETED');
    expect(await node.received(cold)).toBe(before - 100_000_000n);
    // What stays is the ceiling less the sweep's fee.
    const after = await held();
    expect(after).toBeLessThan(100_000_000n);
    expect(after).toBeGreaterThan(99_000_000n);
  });

  it('refuses a cold sweep whose destination or amount was changed in the database after the worker recorded it', async () => {
    await lc.funded('tamper-cold', '0.5');
    await job('custody.hot-cold:LITECOIN').run();
    await settle();
    const holding = await held();
    // The worker records the sweep and dies before the signer is asked (orderColdSweep: recorded SIGNING first).
    const dying = { ...remote.chain, signWithdrawal: () => Promise.reject(new Error('the worker died before asking the signer')) };
    await expect(orderColdSweep(database.pool, { chain: dying, addresses: remote.addresses }, { network: 'LITECOIN', address: cold, amount: unitsOf(10_000_000n), key: 'hot-ceiling:LITECOIN:tampered' })).rejects.toThrow('died');
    const id = (await movements('COLD')).find((m) => m.state === 'SIGNING')?.id ?? '';
    const thief = await node.newAddress();
    await database.pool.query('UPDATE custody_movements SET to_address = $2 WHERE id = $1', [id, thief]);
    expect(await refusal({ op: 'cold-sweep', id })).toBe('TAMPERED');
    // The worker's next round asks again and is refused: nothing signed, the sweep waits.
    await job('custody.movements:LITECOIN').run();
    expect((await movements('COLD')).find((m) => m.id === id)).toMatchObject({ state: 'SIGNING', tx_hash: null });
    // An amount that would take the custody below the ceiling: refused, and the worker fails it with nothing signed.
    await database.pool.query('UPDATE custody_movements SET to_address = $2, amount = $3 WHERE id = $1', [id, cold, holding.toString()]);
    expect(await refusal({ op: 'cold-sweep', id })).toBe('NOT_HELD');
    await expect(remote.chain.signWithdrawal({ reference: `cold:${id}`, network: 'LITECOIN', currency: 'LTC', toAddress: cold, amount: unitsOf(1n) })).rejects.toBeInstanceOf(HotWalletShortError);
    await job('custody.movements:LITECOIN').run();
    expect((await movements('COLD')).find((m) => m.id === id)).toMatchObject({ state: 'FAILED', tx_hash: null });
    expect((await database.pool.query('SELECT 1 FROM utxo_transactions WHERE reference = $1', [`cold:${id}`])).rowCount).toBe(0);
    // Not a cold sweep at all, or unknown: refused too.
    expect(await refusal({ op: 'cold-sweep', id: randomUUID() })).toBe('UNKNOWN_ORDER');
    expect(await refusal({ op: 'cold-sweep', id: (await movements('CONSOLIDATION'))[0]?.id ?? '' })).toBe('NOT_APPROVED');
    await settle(1);
    expect(await node.received(thief, 0)).toBe(0n);
  });

  it('refuses a replacement by fee whose stored transaction pays another destination or amount than the sealed order', async () => {
    const user = await lc.funded('bump', '2');
    const made = await lc.withdraw(user, '0.4', await node.newAddress());
    const id = made.body.id;
    await workRemote();
    const sent = await row(id);
    expect(sent?.state).toBe('BROADCAST');
    const stored = (await database.pool.query<{ to_address: string; amount: string }>('SELECT to_address, amount::text FROM utxo_transactions WHERE tx_hash = $1', [sent?.tx_hash])).rows[0]!;
    // Whoever writes the database points the stored transaction (which a replacement pays again) at their address.
    const thief = await node.newAddress();
    await database.pool.query('UPDATE utxo_transactions SET to_address = $2 WHERE tx_hash = $1', [sent?.tx_hash, thief]);
    const refusedAddress = await signer.call({ op: 'replace', id }).then(() => undefined, (e: unknown) => e);
    expect(refusedAddress).toBeInstanceOf(SignerCallError);
    expect((refusedAddress as Error).message).toMatch(/does not pay withdrawal .* sealed order .*not replaced/);
    await database.pool.query('UPDATE utxo_transactions SET to_address = $2, amount = amount - 1000 WHERE tx_hash = $1', [sent?.tx_hash, stored.to_address]);
    expect(((await signer.call({ op: 'replace', id }).then(() => undefined, (e: unknown) => e)) as Error).message).toMatch(/sealed order/);
    // Put back, the order's own payment: a replacement (or the same transaction, none being due) is handed back.
    await database.pool.query('UPDATE utxo_transactions SET amount = $2 WHERE tx_hash = $1', [sent?.tx_hash, stored.amount]);
    expect(((await signer.call({ op: 'replace', id })) as SignedWithdrawal).txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await node.received(thief, 0)).toBe(0n);
  });

  it('takes withdrawals from before the approval seal out of their batch, pays the rest, and pays them once an operator re-approves them', async () => {
    const { WALLET_SEED: _seed, ...withoutSeed } = env;
    const config = loadConfig({ ...withoutSeed, UTXO_BATCH_SECONDS: '1', SIGNER: 'external', SIGNER_SOCKET: socket, DATA_DIR: await mkdtemp(join(tmpdir(), 'signer-batch-')) }, '0.0.0-test');
    const batching = await openCustody(config, quietLog, database.pool, { owner: false, signing: 'signer' });
    const work = async () => {
      for (const job of batching.jobs) if (job.name.startsWith('chain.withdrawals:')) await job.run();
    };
    try {
      const user = await lc.funded('unsealed', '3');
      // A second confirmed output, for the payment after the first batch (whose change is not confirmed yet).
      await lc.funded('unsealed-float', '3');
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) ids.push((await lc.withdraw(user, '0.3', await node.newAddress())).body.id);
      const [old, ...sealed] = ids as [string, string, string];
      // One from before the seal, gathered with two sealed ones into a batch before the upgrade.
      await database.pool.query('UPDATE withdrawals SET approval_seal = NULL WHERE id = $1', [old]);
      const batch = (await database.pool.query<{ id: string }>(`INSERT INTO withdrawal_batches (network, size) VALUES ('LITECOIN', 3) RETURNING id`)).rows[0]!.id;
      await database.pool.query('UPDATE withdrawals SET batch_id = $2 WHERE id = ANY($1::uuid[])', [ids, batch]);
      // The signer refuses such a batch whole: the unsealed member does not match a seal.
      expect(await refusal({ op: 'batch', id: batch })).toBe('TAMPERED');
      await work();
      // The unsealed one left the batch; the two sealed ones were paid together.
      const states = async () => (await database.pool.query<{ id: string; state: string; batch_id: string | null; tx_hash: string | null }>('SELECT id, state, batch_id, tx_hash FROM withdrawals WHERE id = ANY($1::uuid[])', [ids])).rows;
      const after = new Map((await states()).map((r) => [r.id, r]));
      expect(after.get(old)).toMatchObject({ state: 'PENDING', batch_id: null, tx_hash: null });
      for (const id of sealed) expect(after.get(id)).toMatchObject({ state: 'BROADCAST', batch_id: batch });
      expect(after.get(sealed[0])?.tx_hash).toBe(after.get(sealed[1])?.tx_hash);
      // Nor is it gathered into a new batch or asked for alone: it waits, shown to the operator with its figures.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await work();
      expect(await row(old)).toEqual({ state: 'PENDING', tx_hash: null });
      const shown = await listUnsealedWithdrawals(database.pool);
      expect(shown.find((w) => w.orderId === old)).toMatchObject({ state: 'PENDING', network: 'LITECOIN', currency: 'LTC', amount: '0.3' });
      // Re-approved by an operator (npm run operator -- reseal-withdrawal): sealed with the token, then paid.
      const operator = (await database.pool.query<{ id: string }>('INSERT INTO users DEFAULT VALUES RETURNING id')).rows[0]!.id;
      expect(await resealWithdrawal(database.pool, { orderId: old, operatorId: operator }, approvalSealer(token))).toBe('sealed');
      await expect(resealWithdrawal(database.pool, { orderId: old, operatorId: operator }, approvalSealer(token))).rejects.toMatchObject({ code: 'WITHDRAWAL_NOT_UNSEALED' });
      expect((await listUnsealedWithdrawals(database.pool)).some((w) => w.orderId === old)).toBe(false);
      // Paid once the hot wallet's outputs spent by the first batch are replaced by confirmed ones.
      await waitFor('the re-approved one sent', async () => {
        await node.mine(1);
        await work();
        return (await row(old))?.state === 'BROADCAST';
      }, 30_000);
      await waitFor('all three completed', async () => {
        await node.mine(1);
        await work();
        return (await states()).every((r) => r.state === 'COMPLETED');
      }, 30_000);
    } finally {
      await batching.close();
    }
  });
});
