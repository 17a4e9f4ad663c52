import { atom } from 'nanostores';
import { createMessengerLinkCode, getMessengerLink, unlinkMessenger, type MessengerLinkState } from '../api/messenger.ts';
import { platform } from '../platform/platform.ts';
import { showErrorToast } from './errors.ts';
import { loadProfile } from './user.ts';

/**
 * Linking the messaging account from the web (SPEC §2 Home banner, Settings 'connect messaging account', §7):
 * POST /user/tg/code, then the bot's deep link opens with it; the bot links on `/start <code>`. Unlinking is
 * POST /user/tg/unlink. Inside the messenger there is no linking toggle.
 */
export type MessengerLinkView = { state: MessengerLinkState | undefined; busy: boolean };

export const $messengerLink = atom<MessengerLinkView>({ state: undefined, busy: false });

/** Whether linking is offered here at all: never inside the messenger (SPEC §2, §6). */
export function canLinkMessenger(): boolean {
  return platform().kind !== 'tg';
}

export async function loadMessengerLink(): Promise<void> {
  try {
    $messengerLink.set({ ...$messengerLink.get(), state: await getMessengerLink() });
  } catch {
    // the toggle stays unknown; the profile's tgAuth still shows the link
  }
}

/** Asks for a one-time code and opens the bot with it (the banner's and the toggle's action). */
export async function openBotLink(): Promise<void> {
  if ($messengerLink.get().busy) return;
  $messengerLink.set({ ...$messengerLink.get(), busy: true });
  try {
    const { url } = await createMessengerLinkCode();
    platform().leave(url);
  } catch (error) {
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  } finally {
    $messengerLink.set({ ...$messengerLink.get(), busy: false });
  }
}

export async function unlinkMessengerAccount(): Promise<void> {
  if ($messengerLink.get().busy) return;
  $messengerLink.set({ ...$messengerLink.get(), busy: true });
  try {
    const state = await unlinkMessenger();
    $messengerLink.set({ state, busy: false });
    void loadProfile();
  } catch (error) {
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
    $messengerLink.set({ ...$messengerLink.get(), busy: false });
  }
}
