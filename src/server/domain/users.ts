import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { loginThrottle, telegramAccounts, userCodes, userPincodes, users, walletAccounts } from '../db/schema.ts';
import type { Logger } from '../log.ts';
import type { Mailer } from '../adapters/mail/mailer.ts';
import { codeExpiry, newCode, storedCode, type CodePurpose } from './codes.ts';
import type { SecretsKey } from '../adapters/keys/secrets-key.ts';
import { HasherBusyError, PASSWORD_MESSAGES, passwordProblem, type PasswordHasher } from './passwords.ts';
import { ACCOUNT_POLICY, ADDRESS_POLICY, afterFailure, retryAfterMs, type ThrottlePolicy, type ThrottleState } from './throttle.ts';

export const LANGUAGES = ['ENG', 'RUS'] as const;
export type Language = (typeof LANGUAGES)[number];
export const FIAT_CURRENCIES = ['USD', 'EUR', 'KZT', 'UAH', 'AZN', 'CAD'] as const;
export type FiatCurrency = (typeof FIAT_CURRENCIES)[number];

export type UserErrorCode = 'WEAK_PASSWORD' | 'CONFIRMATION_INVALID' | 'NOT_FOUND';

/** A refused user operation; the HTTP layer maps the code to a status. */
export class UserError extends Error {
  readonly code: UserErrorCode;
  constructor(code: UserErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

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
  // A check per e-mail that is still running: a burst against one account waits for none of it, it is refused.
  const inFlight = new Map<string, number>();
  const MAX_IN_FLIGHT_PER_ACCOUNT = 2;

  const checkPassword = (password: string, email: string) => {
    const problem = passwordProblem(password, email);
    if (problem) throw new UserError('WEAK_PASSWORD', PASSWORD_MESSAGES[problem]);
  };

  const hashCode = (code: string) => storedCode(deps.secrets, 'link', code);

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
      .where(and(eq(userCodes.codeHash, hashCode(code)), eq(userCodes.purpose, purpose), isNull(userCodes.usedAt), gt(userCodes.expiresAt, now())))
      .returning({ userId: userCodes.userId });
    if (!row) throw new UserError('CONFIRMATION_INVALID', 'The confirmation code does not exist, was already used or has expired');
    return row.userId;
  };

  type LoginRow = { user: { id: string; passwordHash: string | null; confirmed: boolean } | null; throttle: Array<{ key: string; failures: number; windowStartedAt: string; lockedUntil: string | null }> | null };

  /** The user and both throttle rows in one round trip: a login's database work is on the hot path. */
  const readLoginState = async (email: string, keys: string[]): Promise<{ user: LoginRow['user']; throttle: Map<string, ThrottleState> }> => {
    const result = await db.execute<LoginRow>(sql`
      SELECT
        (SELECT json_build_object('id', id, 'passwordHash', password_hash, 'confirmed', email_confirmed_at IS NOT NULL) FROM ${users} WHERE email = ${email}) AS "user",
        (SELECT json_agg(json_build_object('key', key, 'failures', failures, 'windowStartedAt', window_started_at, 'lockedUntil', locked_until))
           FROM ${loginThrottle} WHERE key IN (${sql.join(keys.map((key) => sql`${key}`), sql`, `)})) AS "throttle"`);
    const row = result.rows[0];
    const throttle = new Map(
      (row?.throttle ?? []).map((t) => [t.key, { failures: t.failures, windowStartedAt: new Date(t.windowStartedAt), lockedUntil: t.lockedUntil ? new Date(t.lockedUntil) : null }]),
    );
    return { user: row?.user ?? null, throttle };
  };

