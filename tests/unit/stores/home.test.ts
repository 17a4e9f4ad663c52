import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { mockRequest, reply, type SentRequest } from '../../support/request-mock.ts';
import { balance, CATALOGUE, RATES } from './wallet-fixtures.ts';

const gateway = mockRequest();

const { $profile } = await import('../../../src/stores/user.ts');
const { $disabledAssets, $hideLinkBanner, $protectWalletDismissed, $selectedCurrency } = await import('../../../src/stores/settings.ts');
const { balancesQuery } = await import('../../../src/stores/balances.ts');
const { catalogueQuery, coinMap } = await import('../../../src/stores/catalogue.ts');
const { ratesQuery } = await import('../../../src/stores/rates.ts');
const { $router } = await import('../../../src/stores/router.ts');
const { $activeToast, hideToast } = await import('../../../src/stores/toasts.ts');
const home = await import('../../../src/stores/home.ts');
const { $requestedSwapPair } = await import('../../../src/stores/swap-selection.ts');

const coins = coinMap(CATALOGUE.crypto);

function signIn(extra: { pinCodeActive?: boolean; tgAuth?: boolean } = {}) {
  $profile.set({
    data: { email: 'a@b.io', pinCodeActive: extra.pinCodeActive ?? false, tgAuth: extra.tgAuth ?? false, accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'USD', email: 'a@b.io' }] },
    loading: false,
    error: null,
  });
}

describe('home: the asset list and total (SPEC §2, §5)', () => {
  it('sorts by fiat value descending, leaves out hidden and unknown assets, keeps the catalogue order on ties', () => {
    const items = [balance('USDT_TRX', '5000'), balance('ETH', '0'), balance('BTC', '0.1'), balance('TRX', '0'), balance('NOPE', '9'), balance('USD', '5', { isCrypto: false })];
    const rows = home.assetRows(items, coins, RATES, 'USD', ['TRX']);
    expect(rows.map((r) => r.currency)).toEqual(['BTC', 'USDT_TRX', 'ETH']);
    expect(rows[0]?.fiatValue).toBe('6500.012');
    expect(rows[1]?.fiatValue).toBe('5000.5');
  });

  it('adds the total exactly, in the chosen fiat, hidden assets included', () => {
    const items = [balance('BTC', '0.1'), balance('USDT_TRX', '0.3'), balance('TRX', '10')];
    expect(home.totalFiat(items, coins, RATES, 'USD')).toBe('6501.51203');
    // 0.1 + 0.2 is no float here: three tenths of a dollar stay three tenths.
    expect(home.totalFiat([balance('USDT_TRX', '0.1'), balance('TRX', '0.2')], coins, { USDT_TRX: { USD: '1' }, TRX: { USD: '1' } }, 'USD')).toBe('0.3');
  });

  it('says what hidden assets hold, so the total is never a surprise (issue 19 item 25)', () => {
    const items = [balance('BTC', '0.1'), balance('TRX', '10'), balance('ETH', '0'), balance('DOGE', '5')];
    expect(home.hiddenHoldings(items, coins, RATES, 'USD', ['TRX'])).toEqual({ value: '1.2' });
    // Hidden but empty: nothing to say.
    expect(home.hiddenHoldings(items, coins, RATES, 'USD', ['ETH'])).toBeUndefined();
    expect(home.hiddenHoldings(items, coins, RATES, 'USD', [])).toBeUndefined();
    // Held without a rate: it holds something, of a value not known yet.
    expect(home.hiddenHoldings(items, coins, RATES, 'USD', ['TRX', 'DOGE'])).toEqual({ value: undefined });
  });

  it('treats an asset without a rate as worth nothing in the sort and the total', () => {
    const rows = home.assetRows([balance('DOGE', '100'), balance('BTC', '0.001')], coins, RATES, 'USD');
    expect(rows.map((r) => [r.currency, r.fiatValue])).toEqual([
      ['BTC', '65.00012'],
      ['DOGE', undefined],
    ]);
  });
});

