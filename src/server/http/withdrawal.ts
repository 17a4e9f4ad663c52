/**
 * The send area (SPEC §7 Wallet: withdrawal, check-address, preliminary fee, address book) under /api/{account}.
 * Only the account's owner may use it (403 FORBIDDEN otherwise); a withdrawal asks for the passcode when it is on.
 *
 * POST   /{account}/withdrawal { currency, amount, depositAddress, idempotencyKey, feeQuoteId? } (header pincode)  → withdrawal
 * GET    /{account}/withdrawal                          → the account's withdrawals still in progress
 * GET    /{account}/withdrawal/{id}                     → withdrawal
 * POST   /{account}/withdrawal/check-address { currency, address }  → { checkResult, belongsToSameUser, accountType, … }
 * POST   /{account}/withdrawal/preliminary/fee { currency, amount?, depositAddress? }  → { fee, feeCurrency, receiveAmount, feeQuoteId, expiresAt, … }
 * POST   /{account}/address-book { name, blockchain, address }  → entry
 * POST   /{account}/address-book/caution { blockchain, address }  → { caution: null | { kind: LOOKALIKE, similarTo } | { kind: DUST_ONLY } }
 * POST   /{account}/address-book/all { pageNumber, pageSize ≤ 1000 }  → { result, pageNumber, pageSize, total }
 * GET    /{account}/address-book/{id}                   → entry
 * DELETE /{account}/address-book/{id}                   → the deleted entry
 */
import { Hono } from 'hono';
import type pg from 'pg';
import { z } from 'zod';
import { guardPincode } from '../domain/pincode.ts';
import type { WithdrawalService } from '../domain/withdrawals/requests.ts';
import type { ChainAddressing } from '../adapters/chains/port.ts';
import { addAddress, ADDRESS_BOOK_LIMIT, ADDRESS_BOOK_NAME_MAX, AddressBookError, deleteAddress, getAddress, listAddresses } from '../domain/address-book.ts';
import { addressCaution } from '../domain/address-caution.ts';
import { isNetwork } from '../../lib/currencies.ts';
import type { AccountOwners } from './account-owner.ts';
import type { ApiEnv } from './context.ts';
import { DomainError } from '../domain/errors.ts';
import { accountInBody as accountField, amount, currency, idempotencyKey, uuid, UUID } from './fields.ts';
import { jsonInput } from './json-input.ts';

const address = z.string({ error: 'The address is required' }).max(200, 'An address has at most 200 characters');

const withdrawalBody = z.object({
  pinCode: z.string().max(16).optional().nullable(),
  account: accountField,
  currency,
  amount,
  depositAddress: address.refine((value) => value.trim() !== '', 'The address is required'),
  idempotencyKey,
  feeQuoteId: uuid('feeQuoteId is the id of a preliminary fee').optional().nullable(),
});
const checkBody = z.object({ account: accountField, currency, address: address.refine((value) => value.trim() !== '', 'The address is required') });
const feeBody = z.object({ account: accountField, currency, amount: amount.optional(), depositAddress: address.optional().nullable() });
const addressBody = z.object({
  name: z.string({ error: 'The name is required' }).trim().min(1, 'The name is required').max(ADDRESS_BOOK_NAME_MAX, `A name has at most ${ADDRESS_BOOK_NAME_MAX} characters`),
  blockchain: z.string({ error: 'The network is required' }).trim().min(1, 'The network is required').max(32),
  address: address.refine((value) => value.trim() !== '', 'The address is required'),
  account: accountField,
});
const cautionBody = addressBody.omit({ name: true });
const pageBody = z.object({
  account: accountField,
  pageNumber: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(ADDRESS_BOOK_LIMIT, `pageSize is at most ${ADDRESS_BOOK_LIMIT}`).default(ADDRESS_BOOK_LIMIT),
});

