import { randomBytes, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { SealedSettings } from '../adapters/keys/port.ts';

const KEY = 'idp.secrets';
/** Keys kept after a rotation so tokens signed by the previous key still verify until they expire. */
const KEPT_SIGNING_KEYS = 3;

/** The provider's secrets: signing keys (the first one signs) and the keys of its signed cookies. */
export type IdpSecrets = { signingKeys: JWK[]; cookieKeys: string[] };

async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

function isSecrets(value: unknown): value is IdpSecrets {
  const v = value as Partial<IdpSecrets> | null;
  return Array.isArray(v?.signingKeys) && v.signingKeys.length > 0 && Array.isArray(v.cookieKeys) && v.cookieKeys.length > 0;
}

/**
 * Reads the secrets, generating them on the very first start; concurrent first starts agree on one set. They are
 * kept sealed under SECRETS_KEY; a plaintext row from before is sealed on the first start that reads it.
 */
export async function loadIdpSecrets(settings: SealedSettings): Promise<IdpSecrets> {
  return settings.load(KEY, {
    parse: (value) => (isSecrets(value) ? value : undefined),
    fresh: async () => ({ signingKeys: [await newSigningKey()], cookieKeys: [randomBytes(32).toString('base64url')] }),
  });
}

/** Puts a new signing key first (it signs from the next start on) and keeps the last few for verification. */
export async function rotateSigningKey(settings: SealedSettings): Promise<IdpSecrets> {
  const current = await loadIdpSecrets(settings);
  const next: IdpSecrets = { ...current, signingKeys: [await newSigningKey(), ...current.signingKeys].slice(0, KEPT_SIGNING_KEYS) };
  await settings.save(KEY, next);
  return next;
}

/** The public half of the signing keys, as the gateway needs them to verify access tokens. */
export function publicJwks(secrets: IdpSecrets): { keys: JWK[] } {
  const fields = ['kty', 'n', 'e', 'crv', 'x', 'y', 'kid', 'alg', 'use'] as const;
  return { keys: secrets.signingKeys.map((key) => Object.fromEntries(fields.filter((f) => key[f] !== undefined).map((f) => [f, key[f]])) as JWK) };
}
