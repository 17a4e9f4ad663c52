import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../../../src/server/domain/catalogue.ts';
import { routeChains } from '../../../../src/server/adapters/chains/open.ts';
import { ChainOffError } from '../../../../src/server/adapters/chains/port.ts';
import { explorerLink } from '../../../../src/lib/currencies.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

describe('networks that are off', () => {
  it('keep their coins in the catalogue, inactive', () => {
    const catalogue = buildCatalogue({ production: true, networksOn: ['BITCOIN', 'TRON'] });
    const active = catalogue.coins.filter((coin) => coin.active).map((coin) => coin.currency);
    expect(active).toEqual(['BTC', 'TRX', 'USDT_TRX']);
    expect(catalogue.coins.find((coin) => coin.currency === 'ETH')).toMatchObject({ active: false });
    expect(buildCatalogue({ production: true, networksOn: [] }).coins.some((coin) => coin.active)).toBe(false);
  });

  it('have no chain: the routed port lists none and refuses every call for them', async () => {
    const chain = routeChains({});
    expect(chain.networks).toEqual([]);
    expect(chain.explorerUrl('BITCOIN')).toBeUndefined();
    expect(() => chain.requiredConfirmations('BITCOIN')).toThrow(ChainOffError);
    await expect(chain.hotWalletAddress('ETHEREUM')).rejects.toThrow(ChainOffError);
    await expect(chain.scan('TRON', null, 10)).rejects.toThrow(ChainOffError);
    await expect(chain.status('TON', [])).rejects.toThrow(ChainOffError);
    await expect(chain.broadcast('LITECOIN', 'raw')).rejects.toThrow(ChainOffError);
    await expect(chain.signWithdrawal({ reference: 'w', network: 'DOGECOIN', currency: 'DOGE', toAddress: 'D', amount: unitsOf(1n) })).rejects.toThrow(/DOGECOIN is off/);
  });
});

describe('explorer links per CHAIN_ENV', () => {
  const urlScan = (env: 'mainnet' | 'testnet' | 'regtest', currency: string, explorerUrl?: () => string | undefined) =>
    buildCatalogue({ production: true, env, networksOn: ['BITCOIN', 'ETHEREUM', 'LITECOIN'], ...(explorerUrl ? { explorerUrl } : {}) }).coins.find((c) => c.currency === currency)?.urlScan ?? 'missing';

  it("link the networks' public explorers on mainnet, their test networks' on testnet and none on regtest", () => {
    expect(urlScan('mainnet', 'BTC')).toBe('https://mempool.space/tx/{tx}');
    expect(urlScan('testnet', 'BTC')).toBe('https://mempool.space/testnet4/tx/{tx}');
    expect(urlScan('testnet', 'USDT_ETH')).toBe('https://sepolia.etherscan.io/tx/{tx}');
    expect(urlScan('regtest', 'LTC')).toBe('');
    expect(explorerLink(urlScan('regtest', 'LTC'), 'ab12')).toBeUndefined();
    expect(explorerLink(urlScan('testnet', 'LTC'), 'ab12')).toBe('https://litecoinspace.org/testnet/tx/ab12');
  });

  it("prefer the adapter's own explorer (the devnet's) whatever the environment", () => {
    expect(urlScan('regtest', 'BTC', () => 'http://wallet.test/sandbox/devnet/tx/{tx}')).toBe('http://wallet.test/sandbox/devnet/tx/{tx}');
  });
});

describe('the minimum deposit', () => {
  it("is each coin's MIN_DEPOSIT as an exact decimal, and absent where any amount is credited", () => {
    const coins = buildCatalogue({ production: true, networksOn: ['BITCOIN', 'ETHEREUM'], minDeposit: { BTC: 100_000n, USDT_ETH: 1n, ETH: 0n } }).coins;
    const minimum = (currency: string) => coins.find((c) => c.currency === currency)?.minDeposit;
    expect(minimum('BTC')).toBe('0.001');
    expect(minimum('USDT_ETH')).toBe('0.000001');
    expect(minimum('ETH')).toBeUndefined();
    expect(minimum('TRX')).toBeUndefined();
  });
});
