import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CENTRAL_BANKS,
  fetchCentralBankRates,
  parseBankOfCanada,
  parseCbar,
  parseCbr,
  parseEcb,
  parseNbk,
  parseNbu,
  type FiatRate,
} from '../../../../../src/server/adapters/rates/central-banks.ts';

const FIXTURES = new URL('../../../../fixtures/central-banks/', import.meta.url);
const bytes = (name: string) => readFileSync(new URL(name, FIXTURES));
const text = (name: string) => bytes(name).toString('utf8');

const ECB_XML = text('ecb-eurofxref-daily.xml');
const BOC_JSON = text('boc-valet-FXUSDCAD.json');
const NBK_XML = text('nbk-rates_all.xml');
const NBU_JSON = text('nbu-exchange-USD.json');
const CBAR_XML = text('cbar-24.01.2025.xml');
const CBR_BYTES = bytes('cbr-XML_daily.xml');
const CBR_XML = new TextDecoder('windows-1251').decode(CBR_BYTES);

/** What each recorded document must give, worked out by hand (8 decimals, half-up). */
const EXPECTED: Record<string, FiatRate> = {
  // ECB: USD 1.0512 per EUR, so EUR per USD = 1 / 1.0512 = 0.95129375|95... -> rounds up to 0.95129376.
  EUR: { fiat: 'EUR', perUsd: 95_129_376n, date: '2025-01-24', source: 'ecb' },
  // Bank of Canada: FXUSDCAD 1.4335 CAD per USD -> 1.43350000.
  CAD: { fiat: 'CAD', perUsd: 143_350_000n, date: '2025-01-24', source: 'boc' },
  // NBK: USD item 502.37 KZT per quant 1 -> 502.37000000 (AMD /10, UZS /100, IRR /1000 around it are not picked).
  KZT: { fiat: 'KZT', perUsd: 50_237_000_000n, date: '2025-01-24', source: 'nbk' },
  // NBU: rate 41.5012 UAH per USD (a JSON number, read from its source text) -> 41.50120000.
  UAH: { fiat: 'UAH', perUsd: 4_150_120_000n, date: '2025-01-24', source: 'nbu' },
  // CBAR: Valute USD 1.7 AZN per Nominal 1 -> 1.70000000 (XAU "1 t.u." and RUB per 100 around it are not picked).
  AZN: { fiat: 'AZN', perUsd: 170_000_000n, date: '2025-01-24', source: 'cbar' },
  // Bank of Russia: Value 101,6797 RUB per Nominal 1 (comma decimals) -> 101.67970000.
  RUB: { fiat: 'RUB', perUsd: 10_167_970_000n, date: '2025-01-24', source: 'cbr' },
};

describe('the recorded central bank documents', () => {
  it('parses the ECB daily reference rates (an inverse, half-up)', () => {
    expect(parseEcb(ECB_XML)).toEqual(EXPECTED.EUR);
  });

  it('parses the Bank of Canada Valet FXUSDCAD observations', () => {
    expect(parseBankOfCanada(BOC_JSON)).toEqual(EXPECTED.CAD);
  });

  it('parses the National Bank of Kazakhstan RSS', () => {
    expect(parseNbk(NBK_XML)).toEqual(EXPECTED.KZT);
  });

  it('parses the National Bank of Ukraine exchange JSON', () => {
    expect(parseNbu(NBU_JSON)).toEqual(EXPECTED.UAH);
  });

  it('parses the Central Bank of Azerbaijan bulletin', () => {
    expect(parseCbar(CBAR_XML)).toEqual(EXPECTED.AZN);
  });

  it('parses the Bank of Russia daily XML, recorded as genuine windows-1251 bytes', () => {
    expect(CBR_XML.startsWith('<?xml version="1.0" encoding="windows-1251"?>')).toBe(true);
    expect(CBR_XML).toContain('<Name>Доллар США</Name>');
    // Cyrillic is one byte each (Д is 0xC4 in windows-1251), so the bytes are not UTF-8.
    expect(CBR_BYTES.includes(Buffer.from([0xc4, 0xee, 0xeb, 0xeb, 0xe0, 0xf0]))).toBe(true);
    expect(CBR_BYTES.toString('utf8')).not.toContain('Доллар');
    expect(parseCbr(CBR_XML)).toEqual(EXPECTED.RUB);
  });

  it('names every default endpoint', () => {
    const day = new Date('2025-01-24T10:00:00Z');
    expect(Object.fromEntries(Object.values(CENTRAL_BANKS).map((bank) => [bank.fiat, bank.url(day)]))).toEqual({
      EUR: 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml',
      CAD: 'https://www.bankofcanada.ca/valet/observations/FXUSDCAD/json?recent=1',
      KZT: 'https://nationalbank.kz/rss/rates_all.xml',
      UAH: 'https://bank.gov.ua/NBUStatService/v1/statdirectory/exchange?valcode=USD&json',
      AZN: 'https://www.cbar.az/currencies/24.01.2025.xml',
      RUB: 'https://www.cbr.ru/scripts/XML_daily.asp',
    });
    // CBAR's bulletin is named by the day in Baku (UTC+4): 21:00 UTC on the 24th is already the 25th there.
    expect(CENTRAL_BANKS.AZN.url(new Date('2025-01-24T21:00:00Z'))).toBe('https://www.cbar.az/currencies/25.01.2025.xml');
  });
});

