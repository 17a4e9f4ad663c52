// The gateway as store tests see it: injected under the API client (setRequestMethod), so the stores' real calls run
// (ofetch serialises the path, query and JSON body; the client reads statuses and error bodies) and nothing mocks a
// module. Answers are given per `METHOD /path` (the path without the client's `/api` base and without its query).
import { setRequestMethod } from '../../src/api/client.ts';

export type SentRequest = { method: string; path: string; query: Record<string, string>; body: unknown; headers: Record<string, string> };

/** `METHOD /path`, e.g. `POST /acc-1/withdrawal`. */
export type Route = `${'GET' | 'POST' | 'PUT' | 'DELETE'} /${string}`;

const REPLY = Symbol('reply');
const OFFLINE = Symbol('offline');
type Reply = { [REPLY]: true; status: number; body: unknown; headers: Record<string, string> };
type Offline = { [OFFLINE]: true };
/** A JSON body answered 200, an explicit `reply`, `offline()`, or a function of the request giving one of them. */
export type Answer = unknown;

/** An answer with its own status (and headers): `reply(204)`, `reply(503, { … }, { 'retry-after': '5' })`. */
export function reply(status: number, body?: unknown, headers: Record<string, string> = {}): Reply {
  return { [REPLY]: true, status, body, headers };
}

/** The gateway's refusal as it sends one: `{ exceptionCode, message }` with its status. */
export function refusal(status: number, exceptionCode: string, message = ''): Reply {
  return reply(status, { exceptionCode, message });
}

/** The request never reaches the gateway (the client turns it into FETCH_ERROR). */
export function offline(): Offline {
  return { [OFFLINE]: true };
}

const isReply = (value: unknown): value is Reply => typeof value === 'object' && value !== null && REPLY in value;
const isOffline = (value: unknown): value is Offline => typeof value === 'object' && value !== null && OFFLINE in value;

export type RequestMock = {
  /** Answers every request to the route from now on (replacing an earlier `on`). */
  on(route: Route, answer: Answer): RequestMock;
  /** Answers the next request to the route only, ahead of `on`; several queue in order. */
  once(route: Route, answer: Answer): RequestMock;
  /** Every request sent, in order. */
  readonly calls: SentRequest[];
  /** The requests sent to the route. */
  to(route: Route): SentRequest[];
  /** The last request sent to the route; fails the test, listing what was sent, when there was none. */
  expectRequest(route: Route): SentRequest;
  /** Requests no answer was given for (each answered 501 UNANSWERED_IN_TEST). */
  readonly unanswered: string[];
  /** Forgets every answer and every recorded request. */
  reset(): void;
  /** Forgets the recorded requests only. */
  clearCalls(): void;
  /** Puts the platform's fetch back. */
  restore(): void;
};

/** Installs a gateway stand-in under the API client for this test file and returns it. */
export function mockRequest(): RequestMock {
  const always = new Map<string, Answer>();
  const queued = new Map<string, Answer[]>();
  const calls: SentRequest[] = [];
  const unanswered: string[] = [];

  async function answer(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, 'http://gateway.test');
    const method = (init.method ?? 'GET').toUpperCase();
    const path = url.pathname.replace(/^\/api(?=\/)/, '');
    const text = typeof init.body === 'string' ? init.body : undefined;
    const request: SentRequest = {
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      body: text === undefined || text === '' ? undefined : (JSON.parse(text) as unknown),
      headers: Object.fromEntries(new Headers(init.headers)),
    };
    calls.push(request);
    const route = `${method} ${path}`;
    const next = queued.get(route);
    let given: Answer;
    if (next && next.length > 0) given = next.shift();
    else if (always.has(route)) given = always.get(route);
    else {
      unanswered.push(route);
      given = refusal(501, 'UNANSWERED_IN_TEST', `No answer given for ${route}`);
    }
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    let result = typeof given === 'function' ? (given as (request: SentRequest) => unknown)(request) : given;
    if (result instanceof Promise) {
      result = await new Promise((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        (result as Promise<unknown>).then(resolve, reject);
      });
    }
    signal?.throwIfAborted();
    if (isOffline(result)) throw new TypeError('fetch failed');
    const { status, body, headers } = isReply(result) ? result : reply(200, result);
    if (body === undefined) return new Response(null, { status, headers });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  }

  setRequestMethod(answer);
  const mock: RequestMock = {
    on(route, given) {
      always.set(route, given);
      return mock;
    },
    once(route, given) {
      queued.set(route, [...(queued.get(route) ?? []), given]);
      return mock;
    },
    calls,
    to: (route) => calls.filter((call) => `${call.method} ${call.path}` === route),
    expectRequest(route) {
      const sent = mock.to(route).at(-1);
      if (!sent) throw new Error(`No request to ${route}; sent: ${calls.map((call) => `${call.method} ${call.path}`).join(', ') || 'none'}`);
      return sent;
    },
    unanswered,
    reset() {
      always.clear();
      queued.clear();
      mock.clearCalls();
    },
    clearCalls() {
      calls.length = 0;
      unanswered.length = 0;
    },
    restore: () => setRequestMethod(null),
  };
  return mock;
}
