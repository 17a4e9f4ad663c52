/** The console's calls to /api/operator/*: bearer token in, JSON out, a refusal thrown with its code and status. */
export class ConsoleError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export type Call = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => Promise<T>;

export function createCall(token: () => Promise<string | null>, onSignedOut: () => void): Call {
  return async <T,>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const bearer = await token();
    if (!bearer) {
      onSignedOut();
      throw new ConsoleError(401, 'UNAUTHORIZED', 'Sign in');
    }
    const response = await fetch(`/api/operator${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json().catch(() => ({}))) as { exceptionCode?: string; message?: string };
    if (response.status === 401) onSignedOut();
    if (!response.ok) throw new ConsoleError(response.status, answer.exceptionCode ?? 'INTERNAL', answer.message ?? response.statusText);
    return answer as T;
  };
}