  const recordFailure = async (key: string, policy: ThrottlePolicy) => {
    await db.transaction(async (tx) => {
      // The row exists before it is locked, so two first failures at once cannot both start from nothing.
      await tx.insert(loginThrottle).values({ key, failures: 0, windowStartedAt: now() }).onConflictDoNothing();
      const [row] = await tx.select().from(loginThrottle).where(eq(loginThrottle.key, key)).for('update');
      const next = afterFailure(row, now(), policy);
      await tx.update(loginThrottle).set(next).where(eq(loginThrottle.key, key));
    });
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

  /** Someone signed up with a registered e-mail: its owner hears of it, in their language, with the way back in. */
  const tellOwnerOfSignUp = async (email: string): Promise<undefined> => {
    const [owner] = await db.select({ language: users.language }).from(users).where(eq(users.email, email));
    await mailer.send({ to: email, kind: 'signup_existing', language: owner?.language ?? 'ENG', link: `${deps.publicUrl}/auth/forgot` });
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
      await mailer.send({ to: email, kind: 'confirm_email', language: 'ENG', link: `${deps.publicUrl}/auth/signup/confirm/${code}` });
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
        .catch((error: unknown) => log.error({ err: error }, 'reset mail failed'));
    },

    /** Sets the new password, proves the e-mail (the link reached it) and ends every other session of the user. */
    async resetPassword(code: string, password: string): Promise<void> {
      const [pending] = await db
        .select({ email: users.email })
        .from(userCodes)
        .innerJoin(users, eq(users.id, userCodes.userId))
        .where(and(eq(userCodes.codeHash, hashCode(code)), eq(userCodes.purpose, 'reset_password'), isNull(userCodes.usedAt), gt(userCodes.expiresAt, now())));
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
      await db
        .update(users)
        .set({ passwordHash, sessionsRevokedAt: at, emailConfirmedAt: sql`coalesce(${users.emailConfirmedAt}, ${at.toISOString()}::timestamptz)` })
        .where(eq(users.id, userId));
      if (pending.email) await db.delete(loginThrottle).where(eq(loginThrottle.key, `email:${pending.email}`));
      await deps.onSessionsRevoked?.(userId);
    },

    /**
     * The credential check of the sign-in form. Locked keys are refused before any hashing; unknown e-mails cost
     * the same hashing as a wrong password; unconfirmed e-mails fail like a wrong password.
     */
    async checkLogin(rawEmail: string, password: string, clientAddress: string): Promise<LoginResult> {
      const email = normalizeEmail(rawEmail);
      const accountKey = `email:${email}`;
      const addressKey = `ip:${clientAddress}`;
      const { user, throttle: states } = await readLoginState(email, [accountKey, addressKey]);
      const wait = Math.max(retryAfterMs(states.get(accountKey), now()), retryAfterMs(states.get(addressKey), now()));
      if (wait > 0) return { ok: false, reason: 'THROTTLED', retryAfterMs: wait };
      if ((inFlight.get(accountKey) ?? 0) >= MAX_IN_FLIGHT_PER_ACCOUNT) return { ok: false, reason: 'THROTTLED', retryAfterMs: 1000 };
      if ([...password].length > 1024) return { ok: false, reason: 'INVALID' };

      inFlight.set(accountKey, (inFlight.get(accountKey) ?? 0) + 1);
      let valid = false;
      try {
        if (user?.passwordHash) valid = (await hasher.verify(user.passwordHash, password)) && user.confirmed;
        else await hasher.verifyDummy(password);
      } catch (error) {
        if (error instanceof HasherBusyError) return { ok: false, reason: 'THROTTLED', retryAfterMs: 1000 };
        throw error;
      } finally {
        const left = (inFlight.get(accountKey) ?? 1) - 1;
        if (left > 0) inFlight.set(accountKey, left);
        else inFlight.delete(accountKey);
      }
      const userId = user?.id;

      if (valid && userId) {
        if (states.has(accountKey)) await db.delete(loginThrottle).where(eq(loginThrottle.key, accountKey));
        return { ok: true, userId };
      }
      await recordFailure(accountKey, ACCOUNT_POLICY);
      await recordFailure(addressKey, ADDRESS_POLICY);
      return { ok: false, reason: 'INVALID' };
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
      const cutoff = new Date(now().getTime() - Math.max(ACCOUNT_POLICY.windowMs, ADDRESS_POLICY.windowMs));
      await db.delete(loginThrottle).where(and(sql`${loginThrottle.windowStartedAt} < ${cutoff.toISOString()}::timestamptz`, sql`(${loginThrottle.lockedUntil} is null or ${loginThrottle.lockedUntil} < now())`));
    },
  };
}
