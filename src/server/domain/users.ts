import { and, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import type pg from 'pg';
import { loginThrottle, telegramAccounts, telegramLinkCodes, userCodes, userPincodes, users, walletAccounts } from '../db/schema.ts';
import type { Logger } from '../log.ts';
import type { Mailer } from '../adapters/mail/port.ts';
import { codeExpiry, newCode, storedCode, storedCodes, type CodePurpose } from './codes.ts';
import type { SecretsKey } from '../adapters/keys/port.ts';
import { TooManyMailsError } from './limits.ts';
import { DomainError } from './errors.ts';
import { HasherBusyError, PASSWORD_MESSAGES, passwordProblem, type PasswordHasher } from './passwords.ts';
import { ACCOUNT_POLICY, ADDRESS_POLICY, PAIR_POLICY, retryAfterMs, throttleKeys, tripped } from './throttle.ts';
import { createLoginThrottleStore } from './login-throttle-store.ts';

export const LANGUAGES = ['ENG', 'RUS'] as const;
export type Language = (typeof LANGUAGES)[number];
export const FIAT_CURRENCIES = ['USD', 'EUR', 'KZT', 'UAH', 'AZN', 'CAD'] as const;
export type FiatCurrency = (typeof FIAT_CURRENCIES)[number];

export type UserErrorCode = 'WEAK_PASSWORD' | 'CONFIRMATION_INVALID' | 'NOT_FOUND';

/** A refused user operation; its code is the wire's exceptionCode. */
export class UserError extends DomainError<UserErrorCode> {}

/** SPEC §3 User/profile, as GET /user answers it. */
export type Profile = {
  email: string | null;
  accounts: Array<{ id: string; language: Language; defaultFiatCurrency: string; email: string | null }>;
  pinCodeActive: boolean;
  tgAuth: boolean;
};

export type LoginResult =
  | { ok: true; userId: string }
  | { ok: false; reason: 'INVALID' }
  | { ok: false; reason: 'THROTTLED'; retryAfterMs: number };

export type UserService = ReturnType<typeof createUserService>;

/** E-mails are compared and stored lower-cased and trimmed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Accounts, sign-in checks, e-mail confirmation and password reset. `onSessionsRevoked` lets the identity
 * provider and the token cache forget a user whose password was reset.
 */
export function createUserService(deps: {
  db: Db;
  /** The same database's pool, for the sign-in throttle's prepared statements. */
  pool: pg.Pool;
  log: Logger;
  hasher: PasswordHasher;
  mailer: Mailer;
  /** Codes are stored and looked up by a keyed hash under it. */
  secrets: SecretsKey;
  publicUrl: string;
  onSessionsRevoked?: (userId: string) => Promise<void>;
  now?: () => Date;
}) {
  const { db, hasher, mailer, log } = deps;
  const now = deps.now ?? (() => new Date());
  const checkPassword = (password: string, email: string) => {
    const problem = passwordProblem(password, email);
    if (problem) throw new UserError('WEAK_PASSWORD', PASSWORD_MESSAGES[problem]);
  };

  const hashCode = (code: string) => storedCode(deps.secrets, 'link', code);
  const hashCodes = (code: string) => storedCodes(deps.secrets, 'link', code);

  const issueCode = async (userId: string, purpose: CodePurpose): Promise<string> => {
    const code = newCode();
    await db.insert(userCodes).values({ codeHash: hashCode(code), userId, purpose, expiresAt: codeExpiry(purpose, now()) });
    return code;
  };

  /** Marks the code used in the same statement that checks it, so two requests cannot both use it. */
  const useCode = async (code: string, purpose: CodePurpose): Promise<string> => {
    const [row] = await db
      .update(userCodes)
      .set({ usedAt: now() })
      .where(and(inArray(userCodes.codeHash, hashCodes(code)), eq(userCodes.purpose, purpose), isNull(userCodes.usedAt), gt(userCodes.expiresAt, now())))
      .returning({ userId: userCodes.userId });
    if (!row) throw new UserError('CONFIRMATION_INVALID', 'The confirmation code does not exist, was already used or has expired');
    return row.userId;
  };

  const { readLoginState, reserveAttempt, undoReservation } = createLoginThrottleStore(deps.pool, now);

  /** The owner hears once per trip of the account's ceiling that someone is guessing; the mail cap applies too. */
  const tellOwnerLocked = (email: string, language: Language) => {
    mailer
      .send({ to: email, kind: 'account_locked', language, link: `${deps.publicUrl}/auth/forgot` })
      .catch((error: unknown) => log.warn({ err: error }, 'the account-locked notice was not sent'));
  };

  const profile = async (userId: string): Promise<Profile> => {
    const [user] = await db.select().from(users).where(eq(users.id, userId));
    if (!user) throw new UserError('NOT_FOUND', 'The user does not exist');
    const accounts = await db.select({ id: walletAccounts.id }).from(walletAccounts).where(eq(walletAccounts.userId, userId)).orderBy(walletAccounts.createdAt);
    const [pincode] = await db.select({ active: sql<boolean>`${userPincodes.pinHash} is not null` }).from(userPincodes).where(eq(userPincodes.userId, userId));
    const [telegram] = await db.select({ id: telegramAccounts.telegramId }).from(telegramAccounts).where(eq(telegramAccounts.userId, userId));
    return {
      email: user.email,
      accounts: accounts.map((account) => ({ id: account.id, language: user.language, defaultFiatCurrency: user.defaultFiatCurrency, email: user.email })),
      pinCodeActive: pincode?.active ?? false,
      tgAuth: telegram !== undefined,
    };
  };

  /**
   * A sign-up answers alike whether its mail went or the address had its hourly share: a 429 here would tell an
   * attacker who filled the share with reset requests that the address has an account.
   */
  const quietWhenCapped = (error: unknown): void => {
    if (!(error instanceof TooManyMailsError)) throw error;
    log.info('a sign-up mail was held back by the per-address mail cap');
  };

  /** Someone signed up with a registered e-mail: its owner hears of it, in their language, with the way back in. */
  const tellOwnerOfSignUp = async (email: string): Promise<undefined> => {
    const [owner] = await db.select({ language: users.language }).from(users).where(eq(users.email, email));
    await mailer.send({ to: email, kind: 'signup_existing', language: owner?.language ?? 'ENG', link: `${deps.publicUrl}/auth/forgot` }).catch(quietWhenCapped);
    return undefined;
  };

  return {
    profile,

    /**
     * POST /user: the user, its first wallet account and the confirmation mail. A registered e-mail gets the same
     * answer (undefined instead of the ids) after the same work, and its owner a mail that someone tried, so the
     * endpoint does not reveal who has an account.
     */
    async signUp(input: { email: string; password: string; accountName: string }): Promise<{ userId: string; accountId: string } | undefined> {
      const email = normalizeEmail(input.email);
      checkPassword(input.password, email);
      const [existing] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
      const passwordHash = await hasher.hash(input.password);
      if (existing) return tellOwnerOfSignUp(email);
      const created = await db.transaction(async (tx) => {
        const [user] = await tx
          .insert(users)
          .values({ email, passwordHash, language: 'ENG', defaultFiatCurrency: 'USD' })
          .onConflictDoNothing()
          .returning({ id: users.id });
        if (!user) return undefined;
        const [account] = await tx.insert(walletAccounts).values({ userId: user.id, name: input.accountName }).returning({ id: walletAccounts.id });
        if (!account) throw new Error('the wallet account was not created');
        return { userId: user.id, accountId: account.id };
      });
      if (!created) return tellOwnerOfSignUp(email);
      const code = await issueCode(created.userId, 'confirm_email');
      await mailer.send({ to: email, kind: 'confirm_email', language: 'ENG', link: `${deps.publicUrl}/auth/signup/confirm/${code}` }).catch(quietWhenCapped);
      return created;
    },

    async confirmEmail(code: string): Promise<void> {
      const userId = await useCode(code, 'confirm_email');
      await db.update(users).set({ emailConfirmedAt: now() }).where(and(eq(users.id, userId), isNull(users.emailConfirmedAt)));
    },

    /** Same answer and no waiting on mail whether or not the e-mail is known, so the endpoint does not reveal accounts. */
    async requestPasswordReset(rawEmail: string): Promise<void> {
      const email = normalizeEmail(rawEmail);
      const [user] = await db.select({ id: users.id, language: users.language }).from(users).where(eq(users.email, email));
      if (!user) return;
      const code = await issueCode(user.id, 'reset_password');
      void mailer
        .send({ to: email, kind: 'reset_password', language: user.language, link: `${deps.publicUrl}/auth/forgot/${code}` })
        // Over the per-address mail cap is no failure (capMails logs it); the answer stays the same either way.
        .catch((error: unknown) => (error instanceof TooManyMailsError ? undefined : log.error({ err: error }, 'reset mail failed')));
    },

    /** Sets the new password, proves the e-mail (the link reached it) and ends every other session of the user. */
    async resetPassword(code: string, password: string): Promise<void> {
      const [pending] = await db
        .select({ email: users.email })
        .from(userCodes)
        .innerJoin(users, eq(users.id, userCodes.userId))
        .where(and(inArray(userCodes.codeHash, hashCodes(code)), eq(userCodes.purpose, 'reset_password'), isNull(userCodes.usedAt), gt(userCodes.expiresAt, now())));
      if (!pending) throw new UserError('CONFIRMATION_INVALID', 'The reset code does not exist, was already used or has expired');
      checkPassword(password, pending.email ?? '');
      const passwordHash = await hasher.hash(password);
      const userId = await useCode(code, 'reset_password');
      const at = now();
      // A messenger account linked since the password was last set may be a thief's, linked with a stolen session:
      // the reset that takes the account back ends it too. Sign-up and reset are where a password is set; a user who
      // had none (made by Telegram) keeps the link they were made with.
      await db.delete(telegramAccounts).where(
        and(
          eq(telegramAccounts.userId, userId),
          sql`${telegramAccounts.linkedAt} > (SELECT coalesce(${users.sessionsRevokedAt}, ${users.createdAt}) FROM ${users} WHERE ${users.id} = ${userId} AND ${users.passwordHash} IS NOT NULL)`,
        ),
      );
      // So does a link code minted with that session and not yet used.
      await db.delete(telegramLinkCodes).where(eq(telegramLinkCodes.userId, userId));
      await db
        .update(users)
        .set({ passwordHash, sessionsRevokedAt: at, emailConfirmedAt: sql`coalesce(${users.emailConfirmedAt}, ${at.toISOString()}::timestamptz)` })
        .where(eq(users.id, userId));
      // The mailbox is proven: the account's ceiling and its per-address locks no longer stand in the way.
      if (pending.email) await db.delete(loginThrottle).where(sql`${loginThrottle.key} = ${`email:${pending.email}`} OR starts_with(${loginThrottle.key}, ${`email:${pending.email}|`})`);
      await deps.onSessionsRevoked?.(userId);
    },

    /**
     * The credential check of the sign-in form. Locked keys are refused before any hashing; unknown e-mails cost
     * the same hashing as a wrong password; unconfirmed e-mails fail like a wrong password.
     */
    async checkLogin(rawEmail: string, password: string, clientAddress: string): Promise<LoginResult> {
      const email = normalizeEmail(rawEmail);
      const keys = throttleKeys(email, clientAddress);
      const { user, throttle: states } = await readLoginState(email, keys.map(({ key }) => key));
      // A locked key is refused on this one read, before any hashing or row lock: the cheap answer to a flood.
      const wait = Math.max(...keys.map(({ key }) => retryAfterMs(states.get(key), now())));
      if (wait > 0) return { ok: false, reason: 'THROTTLED', retryAfterMs: wait };
      if ([...password].length > 1024) return { ok: false, reason: 'INVALID' };

      const reservation = await reserveAttempt(keys);
      if ('wait' in reservation) return { ok: false, reason: 'THROTTLED', retryAfterMs: reservation.wait };
      const { reserved } = reservation;
      let valid = false;
      try {
        if (user?.passwordHash) valid = (await hasher.verify(user.passwordHash, password)) && user.confirmed;
        else await hasher.verifyDummy(password);
      } catch (error) {
        await undoReservation(reserved);
        if (error instanceof HasherBusyError) return { ok: false, reason: 'THROTTLED', retryAfterMs: 1000 };
        throw error;
      }
      const userId = user?.id;

      if (valid && userId) {
        // The owner's own mistakes from this address are forgiven by a success; the account's ceiling is not reset.
        const pairKey = keys.find(({ policy }) => policy === PAIR_POLICY)?.key;
        await undoReservation(reserved.filter(({ key }) => key !== pairKey), pairKey);
        return { ok: true, userId };
      }
      const accountKey = keys.find(({ policy }) => policy === ACCOUNT_POLICY)?.key;
      const account = reserved.find(({ key }) => key === accountKey);
      if (user && account && tripped(account.before, account.after, now())) tellOwnerLocked(email, user.language);
      return { ok: false, reason: 'INVALID' };
    },

    /** The language the user chose for the account (the gateway answers refusals in it); undefined for no such user. */
    async languageOf(userId: string): Promise<Language | undefined> {
      const [user] = await db.select({ language: users.language }).from(users).where(eq(users.id, userId));
      return user?.language;
    },

    async setLanguage(userId: string, language: Language): Promise<Profile> {
      await db.update(users).set({ language }).where(eq(users.id, userId));
      return profile(userId);
    },

    async setDefaultFiatCurrency(userId: string, currency: FiatCurrency): Promise<Profile> {
      await db.update(users).set({ defaultFiatCurrency: currency }).where(eq(users.id, userId));
      return profile(userId);
    },

    /** Removes throttle rows that no longer lock anything; run now and then. */
    async pruneThrottle(): Promise<void> {
      // The account's own key keeps its day-long window; the keys with an address in them only their short one.
      const long = new Date(now().getTime() - ACCOUNT_POLICY.windowMs).toISOString();
      const short = new Date(now().getTime() - Math.max(PAIR_POLICY.windowMs, ADDRESS_POLICY.windowMs)).toISOString();
      const withAddress = sql`(starts_with(${loginThrottle.key}, 'ip:') OR strpos(${loginThrottle.key}, '|ip:') > 0)`;
      await db
        .delete(loginThrottle)
        .where(
          and(
            sql`(${loginThrottle.windowStartedAt} < ${long}::timestamptz OR (${loginThrottle.windowStartedAt} < ${short}::timestamptz AND ${withAddress}))`,
            sql`(${loginThrottle.lockedUntil} is null or ${loginThrottle.lockedUntil} < now())`,
          ),
        );
    },
  };
}
