/**
 * npm run custody -- <command>: the custodian's view of the chains, beside a running server.
 *   balances                                    per network and currency: the ledger's liability to users, the
 *                                               custody's position (−WORLD), what the node says its outputs hold,
 *                                               uncredited outputs; exits 1 when they do not match
 *   sweep-to-cold <currency> <address> <amount> [key]
 *                                               sends the custody's coins to a cold address (booked once confirmed);
 *                                               the same command again is the same movement (its key defaults to
 *                                               currency, address and amount)
 */
import { formatUnits } from '../../lib/amount.ts';
import { findCoin } from '../../lib/currencies.ts';
import { openCustody } from '../custody.ts';
import { custodyBalances } from '../domain/custody-balances.ts';
import { CustodyMovementError, sweepToCold } from '../domain/custody-movements.ts';
import { openTool, toolFail } from './tool.ts';

const USAGE = `usage: npm run custody -- balances
       npm run custody -- sweep-to-cold <currency> <address> <amount> [key]`;

const [command, ...args] = process.argv.slice(2);
if (command !== 'balances' && command !== 'sweep-to-cold') toolFail(USAGE);
if (command === 'balances' && args.length !== 0) toolFail(USAGE);
if (command === 'sweep-to-cold' && (args.length < 3 || args.length > 4)) toolFail(USAGE);

const { config, log, database } = await openTool();
const custody = await openCustody(config, log, database.pool, { owner: false });
let code = 0;
const shown = (currency: string, units: bigint | undefined) => (units === undefined ? 'n/a' : formatUnits(units, findCoin(currency)?.decimals ?? 0));
try {
  if (command === 'balances') {
    const rows = await custodyBalances(database.pool, custody.chain);
    process.stdout.write(`${['NETWORK', 'CURRENCY', 'USERS', 'POSITION', 'HOLDINGS', 'UNCREDITED', 'COLD', 'IN_FLIGHT', 'STATUS'].join('\t')}\n`);
    for (const row of rows) {
      const status = row.matches === undefined ? 'n/a' : row.matches ? 'ok' : row.inFlight > 0 ? 'in flight' : 'MISMATCH';
      if (status === 'MISMATCH') code = 1;
      const cells = [row.network, row.currency, shown(row.currency, row.liability), shown(row.currency, row.position), shown(row.currency, row.holdings), shown(row.currency, row.uncredited), shown(row.currency, row.cold), String(row.inFlight), status];
      process.stdout.write(`${cells.join('\t')}\n`);
    }
  } else {
    const [currency = '', address = '', amount = '', key] = args;
    const movement = await sweepToCold(database.pool, { chain: custody.chain, addresses: custody.addresses }, { currency, address, amount, key });
    process.stdout.write(
      `${movement.state === 'BROADCAST' ? 'sent' : movement.state.toLowerCase()}: ${shown(movement.currency, BigInt(movement.amount))} ${movement.currency} to ${movement.toAddress}\n` +
        `  tx ${movement.txHash} (movement ${movement.id}, key ${movement.idempotencyKey}); booked once the worker sees its confirmations\n`,
    );
  }
} catch (error) {
  if (!(error instanceof CustodyMovementError)) throw error;
  process.stderr.write(`custody: ${error.message}\n`);
  code = 1;
} finally {
  await custody.close();
  await database.close();
}
process.exit(code);
