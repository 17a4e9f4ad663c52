import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// `yaml` is in node_modules through @astrojs/check; only this structural check reads YAML.
import { parse } from 'yaml';
import { loadEnvironmentConfig } from '../../../src/server/environment.ts';

/**
 * The deployment recipe (issue 30 item 6; README, "Deployment"), checked without a container runtime: this
 * machine has no Docker daemon and reaches no image registry, so the image is not built here (README says so).
 * The Dockerfile's stages, the compose file's services and the systemd units are read and held to the rules; where
 * `docker-compose` or `systemd-analyze` is installed, they check the files too.
 */
const ROOT = new URL('../../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const has = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

type Service = { image?: string; command?: string[]; environment?: Record<string, string>; ports?: string[]; expose?: string[]; healthcheck?: { test?: string[]; disable?: boolean }; secrets?: string[]; profiles?: string[]; depends_on?: Record<string, unknown> };

describe('the deployment recipe', () => {
  it('builds a multi-stage image that runs as a user of its own on production dependencies, pages built in the image', () => {
    const dockerfile = read('Dockerfile');
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages.map((stage) => /\bAS (\w+)/.exec(stage.split('\n')[0] ?? '')?.[1])).toEqual(['deps', 'build', 'runtime']);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-/m);
    const [deps, build, runtime] = stages as [string, string, string];
    expect(deps).toMatch(/npm ci --omit=dev/);
    expect(build).toMatch(/astro build/);
    expect(runtime).toMatch(/COPY --from=deps \/app\/node_modules/);
    expect(runtime).toMatch(/COPY --from=build \/app\/dist/);
    expect(runtime).not.toMatch(/npm (ci|install)|astro build/);
    expect(runtime).toMatch(/^USER wallet$/m);
    expect(runtime).toMatch(/^CMD \["node", "src\/server\/main\.ts"\]$/m);
    expect(runtime).toMatch(/HEALTHCHECK[\s\S]*\/api\/health/);
    // What the image is built from: never local state, secrets or dependencies of this machine.
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', 'data', '.env*', 'secrets', '.git']) expect(ignored).toContain(entry);
  });

  it('composes PostgreSQL, a gateway without jobs and a worker, with every production setting and no public metrics port', () => {
    const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service>; secrets: Record<string, { file: string }> };
    const { postgres, gateway, worker, signer, litecoind } = compose.services;
    // The seed is the signer's alone: its own secrets file, which neither the gateway nor the worker mounts.
    expect(signer?.command).toEqual(['node', 'src/server/signer/main.ts']);
    expect(signer?.environment?.ENV_FILE).toBe('/run/secrets/signer_env');
    expect(compose.secrets.signer_env?.file).toBe('./secrets/signer.env');
    expect(postgres?.image).toMatch(/^postgres:\d+/);
    expect(gateway?.environment).toMatchObject({ APP_ENV: 'production', WORKERS: 'off', ENV_FILE: '/run/secrets/wallet_env', METRICS_PORT: '9464' });
    expect(gateway?.ports?.some((port) => port.endsWith(':9464'))).toBe(false);
    expect(gateway?.expose).toEqual(['9464']);
    expect(gateway?.healthcheck?.test?.join(' ')).toMatch(/\/api\/ready/);
    expect(gateway?.depends_on).toHaveProperty('postgres');
    expect(worker?.command).toEqual(['node', 'src/server/jobs/main.ts']);
    expect(worker?.environment?.WORKERS).toBeUndefined();
    expect(worker?.environment?.ENV_FILE).toBe('/run/secrets/wallet_env');
    expect(litecoind?.profiles).toEqual(['litecoin']);
    expect(compose.secrets.wallet_env?.file).toBe('./secrets/wallet.env');

    // The secrets file's example with the compose settings is a production start the configuration accepts.
    const example = read('ops/compose/wallet.env.example').replace(/^SIGNER_TOKEN=$/m, `SIGNER_TOKEN=${'2'.repeat(64)}`).replace(/^SECRETS_KEY=$/m, `SECRETS_KEY=${'1'.repeat(64)}`);
    const dir = mkdtempSync(join(tmpdir(), 'wallet-recipe-'));
    try {
      writeFileSync(join(dir, 'wallet.env'), example);
      const environment = Object.fromEntries(Object.entries(gateway?.environment ?? {}).map(([name, value]) => [name, String(value).replace(/\$\{PUBLIC_URL:\?[^}]*\}/, 'https://wallet.example').replace(/\$\{\w+:-([^}]*)\}/, '$1')]));
      const config = loadEnvironmentConfig({ ...environment, ENV_FILE: join(dir, 'wallet.env') });
      expect(config).toMatchObject({ production: true, workers: false, publicUrl: 'https://wallet.example', databaseUrl: 'postgres://wallet:PASSWORD@postgres:5432/wallet' });
      expect(config.operating.metrics).toEqual({ port: 9464, host: '0.0.0.0' });
      expect(config.walletSeed).toBeUndefined();
      expect(config.signer).toEqual({ mode: 'external', socket: undefined, dailyMax: {}, token: '2'.repeat(64) });

      // docker-compose resolves the file as a runtime would (no daemon needed), where it is installed.
      if (has('docker-compose')) {
        cpSync(join(ROOT, 'compose.yaml'), join(dir, 'compose.yaml'));
        mkdirSync(join(dir, 'secrets'));
        for (const name of ['wallet.env', 'postgres_password', 'litecoin.conf']) writeFileSync(join(dir, 'secrets', name), '');
        const resolved = execFileSync('docker-compose', ['-f', join(dir, 'compose.yaml'), 'config'], { env: { ...process.env, PUBLIC_URL: 'https://wallet.example' }, encoding: 'utf8' });
        expect(resolved).toMatch(/WORKERS: "off"|WORKERS: 'off'/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('offers systemd units for the gateway and the worker reading the same ENV_FILE', () => {
    const gateway = read('ops/systemd/wallet-gateway.service');
    const worker = read('ops/systemd/wallet-worker.service');
    for (const unit of [gateway, worker]) {
      expect(unit).toMatch(/^User=wallet$/m);
      expect(unit).toMatch(/^Environment=ENV_FILE=\/etc\/wallet\/wallet\.env$/m);
      expect(unit).not.toMatch(/^ExecStart=.*\bnpm\b/m);
    }
    expect(gateway).toMatch(/^ExecStart=\S+node src\/server\/main\.ts$/m);
    expect(gateway).toMatch(/^Environment=WORKERS=off$/m);
    expect(worker).toMatch(/^ExecStart=\S+node src\/server\/jobs\/main\.ts$/m);
    if (has('systemd-analyze')) {
      // Structure only: /opt/wallet is not installed here, so the check of ExecStart's binary is left out.
      const output = execFileSync('sh', ['-c', `systemd-analyze verify ${join(ROOT, 'ops/systemd/wallet-gateway.service')} ${join(ROOT, 'ops/systemd/wallet-worker.service')} 2>&1 || true`], { encoding: 'utf8' });
      expect(output.split('\n').filter((line) => line && !/is not executable|No such file|Command .* is not executable|Failed to prepare filename/.test(line))).toEqual([]);
    }
  });
});
