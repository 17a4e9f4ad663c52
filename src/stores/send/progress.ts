// The send's in-progress screen: the withdrawal followed to its end, and the offer to save its recipient (SPEC §2).
import { computed, map } from 'nanostores';
import { addAddressBookEntry } from '../../api/send.ts';
import { $accountId } from '../account.ts';
import { addressBookQuery } from '../address-book.ts';
import { $coins } from '../catalogue.ts';
import { showErrorToast } from '../errors.ts';
import { $t } from '../i18n.ts';
import { showToast } from '../toasts.ts';
import { $withdrawalUpdates } from '../withdrawal-watch.ts';
import type { SendReviewStep } from './review.ts';
import type { SaveRecipient } from './rules.ts';

export function createSendProgress({ $sendReview, $sendResult }: Pick<SendReviewStep, '$sendReview' | '$sendResult'>) {
  /** The in-progress screen follows the withdrawal to its end. */
  const $sendProgress = computed([$sendResult, $withdrawalUpdates], (result, updates) => (result ? (updates[result.id] ?? result) : null));

  const $saveRecipient = map<SaveRecipient>({ open: false, name: '', busy: false, saved: false });
  function openSaveRecipient(open: boolean): void {
    $saveRecipient.set({ ...$saveRecipient.get(), open });
  }

  function typeRecipientName(name: string): void {
    $saveRecipient.setKey('name', name);
  }

  /** SPEC §2: the in-progress screen adds the recipient to the address book when it is not saved yet. */
  async function saveRecipient(): Promise<void> {
    const state = $saveRecipient.get();
    const review = $sendReview.get();
    const result = $sendResult.get();
    const account = $accountId.get();
    const coin = result ? $coins.get()[result.currency] : undefined;
    if (!account || !result || !coin || state.busy || !state.name.trim()) return;
    $saveRecipient.set({ ...state, busy: true });
    try {
      await addAddressBookEntry(account, { name: state.name.trim(), blockchain: coin.network, address: review?.address ?? result.depositAddress });
      $saveRecipient.set({ open: false, name: '', busy: false, saved: true });
      showToast($t.get()('address_book_added'));
      void addressBookQuery.refetch(account);
    } catch (error) {
      $saveRecipient.set({ ...$saveRecipient.get(), busy: false });
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
    }
  }

  return { $sendProgress, $saveRecipient, openSaveRecipient, typeRecipientName, saveRecipient };
}
