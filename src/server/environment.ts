/**
 * How every process of the product reads its configuration: the server (`npm start`), the worker (`npm run worker`)
 * and every command (`src/server/cli/*`) go through `loadEnvironmentConfig` here and nothing else, so a command run in
 * the server's environment sees exactly its networks, confirmations, tokens and prices, and refuses what the server
 * would refuse with the same words (`startFailure`).
 *
 * The environment is the process's variables over the lines of `ENV_FILE` (a file of `NAME=value` lines, as
 * Node's `util.parseEnv` reads them), when that variable names one: a deployment keeps its settings and secrets in
 * one file that the server and the commands read alike (README, "Deployment").
 *
 * A command that would report figures under another configuration than the server's is stopped too: each server and
 * worker records, at start, a digest of every setting those figures depend on (`recordServerSettings`), and the
 * commands compare theirs with it (`checkServerSettings`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import type pg from 'pg';
import { ConfigError, loadConfig, type Config } from './config.ts';
// The defaults every chain adapter applies (README, CONFIRMATIONS).
import { DEVNET_DEFAULT_CONFIRMATIONS } from './adapters/chains/devnet.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The process's variables over ENV_FILE's; an unreadable file is a ConfigError naming ENV_FILE. */
export function readEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const file = env.ENV_FILE;
  if (file === undefined || file === '') return env;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`ENV_FILE names ${file}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  // The process's own variables win: `LOG_LEVEL=debug npm run worker` beside a file that says info.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  return { ...parseEnv(text), ...present };
}

/** The one way a process gets its configuration (see the top of this file). Throws ConfigError. */
export function loadEnvironmentConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return loadConfig(readEnvironment(env), version);
}

/** The product's version (package.json), as the server announces it. */
export const productVersion = version;

/** Why a start failed, in one line: the operator needs the reason, not a stack trace. The server and the commands say it alike. */
export function startFailure(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === '28P01' || code === '3D000') return `the database is unreachable (${code}): ${error.message}`;
    return `${error.message || error.name}${cause}`;
  }
  return String(error);
}

const SETTINGS_KEY = 'server.settings';

/**
 * The settings a command's figures depend on, by the variable that sets them, each as a digest (some hold passwords:
 * RPC URLs). Defaults are resolved, so an unset CONFIRMATIONS and its default spelled out are the same.
 */
export function figureSettings(config: Config): Record<string, string> {
  const { chains, market } = config;
  const values: Record<string, unknown> = {
    APP_ENV: config.appEnv,
    CHAINS: chains.mode,
    CHAIN_ENV: [chains.env, chains.utxo.testChain],
    CONFIRMATIONS: sorted({ ...DEVNET_DEFAULT_CONFIRMATIONS, ...chains.confirmations }),
    MIN_DEPOSIT: sorted(Object.fromEntries(Object.entries(chains.minDeposit).map(([currency, units]) => [currency, String(units)]))),
    BITCOIN_RPC_URL: chains.utxo.nodes.BITCOIN,
    LITECOIN_RPC_URL: chains.utxo.nodes.LITECOIN,
    DOGECOIN_RPC_URL: chains.utxo.nodes.DOGECOIN,
    ETHEREUM_RPC_URL: chains.evm.rpcUrl,
    ETHEREUM_TOKENS: sorted(chains.evm.tokens),
    TON_API_URL: chains.ton.apiUrl,
    TRON_API_URL: chains.tron.apiUrl,
    TRON_TOKENS: sorted(chains.tron.tokens),
    RATES_SOURCES: [market.source, [...market.exchanges].sort()],
    RATES_SOURCE_URLS: sorted(market.exchangeUrls),
    RATES_FIAT_URLS: sorted(market.fiatUrls),
    RATES_MAX_AGE_SECONDS: market.maxAgeMs,
    RATES_MAX_DEVIATION_BPS: market.maxDeviationBps,
    RATES_MIN_SOURCES: market.minSources,
    RATES_FIAT_MAX_AGE_DAYS: market.fiatMaxAgeMs,
  };
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, createHash('sha256').update(JSON.stringify(value ?? null)).digest('base64url').slice(0, 16)]));
}

function sorted<T>(record: Readonly<Record<string, T>>): [string, T][] {
  return Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
}

/** A server or worker that starts writes the digests of its settings: the commands beside it compare theirs. */
export async function recordServerSettings(pool: pg.Pool, config: Config): Promise<void> {
  const value = { settings: figureSettings(config), version, recordedAt: new Date().toISOString() };
  await pool.query(`INSERT INTO app_setting (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [SETTINGS_KEY, value]);
}

/**
 * Refuses (ConfigError) a command whose settings differ from those the last server or worker started with, naming the
 * variables (never their values: some hold passwords); a database no server has started on since this check exists
 * has nothing to compare with.
 */
export async function checkServerSettings(pool: pg.Pool, config: Config): Promise<void> {
  const stored = await pool.query<{ value: { settings?: Record<string, string> } }>('SELECT value FROM app_setting WHERE key = $1', [SETTINGS_KEY]);
  const theirs = stored.rows[0]?.value.settings;
  if (!theirs) return;
  const ours = figureSettings(config);
  // A setting only one side's version knows is not compared: an older server never recorded it.
  const differ = Object.keys(ours).filter((name) => name in theirs && theirs[name] !== ours[name]).sort();
  if (differ.length === 0) return;
  throw new ConfigError(
    `the server runs with another ${differ.join(', ')} than this command: its figures would not be the server's. Run it in the server's environment (the same variables, or ENV_FILE=<the server's file>)`,
  );
}
