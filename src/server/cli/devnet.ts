/**
 * npm run devnet -- <command>: the devnet chains from the terminal, beside a running server.
 *   deposit <currency> <address> <amount>   send a deposit from the devnet faucet to any address
 *   heights                                 the current block height of each network
 *   tx <hash>                               one transaction and its confirmations
 *   fail <currency> <address> [reject|drop] fail the next withdrawal broadcast to the address
 */
import { DevnetError } from '../adapters/chains/devnet.ts';
import { openTool, openToolCustody, toolFail } from './tool.ts';

const USAGE = `usage: npm run devnet -- deposit <currency> <address> <amount>
       npm run devnet -- heights
       npm run devnet -- tx <hash>
       npm run devnet -- fail <currency> <address> [reject|drop]`;

const [command, ...args] = process.argv.slice(2);
if (!command || !['deposit', 'heights', 'tx', 'fail'].includes(command)) toolFail(USAGE);
if (command === 'fail' && (args.length < 2 || args.length > 3 || !['reject', 'drop', undefined].includes(args[2]))) toolFail(USAGE);
if (command === 'deposit' && args.length !== 3) toolFail(USAGE);
if (command === 'tx' && args.length !== 1) toolFail(USAGE);

const tool = await openTool();
const { config, database } = tool;
if (config.chains.mode !== 'devnet') toolFail(`CHAINS=${config.chains.mode}: there is no devnet to send to`);
// The server's composition: the devnet with the server's block time, confirmations and networks.
const custody = await openToolCustody(tool, 'command');
const chain = custody.devnet;
if (!chain) toolFail('every network runs on a node: there is no devnet to send to');
let code = 0;
try {
  if (command === 'deposit') {
    const [currency = '', address = '', amount = ''] = args;
    const receipt = await chain.send({ currency: currency.toUpperCase(), toAddress: address, amount });
    process.stdout.write(
      `sent ${receipt.amount} ${receipt.currency} to ${receipt.toAddress}\n` +
        `  tx ${receipt.txHash} in ${receipt.network} block ${receipt.blockHeight}; credited after ${chain.requiredConfirmations(receipt.network)} confirmation(s)\n` +
        `  ${receipt.explorerUrl}\n`,
    );
  } else if (command === 'fail') {
    const [currency = '', address = '', mode = 'reject'] = args;
    const rule = await chain.failNext({ currency: currency.toUpperCase(), address, mode: mode === 'drop' ? 'DROP' : 'REJECT' });
    process.stdout.write(`the next ${rule.network} withdrawal broadcast to ${rule.address} will be ${rule.mode === 'DROP' ? 'accepted and never mined' : 'refused'}\n`);
  } else if (command === 'heights') {
    for (const [network, height] of Object.entries(await chain.heights())) process.stdout.write(`${network.padEnd(9)} ${height}\n`);
  } else {
    const tx = await chain.findTransaction(args[0] ?? '');
    if (!tx) {
      process.stderr.write('no devnet transaction has this hash\n');
      code = 1;
    } else {
      process.stdout.write(`${JSON.stringify(tx, null, 2)}\n`);
    }
  }
} catch (error) {
  if (!(error instanceof DevnetError)) throw error;
  process.stderr.write(`devnet: ${error.message}\n`);
  code = 1;
} finally {
  await custody.close();
  await database.close();
}
process.exit(code);
