import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** Every artefact of the identity provider (sessions, grants, codes, refresh tokens, interactions) by model and id. */
export const oidcPayload = pgTable(
  'oidc_payload',
  {
    id: text('id').notNull(),
    type: text('type').notNull(),
    payload: jsonb('payload').notNull(),
    grantId: text('grant_id'),
    userCode: text('user_code'),
    uid: text('uid'),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.type, t.id] }),
    index('oidc_payload_grant').on(t.grantId),
    index('oidc_payload_uid').on(t.uid),
    index('oidc_payload_user_code').on(t.userCode),
    index('oidc_payload_expires').on(t.expiresAt),
  ],
);

/**
 * Grants that ended before their time (sign-out, revocation, refresh-token reuse, password reset), written by a
 * trigger when a live Grant row leaves oidc_payload. Every gateway process reads the recent ones through a short
 * cache and refuses the access tokens of those grants (their `grant_id` claim) before the tokens expire.
 */
export const revokedGrants = pgTable(
  'revoked_grants',
  {
    grantId: text('grant_id').primaryKey(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('revoked_grants_at').on(t.revokedAt)],
);
