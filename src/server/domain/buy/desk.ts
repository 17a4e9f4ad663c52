/**
 * Buying crypto with a card (SPEC §2 Buy, §3, §4, §5, §7): quotes (quotes.ts), orders and their confirmation
 * (requests.ts), the provider's events (payments.ts) and the worker's expiry (expiry.ts), over one set of
 * dependencies; with an on-ramp (MoonPay) instead of an acquirer, the onramp*.ts files. The desk's method names and inputs are what http/buy.ts and the worker call.
 */
import type { PayerDetails, CardPaymentEvent } from '../../adapters/card/port.ts';
import type { OnRampEvent } from '../../adapters/onramp/port.ts';
import type { BuyDeps } from './context.ts';
import { cancelOrder, expireOrders } from './expiry.ts';
import { applyOnRampEvent } from './onramp-events.ts';
import { applyPaymentEvent } from './payments.ts';
import { availability, buyCurrencies, currentRate, fiatOfGeo, quote, type QuoteInput } from './quotes.ts';
import { confirmOrder, createOrder, findOrder, type OrderInput } from './requests.ts';

export type BuyDesk = ReturnType<typeof createBuyDesk>;

export function createBuyDesk(deps: BuyDeps) {
  return {
    availability: (clientAddress?: string) => availability(deps, clientAddress),
    currencies: (clientAddress?: string) => buyCurrencies(deps, clientAddress),
    fiatOfGeo: (geoId: string) => fiatOfGeo(deps, geoId),
    rate: (currency: string, fiat: string) => currentRate(deps, currency, fiat),
    quote: (input: QuoteInput) => quote(deps, input),
    createOrder: (input: OrderInput) => createOrder(deps, input),
    findOrder: (account: string, id: string) => findOrder(deps, account, id),
    confirmOrder: (account: string, id: string, payer: PayerDetails) => confirmOrder(deps, account, id, payer),
    cancelOrder: (account: string, id: string) => cancelOrder(deps, account, id),
    applyPaymentEvent: (event: CardPaymentEvent) => applyPaymentEvent(deps, event),
    applyOnRampEvent: (event: OnRampEvent, body: string) => applyOnRampEvent(deps, event, body),
    expireOrders: () => expireOrders(deps),
  };
}
