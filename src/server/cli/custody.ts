/**
 * npm run custody -- <command>: the custodian's view of the chains, beside a running server.
 *   balances                                    per network and currency: the ledger's liability to users, the
 *                                               custody's position (−WORLD), what the node says its outputs hold,
 *                                               uncredited outputs; exits 1 when they do not match
 *   exposure                                    the swap desk's net position per asset (inventory less funding, plus
 *                                               hedges) in units and USD, its hedges, and per currency the
 *                                               withdrawal fees users paid against what the networks charged
 *   fund-desk <currency> <amount> [key]         books coins the operator sent to the hot wallet as the desk's
 *                                               inventory (only what the chain holds beyond the ledger's position)
 *   fund-gas <network> <amount> [key]           books the network's coin the operator sent to the hot wallet as its
 *                                               gas float (ETHEREUM, TRON, TON; the same check)
 *   sweep-to-cold <currency> <address> <amount> [key]
 *                                               sends the custody's coins to a cold address (booked once confirmed);
 *                                               the same command again is the same movement (its key defaults to
 *                                               currency, address and amount)
 *   reserves                                    publishes a proof of reserves (domain/reserves.ts): the users'
 *                                               Merkle sum tree and every holding address's signature; prints its
 *                                               id, root, totals against holdings, and where it is served
 */
import { formatUnits } from '../../lib/amount.ts';
import { findCoin } from '../../lib/currencies.ts';
import { custodyBalances } from '../domain/custody-balances.ts';
import { CustodyMovementError, sweepToCold } from '../domain/custody-movements.ts';
import { deskExposure, feeCoverage, formatAsset, formatUsd, toAsset, usdValue } from '../domain/market/exposure.ts';
import { fundDeskFromChain } from '../domain/market/desk-funding.ts';
import { CustodyFundingError } from '../domain/custody-funding.ts';
import { fundGasFromChain } from '../domain/gas-float.ts';
import { publishReserves } from '../domain/reserves.ts';
import { signReserveMessage } from '../adapters/keys/reserve-signer.ts';
import { startFailure } from '../environment.ts';
import { openTool, openToolCustody, toolFail } from './tool.ts';
import { unitsFromRow } from '../db/amounts.ts';
import type { Units } from '../../lib/money.ts';

const USAGE = `usage: npm run custody -- balances
       npm run custody -- exposure
       npm run custody -- fund-desk <currency> <amount> [key]
       npm run custody -- fund-gas <network> <amount> [key]
       npm run custody -- sweep-to-cold <currency> <address> <amount> [key]
       npm run custody -- reserves`;

const [command, ...args] = process.argv.slice(2);
const ARITY: Record<string, [number, number]> = { balances: [0, 0], exposure: [0, 0], 'fund-desk': [2, 3], 'fund-gas': [2, 3], 'sweep-to-cold': [3, 4], reserves: [0, 0] };
const arity = command === undefined ? undefined : ARITY[command];
if (!arity || args.length < arity[0] || args.length > arity[1]) toolFail(USAGE);

