// The sale's success screen (SPEC §2 /sell/success): the order followed until the bank has paid (or declined).
import { atom, onMount } from 'nanostores';
import { getSellOrder, type SellOrderView } from '../../api/sell.ts';
import { $accountId } from '../account.ts';
import { refreshBalances } from '../balances.ts';
import { ORDER_POLL_MS } from './rules.ts';

export function createSellResult() {
  const $sellOrder = atom<SellOrderView | null>(null);

  /** The success screen follows the order until the bank has paid (or declined). */
  onMount($sellOrder, () => {
    const timer = setInterval(() => {
      const account = $accountId.get();
      const order = $sellOrder.get();
      if (!account || !order || order.state !== 'PROCESSING') return;
      getSellOrder(account, order.id).then(
        (next) => {
          if ($sellOrder.get()?.id !== next.id) return;
          $sellOrder.set(next);
          if (next.state !== 'PROCESSING') void refreshBalances();
        },
        () => {},
      );
    }, ORDER_POLL_MS);
    return () => clearInterval(timer);
  });

  return { $sellOrder };
}
