import { openSecretsKey } from '../adapters/keys/secrets-key.ts';
import { resealSecrets } from '../secrets-rotation.ts';
import { startFailure } from '../environment.ts';
import { openTool, toolFail } from './tool.ts';

/**
 * `npm run secrets:reseal`: the second step of a SECRETS_KEY rotation. Run with the new key as SECRETS_KEY and the
 * old one in SECRETS_KEY_PREVIOUS (as every process now runs): it re-seals every sealed value and re-keys every stored
 * token under the new key, then records the new key as the database's own, after which processes start without the
 * old. Stopped anywhere, it is run again and goes on.
 */
const { config, log, database } = await openTool();
try {
  const secrets = await openSecretsKey({ value: config.secretsKey, previous: config.secretsKeyPrevious, dataDir: config.dataDir, production: config.production }, log, database.pool);
  const moved = await resealSecrets(database.pool, secrets);
  process.stdout.write(
    `re-sealed under SECRETS_KEY ${secrets.fingerprint}: ${moved.settings} sealed settings, ${moved.oidc} sessions and tokens and ${moved.addresses} deposit address MACs moved; ` +
      'the database now needs only this key (keep SECRETS_KEY_PREVIOUS a day longer for codes mailed before the rotation)\n',
  );
} catch (error) {
  await database.close();
  toolFail(startFailure(error));
}
await database.close();
