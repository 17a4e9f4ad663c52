import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { campaignOf, loadOptions, startAnalytics, type AnalyticsDeps, type AnalyticsSdk } from '../../../src/stores/analytics.ts';
import { $authState } from '../../../src/stores/auth.ts';
import { $profile } from '../../../src/stores/user.ts';
import { $router } from '../../../src/stores/router.ts';
import { $activeAccount } from '../../../src/stores/settings.ts';

const SOURCE = { writeKey: 'key-123456', dataPlaneUrl: 'https://wallet.example/api/analytics', configUrl: 'https://wallet.example/api/analytics' };

type Recorded = Array<[string, ...unknown[]]>;

function recorder(): AnalyticsSdk & { calls: Recorded } {
  const calls: Recorded = [];
  return {
    calls,
    load: (...args) => calls.push(['load', ...args]),
    page: (...args) => calls.push(['page', ...args]),
    track: (...args) => calls.push(['track', ...args]),
    identify: (...args) => calls.push(['identify', ...args]),
    reset: () => calls.push(['reset']),
  };
}

/** Deps whose first screen is drawn when the test says so. */
function deps(overrides: Partial<AnalyticsDeps> = {}) {
  const sdk = recorder();
  const logged: string[] = [];
  let draw = (): void => {};
  const given: AnalyticsDeps = {
    source: async () => SOURCE,
    loadSdk: async () => sdk,
    afterFirstScreen: (work) => {
      draw = work;
      return () => {};
    },
    log: (message) => logged.push(message),
    location: () => ({ path: '/home', search: '?utm_source=ads&utm_campaign=spring&utm_=x&other=1', origin: 'https://wallet.example', title: 'Wallet' }),
    ...overrides,
  };
  return { given, sdk, logged, drawn: () => draw() };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const signIn = (id: string) => {
  $profile.set({ data: { email: null, pinCodeActive: false, tgAuth: false, accounts: [{ id, language: 'ENG', defaultFiatCurrency: 'USD', email: null }] } as never, loading: false, error: null });
  $authState.set('authenticated');
};

describe('analytics in the browser (SPEC §3, §8, §9)', () => {
  let stop: () => void = () => {};
  beforeEach(() => {
    setPlatform(testPlatform({ kind: 'web' }));
    $activeAccount.set(null);
    $profile.set({ data: null, loading: false, error: null });
    $authState.set('loading');
    $router.open('/home');
  });
  afterEach(() => stop());

  it('reads the campaign from utm_ parameters as the SDK names them', () => {
    expect(campaignOf('?utm_source=ads&utm_medium=cpc&utm_campaign=spring&utm_term=wallet&utm_content=a&utm_=x&ref=1')).toEqual({ source: 'ads', medium: 'cpc', name: 'spring', term: 'wallet', content: 'a' });
    expect(campaignOf('')).toEqual({});
  });

  it('loads the SDK only after the first screen, then sends what happened before in order', async () => {
    const { given, sdk, drawn } = deps();
    stop = startAnalytics(given);
    signIn('acc-1');
    await settle();
    expect(sdk.calls).toEqual([]);
    drawn();
    await settle();
    expect(sdk.calls.map((call) => call[0])).toEqual(['load', 'page', 'identify', 'track']);
    const [, writeKey, dataPlaneUrl, options] = sdk.calls[0] ?? [];
    expect([writeKey, dataPlaneUrl]).toEqual([SOURCE.writeKey, SOURCE.dataPlaneUrl]);
    expect(options).toMatchObject({ configUrl: SOURCE.configUrl, useBeacon: true, polyfillIfRequired: false, autoTrack: { pageLifecycle: { enabled: true } } });
    expect(sdk.calls[1]).toEqual(['page', 'home', expect.objectContaining({ path: '/home', url: 'https://wallet.example/home' }), expect.objectContaining({ campaign: { source: 'ads', name: 'spring' }, page: { tab_url: 'https://wallet.example/home?utm_source=ads&utm_campaign=spring&utm_=x&other=1' } })]);
    // Identify with the account id alone: no e-mail, no traits.
    expect(sdk.calls[2]?.slice(0, 3)).toEqual(['identify', 'acc-1', {}]);
    expect(sdk.calls[3]?.slice(0, 3)).toEqual(['track', 'load', { account: 'acc-1', appType: 'web' }]);
  });

  it("a page per route change, 'load' once per app start, identify again only for another account, reset on sign-out", async () => {
    setPlatform(testPlatform({ kind: 'tg' }));
    const { given, sdk, drawn } = deps();
    stop = startAnalytics(given);
    drawn();
    await settle();
    signIn('acc-1');
    $router.open('/settings');
    $router.open('/settings');
    $router.open('/home');
    $authState.set('anonymous');
    signIn('acc-2');
    const names = sdk.calls.slice(1).map((call) => `${String(call[0])}:${String(call[1] ?? '')}`);
    expect(names).toEqual(['page:home', 'identify:acc-1', 'track:load', 'page:settings', 'page:home', 'reset:', 'identify:acc-2']);
    expect(sdk.calls.find((call) => call[0] === 'track')?.[2]).toEqual({ account: 'acc-1', appType: 'tg' });
  });

  it('stays off without a source: no SDK is loaded', async () => {
    let loaded = 0;
    const { given, drawn } = deps({ source: async () => undefined, loadSdk: async () => ((loaded += 1), recorder()) });
    stop = startAnalytics(given);
    signIn('acc-1');
    drawn();
    await settle();
    expect(loaded).toBe(0);
  });

  it('logs each failure once and never throws into the app (SPEC §8)', async () => {
    const failing = deps({ loadSdk: async () => Promise.reject(new Error('chunk blocked')) });
    stop = startAnalytics(failing.given);
    signIn('acc-1');
    failing.drawn();
    await settle();
    $router.open('/settings');
    expect(failing.logged).toEqual(['the SDK could not be loaded']);
    stop();

    const sdk = recorder();
    sdk.page = () => {
      throw new Error('storage quota exceeded');
    };
    const throwing = deps({ loadSdk: async () => sdk });
    stop = startAnalytics(throwing.given);
    throwing.drawn();
    await settle();
    $router.open('/home');
    $router.open('/settings');
    expect(throwing.logged).toEqual(['an event could not be sent']);
  });

  it('never points the SDK at a content network', () => {
    const options = loadOptions(SOURCE, 'https://wallet.example');
    for (const key of ['pluginsSDKBaseURL', 'destSDKBaseURL']) expect(String(options[key])).toMatch(/^https:\/\/wallet\.example\//);
  });
});
