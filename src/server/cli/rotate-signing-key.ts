import { readFileSync } from 'node:fs';
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { openDatabase } from '../db/database.ts';
import { createSealedSettings, openSecretsKey } from '../adapters/keys/secrets-key.ts';
import { rotateSigningKey } from '../idp/keys.ts';

/**
 * `npm run idp:rotate-key`: puts a new signing key first for the embedded provider. Running processes keep signing
 * with the previous key (still published and accepted) until they restart; verifiers pick the new key up by itself.
 * It needs the servers' SECRETS_KEY (or DATA_DIR): the keys are sealed under it.
 */
const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
const config = loadConfig(process.env, version);
const log = createLogger(config.logLevel);
const database = await openDatabase(config, log);
try {
  const secrets = await openSecretsKey({ value: config.secretsKey, dataDir: config.dataDir, production: config.production }, log, database.pool);
  const rotated = await rotateSigningKey(createSealedSettings(database.pool, secrets));
  log.info({ kid: rotated.signingKeys[0]?.kid, kept: rotated.signingKeys.length }, 'signing key rotated; restart the servers to sign with it');
} finally {
  await database.close();
}
