import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/server/config.ts';
import { figureSettings, loadEnvironmentConfig, readEnvironment } from '../../../src/server/environment.ts';

/** Issue 30 item 7: one loader for the server and the commands (src/server/environment.ts). */
describe('the environment every process reads', () => {
  it('is the process variables over the lines of ENV_FILE', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'wallet-env-')), 'wallet.env');
    await writeFile(file, '# comment\nWALLET_SEED="one two three"\nCONFIRMATIONS=LITECOIN:6\nLOG_LEVEL=info\nPORT=4000\n');
    const env = readEnvironment({ ENV_FILE: file, LOG_LEVEL: 'debug', PORT: '' });
    expect(env).toMatchObject({ WALLET_SEED: 'one two three', CONFIRMATIONS: 'LITECOIN:6', LOG_LEVEL: 'debug', PORT: '4000' });
    expect(loadEnvironmentConfig({ ENV_FILE: file }).chains.confirmations).toEqual({ LITECOIN: 6 });
    expect(readEnvironment({ PORT: '1' })).toEqual({ PORT: '1' });
    expect(() => readEnvironment({ ENV_FILE: join(tmpdir(), 'no-such-wallet.env') })).toThrow(ConfigError);
  });

  it('compares settings by their effect: a default spelled out is the default, another value is not', () => {
    const unset = figureSettings(loadEnvironmentConfig({}));
    expect(figureSettings(loadEnvironmentConfig({ CONFIRMATIONS: 'BITCOIN:2,LITECOIN:4,DOGECOIN:6,ETHEREUM:12,TRON:19,TON:1' }))).toEqual(unset);
    const other = figureSettings(loadEnvironmentConfig({ CONFIRMATIONS: 'LITECOIN:6', LITECOIN_RPC_URL: 'http://u:secret@127.0.0.1:9332' }));
    expect(Object.keys(other).filter((name) => other[name] !== unset[name])).toEqual(['CONFIRMATIONS', 'LITECOIN_RPC_URL']);
    expect(JSON.stringify(other)).not.toContain('secret');
  });
});