export function createWithdrawalApi(deps: { pool: pg.Pool; withdrawals: WithdrawalService; addresses: Pick<ChainAddressing, 'isValid'>; owners: AccountOwners }): Hono<ApiEnv> {
  const { pool, withdrawals } = deps;
  const app = new Hono<ApiEnv>();
  const account = deps.owners.route;
  const body = <S extends z.ZodType>(schema: S, options: { idempotencyKey?: boolean } = {}) => jsonInput(schema, { account: 'path', ...options });
  const idOf = (id: string | undefined, code: 'WITHDRAWAL_NOT_FOUND' | 'ADDRESS_BOOK_NOT_FOUND', what: string) => {
    if (!id || !UUID.test(id)) throw new DomainError(code, `No such ${what} in this account`);
    return id;
  };

  app.post('/:account/withdrawal', account, body(withdrawalBody, { idempotencyKey: true }), async (c) => {
    const input = c.req.valid('json');
    // Before anything moves, outside the withdrawal's transaction (its tries are counted on their own).
    const pincode = c.req.header('pincode') || input.pinCode || undefined;
    await guardPincode(pool, c.get('principal').userId, pincode);
    return c.json(
      await withdrawals.create(c.req.param('account'), {
        currency: input.currency,
        amount: input.amount,
        depositAddress: input.depositAddress,
        idempotencyKey: input.idempotencyKey,
        feeQuoteId: input.feeQuoteId ?? undefined,
      }),
    );
  });

  app.get('/:account/withdrawal', account, async (c) => c.json({ result: await withdrawals.listOpen(c.req.param('account')) }));

  app.get('/:account/withdrawal/:id', account, async (c) => {
    const id = idOf(c.req.param('id'), 'WITHDRAWAL_NOT_FOUND', 'withdrawal');
    return c.json(await withdrawals.get(c.req.param('account'), id));
  });

  app.post('/:account/withdrawal/check-address', account, body(checkBody), async (c) => {
    const input = c.req.valid('json');
    const check = await withdrawals.checkAddress(c.req.param('account'), input.currency, input.address);
    return c.json({
      checkResult: check.checkResult,
      belongsToSameUser: check.belongsToSameUser,
      accountType: check.accountType,
      internal: check.internal,
      address: check.address,
      network: check.network,
      recipientName: check.recipientName,
      saved: check.saved,
      ...(check.warning ? { warning: check.warning } : {}),
    });
  });

  app.post('/:account/withdrawal/preliminary/fee', account, body(feeBody), async (c) => {
    const input = c.req.valid('json');
    return c.json(await withdrawals.preliminaryFee(c.req.param('account'), { currency: input.currency, amount: input.amount, depositAddress: input.depositAddress ?? undefined }));
  });

  app.post('/:account/address-book', account, body(addressBody), async (c) => {
    const input = c.req.valid('json');
    return c.json(await addAddress(pool, c.req.param('account'), input, deps.addresses), 201);
  });

  app.post('/:account/address-book/caution', account, body(cautionBody), async (c) => {
    const input = c.req.valid('json');
    const network = input.blockchain.toUpperCase();
    if (!isNetwork(network)) throw new AddressBookError('ADDRESS_BOOK_UNKNOWN_NETWORK', `${input.blockchain} is not a network this wallet knows`);
    return c.json({ caution: await addressCaution(pool, c.req.param('account'), network, input.address, deps.addresses) });
  });

  app.post('/:account/address-book/all', account, body(pageBody), async (c) => {
    const input = c.req.valid('json');
    const page = await listAddresses(pool, c.req.param('account'), input);
    return c.json({ result: page.result, total: page.total, pageNumber: input.pageNumber, pageSize: input.pageSize });
  });

  app.get('/:account/address-book/:id', account, async (c) => {
    const id = idOf(c.req.param('id'), 'ADDRESS_BOOK_NOT_FOUND', 'address');
    return c.json(await getAddress(pool, c.req.param('account'), id));
  });

  app.delete('/:account/address-book/:id', account, async (c) => {
    const id = idOf(c.req.param('id'), 'ADDRESS_BOOK_NOT_FOUND', 'address');
    return c.json(await deleteAddress(pool, c.req.param('account'), id));
  });

  return app;
}
