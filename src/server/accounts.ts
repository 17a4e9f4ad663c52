import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Logger } from './log.ts';
import { createMailDelivery, createMailer } from './adapters/mail/mailer.ts';
import type { MailDelivery, Mailer } from './adapters/mail/port.ts';
import { createPasswordHasher, type PasswordHasher } from './domain/passwords.ts';
import { createUserService, type UserService } from './domain/users.ts';
import { createAccessTokenVerifier, type AccessTokenVerifier } from './http/auth-middleware.ts';
import { migrateOidcPayloads, revokeUserSessions } from './idp/adapter.ts';
import { loadIdpSecrets } from './idp/keys.ts';
import { createIdentityProvider, type IdentityProvider } from './idp/provider.ts';
import { createTokenEndpointCaller, type TokenEndpointAnswer } from './idp/messenger-grant.ts';
import { capMails, createLimits, emailKeyOf, type Limits } from './domain/limits.ts';
import { createMessengerService, loadDevKeys, type MessengerService } from './domain/messenger.ts';
import { migrateCodeHashes } from './domain/codes.ts';
import type { SecretsKey } from './adapters/keys/port.ts';
import { createSealedSettings } from './adapters/keys/secrets-key.ts';
import { createWalletBot } from './adapters/telegram/bot.ts';
import type { WalletBot } from './adapters/telegram/port.ts';

/** The sign-in area wired together: users, mail, the token verifier and, unless OIDC_ISSUER names another, the provider. */
export type Accounts = {
  users: UserService;
  auth: AccessTokenVerifier;
  mailer: Mailer;
  /** Sends an outbox mail again as it was (the operator console's resend). */
  mailDelivery: MailDelivery;
  hasher: PasswordHasher;
  /** Request and mail limits, shared by every instance through PostgreSQL. */
  limits: Limits;
  idp: IdentityProvider | undefined;
  /** Telegram accounts and sign-in (config.telegram.enabled); `token` is the provider's token endpoint, in process. */
  messenger: { service: MessengerService; token: ((form: URLSearchParams) => Promise<TokenEndpointAnswer>) | undefined; bot: WalletBot | undefined } | undefined;
  close: () => void;
};

export async function createAccounts(deps: { config: Config; log: Logger; database: Database; secrets: SecretsKey }): Promise<Accounts> {
  const { config, log, database, secrets } = deps;
  // Rows from before keyed hashing (mailed codes, provider tokens) are moved over before anything looks them up.
  const moved = (await migrateCodeHashes(database.pool, secrets)) + (config.oidc.embedded ? await migrateOidcPayloads(database.pool, secrets) : 0);
  if (moved > 0) log.info({ rows: moved }, 'stored codes and tokens moved to keyed hashes');
  const limits = createLimits(database.pool, { publicPerMinute: config.publicRateLimit, authPerHour: config.authRateLimit, mailsPerHour: config.mailRateLimit, analyticsPerMinute: config.analytics.enabled ? config.analytics.rateLimit : 0 }, emailKeyOf(secrets));
  const mailer = capMails(createMailer({ db: database.db, log, smtpUrl: config.smtpUrl, from: config.mailFrom, production: config.production }), limits.limit('mailsPerAddress'), limits.emailKey, (mail) =>
    log.warn({ kind: mail.kind }, 'mail not sent: the address had its hourly share of mails'),
  );
  const mailDelivery = createMailDelivery({ log, smtpUrl: config.smtpUrl, from: config.mailFrom });
  const hasher = createPasswordHasher();
  const settings = createSealedSettings(database.pool, secrets);
  const auth = createAccessTokenVerifier({ config, db: database.db, secrets, settings, log });
  const users = createUserService({
    db: database.db,
    pool: database.pool,
    log,
    hasher,
    mailer,
    secrets,
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
        pool: database.pool,
        mailer,
        publicUrl: config.publicUrl,
        log,
        secrets,
        config: telegram,
        keys: telegram.botToken ? { botToken: telegram.botToken, publicKey: telegram.publicKey } : await loadDevKeys(settings),
      })
    : undefined;
  // Development mode's generated token makes a bot too: its Bot API calls go to the /sandbox/telegram stand-in.
  const botToken = messengerService?.keys.botToken;
  const bot = messengerService && botToken ? createWalletBot({ config: telegram, botToken, messenger: messengerService, log }) : undefined;
  if (bot && telegram.setWebhook && telegram.botToken) {
    bot.setWebhook(`${config.publicUrl}/api/tg/webhook`).catch((error: unknown) => log.error({ err: error }, 'setting the telegram webhook failed'));
  }
  if (telegram.devMode) log.warn('TELEGRAM_BOT_TOKEN is unset: the Telegram mini app runs in development mode, with a generated bot token (open /tg)');
  const idp = config.oidc.embedded
    ? createIdentityProvider({
        config,
        db: database.db,
        pool: database.pool,
        log,
        users,
        secrets: await loadIdpSecrets(settings),
        settings,
        secretsKey: secrets,
        messenger: messengerService && (({ initData, oneTimeCode }) => (oneTimeCode === undefined ? messengerService.signIn(initData) : messengerService.signInWithCode(oneTimeCode, initData))),
      })
    : undefined;
  // Sign-out, revocation and refresh-token reuse end a grant: this process stops taking its tokens at once.
  idp?.provider.on('grant.revoked', (_ctx: unknown, grantId: unknown) => {
    if (typeof grantId === 'string') auth.revokeGrant(grantId);
  });
  if (!idp) log.info({ issuer: config.oidc.issuer }, 'using an external OpenID issuer; the embedded provider is off');
  return {
    users,
    auth,
    mailer,
    mailDelivery,
    hasher,
    limits,
    idp,
    messenger: messengerService && { service: messengerService, token: idp && createTokenEndpointCaller(idp.handle, '/oidc/token'), bot },
    close() {
      idp?.close();
      mailer.close();
      mailDelivery.close();
    },
  };
}
