import { createSealedSettings, openSecretsKey } from '../adapters/keys/secrets-key.ts';
import { rotateSigningKey } from '../idp/keys.ts';
import { startFailure } from '../environment.ts';
import { openTool, toolFail } from './tool.ts';

/**
 * `npm run idp:rotate-key`: puts a new signing key first for the embedded provider. Running processes keep signing
 * with the previous key (still published and accepted) until they restart; verifiers pick the new key up by itself.
 * It needs the servers' SECRETS_KEY (or DATA_DIR): the keys are sealed under it.
 */
const { config, log, database } = await openTool();
try {
  const secrets = await openSecretsKey({ value: config.secretsKey, previous: config.secretsKeyPrevious, dataDir: config.dataDir, production: config.production }, log, database.pool);
  const rotated = await rotateSigningKey(createSealedSettings(database.pool, secrets));
  process.stdout.write(`signing key rotated (kid ${rotated.signingKeys[0]?.kid}, ${rotated.signingKeys.length} kept); restart the servers to sign with it\n`);
} catch (error) {
  await database.close();
  toolFail(startFailure(error));
}
await database.close();
