/**
 * /sandbox/devnet: the devnet's faucet and explorer, on only while the devnet stands in for real chains.
 *
 * POST /sandbox/devnet/deposit { currency, address, amount } → 201 { network, currency, txHash, outputIndex, fromAddress,
 *   toAddress, amount, blockHeight, explorerUrl }  (what `npm run devnet -- deposit` does, for tests and demos)
 * GET  /sandbox/devnet/tx/:hash → an explorer page of one transaction (the coins' urlScan points here)
 * GET  /sandbox/devnet/heights → { [network]: height }
 * POST /sandbox/devnet/fail { currency, address, mode?: REJECT | DROP } → 201: the next broadcast to the address is
 *   refused (REJECT, the default) or accepted and never mined (DROP); either way that withdrawal ends FAILED
 * GET  /sandbox/devnet/broadcasts/:hash → { txHash, broadcasts: [{ outcome, at }] } (how often a hash was sent)
 */
import { Hono } from 'hono';
import { html } from 'hono/html';
import { z } from 'zod';
import type { DevnetControls } from '../adapters/chains/port.ts';
import { DomainError } from '../domain/errors.ts';
import { readJsonBody } from './json-body.ts';

const depositBody = z.object({
  currency: z.string().trim().min(1).max(32),
  address: z.string().trim().min(1).max(200),
  amount: z.string().trim().min(1).max(40),
});

const failBody = z.object({
  currency: z.string().trim().min(1).max(32),
  address: z.string().trim().min(1).max(200),
  mode: z.enum(['REJECT', 'DROP']).default('REJECT'),
});

export function createDevnetSandbox(chain: DevnetControls): Hono {
  const app = new Hono();
  // The devnet's refusals (unknown currency, bad address or amount) are the caller's mistake: 400 with its problem.
  const refused = (error: unknown): unknown => {
    const refusal = chain.refusalOf(error);
    return refusal ? new DomainError(refusal.problem, refusal.message, { cause: error }) : error;
  };

  app.post('/fail', async (c) => {
    const body = failBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    try {
      return c.json(await chain.failNext(body), 201);
    } catch (error) {
      throw refused(error);
    }
  });

  app.get('/broadcasts/:hash', async (c) => {
    const txHash = c.req.param('hash');
    return c.json({ txHash, broadcasts: await chain.broadcasts(txHash) });
  });

  app.post('/deposit', async (c) => {
    const body = depositBody.parse(await readJsonBody(c.req.raw, { empty: {} }));
    try {
      return c.json(await chain.send({ currency: body.currency, toAddress: body.address, amount: body.amount }), 201);
    } catch (error) {
      throw refused(error);
    }
  });

  app.get('/heights', async (c) => c.json(await chain.heights()));

  app.get('/tx/:hash', async (c) => {
    const tx = await chain.findTransaction(c.req.param('hash'));
    if (!tx) return c.html(page('Transaction not found', html`<p>No devnet transaction has this hash.</p>`), 404);
    const state = tx.confirmations === 0 ? 'in the mempool' : `${tx.confirmations} confirmation${tx.confirmations === 1 ? '' : 's'}`;
    return c.html(
      page(
        `${tx.network} devnet transaction`,
        html`<dl>
          <dt>Hash</dt><dd><code>${tx.txHash}</code></dd>
          <dt>Amount</dt><dd>${tx.amount} ${tx.currency}</dd>
          <dt>From</dt><dd><code>${tx.fromAddress}</code></dd>
          <dt>To</dt><dd><code>${tx.toAddress}</code></dd>
          <dt>Block</dt><dd>${tx.blockHeight} (chain height ${tx.height})</dd>
          <dt>Status</dt><dd>${state}; deposits are credited at ${tx.requiredConfirmations}</dd>
          <dt>Sent</dt><dd>${tx.createdAt.toISOString()}</dd>
        </dl>`,
      ),
    );
  });
  return app;
}

function page(title: string, body: ReturnType<typeof html>) {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}</title>
        <style>
          body { font: 15px/1.5 system-ui, sans-serif; max-width: 540px; margin: 2rem auto; padding: 0 1rem; }
          dt { color: #666; margin-top: .6rem; } dd { margin: 0; word-break: break-all; }
        </style>
      </head>
      <body>
        <h1>${title}</h1>
        <p>Devnet: a simulated chain inside this wallet, not a real network.</p>
        ${body}
      </body>
    </html>`;
}
