import type { Queryable } from './ledger.ts';

/**
 * The passcode guard (SPEC §6) for the actions it protects: withdrawals, swap confirmation, e-mail change and
 * turning the passcode off. Call it inside the request before anything moves. It passes when the user has no
 * active passcode; otherwise a missing or wrong `pincode` header throws ApiError B2C_USM0031 (wrong code),
 * B2C_USM0030 (too many wrong codes: wait) or B2C_USM0032 (blocked until reset by e-mail).
 */
export async function guardPincode(_db: Queryable, _userId: string, _pincode: string | undefined): Promise<void> {
  // Filled in by the passcode issue (#6), which adds the stored passcode; until then no user has one.
}
