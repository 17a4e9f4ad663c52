import { ofetch, type FetchResponse } from 'ofetch';
import { FETCH_ERROR, PARSING_ERROR, TIMEOUT_ERROR, UNAUTHORIZED, WalletError } from './errors.ts';
import type { ApiSession } from './session.ts';

export type CallOptions = {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: Record<string, unknown> | unknown[];
  query?: Record<string, string | number | boolean | undefined>;
  /** SPEC §6: public calls carry no bearer token and never trigger a re-authentication. */
  public?: boolean;
  /** SPEC §5: sent as the `pincode` header only when non-empty. */
  pincode?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
};

type Settings = { baseURL: string; timeoutMs: number };

let settings: Settings = { baseURL: '/api', timeoutMs: 30_000 };

/**
 * The one function that reaches the network: the platform's fetch, as ofetch uses it, unless one is injected. Store
 * tests inject one that answers per method and path (tests/support/request-mock.ts), so none mocks a module.
 */
export type RequestMethod = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
const platformFetch: RequestMethod = (input, init) => globalThis.fetch(input, init);
let requestMethod: RequestMethod = platformFetch;

/** Injects the function every gateway call goes through; null puts the platform's fetch back. */
export function setRequestMethod(next: RequestMethod | null): void {
  requestMethod = next ?? platformFetch;
}

// ofetch builds the request (base URL, query, JSON body) and reads the answer; only the fetch under it is injected.
const gateway = ofetch.create({}, { fetch: (input, init) => requestMethod(input, init) });

const signedOut: ApiSession = { accessToken: async () => null, reauthenticate: async () => null, signOutSilently: () => {} };
let session: ApiSession = signedOut;

/** Points the client elsewhere (tests use a local server) or changes the timeout. */
export function configureApi(next: Partial<Settings>): void {
  settings = { ...settings, ...next };
}

/** Injected by the composition root, so the client never imports the auth store. */
export function setApiSession(next: ApiSession | null): void {
  session = next ?? signedOut;
}

/**
 * One call to the gateway: bearer token unless public, credentials included, a 401 renews the session and
 * retries once, otherwise signs out silently. Every failure is a WalletError (SPEC §8).
 */
export async function apiCall<T>(path: string, options: CallOptions = {}): Promise<T> {
  if (options.public) return read<T>(await send(path, options, null));
  const first = await send(path, options, await session.accessToken());
  if (first.status !== 401) return read<T>(first);
  const token = await session.reauthenticate();
  if (token) {
    const second = await send(path, options, token);
    if (second.status !== 401) return read<T>(second);
  }
  session.signOutSilently();
  throw new WalletError(UNAUTHORIZED, 'The session has ended', { status: 401 });
}

async function send(path: string, options: CallOptions, token: string | null): Promise<FetchResponse<string>> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.pincode) headers.pincode = options.pincode;
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  try {
    return await gateway.raw(path, {
      baseURL: settings.baseURL,
      method: options.method ?? 'GET',
      body: options.body,
      query: options.query,
      headers,
      credentials: 'include',
      mode: 'cors',
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      responseType: 'text',
      ignoreResponseError: true,
      retry: false,
    });
  } catch (error) {
    if (timeout.aborted) throw new WalletError(TIMEOUT_ERROR, 'The gateway did not answer in time', { cause: error });
    throw new WalletError(FETCH_ERROR, 'The gateway could not be reached', { cause: error });
  }
}

function read<T>(response: FetchResponse<string>): T {
  const text = typeof response._data === 'string' ? response._data : '';
  const { status } = response;
  if (response.ok) {
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new WalletError(PARSING_ERROR, 'The gateway sent an answer that is not JSON', { status, cause: error });
    }
  }
  const body = parseErrorBody(text);
  const retryAfter = Number(response.headers.get('retry-after') ?? '');
  const retryAfterSeconds = Number.isInteger(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
  if (body) throw new WalletError(body.exceptionCode, body.message, { status, fromServer: true, retryAfterSeconds, network: body.network });
  throw new WalletError(`HTTP_${status}`, response.statusText || `HTTP ${status}`, { status });
}

function parseErrorBody(text: string): { exceptionCode: string; message: string; network?: string } | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object' && 'exceptionCode' in body && typeof body.exceptionCode === 'string' && body.exceptionCode) {
      const message = 'message' in body && typeof body.message === 'string' ? body.message : '';
      const network = 'network' in body && typeof body.network === 'string' ? body.network : undefined;
      return { exceptionCode: body.exceptionCode, message, ...(network === undefined ? {} : { network }) };
    }
  } catch {
    // not JSON: the status alone describes it
  }
  return undefined;
}