const tool = await openTool();
const { database } = tool;
const custody = await openToolCustody(tool, 'command');
let code = 0;
const shown = (currency: string, units: bigint | undefined) => (units === undefined ? 'n/a' : formatUnits(units, findCoin(currency)?.decimals ?? 0));
try {
  if (command === 'balances') {
    const rows = await custodyBalances(database.pool, custody.chain);
    process.stdout.write(`${['NETWORK', 'CURRENCY', 'USERS', 'DESK', 'FEES', 'GAS', 'OTHER', 'POSITION', 'HOLDINGS', 'UNCREDITED', 'DIFFERENCE', 'COLD', 'IN_FLIGHT', 'STATUS'].join('\t')}\n`);
    for (const row of rows) {
      const status = row.holdingsError ? `ERROR: ${row.holdingsError.split('\n')[0]}` : row.matches === undefined ? 'n/a' : row.matches ? 'ok' : row.inFlight > 0 ? 'in flight' : 'MISMATCH';
      if (status === 'MISMATCH' || row.holdingsError) code = 1;
      const other = row.position - row.liability - row.desk - row.fees - row.gasFloat;
      const cells = [row.network, row.currency, shown(row.currency, row.liability), shown(row.currency, row.desk), shown(row.currency, row.fees), shown(row.currency, row.gasFloat), shown(row.currency, other), shown(row.currency, row.position), shown(row.currency, row.holdings), shown(row.currency, row.uncredited), shown(row.currency, row.difference), shown(row.currency, row.cold), String(row.inFlight), status];
      process.stdout.write(`${cells.join('\t')}\n`);
    }
  } else if (command === 'exposure') {
    const table = await custody.rates.prices();
    process.stdout.write(`${['ASSET', 'INVENTORY', 'FUNDED', 'HEDGED', 'NET', 'NET_USD'].join('\t')}\n`);
    let total = 0n;
    for (const row of await deskExposure(database.pool, table)) {
      if (row.usd !== undefined) total += row.usd;
      process.stdout.write(`${[row.asset, formatAsset(row.inventory), formatAsset(row.funded), formatAsset(row.hedged), formatAsset(row.net), row.usd === undefined ? 'no price' : formatUsd(row.usd)].join('\t')}\n`);
    }
    process.stdout.write(`TOTAL\t\t\t\t\t${formatUsd(total)}\n\n`);
    process.stdout.write(`${['CURRENCY', 'FEES_PAID', 'NETWORK_COST', 'PAID_USD', 'COST_USD', 'MARGIN_USD'].join('\t')}\n`);
    for (const row of await feeCoverage(database.pool)) {
      const coin = findCoin(row.currency);
      const price = coin ? table.usd[coin.baseCurrency] : undefined;
      const usd = (units: Units) => (coin && price !== undefined ? usdValue(toAsset(units, coin.decimals), price) : undefined);
      const paid = usd(row.paid);
      const cost = usd(row.cost);
      const cells = [row.currency, shown(row.currency, row.paid), shown(row.currency, row.cost), paid === undefined ? 'no price' : formatUsd(paid), cost === undefined ? 'no price' : formatUsd(cost), paid === undefined || cost === undefined ? '' : formatUsd(paid - cost)];
      process.stdout.write(`${cells.join('\t')}\n`);
    }
  } else if (command === 'fund-desk') {
    const [currency = '', amount = '', key] = args;
    const funded = await fundDeskFromChain(database.pool, custody.chain, { currency, amount, key });
    process.stdout.write(`${funded.replayed ? 'already booked' : 'booked'}: ${shown(currency.toUpperCase(), funded.units)} ${currency.toUpperCase()} to the swap desk's inventory\n`);
  } else if (command === 'fund-gas') {
    const [network = '', amount = '', key] = args;
    const funded = await fundGasFromChain(database.pool, custody.chain, { network, amount, key });
    process.stdout.write(`${funded.replayed ? 'already booked (give another key for another top-up)' : 'booked'}: ${shown(funded.currency, funded.units)} ${funded.currency} to the ${funded.network} hot wallet's gas float\n`);
  } else if (command === 'reserves') {
    // The operator's tool loads the seed (as for cold movements): every holding address signs the proof here.
    const keys = custody.keys;
    const proof = await publishReserves(database.pool, { chain: custody.chain, sign: (key, message) => signReserveMessage(keys, key, message), origin: tool.config.publicUrl });
    process.stdout.write(`published proof of reserves ${proof.id} at ${proof.asOf}\n  root ${proof.liabilities.root.hash} over ${proof.liabilities.leaves} users\n  served at ${tool.config.publicUrl}/reserves and ${tool.config.publicUrl}/api/reserves\n`);
    process.stdout.write(`${['CURRENCY', 'LIABILITIES', 'SIGNED_HOLDINGS'].join('\t')}\n`);
    for (const asset of proof.assets) {
      const held = proof.reserves[asset.currency];
      process.stdout.write(`${[asset.currency, shown(asset.currency, BigInt(proof.liabilities.totals[asset.currency] ?? '0')), held === undefined ? 'n/a' : shown(asset.currency, BigInt(held))].join('\t')}\n`);
    }
    for (const network of proof.holdings) process.stdout.write(`${network.network}: ${network.status === 'signed' ? `${network.addresses.length} addresses signed` : 'simulated (devnet): no on-chain holdings to sign'}\n`);
  } else {
    const [currency = '', address = '', amount = '', key] = args;
    const movement = await sweepToCold(database.pool, { chain: custody.chain, addresses: custody.addresses }, { currency, address, amount, key });
    process.stdout.write(
      `${movement.state === 'BROADCAST' ? 'sent' : movement.state.toLowerCase()}: ${shown(movement.currency, unitsFromRow(movement.amount))} ${movement.currency} to ${movement.toAddress}\n` +
        `  tx ${movement.txHash} (movement ${movement.id}, key ${movement.idempotencyKey}); booked once the worker sees its confirmations\n`,
    );
  }
} catch (error) {
  // A refusal, or a node or exchange that does not answer: one line saying so, never a stack trace (issue 30 item 7).
  const known = error instanceof CustodyMovementError || error instanceof CustodyFundingError;
  process.stderr.write(`custody: ${known ? error.message : startFailure(error)}\n`);
  code = 1;
} finally {
  await custody.close();
  await database.close();
}
process.exit(code);
