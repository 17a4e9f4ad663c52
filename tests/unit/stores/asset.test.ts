import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setPlatform } from '../../../src/platform/platform.ts';
import { testPlatform } from '../../../src/platform/test.ts';
import { mockRequest, reply } from '../../support/request-mock.ts';
import { balance, CATALOGUE, RATES, transaction } from './wallet-fixtures.ts';

const gateway = mockRequest();
/** The currencies the account was asked to add, one request each. */
const added = () => gateway.to('POST /acc-1/account/currency').map((call) => (call.body as { currency: string }).currency);

const { $profile } = await import('../../../src/stores/user.ts');
const { balancesQuery, BALANCE_POLL_MS } = await import('../../../src/stores/balances.ts');
const { catalogueQuery } = await import('../../../src/stores/catalogue.ts');
const { ratesQuery } = await import('../../../src/stores/rates.ts');
const { historyQuery, detailQuery } = await import('../../../src/stores/transactions.ts');
const { $router } = await import('../../../src/stores/router.ts');
const { $selectedCurrency, $selectedLanguage, $disabledAssets } = await import('../../../src/stores/settings.ts');
const { $activeToast, hideToast } = await import('../../../src/stores/toasts.ts');
const asset = await import('../../../src/stores/asset.ts');
// One visit of the chooser for the whole file, as the module's stores were before.
const chooser = (await import('../../../src/stores/select-asset.ts')).chooserFlow.open();
const manage = (await import('../../../src/stores/manage-assets.ts')).manageAssetsFlow.open();

const NOW = new Date(2025, 2, 5, 10, 0);
const ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

