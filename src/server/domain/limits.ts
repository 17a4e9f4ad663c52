/**
 * Request and mail limits shared by every gateway instance: counted in PostgreSQL (table rate_limit, through
 * rate-limiter-flexible's store on the pool), each a fixed window per key. A key over its limit is also remembered
 * in this process until its window ends, so a flood of refused requests costs no database round trip.
 */
import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { DomainError } from './errors.ts';
import type { Mailer, MailRequest } from '../adapters/mail/port.ts';
import type { SecretsKey } from '../adapters/keys/port.ts';

export type LimitPolicy = { points: number; durationS: number };

const HOUR = 3600;

/**
 * The limits by name: how many requests (or mails) one key may make in a window. Those per client address and the
 * mail cap are configuration (AUTH_RATE_LIMIT, MAIL_RATE_LIMIT); those per e-mail address or user are fixed.
 */
export function limitPolicies(settings: { authPerHour: number; mailsPerHour: number }) {
  const perClient = { points: settings.authPerHour, durationS: HOUR };
  return {
    /** Sign-ups from one client address (many people may share one: an office, a carrier's NAT). */
    signUpPerClient: perClient,
    /** Sign-ups naming one e-mail address. */
    signUpPerEmail: { points: 3, durationS: HOUR },
    /** Password reset requests from one client address. */
    resetPerClient: perClient,
    /** Password reset requests naming one e-mail address, known or not (the answer must not tell). */
    resetPerEmail: { points: 5, durationS: HOUR },
    /** Verification code mails (e-mail change, its resend, passcode reset) asked for from one client address. */
    codesPerClient: perClient,
    /** Verification code mails asked for by one signed-in user. */
    codesPerUser: { points: 10, durationS: HOUR },
    /** 'Leave feedback' messages from one user. */
    feedbackPerUser: { points: 5, durationS: HOUR },
    /**
     * Quotes one user asks for (swap pre-calculate, withdrawal preliminary fees), together: typing with the 300 ms
     * debounce asks a few a second at most; a script asking hundreds a second would only fill the quote tables.
     */
    quotesPerUser: { points: 120, durationS: 60 },
    /** Mails of any kind to one address: the cap every mail passes (capMails). */
    mailsPerAddress: { points: settings.mailsPerHour, durationS: HOUR },
  } satisfies Record<string, LimitPolicy>;
}

export type LimitName = keyof ReturnType<typeof limitPolicies> | 'public' | 'analytics';

/** Milliseconds until the key may go on; 0 means this request was counted and may go on now. */
export type Limit = { take: (key: string) => Promise<number> };

/** Whole seconds to wait, at least one: what Retry-After says (http/errors.ts reads details.retryAfterSeconds). */
const waitSeconds = (retryAfterMs: number) => Math.max(1, Math.ceil(retryAfterMs / 1000));

export class TooManyRequestsError extends DomainError<'TOO_MANY_REQUESTS'> {
  readonly retryAfterSeconds: number;
  constructor(retryAfterMs: number, message = 'Too many requests: try again later') {
    super('TOO_MANY_REQUESTS', message, { details: { retryAfterSeconds: waitSeconds(retryAfterMs) } });
    this.retryAfterSeconds = waitSeconds(retryAfterMs);
  }
}

/** A mail refused by the per-address cap: too many mails went to that address within the hour. */
export class TooManyMailsError extends DomainError<'TOO_MANY_MAILS'> {
  readonly retryAfterSeconds: number;
  constructor(retryAfterMs: number) {
    super('TOO_MANY_MAILS', 'Too many mails were sent to this address; try again later', { details: { retryAfterSeconds: waitSeconds(retryAfterMs) } });
    this.retryAfterSeconds = waitSeconds(retryAfterMs);
  }
}

/** Any rate-limiter-flexible limiter as a Limit: a refusal is its wait, a store failure is thrown. */
export function limitOf(limiter: RateLimiterAbstract): Limit {
  return {
    async take(key) {
      try {
        await limiter.consume(key);
        return 0;
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return Math.max(1, refusal.msBeforeNext);
        throw refusal;
      }
    },
  };
}

