import { afterEach, describe, expect, it, vi } from 'vitest';
import { createElement, type ReactElement } from 'react';
import { renderToString } from 'react-dom/server';
import { ConsoleError, createCall, type Call } from '../../../src/operator/api.ts';
import { Screens } from '../../../src/operator/console.tsx';
import { texts } from '../../../src/operator/texts.ts';
import { ConsoleProvider, utc, type ConsoleContext, type Operator } from '../../../src/operator/ui.tsx';
import { UserScreen } from '../../../src/operator/screens/user.tsx';

const USER = '11111111-1111-4111-8111-111111111111';
const ACCOUNT = '22222222-2222-4222-8222-222222222222';
const KNOWN: Record<string, unknown> = {
  [`/users/${USER}`]: {
    user: { id: USER, email: 'bob@example.com', emailConfirmed: true, language: 'ENG', createdAt: '2026-11-01T10:00:00Z', role: null },
    accounts: [{ id: ACCOUNT, name: 'Main', createdAt: '2026-11-01T10:00:00Z', withdrawalsFrozenAt: '2026-11-02T10:00:00Z', withdrawalsFrozenReason: 'operator: card fraud' }],
    balances: [{ accountId: ACCOUNT, currency: 'BTC', available: '0.015', onHold: '0.001' }],
    ledger: [{ entryId: 7, key: 'adjustment:credit:x', kind: 'OPERATOR_CREDIT', reference: null, currency: 'BTC', bucket: 'AVAILABLE', amount: '0.015', at: '2026-11-02T10:00:00Z' }],
    orders: [
      { flow: 'withdrawal', id: 'w1', accountId: ACCOUNT, state: 'BROADCAST', currency: 'LTC', amount: '1.5', detail: 'EXTERNAL ltc1q', createdAt: '2026-11-02T10:00:00Z' },
      { flow: 'withdrawal', id: 'w2', accountId: ACCOUNT, state: 'UNDER_REVIEW', currency: 'BTC', amount: '0.3', detail: 'EXTERNAL bc1q', createdAt: '2026-11-02T11:00:00Z' },
    ],
    deposits: [{ id: 'd1', accountId: ACCOUNT, network: 'LITECOIN', currency: 'LTC', amount: '2', state: 'PENDING', txHash: 'deadbeef', confirmations: 1, confirmationsRequired: 6, detectedAt: '2026-11-02T10:00:00Z' }],
    signIn: { failures: 3, lockedUntil: '2026-11-03T10:00:00Z', sessionsRevokedAt: null },
    passcode: { set: true, failures: 5, lockedUntil: null, blockedAt: '2026-11-03T11:00:00Z' },
    telegram: { telegramId: '777', username: 'bobby', linkedAt: '2026-11-01T10:00:00Z' },
    adjustments: [{ id: 'a1', kind: 'CREDIT', currency: 'BTC', amount: '0.015', state: 'APPLIED', reason: 'lost deposit', proposedBy: 'ann@example.com', decidedBy: 'cid@example.com' }],
    audit: [{ id: 3, at: '2026-11-02T10:00:00Z', actor: 'ann@example.com', action: 'withdrawals.freeze', reason: 'card fraud' }],
  },
  '/adjustments?state=PROPOSED': {
    adjustments: [
      { id: 'p1', userId: USER, email: 'bob@example.com', accountId: ACCOUNT, kind: 'DEBIT', currency: 'BTC', amount: '0.5', reason: 'double credit', proposedBy: 'ann@example.com', proposedById: 'ann', proposedAt: '2026-11-02T10:00:00Z', decidedBy: null },
      { id: 'p2', userId: USER, email: 'bob@example.com', accountId: ACCOUNT, kind: 'CREDIT', currency: 'ETH', amount: '1', reason: 'mine', proposedBy: 'me@example.com', proposedById: 'me', proposedAt: '2026-11-02T10:00:00Z', decidedBy: null },
    ],
  },
  '/mail': { mails: [{ id: '5', recipient: 'bob@example.com', subject: 'Confirm your e-mail', kind: 'confirm_email', status: 'failed', error: 'connection refused', createdAt: '2026-11-02T10:00:00Z', resendable: true }, { id: '4', recipient: 'bob@example.com', subject: 'Reset', kind: 'reset_password', status: 'sent', error: null, createdAt: '2026-11-02T10:00:00Z', resendable: false }] },
  '/stuck?minutes=30': { olderThanMinutes: 30, items: [{ kind: 'withdrawal', id: 'w1', network: 'LITECOIN', currency: 'LTC', state: 'BROADCAST', amount: '1.5', txHash: 'abc', accountId: ACCOUNT, ageSeconds: 7500, lastError: 'node unreachable' }, { kind: 'deposit', id: 'd1', network: 'ETHEREUM', currency: 'ETH', state: 'PENDING', amount: '1', txHash: null, accountId: null, ageSeconds: 1900, lastError: null }], jobs: [{ name: 'chain.withdrawals', lastError: 'node unreachable', lastFinishedAt: '2026-11-02T10:00:00Z' }] },
  '/reviews': {
    reviews: [
      { orderId: 'r1', userId: USER, email: 'bob@example.com', currency: 'BTC', network: 'BITCOIN', amount: '0.3', usd: '19500.00', address: 'bc1qreviewed', reasons: ['ABOVE_THRESHOLD', 'NEW_ADDRESS'], createdAt: '2026-11-02T10:00:00Z', ageSeconds: 4000 },
      { orderId: 'r2', userId: USER, email: null, currency: 'LTC', network: 'LITECOIN', amount: '2', usd: null, address: 'ltc1qreviewed', reasons: ['NO_PRICE'], createdAt: '2026-11-02T10:00:00Z', ageSeconds: 120 },
    ],
  },
  '/unsealed': {
    withdrawals: [{ orderId: 'u1', userId: USER, email: 'bob@example.com', state: 'SIGNED', currency: 'BTC', network: 'BITCOIN', amount: '0.002', fee: '0.0001', address: 'bc1qunsealed', createdAt: '2026-11-02T10:00:00Z', ageSeconds: 90_000 }],
  },
  '/audit': { audit: [{ id: 9, at: '2026-11-02T10:00:00Z', actor: 'ann@example.com', action: 'adjustment.approve', subject: 'adjustment:p0', reason: 'checked', details: { amount: '0.015' } }] },
  '/roles': { operators: [{ userId: 'me', email: 'me@example.com', role: 'admin', grantedBy: null, grantedAt: '2026-11-01T10:00:00Z' }], roles: ['support', 'finance', 'admin'] },
};