describe('home: which state shows (SPEC §2)', () => {
  it('is empty for a first-time account, protect while no passcode and not dismissed, else the wallet', () => {
    expect(home.homeViewOf({ items: undefined, failed: false, pinCodeActive: false, protectDismissed: false })).toBe('loading');
    expect(home.homeViewOf({ items: undefined, failed: true, pinCodeActive: false, protectDismissed: false })).toBe('error');
    expect(home.homeViewOf({ items: [], failed: false, pinCodeActive: false, protectDismissed: false })).toBe('empty');
    expect(home.homeViewOf({ items: [balance('BTC')], failed: false, pinCodeActive: false, protectDismissed: false })).toBe('protect');
    expect(home.homeViewOf({ items: [balance('BTC')], failed: false, pinCodeActive: false, protectDismissed: true })).toBe('wallet');
    expect(home.homeViewOf({ items: [balance('BTC')], failed: false, pinCodeActive: true, protectDismissed: false })).toBe('wallet');
    // An unknown profile does not flash the prompt at a user who has a passcode.
    expect(home.homeViewOf({ items: [balance('BTC')], failed: false, pinCodeActive: undefined, protectDismissed: false })).toBe('wallet');
  });

  it('shows the link banner only outside the messenger, unlinked, and not declined for good', () => {
    expect(home.showLinkBanner({ insideMessenger: false, tgAuth: false, hidden: false })).toBe(true);
    expect(home.showLinkBanner({ insideMessenger: true, tgAuth: false, hidden: false })).toBe(false);
    expect(home.showLinkBanner({ insideMessenger: false, tgAuth: true, hidden: false })).toBe(false);
    expect(home.showLinkBanner({ insideMessenger: false, tgAuth: false, hidden: true })).toBe(false);
    expect(home.showLinkBanner({ insideMessenger: false, tgAuth: undefined, hidden: false })).toBe(false);
  });
});

