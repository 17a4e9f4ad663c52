/**
 * The domain's one error base. A domain error names what went wrong with a stable code (the `exceptionCode` the
 * gateway answers with, SPEC §8) and keeps its cause; it holds no HTTP status and no translated text: `http/errors.ts`
 * maps codes to statuses and `http/messages.ts` words them in the user's language (the facts from `details`).
 */
export class DomainError<Code extends string = string> extends Error {
  readonly code: Code;
  /** Extra facts a caller may show or act on (attempts left, seconds to wait); never money, never secrets. */
  readonly details: Readonly<Record<string, string | number | boolean>>;
  constructor(code: Code, message: string, options?: { cause?: unknown; details?: Readonly<Record<string, string | number | boolean>> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options?.details ?? {};
  }
}