describe('exact arithmetic', () => {
  it('divides by the nominal, rounding half-up at 8 decimals', () => {
    // 10167,97 RUB per 100 USD = 101.6797 per USD, the same as the recorded Nominal 1.
    const per100 = CBR_XML.replace('<Nominal>1</Nominal><Name>Доллар США</Name><Value>101,6797</Value>', '<Nominal>100</Nominal><Name>Доллар США</Name><Value>10167,97</Value>');
    expect(parseCbr(per100).perUsd).toBe(10_167_970_000n);
    // 200 KZT per 3 USD = 66.666666666... -> 66.66666667 (up); 100 per 3 = 33.333333333... -> 33.33333333 (down).
    expect(parseNbk(NBK_XML.replace('<description>502.37</description>\n\t\t\t<quant>1</quant>', '<description>200</description>\n\t\t\t<quant>3</quant>')).perUsd).toBe(6_666_666_667n);
    expect(parseNbk(NBK_XML.replace('<description>502.37</description>\n\t\t\t<quant>1</quant>', '<description>100</description>\n\t\t\t<quant>3</quant>')).perUsd).toBe(3_333_333_333n);
    // CBAR per 10 USD: 17 AZN -> 1.7.
    expect(parseCbar(CBAR_XML.replace('<Nominal>1</Nominal>\n            <Name>1 ABŞ dolları</Name>\n            <Value>1.7</Value>', '<Nominal>10</Nominal><Value>17</Value>')).perUsd).toBe(170_000_000n);
  });

  it('inverts the ECB rate half-up: down, up and an exact half', () => {
    const ecb = (rate: string) => parseEcb(ECB_XML.replace("rate='1.0512'", `rate='${rate}'`)).perUsd;
    expect(ecb('1.2')).toBe(83_333_333n); // 0.83333333|33 -> down
    expect(ecb('1.03')).toBe(97_087_379n); // 0.97087378|64 -> up
    expect(ecb('512')).toBe(195_313n); // 1/512 = 0.00195312|5 exactly -> half rounds up
    expect(ecb('0.5')).toBe(200_000_000n);
  });

  it('keeps a JSON number exact, exponent included', () => {
    expect(parseNbu(NBU_JSON.replace('"rate":41.5012', '"rate":4.15012e1')).perUsd).toBe(4_150_120_000n);
    expect(parseNbu(NBU_JSON.replace('"rate":41.5012', '"rate":41.50123456789')).perUsd).toBe(4_150_123_457n);
  });
});

describe('format tolerance', () => {
  it('reads ECB cubes whatever the attribute order, quote style and whitespace', () => {
    const shuffled = ECB_XML.replace("<Cube time='2025-01-24'>", '<Cube\n  time="2025-01-24" >').replace("<Cube currency='USD' rate='1.0512'/>", '<Cube  rate = "1.0512"\tcurrency="USD" />');
    expect(parseEcb(shuffled)).toEqual(EXPECTED.EUR);
  });

  it('reads NBK items with CDATA, a two-digit year and the dated form of the feed', () => {
    const cdata = NBK_XML.replace('<description>502.37</description>', '<description><![CDATA[ 502.37 ]]></description>').replace('<pubDate>24.01.2025</pubDate>\n\t\t\t<description><![CDATA', '<pubDate>24.01.25</pubDate>\n\t\t\t<description><![CDATA');
    expect(parseNbk(cdata)).toEqual(EXPECTED.KZT);
    const dated = '<?xml version="1.0" encoding="utf-8"?><rates><date>24.01.2025</date><item><fullname>ДОЛЛАР США</fullname><title>USD</title><description>502.37</description><quant>1</quant><index/><change>0.00</change></item></rates>';
    expect(parseNbk(dated)).toEqual(EXPECTED.KZT);
  });

  it('takes the latest Bank of Canada observation that has a value', () => {
    const several = '{"observations":[{"d":"2025-01-22","FXUSDCAD":{"v":"1.4401"}},{"d":"2025-01-24","FXUSDCAD":{"v":"1.4335"}},{"d":"2025-01-27","FXUSDCAD":{"v":""}}]}';
    expect(parseBankOfCanada(several)).toEqual(EXPECTED.CAD);
  });
});

