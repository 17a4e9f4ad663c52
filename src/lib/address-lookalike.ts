/**
 * Address poisoning (issue 36 item 3): a thief sends a little from an address made to share its ends with one the
 * victim uses, hoping it is copied from the history. Two addresses look alike when they share their first and last
 * LOOKALIKE_ENDS characters but differ in between; the characters every address of a form begins with (`0x`,
 * `bc1q`, `T`, `UQ`…) are left out of the first ones and must be the same. Hex forms (`0x…`, TON's raw `0:…`)
 * compare without case; base58, bech32 and base64 ones exactly (the caller compares canonical spellings).
 */

/** Characters at each end people compare by eye (wallets show `0x1234…abcd`). */
export const LOOKALIKE_ENDS = 4;

type Form = { prefix: string; body: string };

/** The part every address of its form shares, and the rest; hex is lower-cased. */
function formOf(address: string): Form {
  const hex = /^(0x|-?\d+:)([0-9a-fA-F]+)$/.exec(address);
  if (hex) return { prefix: hex[1]!.toLowerCase(), body: hex[2]!.toLowerCase() };
  // bech32 (bc1q…, ltc1p…): the human-readable part, the separator and the witness version.
  const bech32 = /^([a-zA-Z]{2,5}1[02-9ac-hj-np-zAC-HJ-NP-Z])(.+)$/.exec(address);
  if (bech32 && /^(bc|tb|bcrt|ltc|tltc|rltc)1/i.test(address)) return { prefix: bech32[1]!, body: bech32[2]! };
  // TON user-friendly (48 characters): the flags and the workchain.
  if (/^[A-Za-z0-9_+/-]{48}$/.test(address)) return { prefix: address.slice(0, 2), body: address.slice(2) };
  // base58 (Bitcoin family, TRON): the version character.
  return { prefix: address.slice(0, 1), body: address.slice(1) };
}

/**
 * Whether `typed` looks like `known` without being it: same form, the same first and last LOOKALIKE_ENDS characters
 * of what follows the form's prefix, something different in between. The same address is not a lookalike, nor is
 * one too short to have a middle.
 */
export function looksAlike(typed: string, known: string): boolean {
  const a = formOf(typed.trim());
  const b = formOf(known.trim());
  if (a.prefix !== b.prefix || a.body === b.body) return false;
  if (a.body.length <= LOOKALIKE_ENDS * 2 || b.body.length <= LOOKALIKE_ENDS * 2) return false;
  return a.body.slice(0, LOOKALIKE_ENDS) === b.body.slice(0, LOOKALIKE_ENDS) && a.body.slice(-LOOKALIKE_ENDS) === b.body.slice(-LOOKALIKE_ENDS);
}

/** The same address in the same spelling (hex without regard to case). */
export function sameAddress(a: string, b: string): boolean {
  const x = formOf(a.trim());
  const y = formOf(b.trim());
  return x.prefix === y.prefix && x.body === y.body;
}

/** The first of `known` that `typed` looks like (see looksAlike), unless `typed` is one of them. */
export function lookalikeOf(typed: string, known: readonly string[]): string | undefined {
  if (known.some((address) => sameAddress(typed, address))) return undefined;
  return known.find((address) => looksAlike(typed, address));
}
