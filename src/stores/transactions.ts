import { getTransaction, getTransactions, type Transaction } from '../api/wallet.ts';
import type { HistoryBalance } from '../lib/wire/assets.ts';
import { explorerLink, findFiat, type CoinMeta } from '../lib/currencies.ts';
import { formatCrypto, formatCryptoWithCode, formatDetailDate, formatFiat, tickerOf } from '../lib/format.ts';
import type { Locale } from '../lib/preferences.ts';
import type { MessageKey } from '../lib/text.ts';
import type { Translate } from './i18n.ts';
import { createQuery } from './query.ts';

export type HistoryArgs = { account: string; currency: string };
export type DetailArgs = { account: string; id: string; type: string };

/** A page of history and the currency's balance as of the same moment (the gateway reads both from one snapshot). */
export type HistoryPage = { items: Transaction[]; balance: HistoryBalance | undefined };

/** SPEC §7: the newest 100 transactions of one currency, with its balance from the same read. */
export const historyQuery = createQuery<HistoryArgs, HistoryPage>({
  key: ({ account, currency }) => `${account}:${currency}`,
  load: async ({ account, currency }) => {
    const page = await getTransactions(account, currency);
    return { items: page.result, balance: page.balance?.currency === currency ? page.balance : undefined };
  },
});

export const detailQuery = createQuery<DetailArgs, Transaction>({
  key: ({ account, id, type }) => `${account}:${id}:${type}`,
  load: ({ account, id, type }) => getTransaction(account, id, type),
});

const TITLES: Record<string, Record<Transaction['state'], MessageKey>> = {
  DEPOSIT: { COMPLETED: 'tx_title_received', IN_PROGRESS: 'tx_title_receiving', FAILED: 'tx_title_receive_failed' },
  WITHDRAWAL: { COMPLETED: 'tx_title_sent', IN_PROGRESS: 'tx_title_sending', FAILED: 'tx_title_send_failed' },
  EXCHANGE: { COMPLETED: 'tx_title_swapped', IN_PROGRESS: 'tx_title_swapping', FAILED: 'tx_title_swap_failed' },
  C2F: { COMPLETED: 'tx_title_sell', IN_PROGRESS: 'tx_title_sell', FAILED: 'tx_title_sell' },
  F2C: { COMPLETED: 'tx_title_buy', IN_PROGRESS: 'tx_title_buy', FAILED: 'tx_title_buy' },
  FIAT_DEPOSIT: { COMPLETED: 'tx_title_buy', IN_PROGRESS: 'tx_title_buy', FAILED: 'tx_title_buy' },
};

/** SPEC §4 titles: received / receiving / failed to receive, and so on; C2F is a sell, a card purchase a buy. */
export function titleKeyOf(tx: Pick<Transaction, 'transactionType' | 'direction' | 'state'>): MessageKey {
  const byType = TITLES[tx.transactionType] ?? TITLES[tx.direction === 'WITHDRAWAL' ? 'WITHDRAWAL' : 'DEPOSIT'];
  return byType?.[tx.state] ?? 'tx_title_received';
}

export const STATUS_KEYS: Record<Transaction['state'], MessageKey> = {
  IN_PROGRESS: 'tx_status_pending',
  COMPLETED: 'tx_status_completed',
  FAILED: 'tx_status_failed',
};

/** The side of the movement this currency's history sees: money in is +, money out is −; a failed one moved nothing, so it has no sign. */
export function movementOf(tx: Transaction, currency: string): { sign: '+' | '-' | ''; amount: string; currency: string } {
  const moved = tx.state !== 'FAILED';
  if (tx.transactionType === 'EXCHANGE' && tx.fromCurrency && tx.toCurrency) {
    const outgoing = tx.fromCurrency === currency;
    const amount = (outgoing ? tx.fromAmount : tx.toAmount) ?? tx.amount;
    return { sign: moved ? (outgoing ? '-' : '+') : '', amount, currency };
  }
  return { sign: moved ? (tx.direction === 'WITHDRAWAL' ? '-' : '+') : '', amount: tx.amount, currency: tx.currency || currency };
}

/** `plain`: a sentence, set in the regular weight. */
export type DetailRow = { label: MessageKey; value: string; href?: string; tone?: 'error' | 'pending'; mono?: boolean; address?: boolean; plain?: boolean };

const isSome = (value: string | null | undefined): value is string => value !== null && value !== undefined && value !== '';
const nonZero = (value: string | null | undefined): value is string => isSome(value) && !/^0*(?:\.0*)?$/.test(value);

