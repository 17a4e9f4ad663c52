import { mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listenSigner, signerClient, type SignerChannel } from '../../../../src/server/adapters/signer/channel.ts';
import { createLogger } from '../../../../src/server/log.ts';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens a connection and hangs up: what a second signer's liveness probe does, or a caller that gave up. */
async function hangUp(path: string, line?: string): Promise<void> {
  const socket = connect(path);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  if (line) socket.write(line);
  socket.destroy();
}

describe('the signer channel', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it('keeps answering after peers hang up before their answer (a probe, a caller that timed out)', async () => {
    const channel: SignerChannel = { path: join(await mkdtemp(join(tmpdir(), 'signer-channel-')), 'signer.sock'), token: 'secret' };
    let handled = 0;
    const listener = await listenSigner(
      channel,
      async () => {
        handled += 1;
        await pause(100);
        return 'hello back';
      },
      createLogger('silent'),
    );
    close = listener.close;
    await hangUp(channel.path);
    await hangUp(channel.path, `${JSON.stringify({ token: 'secret', request: { op: 'hello' } })}\n`);
    await pause(300);
    expect(handled).toBe(1);
    expect(await signerClient(channel).call({ op: 'hello' })).toBe('hello back');
    // A second signer on the same channel is refused, and its probe leaves the first one answering.
    await expect(listenSigner(channel, async () => 'other', createLogger('silent'))).rejects.toThrow(/a signer already listens/);
    await pause(100);
    expect(await signerClient(channel).call({ op: 'hello' })).toBe('hello back');
  });

  it('listens in a DATA_DIR that does not exist yet (SIGNER_TOKEN given, so no token file made it)', async () => {
    const channel: SignerChannel = { path: join(await mkdtemp(join(tmpdir(), 'signer-fresh-')), 'data', 'signer.sock'), token: 'secret' };
    close = (await listenSigner(channel, async () => 'from a fresh directory', createLogger('silent'))).close;
    expect(await signerClient(channel).call({ op: 'hello' })).toBe('from a fresh directory');
  });

  it('lets only one of two signers starting at once on one socket listen; the other refuses with a clear message', async () => {
    const channel: SignerChannel = { path: join(await mkdtemp(join(tmpdir(), 'signer-race-')), 'signer.sock'), token: 'secret' };
    const closers: (() => Promise<void>)[] = [];
    close = async () => void (await Promise.all(closers.map((c) => c())));
    for (let round = 0; round < 5; round += 1) {
      const started = await Promise.allSettled(['first', 'second'].map((name) => listenSigner(channel, async () => name, createLogger('silent'))));
      const up = started.filter((s) => s.status === 'fulfilled');
      const refused = started.filter((s) => s.status === 'rejected');
      for (const s of up) closers.push(s.value.close);
      // Without the start lock both find the path free, both unlink it and listen: the first answers on no path.
      expect(up).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(String(refused[0]?.reason)).toMatch(/a signer already listens on .*signer\.sock: this one does not start/);
      expect(['first', 'second']).toContain(await signerClient(channel).call({ op: 'hello' }));
      await closers.pop()?.();
      await pause(20);
    }
  });

  it('takes over a start lock left by a signer that died while starting', async () => {
    const channel: SignerChannel = { path: join(await mkdtemp(join(tmpdir(), 'signer-stale-')), 'signer.sock'), token: 'secret' };
    await writeFile(`${channel.path}.lock`, '999999\n');
    const old = new Date(Date.now() - 60_000);
    await utimes(`${channel.path}.lock`, old, old);
    const listener = await listenSigner(channel, async () => 'up', createLogger('silent'));
    close = listener.close;
    expect(await signerClient(channel).call({ op: 'hello' })).toBe('up');
  });
});
