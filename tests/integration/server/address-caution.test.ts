import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { gatewayClient } from '../../support/http.ts';
import { startWithTwoUsers, type TwoUsers } from '../../support/two-users.ts';
import type { SignedInUser } from '../../support/auth.ts';
import type { AddressCautionView } from '../../../src/lib/wire/withdrawals.ts';

/**
 * Issue 36 item 3 through the gateway on PostgreSQL: POST /api/{account}/address-book/caution answers from the
 * account's own address book, withdrawals and deposits, and from nobody else's.
 */
const SAVED = '0x9858effd232b4033e47d90003d41ec34ecaeda94';
const SAVED_CHECKSUMMED = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
/** SAVED's first and last four hex digits around another middle. */
const LOOKALIKE = '0x98580000000000000000000000000000000eda94';
const DUST_SENDER = '0x1111222233334444555566667777888899990000';
const PAYER = '0xabcdef0000000000000000000000000000001234';

describe('address poisoning check', () => {
  let world: TwoUsers;
  let db: pg.Client;
  const call = gatewayClient(() => world.server.url);
  const caution = (user: SignedInUser, address: string, blockchain = 'ETHEREUM', account = user.accountId) =>
    call<AddressCautionView>(user, 'POST', `/api/${account}/address-book/caution`, { blockchain, address });
  /** A transfer seen on Ethereum to the account, from `from`. */
  const received = (user: SignedInUser, from: string, currency: string, amount: bigint, state = 'CREDITED') =>
    db.query(
      `INSERT INTO chain_deposits (network, tx_hash, output_index, currency, from_address, to_address, amount, wallet_account_id, confirmations_required, state)
       VALUES ('ETHEREUM', $1, 0, $2, $3, '0x0000000000000000000000000000000000000001', $4, $5, 1, $6)`,
      [`0x${randomBytes(32).toString('hex')}`, currency, from, amount.toString(), user.accountId, state],
    );

  beforeAll(async () => {
    world = await startWithTwoUsers(inject('adminDatabaseUrl'), 'caution');
    db = new pg.Client({ connectionString: world.database.url });
    await db.connect();
    expect((await call(world.alice, 'POST', `/api/${world.alice.accountId}/address-book`, { name: 'Exchange', blockchain: 'ETHEREUM', address: SAVED })).status).toBe(201);
  });
  afterAll(async () => {
    await db?.end();
    await world?.close();
  });

  it('warns of an address sharing the ends of a saved one, naming it, and not of the saved one itself in any case', async () => {
    expect(await caution(world.alice, LOOKALIKE)).toMatchObject({ status: 200, body: { caution: { kind: 'LOOKALIKE', similarTo: SAVED_CHECKSUMMED } } });
    expect((await caution(world.alice, SAVED)).body).toEqual({ caution: null });
    expect((await caution(world.alice, SAVED_CHECKSUMMED)).body).toEqual({ caution: null });
    expect((await caution(world.alice, '0x1234000000000000000000000000000000000000')).body).toEqual({ caution: null });
  });

  it('reads only the account’s own addresses: another user’s book warns nobody else', async () => {
    expect((await caution(world.bob, LOOKALIKE)).body).toEqual({ caution: null });
    expect((await caution(world.bob, LOOKALIKE, 'ETHEREUM', world.alice.accountId)).status).toBe(403);
  });

  it('warns of an address that only ever sent dust, and takes one that sent real money as known', async () => {
    await received(world.alice, DUST_SENDER, 'ETH', 1n);
    await received(world.alice, DUST_SENDER, 'USDT_ETH', 0n);
    // Refused below MIN_DEPOSIT: dust whatever its amount.
    await received(world.alice, DUST_SENDER, 'ETH', 10n ** 18n, 'BELOW_MINIMUM');
    expect((await caution(world.alice, DUST_SENDER)).body).toEqual({ caution: { kind: 'DUST_ONLY' } });
    // A dust sender is no reference: its lookalike is not warned of as one.
    expect((await caution(world.alice, '0x1111000000000000000000000000000000000000')).body).toEqual({ caution: null });

    await received(world.alice, PAYER, 'USDT_ETH', 250_000_000n);
    expect((await caution(world.alice, PAYER)).body).toEqual({ caution: null });
    expect((await caution(world.alice, '0xabcdef9999999999999999999999999999991234')).body).toMatchObject({ caution: { kind: 'LOOKALIKE' } });
    expect((await caution(world.bob, DUST_SENDER)).body).toEqual({ caution: null });
  });

  it('a dust sender the user then saved is theirs to use', async () => {
    const other = '0x2222000000000000000000000000000000000002';
    await received(world.alice, other, 'ETH', 5n);
    expect((await caution(world.alice, other)).body).toEqual({ caution: { kind: 'DUST_ONLY' } });
    expect((await call(world.alice, 'POST', `/api/${world.alice.accountId}/address-book`, { name: 'Mine', blockchain: 'ETHEREUM', address: other })).status).toBe(201);
    expect((await caution(world.alice, other)).body).toEqual({ caution: null });
  });

  it('refuses bad input with a 400 and answers nothing for an address its network refuses', async () => {
    expect(await caution(world.alice, LOOKALIKE, 'NOWHERE')).toMatchObject({ status: 400, body: { exceptionCode: 'ADDRESS_BOOK_UNKNOWN_NETWORK' } });
    expect(await caution(world.alice, '')).toMatchObject({ status: 400, body: { exceptionCode: 'VALIDATION' } });
    expect((await call(world.alice, 'POST', `/api/${world.alice.accountId}/address-book/caution`, { blockchain: 'ETHEREUM' })).status).toBe(400);
    expect((await caution(world.alice, 'not an address')).body).toEqual({ caution: null });
    expect((await caution(world.alice, LOOKALIKE, 'BITCOIN')).body).toEqual({ caution: null });
  });
});
