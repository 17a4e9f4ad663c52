/**
 * The local channel between the gateway (and the worker) and the signer: a Unix socket in DATA_DIR (SIGNER_SOCKET),
 * mode 0660 (its owner and group only: the signer may run as a user of its own in the gateway's group), and a shared token (SIGNER_TOKEN; outside production one generated once into DATA_DIR, mode 0600) that
 * every request carries. One request per connection: a line of JSON, answered by a line of JSON. Amounts travel as
 * decimal strings (`{"$bigint":"…"}`), never as numbers.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, mkdir, open, stat, unlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { Logger } from '../../log.ts';
import { createFileOnce } from '../keys/seed.ts';

export const SIGNER_SOCKET_FILE = 'signer.sock';
export const SIGNER_TOKEN_FILE = 'signer-token';

/** The most a request or an answer may hold: a batch's signed transaction fits many times over. */
const MAX_LINE = 4 * 1024 * 1024;

/** What the gateway and the worker ask: an order by its id (or reference), or public keys ahead of need. */
export type SignerRequest =
  | { op: 'hello' }
  | { op: 'withdrawal' | 'batch' | 'replace'; id: string }
  | { op: 'sweep'; reference: string }
  | { op: 'top-up'; reference: string; amount: string }
  | { op: 'cold-sweep'; id: string }
  | { op: 'consolidation'; reference: string; network: string }
  | { op: 'public-keys'; network: 'TON'; through: number };

/** The signer answered with an error: `name` is its class (FeeBumpBlockedError, SigningRefusal…), `code` a refusal's. */
export class SignerCallError extends Error {
  readonly remoteName: string;
  readonly code: string | undefined;
  constructor(remoteName: string, message: string, code?: string) {
    super(message);
    this.name = 'SignerCallError';
    this.remoteName = remoteName;
    this.code = code;
  }
}

/** The signer could not be reached (not started, or gone mid-call): nothing is known to be signed; ask again later. */
export class SignerUnavailableError extends Error {}

export type SignerChannel = { path: string; token: string };

/**
 * Where the channel is and its token: SIGNER_SOCKET / SIGNER_TOKEN, else DATA_DIR's (never in production for the token).
 * The default socket is one per database (`database`: DATABASE_URL, unset for the embedded one), so processes on one
 * DATA_DIR but different databases never ask a signer that reads another database.
 */
export async function signerChannel(options: { socket: string | undefined; token: string | undefined; dataDir: string; production: boolean; database?: string | undefined }): Promise<SignerChannel> {
  const path = options.socket ?? join(options.dataDir, options.database ? `signer-${createHash('sha256').update(options.database).digest('hex').slice(0, 12)}.sock` : SIGNER_SOCKET_FILE);
  if (options.token) return { path, token: options.token };
  if (options.production) throw new Error('SIGNER_TOKEN must be set in production (the same random value for the signer, the gateway and the worker)');
  const token = (await createFileOnce(options.dataDir, join(options.dataDir, SIGNER_TOKEN_FILE), `${randomBytes(32).toString('hex')}\n`)).trim();
  return { path, token };
}

const encode = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v));
const decode = (line: string): unknown =>
  JSON.parse(line, (_key, v: unknown) => (v !== null && typeof v === 'object' && '$bigint' in v && typeof v.$bigint === 'string' && Object.keys(v).length === 1 ? BigInt(v.$bigint) : v));

const digest = (token: string) => createHash('sha256').update(token).digest();

/** Reads one line from the socket (at most MAX_LINE). */
function readLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const end = buffer.indexOf('\n');
      if (end >= 0) {
        cleanup();
        resolve(buffer.slice(0, end));
      } else if (buffer.length > MAX_LINE) {
        cleanup();
        reject(new Error('the line is too long'));
      }
    };
    const onEnd = () => {
      cleanup();
      reject(new SignerUnavailableError('the connection closed before a whole line came'));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onError);
  });
}

/** A start lock older than this was left by a signer that died while starting: it is taken over. */
const STALE_START_LOCK_MS = 30_000;

/**
 * Runs `work` holding `<socket>.lock` (created exclusively), so two signers starting on one socket never both find
 * it free, unlink it and listen, the second stealing the path from the first. The lock is held only while starting.
 */
