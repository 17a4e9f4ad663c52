import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { auditFailures, waitFor } from '../../support/custody.ts';
import { litecoinCustody } from '../../support/litecoin-custody.ts';
import type { Litecoind } from '../../support/litecoind.ts';
import type { Database } from '../../../src/server/db/database.ts';
import type { Custody } from '../../../src/server/custody.ts';
import { CustodyMovementError, sweepToCold } from '../../../src/server/domain/custody-movements.ts';

/**
 * The custody on Litecoin Core -regtest end to end without a browser: deposits Pending then credited after
 * CONFIRMATIONS, withdrawals as real transactions (exact amount, change back, network fee booked), a worker killed
 * between signing and sending, replacement by fee of a stuck one sent at the fallback rate, fifty concurrent
 * withdrawals of one balance, a sweep to cold storage, and `custody balances` matching the node to the litoshi.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('the custody on Litecoin Core regtest', () => {
  const lc = litecoinCustody({ env: { RBF_AFTER_BLOCKS: '2' } });
  const { work, mine, signUp, balance, addressOf, history, withdraw, funded, completed, matching } = lc;
  let node: Litecoind;
  let database: Database;
  let custody: Custody;
  let env: Record<string, string>;
  const row = async (id: string) =>
    (
      await database.pool.query<{ state: string; tx_hash: string | null; raw_tx: string | null; replaced_tx_hashes: string[]; network_fee: string | null }>(
        'SELECT state, tx_hash, raw_tx, replaced_tx_hashes, network_fee FROM withdrawals WHERE id = $1',
        [id],
      )
    ).rows[0];

  beforeAll(async () => {
    ({ node, database, custody, env } = await lc.start());
    expect(custody.chainAdapters.LITECOIN).toBe('utxo-node');
  }, 120_000);
  afterAll(() => lc.close());

  it('shows a deposit from the node as Pending at once and credits it after the confirmations', async () => {
    const user = await signUp('deposit');
    const address = await addressOf(user);
    expect(address).toMatch(/^rltc1q/);
    const txHash = await node.send(address, '1.25');
    await work();
    expect(await history(user)).toEqual([expect.objectContaining({ transactionType: 'DEPOSIT', state: 'IN_PROGRESS', amount: '1.25', hash: txHash })]);
    expect(await balance(user)).toEqual({ available: '0', onHold: '0' });
    await mine(1);
    expect(await balance(user)).toEqual({ available: '0', onHold: '0' });
    await mine(1);
    expect(await balance(user)).toEqual({ available: '1.25', onHold: '0' });
    expect(await history(user)).toEqual([expect.objectContaining({ state: 'COMPLETED', hash: txHash })]);
    expect(await matching()).toMatchObject({ holdings: 125_000_000n, position: 125_000_000n, matches: true, inFlight: 0 });
  });

  it('un-pends a deposit whose block a reorganisation replaced and credits it once when it is mined again', async () => {
    const user = await signUp('reorg');
    const address = await addressOf(user);
    const txHash = await node.send(address, '0.7');
    const height = await node.mine(1);
    await work();
    const deposit = () => database.pool.query<{ state: string; block_height: string | null; confirmations: number }>('SELECT state, block_height, confirmations FROM chain_deposits WHERE tx_hash = $1', [txHash]);
    expect((await deposit()).rows).toEqual([{ state: 'PENDING', block_height: String(height), confirmations: 1 }]);
    // The block is replaced by a longer chain without the transaction (the miners leave it out for now).
    await node.rpc.call('invalidateblock', await node.rpc.call<string>('getblockhash', height));
    await node.rpc.call('prioritisetransaction', txHash, 0, -100_000_000);
    await mine(3);
    expect((await deposit()).rows).toEqual([{ state: 'PENDING', block_height: null, confirmations: 0 }]);
    expect(await balance(user)).toEqual({ available: '0', onHold: '0' });
    expect(await history(user)).toEqual([expect.objectContaining({ state: 'IN_PROGRESS', hash: txHash })]);
    // Mined again: credited after its confirmations, once.
    await node.rpc.call('prioritisetransaction', txHash, 0, 100_000_000);
    await mine(1);
    await mine(1);
    await work();
    expect((await deposit()).rows).toEqual([expect.objectContaining({ state: 'CREDITED' })]);
    expect(await balance(user)).toEqual({ available: '0.7', onHold: '0' });
    const entries = await database.pool.query(`SELECT 1 FROM ledger_entries WHERE idempotency_key LIKE $1`, [`deposit:LITECOIN:${txHash}:%`]);
    expect(entries.rowCount).toBe(1);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
  });

  it('sends a withdrawal the node delivers to the litoshi, change back to the custody, the network fee booked, balances matching', async () => {
    const user = await funded('withdraw', '2');
    const before = (await matching())?.holdings ?? 0n;
    const to = await node.newAddress();
    const sent = await withdraw(user, '0.5', to);
    expect(sent.status).toBe(200);
    await work();
    const signed = await row(sent.body.id);
    expect(signed).toMatchObject({ state: 'BROADCAST', tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await matching()).toMatchObject({ matches: true, inFlight: 1 });
    await completed(sent.body.id);
    // The recipient got the amount less the custody's fee, exactly.
    expect(await node.received(to)).toBe(49_900_000n);
    const done = await row(sent.body.id);
    const networkFee = BigInt(done?.network_fee ?? '0');
    expect(networkFee).toBeGreaterThan(0n);
    const onChain = await node.rpc.call<{ vout: { value: string; scriptPubKey: { addresses?: string[] } }[] }>('getrawtransaction', done?.tx_hash, true);
    const change = onChain.vout.find((o) => !o.scriptPubKey.addresses?.includes(to));
    const changeOutput = await database.pool.query<{ key_chain: number; amount: string }>('SELECT key_chain, amount::text FROM utxo_outputs WHERE tx_hash = $1 AND address = $2', [
      done?.tx_hash,
      change?.scriptPubKey.addresses?.[0],
    ]);
    expect(changeOutput.rows).toEqual([{ key_chain: 1, amount: expect.any(String) }]);
    expect(await balance(user)).toEqual({ available: '1.5', onHold: '0' });
    const now = await matching();
    expect(now).toMatchObject({ matches: true, inFlight: 0 });
    expect(now?.holdings).toBe(before - 49_900_000n - networkFee);
    expect(await auditFailures(database.pool)).toEqual([]);
    // The operator's command says the same.
    const cli = await runCli(['balances']);
    expect(cli.code).toBe(0);
    // USERS DESK FEES GAS (no float on a UTXO network) OTHER (network fees paid: negative) POSITION HOLDINGS UNCREDITED DIFFERENCE COLD IN_FLIGHT STATUS
    expect(cli.stdout).toMatch(/LITECOIN\tLTC\t[\d.]+\t0\t[\d.]+\t0\t-[\d.]+\t[\d.]+\t[\d.]+\t0\t0\t0\t0\tok/);
  });

  it('sends a withdrawal once when the worker is killed between signing and sending, and when killed after sending', async () => {
    const user = await funded('crash', '1');
    for (const dieAfter of ['signed', 'sent']) {
      const to = await node.newAddress();
      const sent = await withdraw(user, '0.2', to);
      expect(sent.status).toBe(200);
      const died = await runScript('tests/support/utxo-worker-dies.ts', { UTXO_DIE_AFTER: dieAfter });
      expect(died.signal).toBe('SIGKILL');
      const signed = await row(sent.body.id);
      expect(signed).toMatchObject({ state: 'SIGNED', tx_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const known = await node.rpc.call('getmempoolentry', signed?.tx_hash).then(() => true, () => false);
      expect(known).toBe(dieAfter === 'sent');
      await work();
      expect(await row(sent.body.id)).toMatchObject({ state: 'BROADCAST', tx_hash: signed?.tx_hash, raw_tx: signed?.raw_tx });
      await completed(sent.body.id);
      expect(await node.received(to)).toBe(19_900_000n);
    }
    expect(await balance(user)).toEqual({ available: '0.6', onHold: '0' });
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
  });

  it('sends at the fallback rate without an estimate and replaces a withdrawal left unmined by fee', async () => {
    const user = await funded('rbf', '1');
    const to = await node.newAddress();
    const sent = await withdraw(user, '0.3', to);
    await work();
    const first = await row(sent.body.id);
    const built = await database.pool.query<{ fee_rate: string; fee: string }>('SELECT fee_rate::text, fee::text FROM utxo_transactions WHERE tx_hash = $1', [first?.tx_hash]);
    expect(built.rows[0]?.fee_rate).toBe('5');
    // The miners leave it out.
    await node.rpc.call('prioritisetransaction', first?.tx_hash, 0, -100_000_000);
    await mine(1);
    expect(await row(sent.body.id)).toMatchObject({ state: 'BROADCAST', tx_hash: first?.tx_hash, replaced_tx_hashes: [] });
    await mine(1);
    const replaced = await row(sent.body.id);
    expect(replaced?.replaced_tx_hashes).toEqual([first?.tx_hash]);
    expect(replaced?.tx_hash).not.toBe(first?.tx_hash);
    expect(await node.rpc.call('getmempoolentry', replaced?.tx_hash)).toBeTruthy();
    // This node relays replacements (-mempoolreplacement=1): the replacement was taken, so no CPFP child was needed.
    // (Litecoin Core's default refuses it: utxo-litecoin-cpfp.test.ts.)
    const attempts = await database.pool.query('SELECT attempt, parent_tx, released_at IS NOT NULL AS released FROM utxo_transactions WHERE reference = $1 ORDER BY attempt', [sent.body.id]);
    expect(attempts.rows).toEqual([
      { attempt: 0, parent_tx: null, released: false },
      { attempt: 1, parent_tx: null, released: false },
    ]);
    expect((await history(user))[0]).toMatchObject({ state: 'IN_PROGRESS', hash: replaced?.tx_hash });
    await completed(sent.body.id);
    const done = await row(sent.body.id);
    expect(done?.tx_hash).toBe(replaced?.tx_hash);
    expect(BigInt(done?.network_fee ?? '0')).toBeGreaterThan(BigInt(built.rows[0]?.fee ?? '0'));
    expect((await history(user))[0]).toMatchObject({ state: 'COMPLETED', hash: replaced?.tx_hash });
    expect(await node.received(to)).toBe(29_900_000n);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0 });
  });

  it('accepts exactly one of fifty concurrent withdrawals of one balance', async () => {
    const user = await funded('fifty', '0.3');
    const to = await node.newAddress();
    const answers = await Promise.all(Array.from({ length: 50 }, () => withdraw(user, '0.3', to)));
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted).toHaveLength(1);
    for (const answer of answers.filter((a) => a.status !== 200)) expect(answer).toMatchObject({ status: 400, body: { exceptionCode: 'WITHDRAWAL_NOT_ENOUGH_FUNDS' } });
    await work();
    await completed(accepted[0]?.body.id ?? '');
    expect(await node.received(to)).toBe(29_900_000n);
    expect(await balance(user)).toEqual({ available: '0', onHold: '0' });
  });

  it('sweeps to cold storage once, refuses bad input, and keeps the balances matching', async () => {
    const cold = await node.newAddress();
    const chain = custody.chain;
    const sweep = (input: { currency?: string; address?: string; amount?: string }) =>
      sweepToCold(database.pool, { chain, addresses: custody.addresses }, { currency: 'LTC', address: cold, amount: '0.1', ...input });
    await expect(sweep({ address: 'ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9' })).rejects.toThrow(CustodyMovementError);
    await expect(sweep({ amount: '0.000000001' })).rejects.toThrow(/not an amount/);
    await expect(sweep({ amount: '100000' })).rejects.toThrow(/less than/);
    await expect(sweep({ currency: 'XYZ' })).rejects.toThrow(/not a network coin/);
    const first = await sweep({});
    expect(first.state).toBe('BROADCAST');
    expect((await sweep({})).id).toBe(first.id);
    await waitFor('the sweep booked', async () => {
      await mine(1);
      return (await database.pool.query(`SELECT 1 FROM custody_movements WHERE id = $1 AND state = 'COMPLETED'`, [first.id])).rowCount === 1;
    });
    expect(await node.received(cold)).toBe(10_000_000n);
    expect(await matching()).toMatchObject({ matches: true, inFlight: 0, cold: 10_000_000n });
    const cli = await runCli(['sweep-to-cold', 'LTC', 'not-an-address', '0.1']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/not a valid LITECOIN address/);
  });

  const runScript = (script: string, extra: Record<string, string> = {}, args: string[] = []) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn', ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
  const runCli = (args: string[]) => runScript('src/server/cli/custody.ts', {}, args);
});
