/**
 * The send area (SPEC §7 Wallet: withdrawal, check-address, preliminary fee, address book) under /api/{account}.
 * Only the account's owner may use it (403 FORBIDDEN otherwise); a withdrawal asks for the passcode when it is on.
 *
 * POST   /{account}/withdrawal { currency, amount, depositAddress, idempotencyKey } (header pincode)  → withdrawal
 * GET    /{account}/withdrawal                          → the account's withdrawals still in progress
 * GET    /{account}/withdrawal/{id}                     → withdrawal
 * POST   /{account}/withdrawal/check-address { currency, address }  → { checkResult, belongsToSameUser, accountType, … }
 * POST   /{account}/withdrawal/preliminary/fee { currency, amount?, depositAddress? }  → { fee, feeCurrency, receiveAmount, … }
 * POST   /{account}/address-book { name, blockchain, address }  → entry
 * POST   /{account}/address-book/all { pageNumber, pageSize ≤ 1000 }  → { result, pageNumber, pageSize, total }
 * GET    /{account}/address-book/{id}                   → entry
 * DELETE /{account}/address-book/{id}                   → the deleted entry
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type pg from 'pg';
import { z } from 'zod';
import { guardPincode } from '../domain/pincode.ts';
import type { WithdrawalService } from '../domain/withdrawals/requests.ts';
import { addAddress, ADDRESS_BOOK_LIMIT, ADDRESS_BOOK_NAME_MAX, AddressBookError, deleteAddress, getAddress, listAddresses, type AddressBookProblem } from '../domain/address-book.ts';
import { requireAuth, type AccessTokenVerifier } from './auth-middleware.ts';
import type { ApiEnv } from './context.ts';
import { ApiError } from './errors.ts';
import { readJsonBody } from './json-body.ts';
import { jsonNumberAmount } from './json-amount.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const currency = z.string({ error: 'The currency is required' }).trim().min(1).max(32).regex(/^[A-Z0-9_]+$/, 'A currency code is upper-case letters, digits and _');
/** SPEC §5: digits with an optional decimal part, comma as the point, at most 8 digits either side. */
const amount = z
  .union([z.string(), jsonNumberAmount], { error: 'The amount is a decimal string' })
  .pipe(z.string().trim().regex(/^\d{1,8}(?:[.,]\d{1,8})?$/, 'An amount has up to 8 digits before and 8 after the point'))
  .transform((value) => value.replace(',', '.'));
const address = z.string({ error: 'The address is required' }).max(200, 'An address has at most 200 characters');
const accountField = z.string().max(64).optional();
const idempotencyKey = z.string().trim().min(8, 'idempotencyKey has 8 to 100 characters').max(100, 'idempotencyKey has 8 to 100 characters');

const withdrawalBody = z.object({
  pinCode: z.string().max(16).optional().nullable(),
  account: accountField,
  currency,
  amount,
  depositAddress: address.refine((value) => value.trim() !== '', 'The address is required'),
  idempotencyKey: idempotencyKey.optional(),
});
const checkBody = z.object({ account: accountField, currency, address: address.refine((value) => value.trim() !== '', 'The address is required') });
const feeBody = z.object({ account: accountField, currency, amount: amount.optional(), depositAddress: address.optional().nullable() });
const addressBody = z.object({
  name: z.string({ error: 'The name is required' }).trim().min(1, 'The name is required').max(ADDRESS_BOOK_NAME_MAX, `A name has at most ${ADDRESS_BOOK_NAME_MAX} characters`),
  blockchain: z.string({ error: 'The network is required' }).trim().min(1, 'The network is required').max(32),
  address: address.refine((value) => value.trim() !== '', 'The address is required'),
  account: accountField,
});
const pageBody = z.object({
  account: accountField,
  pageNumber: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(ADDRESS_BOOK_LIMIT, `pageSize is at most ${ADDRESS_BOOK_LIMIT}`).default(ADDRESS_BOOK_LIMIT),
});

const ADDRESS_BOOK_REFUSALS: Record<AddressBookProblem, [ContentfulStatusCode, string]> = {
  WRONG_ADDRESS: [400, 'ADDRESS_BOOK_WRONG_ADDRESS'],
  UNKNOWN_NETWORK: [400, 'ADDRESS_BOOK_UNKNOWN_NETWORK'],
  DUPLICATE: [409, 'ADDRESS_BOOK_DUPLICATE'],
  FULL: [409, 'ADDRESS_BOOK_FULL'],
  NOT_FOUND: [404, 'ADDRESS_BOOK_NOT_FOUND'],
};

function refusal(error: unknown): never {
  if (error instanceof AddressBookError) {
    const [status, code] = ADDRESS_BOOK_REFUSALS[error.problem];
    throw new ApiError(status, code, error.message, { cause: error });
  }
  throw error;
}

