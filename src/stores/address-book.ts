import { computed, map } from 'nanostores';
import { openPage } from '@nanostores/router';
import { addAddressBookEntry, deleteAddressBookEntry, getAddressBookEntry, getAddressCaution, listAddressBook, type AddressBookEntry, type AddressCaution } from '../api/send.ts';
import { isAddressShapeValid } from '../lib/address.ts';
import { NETWORK_INFO, isNetwork } from '../lib/currencies.ts';
import { $accountId } from './account.ts';
import { $activeCoins } from './catalogue.ts';
import { $chainEnv } from './client-config.ts';
import { showErrorToast } from './errors.ts';
import { $t } from './i18n.ts';
import { createQuery } from './query.ts';
import { createDebouncedRequest } from './primitives/debounced-request.ts';
import { createFlow } from './primitives/flow.ts';
import { $router } from './router.ts';
import { showToast } from './toasts.ts';

/** SPEC §7: the whole address book, one page of 1000. */
export const addressBookQuery = createQuery<string, AddressBookEntry[]>({ key: (account) => account, load: async (account) => (await listAddressBook(account)).result });
export const $addressBook = addressBookQuery.watch($accountId);

type EntryArgs = { account: string; id: string };
const entryQuery = createQuery<EntryArgs, AddressBookEntry>({ key: (a) => `${a.account}:${a.id}`, load: (a) => getAddressBookEntry(a.account, a.id) });
const $entryArgs = computed([$accountId, $router], (account, page): EntryArgs | null =>
  account && page && (page.route === 'addressBookItem' || page.route === 'addressBookDelete' || page.route === 'addressBookEdit') ? { account, id: page.params.id } : null,
);
/** The entry of /settings/address-book/:id (read-only detail, delete). */
export const $addressBookEntry = entryQuery.watch($entryArgs);

export type NetworkOption = { value: string; title: string };

/** SPEC §5: the network list holds the active crypto assets that are not tokens, one per network. */
export const $addressNetworks = computed($activeCoins, (coins): NetworkOption[] => {
  const seen = new Set<string>();
  return coins
    .filter((coin) => !coin.token && !seen.has(coin.network) && seen.add(coin.network))
    .map((coin) => ({ value: coin.network, title: coin.blockchain }));
});

export function networkTitle(network: string): string {
  return isNetwork(network) ? NETWORK_INFO[network].blockchain : network;
}

export type AddressForm = {
  name: string;
  network: string;
  address: string;
  busy: boolean;
  /** The poisoned-address check (issue 36 item 3) of `cautionFor` (network and address): saving waits for it and, when it warns, for the tick. */
  caution: AddressCaution | null;
  cautionFor: string | null;
  cautionAcknowledged: boolean;
};

/** SPEC §9: the check waits 300 ms after the last keystroke. */
const CAUTION_DEBOUNCE_MS = 300;
const cautionKey = (form: Pick<AddressForm, 'network' | 'address'>) => `${form.network}:${form.address.trim()}`;
/** /settings/address-book/create: a fresh form per visit; the first network is chosen, also once the catalogue answers. */
export const addressFormFlow = createFlow(['addressBookCreate'], (scope) => {
  const $addressForm = map<AddressForm>({ name: '', network: $addressNetworks.get()[0]?.value ?? '', address: '', busy: false, caution: null, cautionFor: null, cautionAcknowledged: false });

  type CautionInput = { account: string; network: string; address: string };
  const settle = (input: CautionInput, caution: AddressCaution | null) => {
    const form = $addressForm.get();
    if (cautionKey(form) === cautionKey(input)) $addressForm.set({ ...form, caution, cautionFor: cautionKey(input), cautionAcknowledged: false });
  };
  const cautions = createDebouncedRequest({
    delayMs: CAUTION_DEBOUNCE_MS,
    load: (input: CautionInput, signal) => getAddressCaution(input.account, input.network, input.address, signal),
    onResult: (view, input) => settle(input, view.caution),
    // A check that failed warns of nothing: the address book refuses nothing on it, and sending checks again.
    onError: (_error, input) => settle(input, null),
  });

  function editAddressForm(change: Partial<Pick<AddressForm, 'name' | 'network' | 'address'>>): void {
    const before = $addressForm.get();
    const form = { ...before, ...change };
    if (cautionKey(form) === cautionKey(before)) return $addressForm.set(form);
    $addressForm.set({ ...form, caution: null, cautionFor: null, cautionAcknowledged: false });
    cautions.cancel();
    const account = $accountId.get();
    const address = form.address.trim();
    if (account && form.network && address && isAddressShapeValid(form.network, address, $chainEnv.get())) cautions.schedule({ account, network: form.network, address });
  }

  function acknowledgeCaution(checked: boolean): void {
    $addressForm.setKey('cautionAcknowledged', checked);
  }

  /** SPEC §5 add address: the address is trimmed and must have its network's form. */
  const $addressFormError = computed([$addressForm, $chainEnv], (form, chainEnv) => {
    const address = form.address.trim();
    return address !== '' && form.network !== '' && !isAddressShapeValid(form.network, address, chainEnv) ? ('address_book_error_wrong_address' as const) : null;
  });

  const $canSaveAddress = computed(
    [$addressForm, $addressFormError],
    (form, error) =>
      !form.busy &&
      form.name.trim() !== '' &&
      form.network !== '' &&
      form.address.trim() !== '' &&
      error === null &&
      form.cautionFor === cautionKey(form) &&
      (!form.caution || form.cautionAcknowledged),
  );

  async function saveAddress(): Promise<void> {
    const account = $accountId.get();
    const form = $addressForm.get();
    if (!account || !$canSaveAddress.get()) return;
    $addressForm.setKey('busy', true);
    try {
      await addAddressBookEntry(account, { name: form.name.trim(), blockchain: form.network, address: form.address.trim() });
      showToast($t.get()('address_book_added'));
      await addressBookQuery.refetch(account);
      openPage($router, 'addressBook');
    } catch (error) {
      $addressForm.setKey('busy', false);
      // SPEC §8: address add failures show the server's message.
      showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
    }
  }

  scope.follow($addressNetworks, (networks) => {
    if (!$addressForm.get().network && networks[0]) editAddressForm({ network: networks[0].value });
  });

  scope.onLeave(() => cautions.cancel());

  return { $addressForm, $addressFormError, $canSaveAddress, editAddressForm, acknowledgeCaution, saveAddress };
});

export type AddressFormVisit = ReturnType<typeof addressFormFlow.open>;

/** SPEC §2: only add and delete exist; an edit link shows the read-only detail. */
export const addressEntryFlow = createFlow(['addressBookItem', 'addressBookEdit'], (scope) => {
  scope.guard([], (page) => (page.route === 'addressBookEdit' ? { route: 'addressBookItem', params: { id: page.params.id } } : undefined));
  return {};
});

let deleting = false;

export async function deleteAddress(id: string): Promise<void> {
  const account = $accountId.get();
  if (!account || deleting) return;
  deleting = true;
  try {
    await deleteAddressBookEntry(account, id);
    showToast($t.get()('address_book_deleted'));
    await addressBookQuery.refetch(account);
    openPage($router, 'addressBook');
  } catch (error) {
    showErrorToast(error, { serverMessage: true, fallback: 'common_something_went_wrong' });
  } finally {
    deleting = false;
  }
}
