/**
 * A SECRETS_KEY rotation's re-seal: every value sealed or keyed under a previous key (SECRETS_KEY_PREVIOUS) is moved
 * to the current one (sealed settings, the provider's sessions and tokens, the deposit addresses' MACs), then the database takes the current key as its only one, so processes start without the old.
 * Every row moves alone and only from what it was read as: the re-seal can be stopped anywhere and run again.
 */
import type pg from 'pg';
import type { SecretsKey } from './adapters/keys/port.ts';
import { finishSecretsKeyRotation, resealSettings } from './adapters/keys/secrets-key.ts';
import { resealOidcPayloads } from './idp/adapter.ts';
import { rekeyDepositAddresses } from './domain/deposit-address-guard.ts';

export type ResealProgress = (what: 'setting' | 'oidc' | 'address', name?: string) => void;

/** Passes until one moves nothing (a process still sealing under the old key would keep it from finishing). */
const MAX_PASSES = 5;

export async function resealSecrets(pool: Pick<pg.Pool, 'query'>, key: SecretsKey, onMoved: ResealProgress = () => {}): Promise<{ settings: number; oidc: number; addresses: number }> {
  const total = { settings: 0, oidc: 0, addresses: 0 };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const settings = await resealSettings(pool, key, (name) => onMoved('setting', name));
    const oidc = await resealOidcPayloads(pool, key, () => onMoved('oidc'));
    const addresses = await rekeyDepositAddresses(pool, key);
    if (addresses > 0) onMoved('address');
    total.settings += settings;
    total.oidc += oidc;
    total.addresses += addresses;
    if (settings + oidc + addresses === 0) {
      await finishSecretsKeyRotation(pool, key);
      return total;
    }
  }
  throw new Error(`values sealed under a previous SECRETS_KEY keep appearing after ${MAX_PASSES} passes: is a process still running with the old key alone?`);
}
