/**
 * The one line the start logs of what runs on what: each network's chain adapter, buying, selling, Telegram,
 * analytics and the development stand-ins, split into what is on and what is off, so an operator sees at a glance
 * that a production start runs on no stand-in and what it leaves off.
 */
import type { Config } from './config.ts';
import type { Custody } from './custody.ts';
import { TELEGRAM_SANDBOX_PATH } from './config-telegram.ts';
import { ANALYTICS_PATH } from './config-analytics.ts';
import type { PriceTable } from './adapters/rates/port.ts';
import { COINS, FIATS, NETWORKS } from '../lib/currencies.ts';
import { MOONPAY_WEBHOOK_PATH } from './adapters/card/open.ts';

export type StartSummary = { on: string[]; off: string[] };

/** `prices` is the table as the start read it (after the feeds' first poll where this process runs them). */
export function startSummary(config: Config, custody: Pick<Custody, 'chainAdapters' | 'devnet' | 'cards' | 'payouts'> & { market: Pick<Custody['market'], 'config'> }, prices?: PriceTable): StartSummary {
  const on: string[] = [];
  const off: string[] = [];
  const market = custody.market.config;
  if (market.source === 'reference') on.push('prices (reference table and its random walk: development only)');
  else if (market.source === 'off') off.push('prices (RATES_SOURCES unset: no swap, purchase or sale is quoted and no fiat value is shown)');
  else on.push(`prices (exchanges ${market.exchanges.join(',')} via ccxt, median of at least ${market.minSources}; fiat from the central banks)`);
  if (prices && market.source !== 'off') {
    const assets = [...new Set(COINS.map((coin) => coin.baseCurrency))];
    const missing = [...assets.filter((asset) => prices.usd[asset] === undefined), ...FIATS.map((fiat) => fiat.currency).filter((fiat) => prices.fiatPerUsd[fiat] === undefined)];
    if (missing.length > 0) off.push(`prices of ${missing.join(',')} (no current price yet: not quoted)`);
  }
  // Hedging follows real prices only: on the walk there is no market to hedge in.
  if (market.source === 'exchanges') {
    if (market.hedge) on.push(`hedging (${market.hedge.exchange}, past ${market.hedge.thresholdUsd} USD of exposure)`);
    else off.push('hedging (HEDGE_EXCHANGE unset: the inventory limits alone bound the desk)');
  }
  for (const network of NETWORKS) {
    const adapter = custody.chainAdapters[network];
    if (adapter === 'off') off.push(`${network} (no chain adapter: its coins are inactive)`);
    else on.push(`${network} (${adapter})`);
  }
  const moonpay = config.buy.moonpay;
  if (custody.cards.provider) on.push(`buying (card provider ${custody.cards.provider.name})`);
  else if (custody.cards.onRamp && moonpay) {
    const keys = moonpay.apiKey.startsWith('pk_live') ? 'live keys' : 'test keys';
    on.push(`buying (MoonPay on-ramp, ${keys}, ${(config.buy.paymentMethods ?? []).join(',')}; coins sent on chain to deposit addresses; webhook ${config.publicUrl}${MOONPAY_WEBHOOK_PATH})`);
  } else off.push('buying (CARD_PROVIDER=off)');
  if (!custody.payouts.provider) off.push('selling (PAYOUT_PROVIDER=off)');
  // SELL_ENABLED hides only the entry of /home/buy-sell (SPEC §2): the sell flow and its API take orders either way.
  else on.push(`selling (payout provider ${custody.payouts.provider.name}${config.sellEnabled ? '' : '; its entry hidden by SELL_ENABLED=off'})`);
  if (config.smtpUrl) on.push('mail (SMTP_URL)');
  else if (config.production) off.push('mail (SMTP_URL unset: nothing is delivered, so nobody can confirm a sign-up)');
  else on.push('mail (development mailbox: the mail_outbox table and the log)');
  const telegram = config.telegram;
  if (telegram.devMode) on.push('Telegram (development mode: a generated bot token, loopback-only test users; notifications to the stand-in)');
  else if (telegram.enabled) on.push(`Telegram (bot @${telegram.botUsername}, notifications)`);
  else off.push('Telegram (TELEGRAM_BOT_TOKEN unset: no mini app, no bot, no notifications)');
  const analytics = config.analytics;
  if (!analytics.enabled) off.push('analytics (ANALYTICS_WRITE_KEY=off)');
  else if (analytics.dataPlaneUrl === `${config.publicUrl}${ANALYTICS_PATH}`) on.push(`analytics (embedded data plane ${ANALYTICS_PATH})`);
  else on.push(`analytics (data plane ${new URL(analytics.dataPlaneUrl).host})`);
  const standIns = [
    custody.devnet ? 'devnet' : '',
    custody.cards.sandbox ? 'card' : '',
    custody.payouts.sandbox ? 'payout' : '',
    telegram.enabled && telegram.apiRoot === `${config.publicUrl}${TELEGRAM_SANDBOX_PATH}` ? 'telegram' : '',
  ].filter(Boolean);
  if (config.production || standIns.length === 0) off.push('stand-ins (/sandbox/*)');
  else on.push(`stand-ins /sandbox/{${standIns.join(',')}} (loopback only)`);
  return { on, off };
}

/** `on: …; off: …` for the log line's message. */
export function formatStartSummary(summary: StartSummary): string {
  return `on: ${summary.on.join(', ') || 'nothing'}; off: ${summary.off.join(', ') || 'nothing'}`;
}
