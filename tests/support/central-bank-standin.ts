import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The six central banks' published daily documents, recorded (tests/fixtures/central-banks), served on loopback:
 * `urls` is what RATES_FIAT_URLS takes, so a server in exchanges mode never reaches for a real bank.
 */
const FILES: Record<string, [file: string, type: string]> = {
  ecb: ['ecb-eurofxref-daily.xml', 'text/xml'],
  boc: ['boc-valet-FXUSDCAD.json', 'application/json'],
  nbk: ['nbk-rates_all.xml', 'application/rss+xml'],
  nbu: ['nbu-exchange-USD.json', 'application/json'],
  cbar: ['cbar-24.01.2025.xml', 'text/xml'],
  cbr: ['cbr-XML_daily.xml', 'application/xml'],
};

export async function startCentralBankStandIn(): Promise<{ urls: Record<string, string>; close: () => Promise<void> }> {
  const bodies = Object.fromEntries(Object.entries(FILES).map(([source, [file, type]]) => [source, { type, body: readFileSync(new URL(`../fixtures/central-banks/${file}`, import.meta.url)) }]));
  const server = createServer((request, response) => {
    const source = (request.url ?? '/').split('/')[1] ?? '';
    const document = bodies[source];
    if (!document) return void response.writeHead(404).end('not found');
    response.writeHead(200, { 'content-type': document.type }).end(document.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urls: Object.fromEntries(Object.keys(FILES).map((source) => [source, `${base}/${source}`])),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
