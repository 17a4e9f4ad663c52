import { atom, computed } from 'nanostores';
import { leaveFeedback } from '../api/user.ts';
import { isEmail } from '../lib/email.ts';
import { realEmail } from '../lib/messenger-email.ts';
import { platform } from '../platform/platform.ts';
import { $clientConfig } from './client-config.ts';
import { $profile } from './user.ts';
import { showErrorToast } from './errors.ts';

/** The longest message the gateway takes (domain/feedback.ts FEEDBACK_MAX_LENGTH). */
export const FEEDBACK_MAX_LENGTH = 2000;

/** `email` stays null until the user edits it: the field shows the account's address until then (SPEC §2: prefilled). */
export type FeedbackState = { text: string; email: string | null; busy: boolean; sent: boolean };

const INITIAL: FeedbackState = { text: '', email: null, busy: false, sent: false };

export const $feedback = atom<FeedbackState>(INITIAL);

/** The address the form shows: what the user typed, else the account's real e-mail. */
export const $feedbackEmail = computed([$feedback, $profile], (state, profile) => state.email ?? realEmail(profile.data?.email) ?? '');

/** A message of 1 to 2000 characters, and an address that is empty or an e-mail. */
export const $canSendFeedback = computed([$feedback, $feedbackEmail], (state, email) => {
  const text = state.text.trim();
  return !state.busy && text.length > 0 && text.length <= FEEDBACK_MAX_LENGTH && (email.trim() === '' || isEmail(email));
});

/** Inside Telegram with a support chat configured, 'Leave feedback' opens the chat instead of the form. */
export const $supportChat = computed($clientConfig, (config) => (platform().kind === 'tg' ? config.data?.supportTelegram : undefined));

export function setFeedbackText(text: string): void {
  $feedback.set({ ...$feedback.get(), text: text.slice(0, FEEDBACK_MAX_LENGTH) });
}

export function setFeedbackEmail(email: string): void {
  $feedback.set({ ...$feedback.get(), email });
}

export async function sendFeedback(): Promise<void> {
  if (!$canSendFeedback.get()) return;
  const state = $feedback.get();
  const email = $feedbackEmail.get().trim();
  $feedback.set({ ...state, busy: true });
  try {
    await leaveFeedback(state.text.trim(), email === '' ? null : email);
    $feedback.set({ ...INITIAL, sent: true });
  } catch (error) {
    $feedback.set({ ...$feedback.get(), busy: false });
    showErrorToast(error, { fallback: 'common_something_went_wrong', serverMessage: 'refusal' });
  }
}

/** A new visit of the form starts empty (the address prefilled again). */
export function resetFeedback(): void {
  $feedback.set(INITIAL);
}