/** An explorer link is followed only to the web: an absolute http(s) address or a path on this origin. */
function safeLink(href: string | undefined): string | undefined {
  return href && (/^https?:\/\//.test(href) || /^\/(?!\/)/.test(href)) ? href : undefined;
}

/** Types that move money on a chain: only these have a network, a network fee and addresses. */
const ON_CHAIN: readonly Transaction['transactionType'][] = ['DEPOSIT', 'WITHDRAWAL'];

/** Failure codes the gateway sends (domain/withdrawals/rules.ts WITHDRAWAL_FAILURES), each with its text. */
const FAILURE_KEYS: Partial<Record<string, MessageKey>> = {
  REJECTED: 'tx_failure_rejected',
  FAILED_ON_CHAIN: 'tx_failure_failed_on_chain',
  DROPPED: 'tx_failure_dropped',
  REVIEW_REJECTED: 'tx_failure_review_rejected',
  // MoonPay's failed step of a purchase (issue 32: the reason shown in the buyer's language).
  payment_authorization_declined: 'tx_failure_buy_declined',
  rejected_card: 'tx_failure_buy_declined',
  card_not_supported: 'tx_failure_buy_card_not_supported',
  daily_purchase_limit_exceeded: 'tx_failure_buy_limit',
  timeout_3d_secure: 'tx_failure_buy_timeout',
  timeout_bank_transfer: 'tx_failure_buy_timeout',
  timeout_card_verification: 'tx_failure_buy_timeout',
  timeout_kyc_verification: 'tx_failure_buy_timeout',
  rejected_kyc: 'tx_failure_buy_identity',
  cancelled: 'tx_failure_buy_cancelled',
};

/** Why a withdrawal is still pending (the gateway's `pendingReason`), each with its text; an unknown code shows none. */
const PENDING_REASON_KEYS: Partial<Record<string, MessageKey>> = {
  WAITING_FOR_FUNDS: 'tx_pending_reason_funds',
  UNDER_REVIEW: 'tx_pending_reason_review',
};

/** What a failed transaction's type says when its reason has no code of its own. */
const FAILURE_BY_TYPE: Record<Transaction['transactionType'], MessageKey> = {
  DEPOSIT: 'tx_failure_deposit',
  WITHDRAWAL: 'tx_failure_withdrawal',
  EXCHANGE: 'tx_failure_swap',
  C2F: 'tx_failure_sell',
  F2C: 'tx_failure_buy',
  FIAT_DEPOSIT: 'tx_failure_buy',
};

/** A deposit under MIN_DEPOSIT (domain/deposits.ts BELOW_MINIMUM_REASON): the reason names the minimum as "<amount> <CURRENCY>". */
const BELOW_MINIMUM = /^BELOW_MINIMUM_DEPOSIT\b(?:.*?\bis (\d+(?:\.\d+)?) ([A-Z][A-Z0-9_]*))?/;

/**
 * The reason of a failure in the user's language: a known code's text, else its type's (never the server's English).
 * A deposit below the minimum says so and what the minimum is (`minimum` writes the amount as the screen does).
 */
export function failureTextOf(tx: Pick<Transaction, 'transactionType' | 'failureReason'>, t: Translate, minimum?: (amount: string, currency: string) => string): string {
  const below = tx.failureReason ? BELOW_MINIMUM.exec(tx.failureReason) : null;
  if (below) {
    const [, amount, currency] = below;
    if (!amount || !currency) return t('tx_failure_deposit_below_minimum');
    return t('tx_failure_deposit_minimum', { minimum: minimum ? minimum(amount, currency) : `${amount} ${currency}` });
  }
  const key = (tx.failureReason ? FAILURE_KEYS[tx.failureReason] : undefined) ?? FAILURE_BY_TYPE[tx.transactionType];
  return t(key);
}

/** An amount of any currency the details show: fiat with its symbol and 2 decimals ("$100.00"), crypto by its round. */
function moneyText(value: string, code: string, coins: Record<string, CoinMeta>, locale: Locale): string {
  const fiat = findFiat(code);
  return fiat ? formatFiat(value, fiat.symbol, locale) : formatCryptoWithCode(value, code, coins[code]?.round, locale);
}

/** Every detail field of SPEC §3 the transaction carries, in reading order, and only what is true of its state. */
export function detailRows(tx: Transaction, coins: Record<string, CoinMeta>, locale: Locale, t: Translate): DetailRow[] {
  const coin = coins[tx.currency];
  const money = (value: string, code: string) => moneyText(value, code, coins, locale);
  const incoming = tx.direction === 'DEPOSIT';
  const onChain = ON_CHAIN.includes(tx.transactionType);
  const failed = tx.state === 'FAILED';
  const rows: DetailRow[] = [{ label: 'tx_detail_date', value: formatDetailDate(tx.createdDate, locale) }];
  const status = tx.state === 'IN_PROGRESS' && tx.underReview ? t('tx_status_under_review') : t(STATUS_KEYS[tx.state]);
  rows.push({ label: 'tx_detail_status', value: status, tone: failed ? 'error' : tx.state === 'IN_PROGRESS' ? 'pending' : undefined });
  if (tx.state === 'IN_PROGRESS' && typeof tx.confirmations === 'number' && typeof tx.requiredConfirmations === 'number') {
    rows.push({ label: 'tx_detail_confirmations', value: t('tx_confirmations_of', { count: Math.min(tx.confirmations, tx.requiredConfirmations), required: tx.requiredConfirmations }) });
  }
  if (failed) rows.push({ label: 'tx_detail_failure', value: failureTextOf(tx, t, money), tone: 'error' });
  const pendingReason = tx.state === 'IN_PROGRESS' && tx.pendingReason ? PENDING_REASON_KEYS[tx.pendingReason] : undefined;
  if (pendingReason) rows.push({ label: 'tx_detail_pending_reason', value: t(pendingReason), plain: true });
  // A swap, a card purchase (fiat paid, crypto got) and a sale (crypto paid, roubles got) show both sides; until it
  // completed, nothing was paid or received yet: the sides are what the order was for.
  if ((tx.transactionType === 'EXCHANGE' || tx.transactionType === 'FIAT_DEPOSIT' || tx.transactionType === 'C2F') && tx.fromCurrency && tx.toCurrency && tx.fromAmount && tx.toAmount) {
    const done = tx.state === 'COMPLETED';
    rows.push({ label: done ? 'tx_detail_paid' : 'tx_detail_to_pay', value: money(tx.fromAmount, tx.fromCurrency) });
    rows.push({ label: done ? 'tx_detail_got' : 'tx_detail_to_get', value: money(tx.toAmount, tx.toCurrency) });
  } else {
    rows.push({ label: 'tx_detail_amount', value: money(tx.amount, tx.currency) });
  }
  if (isSome(tx.exchangeRate)) {
    const [base, quote] = tx.transactionType === 'EXCHANGE' ? [tx.fromCurrency ?? tx.currency, tx.toCurrency ?? ''] : [tx.currency, tx.fiatCurrency ?? ''];
    const fiat = findFiat(quote);
    const rate = fiat ? formatFiat(tx.exchangeRate, fiat.symbol, locale) : `${formatCrypto(tx.exchangeRate, coins[quote]?.round, locale)} ${tickerOf(quote)}`.trim();
    rows.push({ label: 'tx_detail_rate', value: `1 ${tickerOf(base)} = ${rate}` });
  }
  // A failed transaction charged nothing: its fee went back with the amount. A swap's fee is the desk's spread, not the network's.
  const feeCurrency = tx.feeCurrency ?? tx.currency;
  if (!failed && nonZero(tx.fee)) rows.push({ label: onChain ? 'tx_detail_fee' : 'tx_detail_service_fee', value: money(tx.fee, feeCurrency) });
  // The gateway may repeat the fee as the service fee; one charge is shown once.
  if (!failed && onChain && nonZero(tx.serviceFee) && tx.serviceFee !== tx.fee) rows.push({ label: 'tx_detail_service_fee', value: money(tx.serviceFee, feeCurrency) });
  if (isSome(tx.senderName)) rows.push({ label: 'tx_detail_sender_name', value: tx.senderName });
  if (onChain && isSome(tx.from)) rows.push({ label: 'tx_detail_sender', value: tx.from, address: true });
  const recipientName = tx.recipientName ?? tx.contact;
  if (isSome(recipientName)) rows.push({ label: 'tx_detail_recipient_name', value: recipientName });
  if (tx.transactionType === 'C2F') {
    // A sale pays out to a card, not to an address.
    const card = tx.recipientAddress ?? tx.to;
    if (isSome(card)) rows.push({ label: 'tx_detail_card', value: card.replace(/([\d*]{4})(?=[\d*])/g, '$1 '), mono: true });
  } else if (onChain) {
    const recipient = incoming ? tx.to : (tx.recipientAddress ?? tx.to);
    if (isSome(recipient)) rows.push({ label: incoming ? 'tx_detail_receiver' : 'tx_detail_recipient_address', value: recipient, address: true });
  }
  const network = tx.blockchain ?? coin?.blockchain ?? tx.network;
  if (onChain && isSome(network)) rows.push({ label: 'tx_detail_network', value: network });
  if (isSome(tx.hash)) {
    const href = safeLink(tx.explorerUrl ?? (coin ? explorerLink(coin.urlScan, tx.hash) : undefined));
    rows.push({ label: 'tx_detail_hash', value: tx.hash, href, mono: true });
  }
  return rows;
}