export function createWithdrawalApi(deps: { pool: pg.Pool; withdrawals: WithdrawalService; auth: AccessTokenVerifier }): Hono<ApiEnv> {
  const { pool, withdrawals } = deps;
  const app = new Hono<ApiEnv>();
  const auth = requireAuth(deps.auth);

  // An account never changes owner: a confirmed pair is kept for the process's life.
  const owners = new Map<string, string>();
  const owner: MiddlewareHandler<ApiEnv> = async (c, next) => {
    const account = c.req.param('account') ?? '';
    const { userId } = c.get('principal');
    let known = owners.get(account);
    if (known === undefined && UUID.test(account)) {
      const result = await pool.query<{ user_id: string }>({ name: 'wallet_account_owner', text: 'SELECT user_id FROM wallet_accounts WHERE id = $1', values: [account] });
      known = result.rows[0]?.user_id;
      if (known) {
        if (owners.size >= 50_000) owners.clear();
        owners.set(account, known);
      }
    }
    if (known !== userId) throw new ApiError(403, 'FORBIDDEN', 'This account is not yours');
    await next();
  };
  const sameAccount = (path: string, body: { account?: string | undefined }) => {
    if (body.account !== undefined && body.account !== path) throw new ApiError(400, 'VALIDATION', 'account: differs from the account in the path');
  };
  const idOf = (id: string | undefined, code: string, what: string) => {
    if (!id || !UUID.test(id)) throw new ApiError(404, code, `No such ${what} in this account`);
    return id;
  };

  app.post('/:account/withdrawal', auth, owner, async (c) => {
    const body = withdrawalBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    sameAccount(account, body);
    const key = body.idempotencyKey ?? c.req.header('idempotency-key')?.trim();
    if (!key || key.length < 8 || key.length > 100) throw new ApiError(400, 'VALIDATION', 'idempotencyKey: give 8 to 100 characters in the body or the Idempotency-Key header');
    // Before anything moves, outside the withdrawal's transaction (its tries are counted on their own).
    const pincode = c.req.header('pincode') || body.pinCode || undefined;
    await guardPincode(pool, c.get('principal').userId, pincode);
    return c.json(await withdrawals.create(account, { currency: body.currency, amount: body.amount, depositAddress: body.depositAddress, idempotencyKey: key }).catch(refusal));
  });

  app.get('/:account/withdrawal', auth, owner, async (c) => c.json({ result: await withdrawals.listOpen(c.req.param('account')) }));

  app.get('/:account/withdrawal/:id', auth, owner, async (c) => {
    const id = idOf(c.req.param('id'), 'WITHDRAWAL_NOT_FOUND', 'withdrawal');
    return c.json(await withdrawals.get(c.req.param('account'), id).catch(refusal));
  });

  app.post('/:account/withdrawal/check-address', auth, owner, async (c) => {
    const body = checkBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    sameAccount(account, body);
    const check = await withdrawals.checkAddress(account, body.currency, body.address).catch(refusal);
    return c.json({
      checkResult: check.checkResult,
      belongsToSameUser: check.belongsToSameUser,
      accountType: check.accountType,
      internal: check.internal,
      address: check.address,
      network: check.network,
      recipientName: check.recipientName,
      saved: check.saved,
    });
  });

  app.post('/:account/withdrawal/preliminary/fee', auth, owner, async (c) => {
    const body = feeBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    sameAccount(account, body);
    return c.json(await withdrawals.preliminaryFee(account, { currency: body.currency, amount: body.amount, depositAddress: body.depositAddress ?? undefined }).catch(refusal));
  });

  app.post('/:account/address-book', auth, owner, async (c) => {
    const body = addressBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    sameAccount(account, body);
    return c.json(await addAddress(pool, account, body).catch(refusal), 201);
  });

  app.post('/:account/address-book/all', auth, owner, async (c) => {
    const body = pageBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    const account = c.req.param('account');
    sameAccount(account, body);
    const page = await listAddresses(pool, account, body);
    return c.json({ result: page.result, total: page.total, pageNumber: body.pageNumber, pageSize: body.pageSize });
  });

  app.get('/:account/address-book/:id', auth, owner, async (c) => {
    const id = idOf(c.req.param('id'), 'ADDRESS_BOOK_NOT_FOUND', 'address');
    return c.json(await getAddress(pool, c.req.param('account'), id).catch(refusal));
  });

  app.delete('/:account/address-book/:id', auth, owner, async (c) => {
    const id = idOf(c.req.param('id'), 'ADDRESS_BOOK_NOT_FOUND', 'address');
    return c.json(await deleteAddress(pool, c.req.param('account'), id).catch(refusal));
  });

  return app;
}