/** An e-mail address as a limit key. */
export type EmailKey = (email: string) => string;

/**
 * Keys e-mail addresses by a keyed hash (SECRETS_KEY), lower-cased and trimmed as stored: the table holds no
 * address, nor a plain hash a guessed address could be tested against, and every key fits its 255 characters.
 */
export function emailKeyOf(secrets: Pick<SecretsKey, 'keyedHash'>): EmailKey {
  return (email) => secrets.keyedHash(email.trim().toLowerCase(), 'limit');
}

export type Limits = {
  emailKey: EmailKey;
  /** Counts one request against each [limit, key] and throws TooManyRequestsError when any is over. */
  enforce: (...checks: Array<[LimitName, string]>) => Promise<void>;
  limit: (name: LimitName) => Limit | undefined;
};

/** Every limit on one pool; a limit of 0 points is off (PUBLIC_RATE_LIMIT, AUTH_RATE_LIMIT, MAIL_RATE_LIMIT at 0). */
export function createLimits(
  pool: pg.Pool,
  options: { publicPerMinute: number; authPerHour: number; mailsPerHour: number; analyticsPerMinute?: number },
  emailKey: EmailKey,
): Limits {
  let sweeper = true;
  const make = (name: string, policy: LimitPolicy) => {
    // The table is shared: one limiter of the process deleting expired rows every 5 minutes is enough.
    const clearExpiredByTimeout = sweeper;
    sweeper = false;
    return limitOf(
      new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: 'rate_limit',
        tableCreated: true,
        clearExpiredByTimeout,
        keyPrefix: name,
        points: policy.points,
        duration: policy.durationS,
        // Past its limit a key stays refused until its window ends: remember that here instead of asking again.
        inMemoryBlockOnConsumed: policy.points + 1,
      }),
    );
  };
  const limits = new Map<LimitName, Limit>();
  const policies: Record<LimitName, LimitPolicy> = {
    ...limitPolicies(options),
    public: { points: options.publicPerMinute, durationS: 60 },
    // Event posts to the embedded analytics data plane (ANALYTICS_RATE_LIMIT).
    analytics: { points: options.analyticsPerMinute ?? 0, durationS: 60 },
  };
  for (const [name, policy] of Object.entries(policies)) if (policy.points > 0) limits.set(name as LimitName, make(name, policy));
  return {
    emailKey,
    limit: (name) => limits.get(name),
    async enforce(...checks) {
      for (const [name, key] of checks) {
        const wait = (await limits.get(name)?.take(key)) ?? 0;
        if (wait > 0) throw new TooManyRequestsError(wait);
      }
    },
  };
}

/**
 * The one cap every mail passes: at most MAIL_RATE_LIMIT mails to one address an hour, whatever
 * asked for them (sign-up confirmation, password reset, verification codes, notices). Wraps the mailer without
 * changing it; over the cap the mail is not sent and `send` throws TooManyMailsError (a 429 where it reaches a
 * client).
 */
/**
 * Security notices the owner must get even when someone filled the address's share with reset requests: each is
 * sent once per event that needs a stolen session or a guessing campaign, so they cannot be used to flood.
 */
const UNCAPPED_MAILS: ReadonlySet<MailRequest['kind']> = new Set(['messenger_linked', 'account_locked']);

export function capMails(mailer: Mailer, cap: Limit | undefined, emailKey: EmailKey, onRefused?: (mail: MailRequest) => void): Mailer {
  return {
    close: () => mailer.close(),
    async send(mail) {
      const wait = cap && !UNCAPPED_MAILS.has(mail.kind) ? await cap.take(emailKey(mail.to)) : 0;
      if (wait > 0) {
        onRefused?.(mail);
        throw new TooManyMailsError(wait);
      }
      return mailer.send(mail);
    },
  };
}