describe('asset page, receive and details', () => {
  beforeEach(() => {
    setPlatform(testPlatform({ now: () => NOW.getTime() }));
    gateway.reset();
    for (const query of [balancesQuery, catalogueQuery, ratesQuery, historyQuery, detailQuery]) query.clear();
    hideToast();
    $selectedCurrency.set('USD');
    $selectedLanguage.set('ENG');
    $disabledAssets.set([]);
    gateway.on('GET /b2c-wallet/meta-info/coin', CATALOGUE);
    gateway.on('POST /rate', { ratesMap: RATES });
    gateway.on('GET /acc-1/asset', [balance('BTC', '0.015', { onHold: '0.001', depositAddress: ADDRESS })]);
    gateway.on('POST /acc-1/asset/transactions', { result: [] });
    $profile.set({
      data: { email: 'a@b.io', pinCodeActive: true, tgAuth: true, accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'USD', email: 'a@b.io' }] },
      loading: false,
      error: null,
    });
  });
  afterEach(() => {
    vi.useRealTimers();
    $profile.set({ data: null, loading: false, error: null });
  });

  it('shows the balance, on hold, value and the shortened address of the route currency', async () => {
    $router.open('/home/asset/btc');
    const off = asset.$asset.listen(() => {});
    await vi.waitFor(() => expect(asset.$asset.get()?.fiatValue).toBe('975.0018'));
    expect(asset.$asset.get()).toMatchObject({ currency: 'BTC', held: true, available: '0.015', onHold: '0.001', address: ADDRESS, shortAddress: 'bc1qar0s...5mdq', fiatSymbol: '$' });
    off();
  });

  it('copies the address and says so; a refused copy says that instead', async () => {
    const write = vi.fn(async () => {});
    await asset.copyAddress(ADDRESS, write);
    expect(write).toHaveBeenCalledWith(ADDRESS);
    expect($activeToast.get()).toMatchObject({ kind: 'success', text: 'Address copied' });
    await asset.copyAddress(ADDRESS, async () => {
      throw new Error('denied');
    });
    expect($activeToast.get()?.kind).toBe('error');
  });

  it('groups the history by day with Today and Yesterday, titled and signed', async () => {
    gateway.on('POST /acc-1/asset/transactions', {
      result: [
        transaction({ id: 'a', state: 'IN_PROGRESS', createdDate: new Date(2025, 2, 5, 9, 15).toISOString() }),
        transaction({ id: 'b', direction: 'WITHDRAWAL', transactionType: 'WITHDRAWAL', state: 'FAILED', amount: '0.002', createdDate: new Date(2025, 2, 4, 18).toISOString() }),
        transaction({ id: 'c', createdDate: new Date(2025, 1, 20, 12).toISOString() }),
      ],
    });
    $router.open('/home/asset/BTC');
    const off = asset.$historyGroups.listen(() => {});
    await vi.waitFor(() => expect(asset.$historyGroups.get()).toHaveLength(3));
    const groups = asset.$historyGroups.get();
    expect(groups.map((g) => g.label)).toEqual(['Today', 'Yesterday', '20 February']);
    expect(groups[0]?.rows[0]).toMatchObject({ id: 'a', title: 'Receiving', sign: '+', amount: '0.01', time: '9:15 AM', state: 'IN_PROGRESS' });
    // A failed one moved nothing: no sign (issue 19 item 11).
    expect(groups[1]?.rows[0]).toMatchObject({ title: 'Failed to send', sign: '', state: 'FAILED' });
    expect(gateway.expectRequest('POST /acc-1/asset/transactions').body).toEqual({ account: 'acc-1', currency: 'BTC', sort: 'DESC', properties: ['createdDate'], pageSize: 100, pageNumber: 1 });
    off();
  });

  it('reads the history again on each balance poll, so a deposit goes from Pending to completed without a reload', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    // Restarted under the fake clock, so the poll runs on it.
    balancesQuery.clear();
    historyQuery.clear();
    gateway.on('POST /acc-1/asset/transactions', { result: [transaction({ state: 'IN_PROGRESS' })] });
    $router.open('/home/asset/BTC');
    const off = asset.$historyGroups.listen(() => {});
    const offBalances = asset.$asset.listen(() => {});
    await vi.advanceTimersByTimeAsync(50);
    expect(asset.$historyGroups.get()[0]?.rows[0]?.state).toBe('IN_PROGRESS');
    gateway.on('POST /acc-1/asset/transactions', { result: [transaction({ state: 'COMPLETED' })] });
    gateway.on('GET /acc-1/asset', [balance('BTC', '0.025', { depositAddress: ADDRESS })]);
    await vi.advanceTimersByTimeAsync(BALANCE_POLL_MS);
    expect(asset.$asset.get()?.available).toBe('0.025');
    expect(asset.$historyGroups.get()[0]?.rows[0]).toMatchObject({ state: 'COMPLETED', title: 'Received' });
    off();
    offBalances();
  });

  it('reads the balances again when a history item changes state, so a purchase paid elsewhere shows at once', async () => {
    balancesQuery.clear();
    historyQuery.clear();
    gateway.on('GET /acc-1/asset', [balance('BTC', '0', { depositAddress: ADDRESS })]);
    gateway.on('POST /acc-1/asset/transactions', { result: [transaction({ state: 'IN_PROGRESS' })] });
    $router.open('/home/asset/BTC');
    const off = asset.$historyGroups.listen(() => {});
    const offBalances = asset.$asset.listen(() => {});
    await vi.waitFor(() => expect(asset.$historyGroups.get()[0]?.rows[0]?.state).toBe('IN_PROGRESS'));
    gateway.on('POST /acc-1/asset/transactions', { result: [transaction({ state: 'COMPLETED' })] });
    gateway.on('GET /acc-1/asset', [balance('BTC', '0.025', { depositAddress: ADDRESS })]);
    // The history alone is read again (the user came back to the page): the balances follow without waiting for the poll.
    await historyQuery.refetch({ account: 'acc-1', currency: 'BTC' });
    await vi.waitFor(() => expect(asset.$asset.get()?.available).toBe('0.025'));
    off();
    offBalances();
  });

  it('shows the balance that came with the history beside it (back from the card page: never +98.37 USDC over 0)', async () => {
    balancesQuery.clear();
    historyQuery.clear();
    // The balances answered just before the credit, the history just after: the page shows the history's snapshot.
    gateway.on('GET /acc-1/asset', [balance('BTC', '0', { depositAddress: ADDRESS })]);
    gateway.on('POST /acc-1/asset/transactions', { result: [transaction({ state: 'COMPLETED' })], balance: { currency: 'BTC', totalAvailable: '0.025', onHold: '0' } });
    $router.open('/home/asset/BTC');
    const off = asset.$assetPage.listen(() => {});
    const offHistory = asset.$historyGroups.listen(() => {});
    await vi.waitFor(() => expect(asset.$historyGroups.get()[0]?.rows[0]?.state).toBe('COMPLETED'));
    expect(asset.$assetPage.get()).toMatchObject({ available: '0.025', onHold: '0', fiatValue: expect.any(String) });
    off();
    offHistory();
  });

  it('loads the details of the route transaction with its type', async () => {
    gateway.on('GET /acc-1/asset/transaction/tx-9', transaction({ id: 'tx-9', state: 'IN_PROGRESS' }));
    $router.open('/home/asset/BTC/transaction/tx-9/DEPOSIT');
    const off = asset.$transactionDetail.listen(() => {});
    await vi.waitFor(() => expect(asset.$transactionDetail.get()?.title).toBe('Receiving'));
    expect(gateway.expectRequest('GET /acc-1/asset/transaction/tx-9').query).toEqual({ type: 'DEPOSIT' });
    expect(asset.$transactionDetail.get()?.rows.find((row) => row.label === 'tx_detail_status')?.value).toBe('Pending');
    off();
  });

  it('adds an asset opened for receiving that the account lacks', async () => {
    gateway.on('GET /acc-1/asset', []);
    gateway.on('POST /acc-1/account/currency', () => {
      gateway.on('GET /acc-1/asset', [balance('ETH', '0')]);
      return reply(204);
    });
    $router.open('/home/asset/ETH/receive');
    const off = asset.$asset.listen(() => {});
    await vi.waitFor(() => expect(asset.$asset.get()?.loading).toBe(false));
    await vi.waitFor(() => expect(asset.$asset.get()?.coin).toBeDefined());
    await asset.ensureAssetHeld();
    expect(added()).toEqual(['ETH']);
    expect(asset.$asset.get()?.held).toBe(true);
    off();
  });
});