describe('home store with the gateway', () => {
  beforeEach(() => {
    setPlatform(testPlatform());
    gateway.reset();
    balancesQuery.clear();
    catalogueQuery.clear();
    ratesQuery.clear();
    hideToast();
    $disabledAssets.set([]);
    $protectWalletDismissed.set(false);
    $hideLinkBanner.set(false);
    $selectedCurrency.set('USD');
    gateway.on('GET /b2c-wallet/meta-info/coin', CATALOGUE);
    gateway.on('POST /rate', { ratesMap: RATES });
    gateway.on('GET /acc-1/asset', []);
    signIn();
  });
  afterEach(() => {
    $profile.set({ data: null, loading: false, error: null });
  });

  it('goes from empty to the protect prompt to the wallet, with the total in the chosen fiat', async () => {
    let items = [] as ReturnType<typeof balance>[];
    gateway.on('GET /acc-1/asset', () => items);
    gateway.on('POST /acc-1/account/currency/list', (sent: SentRequest) => {
      items = (sent.body as { currencies: string[] }).currencies.map((c) => balance(c));
      return reply(204);
    });
    const off = [home.$homeView.listen(() => {}), home.$totalFiat.listen(() => {}), home.$assetRows.listen(() => {})];
    await vi.waitFor(() => expect(home.$homeView.get()).toBe('empty'));
    await home.addCommonAssets();
    expect(gateway.expectRequest('POST /acc-1/account/currency/list').body).toEqual({ currencies: ['BTC', 'ETH', 'USDT_TRX'] });
    expect(home.$homeView.get()).toBe('protect');
    home.dismissProtectPrompt();
    expect($protectWalletDismissed.get()).toBe(true);
    expect(home.$homeView.get()).toBe('wallet');
    await vi.waitFor(() => expect(home.$totalFiat.get()).toBe('0'));
    expect(home.$assetRows.get().map((r) => r.currency)).toEqual(['BTC', 'ETH', 'USDT_TRX']);
    items = [balance('BTC', '0.01'), balance('ETH', '0'), balance('USDT_TRX', '20')];
    await balancesQuery.refetch('acc-1');
    expect(home.$totalFiat.get()).toBe('670.0032');
    expect(home.$assetRows.get().map((r) => r.currency)).toEqual(['BTC', 'USDT_TRX', 'ETH']);
    for (const stop of off) stop();
  });

  it('a failure to add the common assets says so and lets the user try again', async () => {
    gateway.on('POST /acc-1/account/currency/list', reply(500));
    await balancesQuery.refetch('acc-1');
    await home.addCommonAssets();
    expect($activeToast.get()).toMatchObject({ kind: 'error', text: 'Something went wrong...' });
    expect(home.$addingCommonAssets.get()).toBe(false);
  });

  it('adds only the common assets on offer, and nothing when their networks are off', async () => {
    const only = (active: string[]) => ({ ...CATALOGUE, crypto: CATALOGUE.crypto.map((coin) => ({ ...coin, active: active.includes(coin.currency) })) });
    gateway.on('GET /b2c-wallet/meta-info/coin', only(['BTC', 'TRX']));
    gateway.on('POST /acc-1/account/currency', reply(204));
    catalogueQuery.clear();
    const off = home.$commonAssetsOffered.listen(() => {});
    await vi.waitFor(() => expect(home.$commonAssetsOffered.get()).toEqual(['BTC']));
    await home.addCommonAssets();
    expect(gateway.expectRequest('POST /acc-1/account/currency').body).toEqual({ currency: 'BTC' });
    expect(gateway.to('POST /acc-1/account/currency/list')).toEqual([]);
    off();

    gateway.clearCalls();
    catalogueQuery.clear();
    gateway.on('GET /b2c-wallet/meta-info/coin', only([]));
    const offAgain = home.$commonAssetsOffered.listen(() => {});
    await vi.waitFor(() => expect(home.$commonAssetsOffered.get()).toEqual([]));
    await home.addCommonAssets();
    expect(gateway.to('POST /acc-1/account/currency')).toEqual([]);
    expect(gateway.to('POST /acc-1/account/currency/list')).toEqual([]);
    expect($activeToast.get()).toBeNull();
    offAgain();
  });

  it('takes the quick swap path when BTC and USDT_TRX are both held', async () => {
    $requestedSwapPair.set(null);
    gateway.on('GET /acc-1/asset', [balance('BTC'), balance('ETH')]);
    const off = home.$homeView.listen(() => {});
    await balancesQuery.refetch('acc-1');
    home.openSwapFromHome();
    expect($router.get()?.route).toBe('swap');
    expect($requestedSwapPair.get()).toBeNull();
    gateway.on('GET /acc-1/asset', [balance('BTC'), balance('USDT_TRX')]);
    await balancesQuery.refetch('acc-1');
    home.openSwapFromHome();
    expect($router.get()?.route).toBe('swapOrder');
    expect($requestedSwapPair.get()).toEqual({ from: 'BTC', to: 'USDT_TRX' });
    off();
  });

  it('hides the link banner for good, and hands its action to whoever links the messenger', () => {
    const off = home.$showLinkBanner.listen(() => {});
    expect(home.$showLinkBanner.get()).toBe(true);
    const linker = vi.fn();
    home.setMessengerLinker(linker);
    home.linkMessengerAccount();
    expect(linker).toHaveBeenCalledOnce();
    home.hideLinkBannerForGood();
    expect($hideLinkBanner.get()).toBe(true);
    expect(home.$showLinkBanner.get()).toBe(false);
    off();
  });

  it('never shows the link banner inside the messenger', () => {
    setPlatform(testPlatform({ kind: 'tg' }));
    signIn({ tgAuth: false });
    expect(home.$showLinkBanner.get()).toBe(false);
  });
});
