import { describe, expect, it } from 'vitest';
import { mnemonicToSeedSync } from '@scure/bip39';
import { findCoin } from '../../../../src/lib/currencies.ts';
import { canonicalAddress, withdrawalUnits, WithdrawalError } from '../../../../src/server/domain/withdrawals/rules.ts';
import { createDevnetSigner, devnetTxHash } from '../../../../src/server/adapters/chains/devnet-signer.ts';
import { chainAddressing } from '../../../../src/server/domain/addresses.ts';
import { DEFAULT_WITHDRAWAL_FEES, withdrawalConfig } from '../../../../src/server/config-withdrawals.ts';
import { loadConfig, ConfigError } from '../../../../src/server/config.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

const CHAIN_ADDRESSING = chainAddressing('mainnet');

const SEED = mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const coin = (currency: string) => {
  const found = findCoin(currency);
  if (!found) throw new Error(currency);
  return found;
};

describe('withdrawal amounts and addresses', () => {
  it('takes at most 8 decimals and no more than the coin has, above 0', () => {
    expect(withdrawalUnits('0.015', coin('BTC'))).toBe(1_500_000n);
    expect(withdrawalUnits('1.12345678', coin('ETH'))).toBe(1_123_456_780_000_000_000n);
    expect(() => withdrawalUnits('0.1234567', coin('USDT_TRX'))).toThrow(WithdrawalError);
    expect(() => withdrawalUnits('0', coin('BTC'))).toThrow(/above 0/);
  });

  it('spells an address the way deposit addresses are stored', () => {
    expect(canonicalAddress('BITCOIN', 'BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ')).toBe('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq');
    expect(canonicalAddress('ETHEREUM', '0x52908400098527886e0f7030069857d2e4169ee7')).toBe('0x52908400098527886E0F7030069857D2E4169EE7');
    expect(canonicalAddress('TRON', 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8')).toBe('TJRabPrwbZy45sbavfcjinPJC18kjpRTv8');
  });
});

describe('the devnet hot wallet', () => {
  it('signs the same withdrawal into the same transaction, whose hash is known before it is sent, and verifies it', async () => {
    const signer = createDevnetSigner(SEED, CHAIN_ADDRESSING);
    for (const network of ['BITCOIN', 'ETHEREUM', 'TON'] as const) {
      const order = { reference: 'w-1', network, currency: network === 'BITCOIN' ? 'BTC' : network === 'ETHEREUM' ? 'ETH' : 'TON', toAddress: 'x', amount: unitsOf(123n) };
      const first = await signer.sign(order);
      expect(await signer.sign(order)).toEqual(first);
      expect(first.txHash).toBe(devnetTxHash(network, first.rawTx));
      expect(first.fromAddress).toBe(await signer.address(network));
      expect(await signer.verify(network, first.rawTx)).toMatchObject({ amount: '123', reference: 'w-1' });
      // Tampered or signed by another key: refused.
      expect(await signer.verify(network, first.rawTx.replace(/.$/, (c) => (c === '0' ? '1' : '0')))).toBeUndefined();
      const other = await createDevnetSigner(mnemonicToSeedSync('legal winner thank year wave sausage worth useful legal winner thank yellow'), CHAIN_ADDRESSING).sign(order);
      expect(await signer.verify(network, other.rawTx)).toBeUndefined();
    }
  });
});

describe('withdrawal configuration', () => {
  it('has a fee per currency by default, overridable, and blocked addresses', () => {
    expect(withdrawalConfig({}).fees).toEqual(DEFAULT_WITHDRAWAL_FEES);
    const config = loadConfig({ WITHDRAWAL_FEES: '{"BTC":"0.0002"}', WITHDRAWAL_BLOCKED_ADDRESSES: ' a , b ' });
    expect(config.withdrawals.fees.BTC).toBe('0.0002');
    expect(config.withdrawals.fees.ETH).toBe('0.001');
    expect(config.withdrawals.blockedAddresses).toEqual(['a', 'b']);
    expect(() => loadConfig({ WITHDRAWAL_FEES: 'nope' })).toThrow(ConfigError);
    expect(() => loadConfig({ WITHDRAWAL_FEES: '{"btc":"1"}' })).toThrow(/WITHDRAWAL_FEES/);
  });
});
