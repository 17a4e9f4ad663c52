const SCHEME = /^Bearer\s+/i;

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750), or undefined. Its form is left to the verifier,
 * which refuses anything that is not a valid token: a pattern over the whole token cost the gateway ~3 % of its
 * requests per second (bench:balances), and nothing is gained by refusing it here rather than there.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const scheme = header === undefined ? null : SCHEME.exec(header);
  if (!header || !scheme) return undefined;
  const token = header.slice(scheme[0].length).trimEnd();
  return token === '' ? undefined : token;
}
