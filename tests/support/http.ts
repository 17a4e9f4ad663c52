// The one HTTP client of the integration tests: a call to the gateway as a signed-in user (or none), JSON in, the answer parsed when it is JSON.

export type Answer<T = Record<string, unknown>> = { status: number; body: T; text: string; headers: Headers };

export type GatewayCall<D> = <T = D>(user: { accessToken: string } | undefined, method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer<T>>;

/** A body that is not JSON (an HTML page, an empty answer) leaves `body` undefined; `text` always has it. */
function parsed(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * `base` may be a function, for a server started in `beforeAll` after the client is made.
 * A string body is sent as written (to test malformed JSON); anything else as JSON. D is the body type a call gets unless it names one.
 */
export function gatewayClient<D = Record<string, unknown>>(base: string | (() => string), defaults: { headers?: Record<string, string>; redirect?: RequestRedirect } = {}): GatewayCall<D> {
  return async <T = D>(user: { accessToken: string } | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> => {
    const all: Record<string, string> = { ...defaults.headers, ...headers };
    if (user) all.authorization = `Bearer ${user.accessToken}`;
    if (body !== undefined) all['content-type'] = 'application/json';
    const url = `${typeof base === 'string' ? base : base()}${path}`;
    const response = await fetch(url, { method, headers: all, redirect: defaults.redirect, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: parsed(text) as T, text, headers: response.headers };
  };
}
