import { readFileSync } from 'node:fs';
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { openDatabase } from '../db/database.ts';
import { rotateSigningKey } from '../idp/keys.ts';

/**
 * `npm run idp:rotate-key`: puts a new signing key first for the embedded provider. Running processes keep signing
 * with the previous key (still published and accepted) until they restart; verifiers pick the new key up by itself.
 */
const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
const config = loadConfig(process.env, version);
const log = createLogger(config.logLevel);
const database = await openDatabase(config, log);
try {
  const secrets = await rotateSigningKey(database.db);
  log.info({ kid: secrets.signingKeys[0]?.kid, kept: secrets.signingKeys.length }, 'signing key rotated; restart the servers to sign with it');
} finally {
  await database.close();
}
