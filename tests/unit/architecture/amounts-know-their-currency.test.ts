// Amounts that know their currency (issue 34 item 4): an amount column becomes a number only in
// src/server/db/amounts.ts (branded `Units`, src/lib/money.ts), and no new amount is declared a plain bigint. The
// counts are read from the source as it stands and may only fall: lower a ceiling when a conversion lands.
import { describe, expect, it } from 'vitest';
import { code, hits as hitsIn, sourceFiles } from '../../support/source-scan.ts';

const files = sourceFiles('src/server').filter(({ file }) => file !== 'src/server/db/amounts.ts');

/** `file:line  text` of every match of `pattern` (in the files above unless given others). */
const hits = (pattern: RegExp, within = files) => hitsIn(pattern, within);

/** `BigInt(` of a row's field (`row.amount`, `r.total`, `found.rows[0]?.fee`): a read site converting a column itself. */
const ROW_BIGINT = /BigInt\(\s*(?:\w*[rR]ows?\w*|r|hold)(?:\.rows\[0\])?\??[.[]/;
/** An amount-like name declared a plain bigint (a field, a parameter, a variable): `amount: bigint`, `fee?: bigint`. */
const PLAIN_AMOUNT = /\b\w*(?:amount|Amount|fee|Fee|units|Units|total|Total)\w*\??: bigint\b/;

/** Where the counts stand (issue 34 item 4 started at 51 row conversions and 101 plain amounts); they may only fall. */
const CEILING = { rowBigInt: 2, plainAmount: 63 };

describe('amounts know their currency', () => {
  it('finds what it looks for (the patterns bite on a sample)', () => {
    const sample = [
      {
        file: 'sample.ts',
        text: code(
          "const a = BigInt(row.amount);\n// BigInt(row.fee) in prose\nreturn BigInt(row.rows[0]?.total ?? '0');\ntype T = { amount: bigint; fee?: bigint; at: bigint };\nconst n = BigInt(10);\nconst u = unitsFromRow(row.amount, 'amount');",
        ),
      },
    ];
    expect(hits(ROW_BIGINT, sample)).toEqual(['sample.ts:1  BigInt(row.', 'sample.ts:3  BigInt(row.rows[0]?.']);
    expect(hits(PLAIN_AMOUNT, sample)).toEqual(['sample.ts:4  amount: bigint', 'sample.ts:4  fee?: bigint']);
  });

  it('converts no amount column outside src/server/db/amounts.ts beyond the remaining count', () => {
    const found = hits(ROW_BIGINT);
    expect(found.length, found.join('\n')).toBeLessThanOrEqual(CEILING.rowBigInt);
  });

  it('the domain converts no row itself (every domain read goes through db/amounts.ts)', () => {
    expect(hits(ROW_BIGINT, files.filter(({ file }) => file.startsWith('src/server/domain/')))).toEqual([]);
  });

  it('declares no more plain-bigint amounts than it did', () => {
    const found = hits(PLAIN_AMOUNT);
    expect(found.length, found.join('\n')).toBeLessThanOrEqual(CEILING.plainAmount);
  });
});
