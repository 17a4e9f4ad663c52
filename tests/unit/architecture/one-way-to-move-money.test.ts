// One way to move money (ARCHITECTURE.md, "Orders"; issue 34): outside src/server/domain/orders/ no code writes a
// ledger entry, spells an entry key or moves a state by hand. The counts are read from the source as it stands, so a
// new direct caller fails here (the import of ledger-writes.ts also fails `npm run lint:deps`).
import { describe, expect, it } from 'vitest';
import { code, hits as hitsIn, sourceFiles } from '../../support/source-scan.ts';

const outsideOrders = sourceFiles('src/server').filter(({ file }) => !file.startsWith('src/server/domain/orders/'));

/** `file:line  text` of every match of `pattern` (in the files above unless given others). */
const hits = (pattern: RegExp, within = outsideOrders) => hitsIn(pattern, within);

describe('one way to move money', () => {
  it('finds what it looks for (the patterns bite on a sample)', () => {
    const sample = [{ file: 'sample.ts', text: code("await transfer(db, move);\n// transfer(x) in prose\nawait db.query(`UPDATE sweeps SET state = 'SENT' WHERE id = $1`);\nkey: `sweep:fee:${id}`, reference: `sweep:${id}`") }];
    expect(hits(LEDGER_WRITE, sample)).toEqual(['sample.ts:1  transfer(']);
    expect(hits(SET_STATE, sample)).toEqual(['sample.ts:3  SET state =']);
    expect(hits(ENTRY_KEY, sample)).toEqual(['sample.ts:4  `sweep:fee:']);
  });

  it('writes no ledger entry outside orders/: no direct post, transfer, hold, release or settle', () => {
    // The domain's files: adapters have writes of their own (an RPC's post, a TRC-20 transfer), never the ledger's.
    const domain = outsideOrders.filter(({ file }) => file.startsWith('src/server/domain/') && file !== 'src/server/domain/ledger-writes.ts');
    expect(hits(LEDGER_WRITE, domain)).toEqual([]);
  });

  it('spells no ledger entry key outside orders/entry-keys.ts', () => {
    expect(hits(ENTRY_KEY)).toEqual([]);
  });

  it('moves no state outside orders/: every UPDATE … SET state is the engine’s guarded move', () => {
    expect(hits(SET_STATE)).toEqual([]);
  });
});

/** A call of one of the ledger's writes by its bare name (a method such as `app.post(` is not one). */
const LEDGER_WRITE = /(?<![\w.$])(?:post|transfer|hold|release|settle)\(/;
/** `SET state =` in SQL, as the issue counts it. */
const SET_STATE = /SET\s+state\s*=/i;
/**
 * A template or string starting with one of the ledger's key prefixes (entry-keys.ts). A reference such as
 * `deposit:<id>` or `withdrawal:<id>` is no key; a deposit's own key (`deposit:<network>:…`) cannot be told from
 * one by its spelling, and is built by depositEntryKey alone.
 */
const ENTRY_KEY =
  /[`'](?:(?:withdrawal|swap|sell|buy|adjustment):(?:hold|settle|release|internal|networkFee|reopen|confirm|credit|debit):|deposit-(?:reversal|hold|release|receive-fee):|sweep:(?:fee|top-up-fee|fee-reopen):|cold-sweep:|gas-funding:|desk-funding:)/;
