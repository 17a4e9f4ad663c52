import { platform } from '../platform/platform.ts';

/**
 * SPEC §3: the analytics 'load' event carries the account id and the app type, 'tg' inside the messenger and
 * 'web' elsewhere. No analytics sink is configured in this product yet; whoever adds one sends this event.
 */
export type LoadEvent = { type: 'track'; event: 'load'; properties: { account: string; appType: 'tg' | 'web' } };

export function appType(): 'tg' | 'web' {
  return platform().kind === 'tg' ? 'tg' : 'web';
}

export function loadEvent(accountId: string): LoadEvent {
  return { type: 'track', event: 'load', properties: { account: accountId, appType: appType() } };
}