async function withStartLock<T>(socketPath: string, work: () => Promise<T>): Promise<T> {
  const lockPath = `${socketPath}.lock`;
  // DATA_DIR may not exist yet: with SIGNER_TOKEN and SECRETS_KEY given, nothing else of this start creates it.
  await mkdir(dirname(socketPath), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + STALE_START_LOCK_MS + 5_000;
  for (;;) {
    const lock = await open(lockPath, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
      return undefined;
    });
    if (lock) {
      try {
        await lock.writeFile(`${process.pid}\n`);
        await lock.close();
        return await work();
      } finally {
        await unlink(lockPath).catch(() => {});
      }
    }
    const held = await stat(lockPath).catch(() => undefined);
    if (held && Date.now() - held.mtimeMs > STALE_START_LOCK_MS) await unlink(lockPath).catch(() => {});
    else if (Date.now() > deadline) throw new Error(`another signer is starting on ${socketPath} (${lockPath} is held): not started`);
    else await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Listens on the channel: each request with the right token goes to `handle`, whose answer (or error) goes back. A
 * stale socket file (no one answering) is replaced; a live one means another signer runs there: refused. Two signers
 * starting at once on one socket take turns (a start lock): the second finds the first answering and is refused.
 */
export async function listenSigner(channel: SignerChannel, handle: (request: SignerRequest) => Promise<unknown>, log: Logger): Promise<{ close: () => Promise<void> }> {
  const expected = digest(channel.token);
  const server: Server = createServer((socket) => {
    // A caller that went away (a probe that only connects, a client killed mid-request) must not take the signer down.
    socket.on('error', (error) => log.debug({ err: error }, 'signer: a connection failed'));
    socket.setTimeout(120_000, () => socket.destroy());
    void (async () => {
      let answer: unknown;
      try {
        const request = decode(await readLine(socket)) as { token?: unknown; request?: SignerRequest };
        if (typeof request.token !== 'string' || !timingSafeEqual(digest(request.token), expected)) {
          log.warn({ op: request.request?.op }, 'signer: a request with a wrong token was refused');
          answer = { error: { name: 'SignerAuthError', message: 'wrong signer token' } };
        } else if (!request.request || typeof request.request.op !== 'string') {
          answer = { error: { name: 'SignerBadRequest', message: 'no request' } };
        } else {
          answer = { result: await handle(request.request) };
        }
      } catch (error) {
        const e = error instanceof Error ? error : new Error(String(error));
        answer = { error: { name: e.name, message: e.message, code: (e as { code?: unknown }).code } };
      }
      if (socket.writable) socket.end(`${encode(answer)}\n`);
    })();
  });
  await withStartLock(channel.path, async () => {
    if (await answers(channel.path)) throw new Error(`a signer already listens on ${channel.path}: this one does not start (stop the other, or give this one another SIGNER_SOCKET)`);
    await unlink(channel.path).catch(() => {});
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(channel.path, () => resolve());
    });
    await chmod(channel.path, 0o660);
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        void unlink(channel.path).catch(() => {});
      }),
  };
}

/** Whether something answers on the socket path now. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Asks the signer one thing; its errors come back as SignerCallError, an unreachable signer as SignerUnavailableError. */
export function signerClient(channel: SignerChannel, options: { timeoutMs?: number } = {}): { call: (request: SignerRequest) => Promise<unknown> } {
  const timeoutMs = options.timeoutMs ?? 120_000;
  return {
    async call(request) {
      const socket = connect(channel.path);
      socket.setTimeout(timeoutMs, () => socket.destroy(new SignerUnavailableError(`the signer did not answer within ${timeoutMs} ms`)));
      try {
        await new Promise<void>((resolve, reject) => {
          socket.once('connect', resolve);
          socket.once('error', (error) => reject(new SignerUnavailableError(`the signer is not reachable on ${channel.path}: ${error.message}`, { cause: error })));
        });
        socket.write(`${encode({ token: channel.token, request })}\n`);
        const answer = decode(await readLine(socket)) as { result?: unknown; error?: { name: string; message: string; code?: string } };
        if (answer.error) throw new SignerCallError(answer.error.name, answer.error.message, answer.error.code);
        return answer.result;
      } catch (error) {
        if (error instanceof SignerCallError || error instanceof SignerUnavailableError) throw error;
        throw new SignerUnavailableError(`the signer call failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      } finally {
        socket.destroy();
      }
    },
  };
}
