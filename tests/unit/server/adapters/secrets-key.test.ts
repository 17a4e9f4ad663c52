import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSecretsKey, parseSecretsKey, SECRETS_KEY_FILE, SecretsKeyError, secretsKeyFrom } from '../../../../src/server/adapters/keys/secrets-key.ts';
import { createLogger } from '../../../../src/server/log.ts';

const log = createLogger('silent');
const bytes = randomBytes(32);

describe('SECRETS_KEY', () => {
  it('is 32 bytes as hex, base64 or base64url, and nothing else', () => {
    for (const text of [bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url'), ` ${bytes.toString('base64')}\n`]) {
      expect(parseSecretsKey(text)?.equals(bytes)).toBe(true);
    }
    for (const text of ['', 'short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), randomBytes(33).toString('base64'), 'z'.repeat(64)]) {
      expect(parseSecretsKey(text)).toBeUndefined();
    }
  });

  it('refuses a malformed value and an unset one in production, in one line naming the variable and not echoing it', async () => {
    const bad = loadSecretsKey({ value: 'not-a-key-at-all', dataDir: '/nonexistent', production: false }, log);
    await expect(bad).rejects.toThrow(SecretsKeyError);
    await expect(loadSecretsKey({ value: 'not-a-key-at-all', dataDir: '/nonexistent', production: false }, log)).rejects.toThrow(/^SECRETS_KEY is invalid: [^\n]*$/);
    await expect(loadSecretsKey({ value: 'not-a-key-at-all', dataDir: '/nonexistent', production: false }, log)).rejects.not.toThrow(/not-a-key/);
    await expect(loadSecretsKey({ value: undefined, dataDir: '/nonexistent', production: true }, log)).rejects.toThrow(/^SECRETS_KEY must be set in production/);
  });

  it('is generated once into DATA_DIR with mode 0600 outside production, the same for processes starting together', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'wallet-secrets-'));
    const keys = await Promise.all(Array.from({ length: 5 }, () => loadSecretsKey({ value: undefined, dataDir, production: false }, log)));
    expect(new Set(keys.map((k) => k.fingerprint)).size).toBe(1);
    expect(keys[0]?.source).toBe('file');
    const file = join(dataDir, SECRETS_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(parseSecretsKey(await readFile(file, 'utf8'))).toBeDefined();
  });

  it('seals with AES-GCM: another key, another purpose or a changed byte cannot open it', () => {
    const key = secretsKeyFrom(bytes, 'env');
    const sealed = key.seal('the webhook secret', 'card.sandbox.secret');
    expect(sealed).not.toContain('webhook');
    expect(key.seal('the webhook secret', 'card.sandbox.secret')).not.toBe(sealed);
    expect(key.open(sealed, 'card.sandbox.secret')).toBe('the webhook secret');
    expect(() => secretsKeyFrom(randomBytes(32), 'env').open(sealed, 'card.sandbox.secret')).toThrow(/cannot be opened with this SECRETS_KEY/);
    expect(() => key.open(sealed, 'payout.sandbox.secret')).toThrow(SecretsKeyError);
    // Not the last character: base64's last one may carry only padding bits, and changing those changes no byte.
    const at = sealed.length - 5;
    const changed = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
    expect(() => key.open(changed, 'card.sandbox.secret')).toThrow(SecretsKeyError);
  });

  it('hashes for lookups: the same for the same key and purpose only', () => {
    const key = secretsKeyFrom(bytes, 'env');
    const hash = key.keyedHash('refresh-token-value', 'oidc');
    expect(hash).not.toContain('refresh-token-value');
    expect(key.keyedHash('refresh-token-value', 'oidc')).toBe(hash);
    expect(key.keyedHash('refresh-token-value', 'code:link')).not.toBe(hash);
    expect(secretsKeyFrom(randomBytes(32), 'env').keyedHash('refresh-token-value', 'oidc')).not.toBe(hash);
  });
});
