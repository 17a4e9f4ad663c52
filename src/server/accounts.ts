import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Logger } from './log.ts';
import { createMailer, type Mailer } from './adapters/mail/mailer.ts';
import { createPasswordHasher, type PasswordHasher } from './domain/passwords.ts';
import { createUserService, type UserService } from './domain/users.ts';
import { createAccessTokenVerifier, type AccessTokenVerifier } from './http/auth-middleware.ts';
import { revokeUserSessions } from './idp/adapter.ts';
import { loadIdpSecrets } from './idp/keys.ts';
import { createIdentityProvider, type IdentityProvider } from './idp/provider.ts';

/** The sign-in area wired together: users, mail, the token verifier and, unless OIDC_ISSUER names another, the provider. */
export type Accounts = {
  users: UserService;
  auth: AccessTokenVerifier;
  mailer: Mailer;
  hasher: PasswordHasher;
  idp: IdentityProvider | undefined;
  close: () => void;
};

export async function createAccounts(deps: { config: Config; log: Logger; database: Database }): Promise<Accounts> {
  const { config, log, database } = deps;
  const mailer = createMailer({ db: database.db, log, smtpUrl: config.smtpUrl, from: config.mailFrom });
  const hasher = createPasswordHasher();
  const auth = createAccessTokenVerifier({ config, db: database.db, log });
  const users = createUserService({
    db: database.db,
    log,
    hasher,
    mailer,
    publicUrl: config.publicUrl,
    async onSessionsRevoked(userId) {
      await revokeUserSessions(database.pool, userId);
      auth.forgetUser(userId);
    },
  });
  const idp = config.oidc.embedded
    ? createIdentityProvider({ config, db: database.db, pool: database.pool, log, users, secrets: await loadIdpSecrets(database.db) })
    : undefined;
  if (!idp) log.info({ issuer: config.oidc.issuer }, 'using an external OpenID issuer; the embedded provider is off');
  return {
    users,
    auth,
    mailer,
    hasher,
    idp,
    close() {
      idp?.close();
      mailer.close();
    },
  };
}
