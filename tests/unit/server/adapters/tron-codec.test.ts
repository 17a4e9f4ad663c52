import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { utils } from 'tronweb';
import { openChains } from '../../../../src/server/adapters/chains/open.ts';
import { fromHexAddress, referenceOf, signTransaction, toHexAddress, trc20Transfer, trc20TransferData, trxTransfer } from '../../../../src/server/adapters/chains/tron/codec.ts';
import { chainsConfig } from '../../../../src/server/config-chains.ts';
import { chainAddressing } from '../../../../src/server/domain/addresses.ts';
import { unitsOf } from '../../../../src/lib/money.ts';

const CHAIN_ADDRESSING = chainAddressing('mainnet');

/** The adapter's own encoding of TRON transactions, checked against tronweb's independent code paths. */
const KEY = Buffer.from('1f'.repeat(32), 'hex');
const OWNER = utils.crypto.pkToAddress(KEY.toString('hex'));
const TO = 'TJstntaEzNVwcM5Fa1kWsy85b2x1HJP4sE';
const TOKEN = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const TAPOS = { ref_block_bytes: '1a2b', ref_block_hash: '0011223344556677', expiration: 1_800_000_060_000, timestamp: 1_800_000_000_123 };

describe('TRON transactions built by the adapter', () => {
  it('converts addresses as tronweb does', () => {
    expect(toHexAddress(TOKEN)).toBe(utils.address.toHex(TOKEN).toLowerCase());
    expect(fromHexAddress(toHexAddress(TO))).toBe(TO);
    expect(fromHexAddress(toHexAddress(TO).slice(2))).toBe(TO);
  });

  it('encodes transfer(address,uint256) as the ABI does', () => {
    const abi = new utils.ethersUtils.Interface(['function transfer(address _to, uint256 _value) returns (bool)']);
    expect(`0x${trc20TransferData(TO, unitsOf(123_456_789n))}`).toBe(abi.encodeFunctionData('transfer', [`0x${toHexAddress(TO).slice(2)}`, 123_456_789n]));
    expect(() => trc20TransferData(TO, unitsOf(0n))).toThrow(RangeError);
  });

  it('signs a TRX transfer whose txID and signer tronweb recomputes from its bytes', async () => {
    const tx = await signTransaction(trxTransfer(OWNER, TO, unitsOf(1_000_000n), TAPOS), KEY);
    expect(tx.txID).toBe(utils.transaction.txPbToTxID(utils.transaction.txJsonToPb({ raw_data: tx.raw_data, visible: false })).slice(2));
    expect(utils.crypto.ecRecover(tx.txID, tx.signature?.[0] ?? '').toLowerCase()).toBe(toHexAddress(OWNER));
    expect(utils.deserializeTx.deserializeTransaction('TransferContract', tx.raw_data_hex)).toMatchObject({
      contract: [{ parameter: { value: { owner_address: toHexAddress(OWNER).toUpperCase(), to_address: toHexAddress(TO).toUpperCase(), amount: 1_000_000 } } }],
      ref_block_bytes: '1A2B',
      expiration: TAPOS.expiration,
    });
    expect(() => trxTransfer(OWNER, TO, unitsOf(2n ** 53n), TAPOS)).toThrow(RangeError);
  });

  it('signs a TRC-20 transfer with its fee_limit in the signed bytes', async () => {
    const tx = await signTransaction(trc20Transfer(OWNER, TOKEN, TO, unitsOf(5n), unitsOf(30_000_000n), TAPOS), KEY);
    expect(utils.deserializeTx.deserializeTransaction('TriggerSmartContract', tx.raw_data_hex)).toMatchObject({
      fee_limit: 30_000_000,
      contract: [{ parameter: { value: { contract_address: toHexAddress(TOKEN).toUpperCase(), data: trc20TransferData(TO, unitsOf(5n)).toUpperCase() } } }],
    });
    expect(utils.crypto.ecRecover(tx.txID, tx.signature?.[0] ?? '').toLowerCase()).toBe(toHexAddress(OWNER));
  });

  it('refers to a block by its height bytes 6–8 and id bytes 8–16', () => {
    const blockID = '0000000004c4b40f' + 'aabbccddeeff0011' + '22'.repeat(16);
    expect(referenceOf({ blockID, block_header: { raw_data: { number: 80_000_015, timestamp: 0 } } })).toEqual({ ref_block_bytes: 'b40f', ref_block_hash: 'aabbccddeeff0011' });
  });

  it('runs TRON on its adapter when TRON_API_URL is set, in production too, and leaves the rest as they were', () => {
    const settings = chainsConfig({ TRON_API_URL: 'https://api.trongrid.io', TRON_API_KEY: 'key' }, 'off');
    const chains = openChains({} as pg.Pool, { ...settings, publicUrl: 'https://wallet.example', seed: new Uint8Array(64), addresses: CHAIN_ADDRESSING });
    expect(chains.adapters).toMatchObject({ TRON: 'tron', BITCOIN: 'off', TON: 'off' });
    expect(chains.port.networks).toEqual(['TRON']);
    expect(chains.port.requiredConfirmations('TRON')).toBe(19);
    expect(chains.port.collection.sweeps('TRON')).toBe(true);
    const devnet = openChains({} as pg.Pool, { ...chainsConfig({ CONFIRMATIONS: 'TRON:5' }, 'devnet'), publicUrl: 'http://wallet.test', seed: new Uint8Array(64), addresses: CHAIN_ADDRESSING });
    expect(devnet.adapters.TRON).toBe('devnet');
  });
});
