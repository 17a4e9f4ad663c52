/**
 * A JSON-RPC node that answers from recorded answers (tests/fixtures/utxo-rpc/*.json) in the envelope Bitcoin
 * Core-style nodes use for JSON-RPC 1.0 (batches too), and refuses a parameter of the wrong type as that node
 * version does (Dogecoin Core 1.14's `getblock <hash> 1`: code -1, "JSON value is not a boolean as expected").
 * A call it has no answer for is an error and is listed in `unexpected`; refused types are listed in `refused`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

type RpcErrorBody = { code: number; message: string };
type Answer = { method: string; params: unknown[]; result?: unknown; error?: RpcErrorBody };
type TypeCheck = { method: string; param: number; accepts: string[]; error: RpcErrorBody };
type Fixture = { node: string; typeChecks: TypeCheck[]; answers: Answer[] };
type Request = { id?: unknown; method?: string; params?: unknown[] };

export type RecordedNode = {
  /** http://user:password@127.0.0.1:port, as a *_RPC_URL. */
  url: string;
  node: string;
  /** Every call as `method(params)` in JSON, in order. */
  calls: string[];
  /** Calls refused for a parameter of the wrong type. */
  refused: string[];
  /** Calls without a recorded answer. */
  unexpected: string[];
  /** Answers `method(params)` with this instead (a value the test varies), before the recorded ones. */
  answer(method: string, params: unknown[], reply: { result: unknown } | { error: RpcErrorBody }): void;
  close(): Promise<void>;
};

const FIXTURES = new URL('../../../../../fixtures/utxo-rpc/', import.meta.url);
type RawJson = { rawJSON(text: string): unknown };
type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
// Numbers go out exactly as recorded ("25.00000000", "-1"), as the node writes them.
const keepNumbers: Reviver = (_key, value, context) => (typeof value === 'number' && context?.source !== undefined ? (JSON as unknown as RawJson).rawJSON(context.source) : value);

/** A fixture: parameters and type checks as plain JSON, results with their numbers as written. */
export function loadFixture(name: string): Fixture {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8');
  const plain = JSON.parse(text) as Fixture;
  const raw = (JSON.parse as (text: string, reviver: Reviver) => Fixture)(text, keepNumbers);
  return { ...plain, answers: plain.answers.map((answer, i) => ({ ...answer, result: raw.answers[i]?.result })) };
}

const typeOf = (value: unknown) => (typeof value === 'object' && value !== null && !Array.isArray(value) && 'rawJSON' in (value as object) ? 'number' : typeof value);

export async function startRecordedNode(fixtureName: string): Promise<RecordedNode> {
  const fixture = loadFixture(fixtureName);
  const overrides: Answer[] = [];
  const calls: string[] = [];
  const refused: string[] = [];
  const unexpected: string[] = [];
  const key = (method: string, params: unknown[]) => `${method}(${JSON.stringify(params)})`;

  const handle = (request: Request): { result: unknown; error: RpcErrorBody | null; id: unknown } => {
    const method = request.method ?? '';
    const params = request.params ?? [];
    const call = key(method, params);
    calls.push(call);
    for (const check of fixture.typeChecks) {
      const value = params[check.param];
      if (check.method === method && value !== undefined && !check.accepts.includes(typeOf(value))) {
        refused.push(call);
        return { result: null, error: check.error, id: request.id ?? null };
      }
    }
    const found = [...overrides, ...fixture.answers].find((a) => a.method === method && JSON.stringify(a.params) === JSON.stringify(params));
    if (!found) {
      unexpected.push(call);
      return { result: null, error: { code: -32601, message: `no recorded answer for ${call}` }, id: request.id ?? null };
    }
    return found.error ? { result: null, error: found.error, id: request.id ?? null } : { result: found.result, error: null, id: request.id ?? null };
  };

  const body = async (request: IncomingMessage) => {
    let text = '';
    for await (const chunk of request) text += String(chunk);
    return JSON.parse(text) as Request | Request[];
  };

  const server = createServer((request, response) => {
    body(request).then(
      (parsed) => {
        const answer = Array.isArray(parsed) ? parsed.map(handle) : handle(parsed);
        // A failed single call is HTTP 500 with the error in the body, a batch always 200 (Bitcoin Core's httprpc.cpp).
        const status = !Array.isArray(answer) && answer.error ? 500 : 200;
        response.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(answer)}\n`);
      },
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://rpc:secret@127.0.0.1:${port}`,
    node: fixture.node,
    calls,
    refused,
    unexpected,
    answer(method, params, reply) {
      overrides.unshift({ method, params, ...reply });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
