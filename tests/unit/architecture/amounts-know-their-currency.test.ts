// Amounts that know their currency (issue 34 item 4): an amount column becomes a number only in
// src/server/db/amounts.ts (branded `Units`, src/lib/money.ts), a chain's or provider's answer only where its adapter
// parses it (`unitsOf`), and no amount is declared a plain bigint. What the plain-bigint rule still finds is listed
// below with why it is not an amount; a new plain amount, or a listed line that changed, fails here.
import { describe, expect, it } from 'vitest';
import { code, hits as hitsIn, sourceFiles } from '../../support/source-scan.ts';

const files = sourceFiles('src/server').filter(({ file }) => file !== 'src/server/db/amounts.ts');
/** Outside the adapters: there a `BigInt(` of an answer's field is the parse of a node's or provider's JSON, branded with `unitsOf` on the spot. */
const beyondAdapters = files.filter(({ file }) => !file.startsWith('src/server/adapters/'));

/** `file:line  text` of every match of `pattern` (in the files above unless given others). */
const hits = (pattern: RegExp, within = files) => hitsIn(pattern, within);
/** The same without the line number, so the list below survives edits elsewhere in a file. */
const unplaced = (found: readonly string[]) => found.map((hit) => hit.replace(/:\d+ {2}/, '  '));

/**
 * `BigInt(` of a row's or a record's amount-like field (`row.amount`, `order.fiatAmount`, `found.rows[0]?.total`): a
 * read site converting a column itself.
 */
const ROW_BIGINT = /BigInt\(\s*(?:[\w.]*\.rows\[|\w+\??\.\w*(?:amount|Amount|fee|Fee|total|Total|units|Units|balance|Balance|available|held)\b)/;
/** An amount-like name declared a plain bigint (a field, a parameter, a variable): `amount: bigint`, `fee?: bigint`. */
const PLAIN_AMOUNT = /\b\w*(?:amount|Amount|fee|Fee|units|Units|total|Total)\w*\??: bigint\b/;

/** What PLAIN_AMOUNT finds that is not an amount of a currency (issue 34 item 4 started at 101 plain amounts). */
const NOT_AMOUNTS: Record<string, string> = {
  'src/server/metrics/metrics.ts  units: bigint': 'a formatter: reads any integer at given decimals, makes no amount',
  'src/server/cli/custody.ts  units: bigint': 'a formatter for the report, as above',
  'src/server/domain/signing-cap.ts  units: bigint': 'a formatter for a refusal message, as above',
  'src/server/domain/buy/onramp.ts  units: bigint': 'effectiveRate reads cents and coin units into a rate; it makes no amount',
  'src/server/adapters/rates/central-banks.ts  units: bigint': 'an exact decimal of a central bank rate (units and scale), not money',
  'src/server/adapters/rates/exchanges.ts  units: bigint': 'an exact decimal of an exchange price, not money',
  'src/server/adapters/chains/utxo/networks.ts  defaultMaxFeeRate: bigint': 'a fee rate (sat/vB), not an amount',
  'src/server/adapters/chains/utxo/outputs.ts  feeRate: bigint': 'a fee rate (sat/vB), not an amount',
  'src/server/adapters/chains/utxo/wallet.ts  maxFeeRate: bigint': 'a fee rate (sat/vB), not an amount',
  'src/server/adapters/chains/evm/fees.ts  maxFeePerGas: bigint': 'a gas price (wei per gas), not an amount',
  'src/server/adapters/chains/evm/fees.ts  maxPriorityFeePerGas: bigint': 'a gas price (wei per gas), not an amount',
};

describe('amounts know their currency', () => {
  it('finds what it looks for (the patterns bite on a sample)', () => {
    const sample = [
      {
        file: 'sample.ts',
        text: code(
          "const a = BigInt(row.amount);\n// BigInt(row.fee) in prose\nreturn BigInt(row.rows[0]?.total ?? '0');\ntype T = { amount: bigint; fee?: bigint; at: bigint };\nconst n = BigInt(10);\nconst u = unitsFromRow(row.amount, 'amount');\nconst c = BigInt(order.fiatAmount) + BigInt(found.rows[0]?.n);",
        ),
      },
    ];
    expect(hits(ROW_BIGINT, sample)).toEqual(['sample.ts:1  BigInt(row.amount', 'sample.ts:3  BigInt(row.rows[', 'sample.ts:7  BigInt(order.fiatAmount', 'sample.ts:7  BigInt(found.rows[']);
    expect(hits(PLAIN_AMOUNT, sample)).toEqual(['sample.ts:4  amount: bigint', 'sample.ts:4  fee?: bigint']);
  });

  it('converts no amount column outside src/server/db/amounts.ts', () => {
    expect(hits(ROW_BIGINT, beyondAdapters)).toEqual([]);
  });

  it('the adapters convert no amount column themselves either: only a nonce and a fee rate, which are no amounts', () => {
    const rowsRead = unplaced(hits(/BigInt\(\s*(?:\w*[rR]ows?\w*|r)(?:\.rows\[0\])?\??[.[]/, files.filter(({ file }) => file.startsWith('src/server/adapters/'))));
    expect(rowsRead).toEqual(['src/server/adapters/chains/evm/nonces.ts  BigInt(row.', 'src/server/adapters/chains/utxo/outputs.ts  BigInt(r.']);
  });

  it('declares no amount a plain bigint: what the rule finds is only what is listed as no amount, and all of it is still there', () => {
    const found = unplaced(hits(PLAIN_AMOUNT));
    expect([...new Set(found)].sort()).toEqual(Object.keys(NOT_AMOUNTS).sort());
  });
});
