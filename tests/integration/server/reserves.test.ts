import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyMessage } from 'viem';
import { Address } from '@ton/core';
import { signVerify } from '@ton/crypto';
import { WalletContractV4 } from '@ton/ton';
import { sha256 } from '@noble/hashes/sha2.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createWalletAccount, openTestCustody, type TestCustody } from '../../support/custody.ts';
import type { Database } from '../../../src/server/db/database.ts';
import { ensureUserLedgerAccount, SYSTEM_ACCOUNTS, systemAccountId } from '../../../src/server/domain/ledger.ts';
import { transfer } from '../../../src/server/domain/ledger-writes.ts';
import { publishReserves, reserveLeafOf, type ReservesProof } from '../../../src/server/domain/reserves.ts';
import { signReserveMessage } from '../../../src/server/adapters/keys/reserve-signer.ts';
import type { AddressHolding } from '../../../src/server/adapters/chains/port.ts';
import type { Network } from '../../../src/lib/currencies.ts';
import { unitsOf } from '../../../src/lib/money.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);

/** The standalone verifier as anyone runs it: plain Node on the published JSON (and a leaf). */
async function verifier(proof: unknown, leaf?: unknown): Promise<{ code: number; out: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'reserves-'));
  const args = [join(ROOT, 'tools/verify-reserves.mjs'), join(dir, 'proof.json')];
  await writeFile(args[1] as string, JSON.stringify(proof));
  if (leaf) {
    args.push(join(dir, 'leaf.json'));
    await writeFile(args[2] as string, JSON.stringify(leaf));
  }
  try {
    const { stdout } = await run(process.execPath, args, { cwd: ROOT });
    return { code: 0, out: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, out: failed.stdout };
  }
}

