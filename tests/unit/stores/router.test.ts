import { describe, expect, it } from 'vitest';
import { inFlow } from '../../../src/stores/navigation.ts';
import { ROUTES, sectionOf } from '../../../src/stores/router.ts';

describe('route table', () => {
  it('holds every signed-in path of SPEC §2', () => {
    const paths = Object.values(ROUTES);
    for (const path of ['/home', '/home/asset/:currency/send/review', '/home/asset/:currency/transaction/:id/:type', '/select-asset/receive', '/select-asset/send', '/manage-assets', '/home/buy-sell', '/buy/order/review', '/swap/order/success', '/settings/select-currency', '/settings/passcode/success', '/settings/address-book/:id/delete', '/settings/wallet-protection/email/verification/new'])
      expect(paths).toContain(path);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('marks settings paths for the Settings tab and the rest for Home', () => {
    expect(sectionOf('settings')).toBe('settings');
    expect(sectionOf('addressBookCreate')).toBe('settings');
    expect(sectionOf('swapOrder')).toBe('home');
    expect(sectionOf(undefined)).toBeUndefined();
  });

  it('knows the steps of send, swap, buy, sell and the passcode as flows, and the tabs and lists as not (issue 33 item 4)', () => {
    for (const route of ['send', 'sendReview', 'swapOrder', 'swapOrderReview', 'buyOrderReview', 'sellOrderReview', 'passcodeEnable', 'passcodeChange', 'passcodeSuccess'] as const) expect(inFlow(route)).toBe(true);
    for (const route of ['home', 'asset', 'receive', 'settings', 'addressBook', 'passcode', 'transaction'] as const) expect(inFlow(route)).toBe(false);
    expect(inFlow(undefined)).toBe(false);
  });
});
