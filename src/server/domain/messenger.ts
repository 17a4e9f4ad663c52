import { randomBytes } from 'node:crypto';
import { and, eq, inArray, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { telegramAccounts, telegramLinkCodes, users, walletAccounts } from '../db/schema.ts';
import { DomainError } from './errors.ts';
import type { Logger } from '../log.ts';
import { newCode, storedCode, storedCodes } from './codes.ts';
import type { SealedSettings, SecretsKey } from '../adapters/keys/port.ts';
import type { Queryable } from './ledger.ts';
import type { Mailer } from '../adapters/mail/port.ts';
import { guardPincodeOrRecentSignIn } from './pincode.ts';
import { ed25519PublicKey, InitDataError, validateInitData, type TelegramUser, type ValidInitData } from './telegram-init-data.ts';

/** SPEC §8: the codes of a failed messenger login or link. */
export const MESSENGER_CODES = {
  /** Something went wrong (the stored user is cleared). */
  failed: 'B2C_USM0022',
  /** The init data or the link code is too old. */
  expired: 'B2C_USM0023',
  /** The link code was already used. */
  used: 'B2C_USM0024',
  /** The init data is forged or malformed, or the link code unknown. */
  invalid: 'B2C_USM0025',
  /** The Telegram account belongs to another user. */
  linkedElsewhere: 'B2C_USM0026',
  /** Something went wrong on our side: contact support. */
  support: 'B2C_USM0027',
} as const;
export type MessengerCode = (typeof MESSENGER_CODES)[keyof typeof MESSENGER_CODES];

/** A refused messenger login or link; `code` is one of SPEC §8's. */
export class MessengerError extends DomainError<MessengerCode | 'TG_UNLINK_LAST_SIGN_IN' | 'TG_DISABLED'> {}

/** What the messenger service needs of the Telegram settings (config-telegram.ts gives them). */
export type MessengerSettings = Readonly<{ botUsername: string; requireSignature: boolean; initDataMaxAgeS: number }>;

/** How long a link code (POST /user/tg/code) can be used. */
export const LINK_CODE_TTL_MS = 15 * 60 * 1000;

const DEV_KEYS = 'telegram.dev-keys';

/** The keys init data is signed and checked with: the bot's, or the development mode's generated ones. */
export type InitDataKeys = { botToken: string; publicKey: string; privateKey?: string };

/** What the caller offers to prove they own the account: the `pincode` header and their token's auth_time. */
export type OwnerProof = { pincode: string | undefined; authTime: number | undefined };

/** `notifications`: Settings' switch of the bot's messages about the user's money (domain/notifications.ts). */
export type MessengerLinkState = { linked: boolean; telegram: { id: number; username: string | null; firstName: string } | null; botUsername: string; notifications: boolean };

function isDevKeys(value: unknown): value is { botToken: string; privateKey: string } {
  const v = value as { botToken?: unknown; privateKey?: unknown } | null;
  return typeof v?.botToken === 'string' && typeof v.privateKey === 'string';
}

/**
 * The development mode's stand-in for a bot: a generated token and Ed25519 key, kept sealed in app_setting so every
 * process (and every restart) signs and checks alike.
 */
export async function loadDevKeys(settings: SealedSettings): Promise<InitDataKeys> {
  const value = await settings.load(DEV_KEYS, {
    parse: (stored) => (isDevKeys(stored) ? stored : undefined),
    fresh: () => ({ botToken: `1${randomBytes(4).readUInt32BE(0)}:${randomBytes(27).toString('base64url')}`, privateKey: randomBytes(32).toString('hex') }),
  });
  return { botToken: value.botToken, privateKey: value.privateKey, publicKey: ed25519PublicKey(value.privateKey) };
}

export type MessengerService = ReturnType<typeof createMessengerService>;

/**
 * Telegram accounts of users: sign-in by init data (a first-time Telegram user gets a user and a wallet account),
 * link codes for the web (POST /user/tg/code, then the bot's /start or the mini app's link_token), unlinking.
 */
export function createMessengerService(deps: {
  db: Db;
  /** For the passcode guard, which counts each try in its own statement. */
  pool: Queryable;
  log: Logger;
  config: MessengerSettings;
  keys: InitDataKeys;
  mailer: Mailer;
  publicUrl: string;
  secrets: SecretsKey;
  now?: () => Date;
}) {
  const hashCode = (code: string) => storedCode(deps.secrets, 'link', code);
  const { db, log, config, keys } = deps;
  const now = deps.now ?? (() => new Date());

  const check = (initData: string): ValidInitData => {
    try {
      return validateInitData(initData, {
        botToken: keys.botToken,
        publicKey: keys.publicKey,
        requireSignature: config.requireSignature,
        maxAgeS: config.initDataMaxAgeS,
        now: Math.floor(now().getTime() / 1000),
      });
    } catch (error) {
      if (!(error instanceof InitDataError)) throw error;
      if (error.problem === 'EXPIRED') throw new MessengerError(MESSENGER_CODES.expired, 'The Telegram session has expired; reopen the mini app');
      throw new MessengerError(MESSENGER_CODES.invalid, `The Telegram init data was refused: ${error.message}`);
    }
  };

  const profileOf = (user: TelegramUser) => ({ username: user.username ?? null, firstName: user.first_name, languageCode: user.language_code ?? null });

  type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

  /**
   * Links a Telegram account to a user inside a transaction; another user's Telegram account is refused. True when
   * the link is new (not the same account seen again).
   */
  const linkIn = async (tx: Tx, userId: string, user: TelegramUser): Promise<boolean> => {
    const [existing] = await tx.select({ userId: telegramAccounts.userId }).from(telegramAccounts).where(eq(telegramAccounts.telegramId, user.id)).for('update');
    if (existing && existing.userId !== userId) throw new MessengerError(MESSENGER_CODES.linkedElsewhere, 'This Telegram account is already linked to another account');
    if (existing) {
      await tx.update(telegramAccounts).set({ ...profileOf(user), lastSeenAt: now() }).where(eq(telegramAccounts.telegramId, user.id));
      return false;
    }
    // The user proved both accounts: a Telegram account linked before is replaced by this one.
    await tx.delete(telegramAccounts).where(eq(telegramAccounts.userId, userId));
    const inserted = await tx
      .insert(telegramAccounts)
      .values({ telegramId: user.id, userId, ...profileOf(user), linkedAt: now(), lastSeenAt: now() })
      .onConflictDoNothing()
      .returning({ telegramId: telegramAccounts.telegramId });
    if (inserted.length === 0) throw new MessengerError(MESSENGER_CODES.linkedElsewhere, 'This Telegram account is already linked to another account');
    return true;
  };

  /** A new way into the account: its e-mail hears of it (a thief's link shows), with the way to end it. */
  const tellOwnerOfLink = async (userId: string, user: TelegramUser): Promise<void> => {
    const [owner] = await db.select({ email: users.email, language: users.language }).from(users).where(eq(users.id, userId));
    if (!owner?.email) return;
    await deps.mailer
      .send({ to: owner.email, kind: 'messenger_linked', language: owner.language, link: `${deps.publicUrl}/auth/forgot` })
      .catch((error: unknown) => log.error({ err: error, userId, telegramId: user.id }, 'the link mail failed'));
  };

  /** The passcode when it is on, else a recent sign-in: what linking and unlinking ask of the caller. */
  const proveOwner = (userId: string, proof: OwnerProof): Promise<void> =>
    guardPincodeOrRecentSignIn(deps.pool, userId, proof.pincode, proof.authTime, now().getTime());

  /** Uses a link code in the same transaction as the link it makes: refused links leave the code usable. */
  const useCode = async (tx: Tx, code: string): Promise<string> => {
    const [row] = await tx.select().from(telegramLinkCodes).where(inArray(telegramLinkCodes.codeHash, storedCodes(deps.secrets, 'link', code))).for('update');
    if (!row) throw new MessengerError(MESSENGER_CODES.invalid, 'The link code is not valid');
    if (row.usedAt) throw new MessengerError(MESSENGER_CODES.used, 'The link code was already used; sign in to the existing account');
    if (row.expiresAt.getTime() <= now().getTime()) throw new MessengerError(MESSENGER_CODES.expired, 'The link code has expired; link the account again from the web app');
    await tx.update(telegramLinkCodes).set({ usedAt: now() }).where(eq(telegramLinkCodes.codeHash, row.codeHash));
    return row.userId;
  };

  const linkWithCode = async (code: string, user: TelegramUser): Promise<string> => {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(code)) throw new MessengerError(MESSENGER_CODES.invalid, 'The link code is not valid');
    const { userId, linked } = await db.transaction(async (tx) => {
      const owner = await useCode(tx, code);
      return { userId: owner, linked: await linkIn(tx, owner, user) };
    });
    log.info({ userId, telegramId: user.id }, 'telegram account linked');
    if (linked) await tellOwnerOfLink(userId, user);
    return userId;
  };

  /** The user of a Telegram account; one seen for the first time gets a user and a wallet account. */
  const userOfTelegram = async (user: TelegramUser): Promise<string> => {
    const [known] = await db.select({ userId: telegramAccounts.userId }).from(telegramAccounts).where(eq(telegramAccounts.telegramId, user.id));
    if (known) {
      await db.update(telegramAccounts).set({ ...profileOf(user), lastSeenAt: now() }).where(eq(telegramAccounts.telegramId, user.id));
      return known.userId;
    }
    return db.transaction(async (tx) => {
      const language = user.language_code?.toLowerCase().startsWith('ru') ? 'RUS' : 'ENG';
      const [created] = await tx.insert(users).values({ email: null, language }).returning({ id: users.id });
      if (!created) throw new Error('the user was not created');
      const inserted = await tx
        .insert(telegramAccounts)
        .values({ telegramId: user.id, userId: created.id, ...profileOf(user), linkedAt: now(), lastSeenAt: now() })
        .onConflictDoNothing()
        .returning({ telegramId: telegramAccounts.telegramId });
      // Two first opens at once: the other one made the account; this one's user goes with the rollback.
      if (inserted.length === 0) throw new RaceLost();
      await tx.insert(walletAccounts).values({ userId: created.id, name: 'Account' });
      log.info({ userId: created.id, telegramId: user.id }, 'user created for a Telegram account');
      return created.id;
    }).catch(async (error: unknown) => {
      if (!(error instanceof RaceLost)) throw error;
      const [raced] = await db.select({ userId: telegramAccounts.userId }).from(telegramAccounts).where(eq(telegramAccounts.telegramId, user.id));
      if (!raced) throw new Error('the Telegram account was neither created nor found', { cause: error });
      return raced.userId;
    });
  };

  const state = async (userId: string): Promise<MessengerLinkState> => {
    const [row] = await db.select().from(telegramAccounts).where(eq(telegramAccounts.userId, userId));
    const [user] = await db.select({ notifications: users.telegramNotifications }).from(users).where(eq(users.id, userId));
    return {
      linked: row !== undefined,
      telegram: row ? { id: row.telegramId, username: row.username, firstName: row.firstName } : null,
      botUsername: config.botUsername,
      notifications: user?.notifications ?? true,
    };
  };

  return {
    keys,

    /**
     * authTg: the user of the Telegram account in the init data (one seen for the first time gets an account) and
     * when Telegram signed it in: a replayed init data is no fresh sign-in.
     */
    async signIn(initData: string): Promise<{ userId: string; authTime: number }> {
      const { user, authDate } = check(initData);
      return { userId: await userOfTelegram(user), authTime: authDate };
    },

    /** linkTg: the mini app opened with a link_token; links the init data's Telegram account to the code's user. */
    async signInWithCode(code: string, initData: string): Promise<{ userId: string; authTime: number }> {
      const { user, authDate } = check(initData);
      return { userId: await linkWithCode(code, user), authTime: authDate };
    },

    /** The bot received `/start <code>`: Telegram vouches for the sender, so no init data is needed. */
    linkFromBot(code: string, user: TelegramUser): Promise<string> {
      return linkWithCode(code, user);
    },

    /** POST /user/tg/link: a signed-in user presents init data of the Telegram account to link (and proves ownership). */
    async linkWithInitData(userId: string, initData: string, proof: OwnerProof): Promise<void> {
      const { user } = check(initData);
      await proveOwner(userId, proof);
      if (await db.transaction((tx) => linkIn(tx, userId, user))) await tellOwnerOfLink(userId, user);
    },

    /**
     * POST /user/tg/code: a one-time code for the bot's deep link. Whoever holds the code links their Telegram
     * account (the bot's /start, the mini app's link_token), so ownership is proven here, when the code is made.
     */
    async createLinkCode(userId: string, proof: OwnerProof): Promise<{ code: string; expiresAt: Date; url: string }> {
      await proveOwner(userId, proof);
      // 43 URL-safe characters: within the 64 Telegram allows in a /start parameter.
      const code = newCode();
      const expiresAt = new Date(now().getTime() + LINK_CODE_TTL_MS);
      await db.insert(telegramLinkCodes).values({ codeHash: hashCode(code), userId, expiresAt });
      await db.delete(telegramLinkCodes).where(and(eq(telegramLinkCodes.userId, userId), or(lt(telegramLinkCodes.expiresAt, now()), sql`${telegramLinkCodes.usedAt} is not null`)));
      return { code, expiresAt, url: `https://t.me/${config.botUsername}?start=${code}` };
    },

    state,

    /** Settings' switch of the bot's messages about the user's money. */
    async setNotifications(userId: string, on: boolean): Promise<MessengerLinkState> {
      await db.update(users).set({ telegramNotifications: on }).where(eq(users.id, userId));
      return state(userId);
    },

    async isLinked(userId: string): Promise<boolean> {
      const [row] = await db.select({ id: telegramAccounts.telegramId }).from(telegramAccounts).where(eq(telegramAccounts.userId, userId));
      return row !== undefined;
    },

    /** POST /user/tg/unlink: refused when Telegram is the user's only way to sign in (no password); proves ownership. */
    async unlink(userId: string, proof: OwnerProof): Promise<void> {
      await proveOwner(userId, proof);
      const [user] = await db.select({ passwordHash: users.passwordHash, externalSubject: users.externalSubject }).from(users).where(eq(users.id, userId));
      if (user && !user.passwordHash && !user.externalSubject) {
        throw new MessengerError('TG_UNLINK_LAST_SIGN_IN', 'Telegram is the only way to sign in to this account: add an e-mail and a password first');
      }
      await db.delete(telegramAccounts).where(eq(telegramAccounts.userId, userId));
    },

    /** Unused link codes past their expiry go; used ones are kept a day for the 'already used' answer. */
    async pruneCodes(): Promise<void> {
      await db.delete(telegramLinkCodes).where(lt(telegramLinkCodes.expiresAt, new Date(now().getTime() - 86_400_000)));
    },
  };
}

/** Another request created the same Telegram user's account first. */
class RaceLost extends Error {}