describe('malformed documents', () => {
  const banks = [
    { name: 'European Central Bank', parse: parseEcb, doc: ECB_XML, rate: ["rate='1.0512'", (v: string) => `rate='${v}'`], usd: ["currency='USD'", "currency='XXX'"] },
    { name: 'Bank of Canada', parse: parseBankOfCanada, doc: BOC_JSON, rate: ['"v":"1.4335"', (v: string) => `"v":"${v}"`], usd: ['"v":"1.4335"', '"v":""'] },
    { name: 'National Bank of Kazakhstan', parse: parseNbk, doc: NBK_XML, rate: ['<description>502.37</description>', (v: string) => `<description>${v}</description>`], usd: ['<title>USD</title>', '<title>XXX</title>'] },
    { name: 'National Bank of Ukraine', parse: parseNbu, doc: NBU_JSON, rate: ['"rate":41.5012', (v: string) => `"rate":${v}`], usd: ['"r030":840,"txt":"Долар США","rate":41.5012,"cc":"USD"', '"r030":978,"txt":"Євро","rate":43.6,"cc":"EUR"'] },
    { name: 'Central Bank of Azerbaijan', parse: parseCbar, doc: CBAR_XML, rate: ['<Value>1.7</Value>', (v: string) => `<Value>${v}</Value>`], usd: ['Code="USD"', 'Code="XXX"'] },
    { name: 'Bank of Russia', parse: parseCbr, doc: CBR_XML, rate: ['<Value>101,6797</Value>', (v: string) => `<Value>${v.replace('.', ',')}</Value>`], usd: ['<CharCode>USD</CharCode>', '<CharCode>XXX</CharCode>'] },
  ] as const;

  for (const bank of banks) {
    it(`${bank.name}: refuses empty, garbage, HTML, no USD, zero and negative rates, naming the bank`, () => {
      const named = new RegExp(`^${bank.name}: `);
      const [rateText, withRate] = bank.rate;
      const html = '<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1></body></html>';
      expect(() => bank.parse('')).toThrow(named);
      expect(() => bank.parse('   \n')).toThrow(/empty/);
      expect(() => bank.parse('garbage \u0000 ~~~')).toThrow(named);
      expect(() => bank.parse(html)).toThrow(new RegExp(`^${bank.name}: got an HTML page`));
      expect(() => bank.parse(bank.doc.replace(bank.usd[0], bank.usd[1]))).toThrow(new RegExp(`^${bank.name}: no USD rate`));
      expect(() => bank.parse(bank.doc.replace(rateText, withRate('0')))).toThrow(new RegExp(`^${bank.name}: the USD rate is not a positive rate`));
      expect(() => bank.parse(bank.doc.replace(rateText, withRate('0.0000')))).toThrow(/not a positive rate/);
      expect(() => bank.parse(bank.doc.replace(rateText, withRate('-1.5')))).toThrow(named);
      expect(() => bank.parse(bank.doc.replace(rateText, withRate('1.2.3')))).toThrow(named);
    });
  }

  it('refuses a date that is no calendar day', () => {
    expect(() => parseCbr(CBR_XML.replace('Date="24.01.2025"', 'Date="31.02.2025"'))).toThrow(/^Bank of Russia: not a calendar date/);
    expect(() => parseEcb(ECB_XML.replace("time='2025-01-24'", "time='yesterday'"))).toThrow(/^European Central Bank: no date/);
  });
});

