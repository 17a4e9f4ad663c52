/**
 * The time a request path may spend on outside calls (chain nodes and chain APIs), shared by every call the request
 * makes: the gateway runs each request inside `withinBudget(CHAIN_REQUEST_BUDGET_MS, …)`, and a client bounds each
 * call by `callTimeoutMs(its own timeout)`, so all of a request's calls together end well before a browser gives up.
 * Outside a request (background jobs) there is no budget and every client keeps its own, longer, per-call timeout.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

type Budget = { until: number; ms: number };

const budgets = new AsyncLocalStorage<Budget>();

/** Runs `work` with `ms` for all of its outside calls together. */
export function withinBudget<T>(ms: number, work: () => Promise<T>): Promise<T> {
  return budgets.run({ until: Date.now() + ms, ms }, work);
}

/** What is left of the current request's budget (at least 1 ms), or undefined outside a request. */
export function budgetLeftMs(): number | undefined {
  const budget = budgets.getStore();
  return budget === undefined ? undefined : Math.max(1, budget.until - Date.now());
}

/** The request's whole budget, for messages; undefined outside a request. */
export function budgetMs(): number | undefined {
  return budgets.getStore()?.ms;
}

/** A call's timeout: the client's own, or what is left of the request's budget when that is shorter. */
export function callTimeoutMs(ownMs: number): number {
  const left = budgetLeftMs();
  return left === undefined ? ownMs : Math.min(ownMs, left);
}
