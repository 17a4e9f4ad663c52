import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Address } from '@ton/core';
import { parseRecipient } from '../../../../src/server/adapters/chains/ton/adapter.ts';
import { feeOf, incomingValue } from '../../../../src/server/adapters/chains/ton/reader.ts';
import { hexHash, type V3Transaction } from '../../../../src/server/adapters/chains/ton/api.ts';
import { CHAIN_ADAPTERS, openChains, type ChainsOptions } from '../../../../src/server/adapters/chains/open.ts';
import { chainsConfig } from '../../../../src/server/config-chains.ts';
import { chainAddressing } from '../../../../src/server/domain/addresses.ts';

const ACCOUNT = Address.parseRaw(`0:${'ab'.repeat(32)}`);
const EQ = ACCOUNT.toString({ bounceable: true, urlSafe: true });
const UQ = ACCOUNT.toString({ bounceable: false, urlSafe: true });
const SENDER = `0:${'CD'.repeat(32)}`;

/** A v3 transaction of an incoming internal message, as toncenter shows a plain transfer to a deployed wallet. */
function incoming(change: { description?: Partial<V3Transaction['description']>; in_msg?: Partial<NonNullable<V3Transaction['in_msg']>> } = {}): V3Transaction {
  return {
    account: ACCOUNT.toRawString().toUpperCase(),
    hash: Buffer.alloc(32, 7).toString('base64'),
    lt: '1',
    now: 1,
    mc_block_seqno: 10,
    total_fees: '100',
    description: { type: 'ord', aborted: false, credit_ph: { credit: '5000' }, compute_ph: { skipped: false, success: true, exit_code: 0 }, action: { success: true, result_code: 0 }, ...change.description },
    in_msg: { hash: 'x', source: SENDER, destination: ACCOUNT.toRawString(), value: '5000', fwd_fee: '1', ihr_fee: '0', bounce: false, bounced: false, ...change.in_msg },
    out_msgs: [],
  };
}

describe('the TON adapter', () => {
  it('sends with the bounce flag the address carries; a raw address is bounceable', () => {
    expect(parseRecipient(EQ).bounce).toBe(true);
    expect(parseRecipient(UQ).bounce).toBe(false);
    expect(parseRecipient(ACCOUNT.toRawString()).bounce).toBe(true);
    expect(parseRecipient(ACCOUNT.toString({ bounceable: false, testOnly: true })).address.equals(ACCOUNT)).toBe(true);
  });

  it('counts what an incoming transfer credited, and nothing bounced, failed or external', () => {
    expect(incomingValue(incoming())).toBe(5000n);
    // A plain transfer to a deposit wallet not deployed yet: aborted, no code to run, the value stays.
    expect(incomingValue(incoming({ description: { aborted: true, compute_ph: { skipped: true, reason: 'no_state' }, action: null } }))).toBe(5000n);
    expect(incomingValue(incoming({ description: { aborted: true, compute_ph: { skipped: true, reason: 'no_state' }, action: null, bounce: { type: 'ok' } } }))).toBeUndefined();
    expect(incomingValue(incoming({ in_msg: { bounced: true } }))).toBeUndefined();
    expect(incomingValue(incoming({ description: { aborted: true, compute_ph: { skipped: false, success: false, exit_code: 9 } } }))).toBeUndefined();
    expect(incomingValue(incoming({ description: { action: { success: false, result_code: 37 } } }))).toBeUndefined();
    expect(incomingValue(incoming({ in_msg: { source: null } }))).toBeUndefined();
    expect(incomingValue(incoming({ description: { credit_ph: { credit: '0' } } }))).toBeUndefined();
  });

  it('reports a transaction’s fee with the forwarding fees of what it sent', () => {
    const tx = { ...incoming(), out_msgs: [{ hash: 'y', source: null, destination: null, value: '1', fwd_fee: '20', ihr_fee: '3', bounce: false, bounced: false }] };
    expect(feeOf(tx)).toBe(123n);
    expect(hexHash(Buffer.alloc(32, 255).toString('base64'))).toBe('ff'.repeat(32));
    expect(hexHash('AB'.repeat(32))).toBe('ab'.repeat(32));
  });

  it('runs TON when TON_API_URL is set, before the devnet', () => {
    const options = (env: Record<string, string | number>): ChainsOptions => ({ ...chainsConfig(env, 'devnet'), publicUrl: 'http://wallet.test', seed: new Uint8Array(64), addresses: chainAddressing('mainnet') });
    expect(openChains({} as pg.Pool, options({ DEVNET_BLOCK_MS: 100, TON_API_URL: 'https://toncenter.com' }), CHAIN_ADAPTERS).adapters).toMatchObject({ TON: 'toncenter', BITCOIN: 'devnet' });
    expect(openChains({} as pg.Pool, options({ DEVNET_BLOCK_MS: 100 }), CHAIN_ADAPTERS).adapters.TON).toBe('devnet');
  });
});

describe('raw addresses', () => {
  it('read a stored friendly address as @ton/core does', async () => {
    const { rawAddress } = await import('../../../../src/server/adapters/chains/ton/reader.ts');
    expect(rawAddress(UQ)).toBe(ACCOUNT.toRawString());
    expect(rawAddress(ACCOUNT.toRawString().toUpperCase())).toBe(ACCOUNT.toRawString());
  });
});