describe('fetchCentralBankRates', () => {
  let server: Server;
  let base: string;
  const requested: string[] = [];

  /** The recorded document per source, served under /<source>/<the default URL's path and query>. */
  const served: Record<string, { path: string; type: string; body: Buffer }> = {
    ecb: { path: '/stats/eurofxref/eurofxref-daily.xml', type: 'text/xml', body: bytes('ecb-eurofxref-daily.xml') },
    boc: { path: '/valet/observations/FXUSDCAD/json?recent=1', type: 'application/json', body: bytes('boc-valet-FXUSDCAD.json') },
    nbk: { path: '/rss/rates_all.xml', type: 'application/xml', body: bytes('nbk-rates_all.xml') },
    nbu: { path: '/NBUStatService/v1/statdirectory/exchange?valcode=USD&json', type: 'application/json; charset=utf-8', body: bytes('nbu-exchange-USD.json') },
    cbar: { path: '/currencies/24.01.2025.xml', type: 'text/xml', body: bytes('cbar-24.01.2025.xml') },
    // No charset in the header: the XML declaration's windows-1251 must decide.
    cbr: { path: '/scripts/XML_daily.asp', type: 'application/xml', body: CBR_BYTES },
  };

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const url = request.url ?? '/';
    requested.push(url);
    const [, head = '', ...rest] = url.split('/');
    const tail = `/${rest.join('/')}`;
    if (head === 'hang') return; // never answers: the caller's timeout must end it
    if (head === 'fail500') {
      response.writeHead(500, { 'content-type': 'text/html' }).end('<html><body>Internal Server Error</body></html>');
      return;
    }
    const document = served[head];
    if (!document || document.path !== tail) {
      response.writeHead(404).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': document.type }).end(document.body);
  };

  beforeAll(async () => {
    server = createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const baseUrls = () => Object.fromEntries(Object.keys(served).map((source) => [source, `${base}/${source}/`]));
  const now = new Date('2025-01-24T10:00:00Z');

  it('fetches and parses all six, keeping each default path and query under the base URL', async () => {
    requested.length = 0;
    const result = await fetchCentralBankRates({ baseUrls: baseUrls(), now, timeoutMs: 5_000 });
    expect(result.errors).toEqual([]);
    expect(result.rates).toEqual([EXPECTED.EUR, EXPECTED.CAD, EXPECTED.KZT, EXPECTED.UAH, EXPECTED.AZN, EXPECTED.RUB]);
    expect(requested.sort()).toEqual(Object.entries(served).map(([source, { path }]) => `/${source}${path}`).sort());
  });

  it('reports a bank answering 500 and one hanging past the timeout, returning the others', async () => {
    const started = Date.now();
    const result = await fetchCentralBankRates({ baseUrls: { ...baseUrls(), nbu: `${base}/fail500`, cbar: `${base}/hang` }, now, timeoutMs: 400 });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(result.rates).toEqual([EXPECTED.EUR, EXPECTED.CAD, EXPECTED.KZT, EXPECTED.RUB]);
    expect(result.errors).toHaveLength(2);
    expect(result.errors[0]).toMatchObject({ source: 'nbu', fiat: 'UAH', error: expect.stringMatching(/^National Bank of Ukraine: HTTP 500 from http:\/\/127\.0\.0\.1:\d+\/fail500\/NBUStatService/) });
    expect(result.errors[1]).toMatchObject({ source: 'cbar', fiat: 'AZN', error: expect.stringMatching(/^Central Bank of Azerbaijan: .*(timeout|aborted)/i) });
  });

  it('fetches only the fiats asked for', async () => {
    requested.length = 0;
    const result = await fetchCentralBankRates({ baseUrls: baseUrls(), now, only: ['rub', 'EUR'] });
    expect(result).toEqual({ rates: [EXPECTED.EUR, EXPECTED.RUB], errors: [] });
    expect(requested).toHaveLength(2);
  });

  it('uses the given fetch, decodes by the Content-Type charset and reports a document that does not parse', async () => {
    const fake: typeof fetch = async (input) => {
      const url = String(input);
      if (url.endsWith('/scripts/XML_daily.asp')) return new Response(CBR_BYTES, { headers: { 'content-type': 'application/xml; charset=windows-1251' } });
      if (url.endsWith('/rss/rates_all.xml')) return new Response(NBK_XML, { headers: { 'content-type': 'application/xml; charset=x-no-such-charset' } });
      return new Response('<html><body>Maintenance</body></html>', { headers: { 'content-type': 'text/html' } });
    };
    const result = await fetchCentralBankRates({ fetch: fake, now, only: ['RUB', 'KZT', 'CAD'] });
    expect(result.rates).toEqual([EXPECTED.RUB]);
    expect(result.errors).toEqual([
      { source: 'boc', fiat: 'CAD', error: 'Bank of Canada: got an HTML page, not the rates document' },
      { source: 'nbk', fiat: 'KZT', error: 'National Bank of Kazakhstan: unsupported charset "x-no-such-charset"' },
    ]);
  });
});
