/**
 * Every periodic job of the product, with its name and schedule, in one list: the worker runs what this returns.
 * A job here only calls into the domain or into an adapter's own work (a sandbox paying due payouts, an outbox
 * sending due webhooks); composition (custody.ts) hands over the parts, already configured.
 */
import type pg from 'pg';
import type { Logger } from '../log.ts';
import type { CollectionPort, CustodyHoldings, HotWalletFees, WithdrawalChainPort } from '../adapters/chains/port.ts';
import { confirmDeposits, scanDeposits } from '../domain/deposits.ts';
import type { DepositAddressGuard } from '../domain/deposit-address-guard.ts';
import { collectDeposits } from '../domain/sweeps.ts';
import { expireSwapOrders } from '../domain/swaps/worker.ts';
import { processWithdrawals } from '../domain/withdrawals/worker.ts';
import { purgeAnalyticsEvents } from '../domain/analytics.ts';
import { confirmCustodyMovements } from '../domain/custody-movements.ts';
import { keepHotWallet, keepsHotWallet, type HotColdDeps } from '../domain/hot-cold.ts';
import type { JobHandler } from './port.ts';
import type { MarketFeed } from '../adapters/rates/port.ts';
import { pollFeed } from '../domain/market/polling.ts';
import { purgeExpiredQuotes } from '../domain/market/quotes.ts';

/** Something an adapter does when asked, periodically; the job list gives it its name and schedule. */
type Work = () => Promise<unknown>;

export type JobSources = {
  pool: pg.Pool;
  log: Logger;
  /** WORKER_POLL_MS: how often the chain, payout and webhook jobs look for work. */
  pollMs: number;
  /** RATES_WALK_MS; 0 keeps the rates fixed and the job off. */
  ratesWalkMs: number;
  chain: WithdrawalChainPort & CustodyHoldings & Partial<Pick<HotWalletFees, 'estimateFee'>> & { collection: CollectionPort };
  /** MIN_DEPOSIT per currency (atomic units): smaller deposits are recorded, never credited. */
  minDeposit?: Readonly<Record<string, bigint>>;
  /** Checks each deposit address's MAC before its deposit is recorded for the account it names (domain/deposits.ts): required, so no composition can leave it out. */
  addressGuard: Pick<DepositAddressGuard, 'check'>;
  /** The development walk's step (never in production), and the real feeds the worker polls, each at its pace. */
  market: { reference: { step: Work } | undefined; feeds: readonly { feed: MarketFeed; everyMs: number }[]; hedge?: { run: Work; everyMs: number } | undefined };
  /** Present while selling is on (a payout provider is configured). */
  sell: { submitPending: Work } | undefined;
  /** Present while buying is on (a card provider is configured). */
  buy: { expireOrders: Work } | undefined;
  /** The sandbox bank's payouts that are due; present while it stands in for the payout provider. */
  payoutSandbox: { payDue: Work } | undefined;
  /** The outboxes of the sandboxes' signed webhooks (delivery.ts), each sent by its own job; absent while off. */
  payoutWebhooks: { deliverDue: Work } | undefined;
  cardWebhooks: { deliverDue: Work } | undefined;
  /** HOT_WALLET_MAX, COLD_WALLET and UTXO_CONSOLIDATE_BELOW with what they need (domain/hot-cold.ts); absent: no such job. */
  hotCold?: Omit<HotColdDeps, 'chain' | 'log'> | undefined;
  /** The bot's messages about users' money (domain/notifications.ts); absent while Telegram is off. */
  notifications?: { deliverDue: Work } | undefined;
  /** ANALYTICS_RETENTION_DAYS: stored analytics events older than this are deleted (also while analytics is off). */
  analyticsRetentionDays?: number | undefined;
};

/** The jobs; the worker runs each on its own. */
export function jobHandlers(sources: JobSources): JobHandler[] {
  const { pool, log, pollMs, chain } = sources;
  // Order books, not chains: at least a second apart, whatever the poll interval.
  const ordersEveryMs = Math.max(pollMs, 1_000);
  const jobs: JobHandler[] = [];
  const add = (name: string, everyMs: number, work: Work) => jobs.push({ name, everyMs, run: async () => void (await work()) });
  // The chain jobs run per network that is on (`chain.deposits:LITECOIN`), each run on its own by the worker: a
  // node that does not answer delays and fails only its own network's jobs. Each job sees the port narrowed to its
  // network, so the domain's walks over `chain.networks` touch that network's rows alone.
  for (const network of chain.networks) {
    const only = { ...chain, networks: [network] };
    add(`chain.deposits:${network}`, pollMs, async () => {
      await scanDeposits(pool, only, network, { minDeposit: sources.minDeposit, guard: sources.addressGuard, log });
      await confirmDeposits(pool, only, log);
    });
    // Withdrawals: sign, broadcast (or reconcile by hash after a crash), confirm; each row claimed with SKIP LOCKED.
    add(`chain.withdrawals:${network}`, pollMs, () => processWithdrawals(pool, only, log));
    // Sweeps: credited deposits into the hot wallet, where the network is account-based (collection.sweeps).
    if (chain.collection.sweeps(network)) add(`chain.sweeps:${network}`, pollMs, () => collectDeposits(pool, only, log));
    add(`custody.movements:${network}`, pollMs, () => confirmCustodyMovements(pool, only, log));
    // The hot wallet between its bounds: deposit outputs consolidated while fees are low, the excess above the ceiling to cold.
    const hotCold = sources.hotCold;
    if (hotCold && keepsHotWallet(hotCold, network)) add(`custody.hot-cold:${network}`, pollMs, () => keepHotWallet(pool, { ...hotCold, chain: only, log }, network));
  }
  const { reference, feeds } = sources.market;
  if (reference && sources.ratesWalkMs > 0) add('rates.walk', sources.ratesWalkMs, reference.step);
  for (const { feed, everyMs } of feeds) add(`rates.${feed.name.replace(/\W+/g, '-')}`, everyMs, () => pollFeed(pool, feed, log));
  // The desk's exposure hedged on its exchange account, where one is configured (HEDGE_EXCHANGE).
  if (sources.market.hedge) add('desk.hedge', sources.market.hedge.everyMs, sources.market.hedge.run);
  // Quotes nobody took are kept an hour past their end (a late confirm reads why it expired), then deleted.
  add('quotes.purge', 600_000, () => purgeExpiredQuotes(pool));
  // Swap orders left on the review past their quote's 300 s give their hold back.
  add('swap.expiry', ordersEveryMs, () => expireSwapOrders(pool));
  if (sources.payoutSandbox) add('payout.sandbox', pollMs, sources.payoutSandbox.payDue);
  if (sources.payoutWebhooks) add('webhooks.payout', pollMs, sources.payoutWebhooks.deliverDue);
  // Sell orders the payout provider has not taken yet are handed to it again (not while selling is off).
  if (sources.sell) add('sell.submit', ordersEveryMs, sources.sell.submitPending);
  // Card payment webhooks go out; unconfirmed and unpaid buy orders past their time expire (not while buying is off).
  if (sources.cardWebhooks) add('webhooks.card', pollMs, sources.cardWebhooks.deliverDue);
  if (sources.buy) add('buy.expiry', ordersEveryMs, sources.buy.expireOrders);
  if (sources.notifications) add('notifications.telegram', pollMs, sources.notifications.deliverDue);
  const retentionDays = sources.analyticsRetentionDays;
  if (retentionDays !== undefined) add('analytics.retention', 3_600_000, () => purgeAnalyticsEvents(pool, retentionDays));
  return jobs;
}