describe('choosers and asset management (SPEC §2)', () => {
  beforeEach(() => {
    setPlatform(testPlatform());
    gateway.reset();
    for (const query of [balancesQuery, catalogueQuery, ratesQuery]) query.clear();
    hideToast();
    $disabledAssets.set([]);
    chooser.$assetSearch.set('');
    gateway.on('GET /b2c-wallet/meta-info/coin', CATALOGUE);
    gateway.on('POST /rate', { ratesMap: RATES });
    gateway.on('GET /acc-1/asset', [balance('BTC', '0.5')]);
    $profile.set({
      data: { email: 'a@b.io', pinCodeActive: true, tgAuth: true, accounts: [{ id: 'acc-1', language: 'ENG', defaultFiatCurrency: 'USD', email: 'a@b.io' }] },
      loading: false,
      error: null,
    });
  });

  it('lists active crypto assets not hidden on the device, and searches them', async () => {
    const off = chooser.$chooserItems.listen(() => {});
    await vi.waitFor(() => expect(chooser.$chooserItems.get().length).toBeGreaterThan(0));
    const currencies = () => chooser.$chooserItems.get().map((item) => item.coin.currency);
    expect(currencies()).toEqual(['BTC', 'ETH', 'USDT_ETH', 'USDC_ETH', 'TRX', 'USDT_TRX', 'LTC', 'DOGE', 'TON']);
    expect(chooser.$chooserItems.get()[0]?.amount).toBe('0.5');
    $disabledAssets.set(['ETH']);
    expect(currencies()).not.toContain('ETH');
    chooser.$assetSearch.set('tron');
    expect(currencies()).toEqual(['TRX', 'USDT_TRX']);
    chooser.$assetSearch.set('usdt');
    expect(currencies()).toEqual(['USDT_ETH', 'USDT_TRX']);
    chooser.$assetSearch.set('zzz');
    expect(currencies()).toEqual([]);
    off();
  });

  it('adds a chosen asset the account lacks, then opens receive or send for it', async () => {
    const off = chooser.$chooserItems.listen(() => {});
    await vi.waitFor(() => expect(balancesQuery.peek('acc-1').data).toBeDefined());
    await chooser.chooseAsset('BTC', 'send');
    expect(added()).toEqual([]);
    expect($router.get()).toMatchObject({ route: 'send', params: { currency: 'BTC' } });
    gateway.on('POST /acc-1/account/currency', reply(204));
    await chooser.chooseAsset('TON', 'receive');
    expect(added()).toEqual(['TON']);
    expect($router.get()).toMatchObject({ route: 'receive', params: { currency: 'TON' } });
    off();
  });

  it('toggles an asset: on adds it if missing and shows it, off only hides it on this device', async () => {
    const off = manage.$managedAssets.listen(() => {});
    await vi.waitFor(() => expect(manage.$managedAssets.get().length).toBe(9));
    const shown = () => manage.$managedAssets.get().filter((a) => a.shown).map((a) => a.coin.currency);
    expect(shown()).toEqual(['BTC']);
    await manage.setAssetShown('BTC', false);
    expect($disabledAssets.get()).toEqual(['BTC']);
    expect(shown()).toEqual([]);
    gateway.on('POST /acc-1/account/currency', () => {
      gateway.on('GET /acc-1/asset', [balance('BTC', '0.5'), balance('LTC')]);
      return reply(204);
    });
    await manage.setAssetShown('LTC', true);
    await manage.setAssetShown('BTC', true);
    expect(added()).toEqual(['LTC']);
    expect($disabledAssets.get()).toEqual([]);
    expect(shown()).toEqual(['BTC', 'LTC']);
    off();
  });

  it('shows a toggle switched on at once while the account adds the asset', async () => {
    const off = manage.$managedAssets.listen(() => {});
    await vi.waitFor(() => expect(manage.$managedAssets.get().length).toBe(9));
    let finish = () => {};
    gateway.on('POST /acc-1/account/currency', () => new Promise((resolve) => (finish = () => resolve(reply(204)))));
    const done = manage.setAssetShown('TON', true);
    await vi.waitFor(() => expect(added()).toEqual(['TON']));
    expect(manage.$managedAssets.get().find((a) => a.coin.currency === 'TON')?.shown).toBe(true);
    gateway.on('GET /acc-1/asset', [balance('BTC', '0.5'), balance('TON')]);
    finish();
    await done;
    expect(manage.$toggling.get()).toBeNull();
    expect(manage.$managedAssets.get().find((a) => a.coin.currency === 'TON')?.shown).toBe(true);
    off();
  });

  it('keeps the toggle off and says so when adding fails', async () => {
    const off = manage.$managedAssets.listen(() => {});
    await vi.waitFor(() => expect(manage.$managedAssets.get().length).toBe(9));
    gateway.on('POST /acc-1/account/currency', reply(500));
    await manage.setAssetShown('DOGE', true);
    expect($activeToast.get()?.kind).toBe('error');
    expect(manage.$managedAssets.get().find((a) => a.coin.currency === 'DOGE')?.shown).toBe(false);
    off();
  });
});
