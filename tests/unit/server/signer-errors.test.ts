import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChainUnsupportedError, FeeBumpBlockedError, HotWalletShortError } from '../../../src/server/adapters/chains/port.ts';
import { InsufficientFundsError } from '../../../src/server/adapters/chains/utxo/wallet.ts';
import { listenSigner, SignerCallError } from '../../../src/server/adapters/signer/channel.ts';
import { createLogger } from '../../../src/server/log.ts';
import { connectSigner, type Signer } from '../../../src/server/signer/remote.ts';

/**
 * The errors the worker acts on cross the signer's channel with their class: a withdrawal the hot wallet cannot pay
 * (a UTXO adapter's InsufficientFundsError included) waits for funds instead of being retried as an unknown failure.
 */
describe('the signer channel keeps the errors the worker acts on', () => {
  let close: (() => Promise<void>) | undefined;
  let signer: Signer;
  const thrown: Record<string, Error> = {
    short: new InsufficientFundsError('too few confirmed outputs'),
    bump: new FeeBumpBlockedError('above MAX_FEE_RATE'),
    unsupported: new ChainUnsupportedError('not here'),
    other: new Error('something else'),
  };

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'signer-errors-'));
    const channel = { path: join(dir, 'signer.sock'), token: randomBytes(32).toString('hex') };
    ({ close } = await listenSigner(channel, (request) => Promise.reject(thrown[request.op === 'withdrawal' ? request.id : 'other']), createLogger('silent')));
    signer = connectSigner(channel);
  });
  afterAll(async () => close?.());

  const failure = (id: string) => signer.call({ op: 'withdrawal', id }).then(() => undefined, (error: unknown) => error);

  it('rebuilds HotWalletShortError (from a subclass), FeeBumpBlockedError and ChainUnsupportedError; the rest stay SignerCallError', async () => {
    const short = await failure('short');
    expect(short).toBeInstanceOf(HotWalletShortError);
    expect((short as Error).message).toBe('too few confirmed outputs');
    expect(await failure('bump')).toBeInstanceOf(FeeBumpBlockedError);
    expect(await failure('unsupported')).toBeInstanceOf(ChainUnsupportedError);
    const other = await failure('other');
    expect(other).toBeInstanceOf(SignerCallError);
    expect(other).not.toBeInstanceOf(HotWalletShortError);
  });
});
