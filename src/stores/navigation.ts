// Apart from router.ts: the auth shells load the router's chunk, and this is the wallet island's alone (size budget).
import type { RouteName } from './router.ts';

/**
 * The routes of a flow the user is in the middle of (issue 33 item 4): send, swap, buy, sell and the passcode's
 * steps. They show no bottom navigation, so the way on is the flow's own action and the way out its back arrow.
 */
const FLOW_ROUTES: Partial<Record<RouteName, true>> = {
  send: true,
  sendReview: true,
  sendProgress: true,
  swap: true,
  swapFrom: true,
  swapTo: true,
  swapOrder: true,
  swapOrderReview: true,
  swapOrderSuccess: true,
  buySell: true,
  buyGet: true,
  buyPay: true,
  buyMethod: true,
  buyOrder: true,
  buyOrderReview: true,
  sellGet: true,
  sellPay: true,
  sellOrder: true,
  sellOrderReview: true,
  sellSuccess: true,
  passcodeEnable: true,
  passcodeChange: true,
  passcodeDisable: true,
  passcodeSuccess: true,
};

/** Is the route a step of a flow (no bottom navigation there)? */
export function inFlow(route: RouteName | undefined): boolean {
  return route !== undefined && FLOW_ROUTES[route] === true;
}
