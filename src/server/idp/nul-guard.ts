import type { Adapter, AdapterPayload } from 'oidc-provider';

/**
 * The provider looks up whatever id a client sends (client_id=%00, a cookie, a token). PostgreSQL cannot hold a NUL
 * in text and refuses the query (22021), which the provider would answer 500: no stored row has such an id, so
 * the lookup answers "not found" without asking the database.
 */
export function refuseNulIds(Base: new (name: string) => Adapter): new (name: string) => Adapter {
  const nul = (value: string) => value.includes('\u0000');
  return class NulGuardedAdapter extends (Base as new (name: string) => Adapter & object) {
    async find(id: string): Promise<AdapterPayload | undefined | void> {
      return nul(id) ? undefined : super.find(id);
    }
    async findByUid(uid: string): Promise<AdapterPayload | undefined | void> {
      return nul(uid) ? undefined : super.findByUid(uid);
    }
    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined | void> {
      return nul(userCode) ? undefined : super.findByUserCode(userCode);
    }
    async consume(id: string): Promise<void> {
      if (!nul(id)) await super.consume(id);
    }
    async destroy(id: string): Promise<void> {
      if (!nul(id)) await super.destroy(id);
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      if (!nul(grantId)) await super.revokeByGrantId(grantId);
    }
  };
}