/** Loads never answer here: the screens show what `known` holds. */
const never: Call = <T,>() => new Promise<T>(() => {});

function render(element: ReactElement, options: { role?: Operator['role']; locale?: 'en' | 'ru' } = {}): string {
  const context: ConsoleContext = {
    t: texts(options.locale ?? 'en'),
    call: never,
    navigate: () => {},
    operator: { id: 'me', email: 'me@example.com', role: options.role ?? 'admin' },
    known: KNOWN,
  };
  return renderToString(createElement(ConsoleProvider, { value: context }, element));
}
const page = (path: string, options: { role?: Operator['role']; locale?: 'en' | 'ru' } = {}) =>
  render(createElement(Screens, { path, context: { t: texts(options.locale ?? 'en'), call: never, navigate: () => {}, operator: { id: 'me', email: 'me@example.com', role: options.role ?? 'admin' }, known: KNOWN } }), options);

describe("the operator console's screens", () => {
  it("shows a user: lockouts, Telegram, the freeze with its reason, balances, orders, deposits, the ledger and what operators did", () => {
    const html = render(createElement(UserScreen, { userId: USER }));
    for (const shown of ['bob@example.com', 'bobby', 'Withdrawals are frozen since 2026-11-02 10:00:00 UTC: operator: card fraud', '2026-11-03 10:00:00 UTC', '2026-11-03 11:00:00 UTC', 'Unfreeze withdrawals', '0.015', 'BROADCAST', '1/6', 'deadbeef', 'OPERATOR_CREDIT', 'withdrawals.freeze', 'Propose a credit or debit', 'Account: Main']) {
      expect(html, shown).toContain(shown);
    }
    expect(render(createElement(UserScreen, { userId: USER }), { role: 'support' })).not.toContain('Propose a credit or debit');
    expect(render(createElement(UserScreen, { userId: USER }), { locale: 'ru' })).toContain('Разморозить вывод');
  });

  it('shows each page of the navigation as the role allows, in English and Russian', () => {
    const adjustments = page('/operator/adjustments', { role: 'finance' });
    expect(adjustments).toContain('double credit');
    expect(adjustments).toContain('data-testid="adjustment-approve"');
    expect(adjustments).toContain('Your proposal: another operator decides');
    expect(page('/operator/adjustments', { role: 'support' })).not.toContain('data-testid="adjustment-approve"');
    expect(page('/operator/mail')).toContain('connection refused');
    expect(page('/operator/mail')).toContain('Link not kept');
    const stuck = page('/operator/stuck');
    expect(stuck).toContain('2 h 5 min');
    expect(stuck).toContain('31 min');
    expect(stuck).toContain('node unreachable');
    const reviews = page('/operator/reviews', { role: 'finance' });
    for (const shown of ['bob@example.com', `href="/operator/users/${USER}"`, '0.3 BTC', 'BITCOIN', '$19500.00', 'no price', 'bc1qreviewed', 'above the review threshold; first withdrawal to this address', 'no price to value it', '1 h 6 min', '2 min', 'data-testid="review-approve"', 'data-testid="review-reject"']) {
      expect(reviews, shown).toContain(shown);
    }
    // Below the queue, the withdrawals from before the approval seal, each with its re-approval.
    for (const shown of ['Withdrawals from before the approval seal', 'SIGNED', '0.002 BTC', '0.0001 BTC', 'bc1qunsealed', '25 h 0 min', 'data-testid="unsealed-reseal"']) {
      expect(reviews, shown).toContain(shown);
    }
    expect(page('/operator/reviews', { role: 'finance', locale: 'ru' })).toContain('Одобрить заново');
    expect(page('/operator/reviews', { role: 'finance', locale: 'ru' })).toContain('19500.00 $');
    expect(page('/operator/reviews', { role: 'finance', locale: 'ru' })).toContain('выше порога проверки');
    expect(page('/operator/reviews', { role: 'finance', locale: 'ru' })).toContain('1 ч 6 мин');
    // Support has no queue: no entry in the navigation, and its path shows the first screen.
    expect(page('/operator/reviews', { role: 'support' })).not.toContain('data-testid="nav-reviews"');
    expect(page('/operator/reviews', { role: 'support' })).not.toContain('data-testid="review-approve"');
    expect(page(`/operator/users/${USER}`, { role: 'finance' })).toContain('data-testid="order-under-review"');
    expect(page(`/operator/users/${USER}`, { role: 'support' })).toContain('under review');
    expect(page('/operator/audit')).toContain('adjustment.approve');
    expect(page('/operator/audit')).toContain('amount: 0.015');
    expect(page('/operator/roles')).toContain('2026-11-01 10:00:00 UTC · command line');
    // Every moment in UTC to the second, in one shape: the mail, the stuck jobs, the audit log.
    for (const path of ['/operator/mail', '/operator/stuck', '/operator/audit']) expect(page(path), path).toContain('2026-11-02 10:00:00 UTC');
    expect(page('/operator/audit')).not.toContain('2026-11-02T10:00:00Z');
    expect(page('/operator')).toContain('data-testid="search-query"');
    expect(page(`/operator/users/${USER}`)).toContain('bobby');
    // Support sees no roles page; an unknown path shows the first screen.
    expect(page('/operator/roles', { role: 'support' })).not.toContain('data-testid="nav-roles"');
    expect(page('/operator/roles', { role: 'support' })).toContain('data-testid="search-query"');
    expect(page('/operator/mail', { locale: 'ru' })).toContain('Исходящая почта');
  });
});