describe('proof of reserves', () => {
  let database: TestDatabase;
  let opened: { database: Database; custody: TestCustody };
  let proof: ReservesProof;
  const users: { userId: string; accountId: string; btc: bigint; eth: bigint }[] = [];
  const held: Partial<Record<Network, AddressHolding[]>> = {};

  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'));
    opened = await openTestCustody(database.url);
    const { pool } = opened.database;
    for (let i = 0; i < 7; i += 1) {
      const account = await createWalletAccount(pool);
      await ensureUserLedgerAccount(pool, account.accountId);
      const btc = BigInt(i * 1_000_000);
      const eth = BigInt(i % 3) * 10n ** 17n;
      if (btc > 0n) await transfer(pool, { key: `seed-btc-${i}`, kind: 'TEST', currency: 'BTC', amount: unitsOf(btc), from: systemAccountId(SYSTEM_ACCOUNTS.world('BITCOIN')), to: account.accountId });
      if (eth > 0n) await transfer(pool, { key: `seed-eth-${i}`, kind: 'TEST', currency: 'ETH', amount: unitsOf(eth), from: systemAccountId(SYSTEM_ACCOUNTS.world('ETHEREUM')), to: account.accountId });
      users.push({ ...account, btc, eth });
    }
    // A user with no money is in the tree too.
    const seed = opened.custody.keys;
    const at = async (network: Network, index: number, balances: Record<string, bigint>): Promise<AddressHolding> => ({
      address: await opened.custody.addresses.derive(seed, network, index),
      path: network === 'TON' ? `m/44'/607'/${index}'` : opened.custody.addresses.path(network, index),
      balances: Object.fromEntries(Object.entries(balances).map(([currency, units]) => [currency, unitsOf(units)])),
    });
    held.LITECOIN = [await at('LITECOIN', 0, { LTC: 150_000_000n })];
    held.BITCOIN = [await at('BITCOIN', 1, { BTC: 30_000_000n }), await at('BITCOIN', 2, { BTC: 1_000_000n })];
    held.DOGECOIN = [await at('DOGECOIN', 3, { DOGE: 5_000_000_000n })];
    held.ETHEREUM = [await at('ETHEREUM', 0x7fffffff, { ETH: 10n ** 18n, USDT_ETH: 5_000_000n })];
    held.TRON = [await at('TRON', 4, { TRX: 1_000_000n })];
    held.TON = [await at('TON', 5, { TON: 2_000_000_000n })];
    const chain = {
      networks: ['BITCOIN', 'LITECOIN', 'DOGECOIN', 'ETHEREUM', 'TRON', 'TON'] as Network[],
      addressHoldings: async (network: Network) => held[network] ?? [],
    };
    proof = await publishReserves(pool, { chain, sign: (key, message) => signReserveMessage(seed, key, message), origin: 'http://wallet.test' });
  }, 60_000);

  afterAll(async () => {
    await opened?.database.close();
    await database?.drop();
  });

  it('totals are the ledger users own, and every user, with or without money, is in the tree', async () => {
    expect(proof.liabilities.leaves).toBe(7);
    expect(proof.liabilities.totals.BTC).toBe(String(users.reduce((sum, u) => sum + u.btc, 0n)));
    expect(proof.liabilities.totals.ETH).toBe(String(users.reduce((sum, u) => sum + u.eth, 0n)));
    expect(proof.reserves).toMatchObject({ BTC: '31000000', LTC: '150000000', USDT_ETH: '5000000', TON: '2000000000' });
    for (const user of users) {
      const leaf = await reserveLeafOf(opened.database.pool, user.userId);
      expect(leaf?.balances[proof.assets.findIndex((a) => a.currency === 'BTC')]).toBe(String(user.btc));
      const checked = await verifier(proof, leaf);
      expect(checked.out).toContain('your balances included');
      expect(checked.code).toBe(0);
    }
  }, 60_000);

  it('the verifier refuses a tampered leaf, root total or signature', async () => {
    const leaf = await reserveLeafOf(opened.database.pool, users[3]?.userId ?? '');
    if (!leaf) throw new Error('no leaf');
    const btc = proof.assets.findIndex((a) => a.currency === 'BTC');
    const richer = { ...leaf, leaf: undefined, balances: leaf.balances.map((b, i) => (i === btc ? String(BigInt(b) + 1n) : b)) };
    const tamperedLeaf = await verifier(proof, richer);
    expect(tamperedLeaf.code).toBe(1);
    expect(tamperedLeaf.out).toContain('does not lead to the published root');

    const hidden = { ...leaf, leaf: undefined, path: leaf.path.map((step, i) => (i === 0 ? { ...step, sums: step.sums.map((s, j) => (j === btc ? `-${s}` : s)) } : step)) };
    expect((await verifier(proof, hidden)).code).toBe(1);

    const lowerTotal = structuredClone(proof);
    lowerTotal.liabilities.totals.BTC = '1';
    expect((await verifier(lowerTotal)).out).toContain('BTC: the total is not the root');

    for (const network of ['LITECOIN', 'ETHEREUM', 'TON', 'TRON', 'DOGECOIN'] as const) {
      const forged = structuredClone(proof);
      const entry = forged.holdings.find((h) => h.network === network)?.addresses[0];
      if (!entry) throw new Error(`no ${network} address`);
      // Another key of the custody signed, not the address's.
      entry.address = (await opened.custody.addresses.derive(opened.custody.keys, network, 9));
      const checked = await verifier(forged);
      expect(checked.code, network).toBe(1);
      expect(checked.out).toContain(`${network} ${entry.address}`);
    }
    const untouched = await verifier(proof);
    expect(untouched.code, untouched.out).toBe(0);
  }, 60_000);

  it("the verifier's BIP-322 check accepts BIP-322's own test vector and refuses it for another message", async () => {
    const { checkSignature } = (await import('../../../tools/verify-reserves.mjs')) as { checkSignature: (message: string, entry: unknown) => string | undefined };
    const entry = { address: 'bc1q9vza2e8x573nczrlzms0wvx3gsqjx7vavgkx0l', proof: { type: 'bip322-simple', signature: 'AkcwRAIgZRfIY3p7/DoVTty6YZbWS71bc5Vct9p9Fia83eRmw2QCICK/ENGfwLtptFluMGs2KsqoNSk89pO7F29zJLUx9a/sASECx/EgAxlkQpQ9hYjgGu6EBCPMVPwVIVJqO4XCsMvViHI=' } };
    expect(checkSignature('Hello World', entry)).toBeUndefined();
    expect(checkSignature('Hello World!', entry)).toBe('the signature does not verify');
  });

  it('signatures hold by the networks own libraries: viem for Ethereum, tronweb for TRON, @ton for TON', async () => {
    const entry = (network: Network) => proof.holdings.find((h) => h.network === network)?.addresses[0];
    const eth = entry('ETHEREUM');
    expect(await verifyMessage({ address: eth?.address as `0x${string}`, message: proof.message, signature: eth?.proof.signature as `0x${string}` })).toBe(true);
    const tron = entry('TRON');
    const { Trx } = await import('tronweb');
    expect(Trx.verifyMessageV2(proof.message, tron?.proof.signature ?? '')).toBe(tron?.address);
    const ton = entry('TON');
    const publicKey = Buffer.from(ton?.proof.publicKey ?? '', 'hex');
    expect(WalletContractV4.create({ workchain: 0, publicKey }).address.equals(Address.parse(ton?.address ?? ''))).toBe(true);
    expect(signVerify(Buffer.from(sha256(new TextEncoder().encode(proof.message))), Buffer.from(ton?.proof.signature ?? '', 'base64'), publicKey)).toBe(true);
    expect(proof.message).toContain(proof.id);
    expect(proof.message).toContain(proof.liabilities.root.hash);
  });
});
