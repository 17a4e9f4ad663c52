/** A fresh idempotency key for one order or withdrawal: a UUID where the platform has one, else time and randomness. */
export function newIdempotencyKey(): string {
  return globalThis.crypto?.randomUUID ? globalThis.crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}
