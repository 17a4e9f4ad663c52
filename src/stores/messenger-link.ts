import { atom } from 'nanostores';
import { openPage } from '@nanostores/router';
import { createMessengerLinkCode, getMessengerLink, setMessengerNotifications, unlinkMessenger, type MessengerLinkState } from '../api/messenger.ts';
import { platform } from '../platform/platform.ts';
import { showErrorToast } from './errors.ts';
import { isPasscodeRefusal } from './passcode-entry.ts';
import { $router } from './router.ts';
import { $profile, loadProfile } from './user.ts';

/**
 * Linking the messaging account from the web (SPEC §2 Home banner, Settings 'connect messaging account', §7):
 * POST /user/tg/code, then the bot's deep link opens with it; the bot links on `/start <code>`. Unlinking is
 * POST /user/tg/unlink. Inside the messenger there is no linking toggle. Both ask for the passcode when it is on;
 * without it the gateway wants a recent sign-in and answers RECENT_SIGN_IN_REQUIRED (its toast says to sign in again).
 */
export type MessengerLinkAction = 'link' | 'unlink';

/** asking: the passcode prompt shows for this action (Settings shows it over the list). */
export type MessengerLinkView = { state: MessengerLinkState | undefined; busy: boolean; asking: MessengerLinkAction | null };

export const $messengerLink = atom<MessengerLinkView>({ state: undefined, busy: false, asking: null });

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

const actions: Record<MessengerLinkAction, (pincode: string | undefined) => Promise<void>> = {
  async link(pincode) {
    const { url } = await createMessengerLinkCode(pincode);
    platform().leave(url);
  },
  async unlink(pincode) {
    const state = await unlinkMessenger(pincode);
    $messengerLink.set({ ...$messengerLink.get(), state });
    void loadProfile();
  },
};

/**
 * Runs an action with the passcode entered (or none). A passcode refusal is thrown back to the prompt, which stays
 * and shows it; anything else closes the prompt for a toast.
 */
async function run(action: MessengerLinkAction, pincode: string | undefined): Promise<void> {
  $messengerLink.set({ ...$messengerLink.get(), busy: true });
  try {
    await actions[action](pincode);
    $messengerLink.set({ ...$messengerLink.get(), busy: false, asking: null });
  } catch (error) {
    const refused = pincode !== undefined && isPasscodeRefusal(error);
    $messengerLink.set({ ...$messengerLink.get(), busy: false, asking: refused ? action : null });
    if (refused) throw error;
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}

/** With the passcode on, the action waits for it (the prompt is in Settings); without it, it runs at once. */
function start(action: MessengerLinkAction): void {
  const view = $messengerLink.get();
  if (view.busy || view.asking) return;
  if ($profile.get().data?.pinCodeActive) {
    $messengerLink.set({ ...view, asking: action });
    if (action === 'link') openPage($router, 'settings');
    return;
  }
  void run(action, undefined);
}

/** Asks for a one-time code and opens the bot with it (the banner's and the toggle's action). */
export function openBotLink(): Promise<void> {
  start('link');
  return Promise.resolve();
}

export function unlinkMessengerAccount(): Promise<void> {
  start('unlink');
  return Promise.resolve();
}

/** The prompt's four digits: the pending action runs with them. */
export async function confirmMessengerPasscode(pincode: string): Promise<void> {
  const { asking } = $messengerLink.get();
  if (asking) await run(asking, pincode);
}

export function cancelMessengerPasscode(): void {
  $messengerLink.set({ ...$messengerLink.get(), asking: null });
}

/** Settings' switch of the bot's messages (kept on the server); the switch shows the answer. */
export async function switchMessengerNotifications(enabled: boolean): Promise<void> {
  const view = $messengerLink.get();
  if (view.busy) return;
  $messengerLink.set({ ...view, busy: true });
  try {
    $messengerLink.set({ ...$messengerLink.get(), busy: false, state: await setMessengerNotifications(enabled) });
  } catch (error) {
    $messengerLink.set({ ...$messengerLink.get(), busy: false });
    showErrorToast(error, { fallback: 'common_something_went_wrong' });
  }
}
