import { atom } from 'nanostores';
import { getOpenWithdrawals, getWithdrawal, type WithdrawalView } from '../api/send.ts';
import { displayDecimal } from '../lib/amount.ts';
import { findCoin } from '../lib/currencies.ts';
import { $accountId } from './account.ts';
import { refreshBalances } from './balances.ts';
import { $t } from './i18n.ts';
import { showToast } from './toasts.ts';

/** How often a withdrawal on its way is asked about while the app is open. */
export const WITHDRAWAL_WATCH_MS = 4_000;

/** The latest known state of each watched withdrawal, by id: the in-progress screen reads it. */
export const $withdrawalUpdates = atom<Record<string, WithdrawalView>>({});

const watched = new Map<string, WithdrawalView>();
let timer: ReturnType<typeof setInterval> | undefined;
let polling = false;

function record(withdrawal: WithdrawalView): void {
  $withdrawalUpdates.set({ ...$withdrawalUpdates.get(), [withdrawal.id]: withdrawal });
}

/** SPEC §2 'the user is notified on completion': a toast when it completes or fails, whatever screen is open. */
function announce(withdrawal: WithdrawalView): void {
  const t = $t.get();
  const coin = findCoin(withdrawal.currency);
  const amount = `${displayDecimal(withdrawal.amount, coin?.round ?? 8)} ${coin?.baseCurrency ?? withdrawal.currency}`;
  if (withdrawal.state === 'COMPLETED') showToast(t('send_toast_completed', { amount }));
  else showToast(t('send_toast_failed', { amount }), 'error');
}

async function poll(): Promise<void> {
  if (polling) return;
  polling = true;
  try {
    let ended = false;
    for (const [id, known] of [...watched]) {
      const now = await getWithdrawal(known.account, id).catch(() => undefined);
      if (!now) continue;
      record(now);
      if (now.state === 'IN_PROGRESS') continue;
      watched.delete(id);
      ended = true;
      announce(now);
    }
    if (ended) void refreshBalances();
  } finally {
    polling = false;
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }
}

/** Follows a withdrawal until it ends; one that ended already (a transfer between users) needs no watching. */
export function watchWithdrawal(withdrawal: WithdrawalView): void {
  record(withdrawal);
  if (withdrawal.state !== 'IN_PROGRESS' || watched.has(withdrawal.id)) return;
  watched.set(withdrawal.id, withdrawal);
  timer ??= setInterval(() => void poll(), WITHDRAWAL_WATCH_MS);
}

/** Opening the app (or signing in) picks up the account's withdrawals still on their way. Started by the island; returns the stop. */
export function startWithdrawalWatch(): () => void {
  return $accountId.subscribe((account) => {
    watched.clear();
    if (!account) return;
    void getOpenWithdrawals(account).then(
      ({ result }) => {
        if ($accountId.get() === account) for (const withdrawal of result) watchWithdrawal(withdrawal);
      },
      () => {},
    );
  });
}
