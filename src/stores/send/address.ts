// Choosing the send's address: typed, pasted, scanned from a QR code or picked from the address book; each change
// asks the gateway again (form.ts) and drops an acknowledgement of the previous address's warning.
import { computed } from 'nanostores';
import { $accountId } from '../account.ts';
import { addressBookQuery } from '../address-book.ts';
import { $t } from '../i18n.ts';
import { showToast } from '../toasts.ts';
import type { SendFormStep } from './form.ts';
import { addressFromQr } from './rules.ts';

export function createSendAddress({ $sendForm, $sendCoin, scheduleChecks }: Pick<SendFormStep, '$sendForm' | '$sendCoin' | 'scheduleChecks'>) {
  function typeAddress(text: string): void {
    $sendForm.set({ ...$sendForm.get(), address: text, check: undefined, checkedAddress: '', caution: null, cautionAcknowledged: false });
    scheduleChecks();
  }

  /** The user ticked (or unticked) that they checked an address the warning is about. */
  function acknowledgeCaution(checked: boolean): void {
    $sendForm.setKey('cautionAcknowledged', checked);
  }

  /** Pasted from the clipboard (SPEC §8 toast 'address pasted'). */
  async function pasteAddress(read: () => Promise<string>): Promise<void> {
    try {
      const text = (await read()).trim();
      if (!text) return;
      typeAddress(text);
      showToast($t.get()('send_address_pasted'));
    } catch {
      showToast($t.get()('common_something_went_wrong'), 'error');
    }
  }

  function openScanner(): void {
    $sendForm.setKey('scannerOpen', true);
  }

  /** SPEC §8: a camera that is unavailable closes the scanner and returns to the form. */
  function closeScanner(unavailable = false): void {
    $sendForm.setKey('scannerOpen', false);
    if (unavailable) showToast($t.get()('send_camera_unavailable'), 'error');
  }

  /** A code was read (SPEC §8 toast 'address scanned'). */
  function scannedAddress(text: string): void {
    const address = addressFromQr(text);
    $sendForm.setKey('scannerOpen', false);
    if (!address) return;
    typeAddress(address);
    showToast($t.get()('send_address_scanned'));
  }

  function togglePicker(open: boolean): void {
    $sendForm.setKey('pickerOpen', open);
  }

  function pickAddress(address: string): void {
    $sendForm.setKey('pickerOpen', false);
    typeAddress(address);
  }

  /** The saved addresses on the asset's network, for the picker. */
  const $sendBookEntries = computed([addressBookQuery.watch($accountId), $sendCoin], (book, coin) => (book.data ?? []).filter((entry) => !coin || entry.blockchain === coin.network));

  return { $sendBookEntries, typeAddress, acknowledgeCaution, pasteAddress, openScanner, closeScanner, scannedAddress, togglePicker, pickAddress };
}