describe("the console's calls", () => {
  afterEach(() => vi.unstubAllGlobals());

  it('sends the bearer token and JSON, and throws a refusal with its code', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return url.endsWith('/me') ? new Response(JSON.stringify({ role: 'support' })) : new Response(JSON.stringify({ exceptionCode: 'FORBIDDEN', message: 'This needs the finance role' }), { status: 403 });
    });
    const signedOut = vi.fn();
    const call = createCall(async () => 'token', signedOut);
    expect(await call('GET', '/me')).toEqual({ role: 'support' });
    await expect(call('POST', '/adjustments', { kind: 'CREDIT' })).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN', message: 'This needs the finance role' });
    expect(seen[1]?.url).toBe('/api/operator/adjustments');
    expect(seen[1]?.init.headers).toEqual({ authorization: 'Bearer token', 'content-type': 'application/json' });
    expect(seen[1]?.init.body).toBe('{"kind":"CREDIT"}');
    expect(signedOut).not.toHaveBeenCalled();
  });

  it('signs out on a 401 and without a token', async () => {
    vi.stubGlobal('fetch', async () => new Response('', { status: 401 }));
    const signedOut = vi.fn();
    await expect(createCall(async () => 'expired', signedOut)('GET', '/me')).rejects.toBeInstanceOf(ConsoleError);
    await expect(createCall(async () => null, signedOut)('GET', '/me')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(signedOut).toHaveBeenCalledTimes(2);
  });
});

describe("the console's moments", () => {
  it('are shown in UTC to the second, whatever zone the API wrote them in; what does not parse is shown as it came', () => {
    expect(utc('2026-11-02T10:00:00.123Z')).toBe('2026-11-02 10:00:00 UTC');
    expect(utc('2026-11-02T13:00:00+03:00')).toBe('2026-11-02 10:00:00 UTC');
    expect(utc('soon')).toBe('soon');
  });
});
