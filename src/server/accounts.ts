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
import { createTokenEndpointCaller, type TokenEndpointAnswer } from './idp/messenger-grant.ts';
import { capMails, createLimits, type Limits } from './domain/limits.ts';
import { createMessengerService, loadDevKeys, type MessengerService } from './domain/messenger.ts';

/** The sign-in area wired together: users, mail, the token verifier and, unless OIDC_ISSUER names another, the provider. */
export type Accounts = {
  users: UserService;
  auth: AccessTokenVerifier;
  mailer: Mailer;
  hasher: PasswordHasher;
  /** Request and mail limits, shared by every instance through PostgreSQL. */
  limits: Limits;
  idp: IdentityProvider | undefined;
  /** Telegram accounts and sign-in (config.telegram.enabled); `token` is the provider's token endpoint, in process. */
  messenger: { service: MessengerService; token: ((form: URLSearchParams) => Promise<TokenEndpointAnswer>) | undefined } | undefined;
  close: () => void;
};

export async function createAccounts(deps: { config: Config; log: Logger; database: Database }): Promise<Accounts> {
  const { config, log, database } = deps;
  const limits = createLimits(database.pool, { publicPerMinute: config.publicRateLimit, authPerHour: config.authRateLimit, mailsPerHour: config.mailRateLimit });
  const mailer = capMails(createMailer({ db: database.db, log, smtpUrl: config.smtpUrl, from: config.mailFrom }), limits.limit('mailsPerAddress'), (mail) =>
    log.warn({ kind: mail.kind }, 'mail not sent: the address had its hourly share of mails'),
  );
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
  const telegram = config.telegram;
  const messengerService = telegram.enabled
    ? createMessengerService({
        db: database.db,
        log,
        config: telegram,
        keys: telegram.botToken ? { botToken: telegram.botToken, publicKey: telegram.publicKey } : await loadDevKeys(database.db),
      })
    : undefined;
  if (telegram.devMode) log.warn('TELEGRAM_BOT_TOKEN is unset: the Telegram mini app runs in development mode, with a generated bot token (open /tg)');
  const idp = config.oidc.embedded
    ? createIdentityProvider({
        config,
        db: database.db,
        pool: database.pool,
        log,
        users,
        secrets: await loadIdpSecrets(database.db),
        messenger: messengerService && (({ initData, oneTimeCode }) => (oneTimeCode === undefined ? messengerService.signIn(initData) : messengerService.signInWithCode(oneTimeCode, initData))),
      })
    : undefined;
  if (!idp) log.info({ issuer: config.oidc.issuer }, 'using an external OpenID issuer; the embedded provider is off');
  return {
    users,
    auth,
    mailer,
    hasher,
    limits,
    idp,
    messenger: messengerService && { service: messengerService, token: idp && createTokenEndpointCaller(idp.handle, '/oidc/token') },
    close() {
      idp?.close();
      mailer.close();
    },
  };
}
