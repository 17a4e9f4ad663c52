/**
 * npm run seed -- <command>: the wallet seed sealed at rest (WALLET_SEED_FILE). Nothing here takes a mnemonic or a
 * passphrase from the command line, where other users and the shell's history would see it.
 *   seal <file>    reads the mnemonic from standard input (asked for without echo on a terminal), the passphrase
 *                  from WALLET_SEED_PASSPHRASE_FD or asked twice on the terminal, and writes the sealed file (mode
 *                  0600, never over an existing one), then opens it again to check it
 *   check <file>   opens the file with the passphrase (WALLET_SEED_PASSPHRASE_FD or the terminal) and prints the
 *                  seed's public fingerprint, the one the database remembers
 */
import { text } from 'node:stream/consumers';
import { SeedError } from '../adapters/keys/seed.ts';
import { openSealedSeedFile, promptHidden, readPassphrase, sealSeed, writeSealedSeedFile } from '../adapters/keys/sealed-seed.ts';

const USAGE = `usage: npm run seed -- seal <file>    (the mnemonic on standard input)
       npm run seed -- check <file>
the passphrase: WALLET_SEED_PASSPHRASE_FD=<fd>, else asked on the terminal`;

const [command, file, ...rest] = process.argv.slice(2);
if ((command !== 'seal' && command !== 'check') || !file || rest.length > 0) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(1);
}

const fdText = process.env.WALLET_SEED_PASSPHRASE_FD;
const fd = fdText === undefined || fdText === '' ? undefined : Number(fdText);
try {
  if (fd !== undefined && !Number.isInteger(fd)) throw new SeedError('WALLET_SEED_PASSPHRASE_FD is a file descriptor number, e.g. 3');
  if (command === 'seal') {
    const mnemonic = process.stdin.isTTY ? await promptHidden('mnemonic (not shown): ') : await text(process.stdin);
    const passphrase = await readPassphrase(fd, { prompt: promptHidden }, 'new passphrase (not shown): ');
    if (fd === undefined && (await promptHidden('the passphrase again: ')) !== passphrase) throw new SeedError('the two passphrases differ; nothing was written');
    const sealed = await sealSeed(mnemonic, passphrase);
    await writeSealedSeedFile(file, sealed);
    const seed = await openSealedSeedFile(file, passphrase);
    process.stdout.write(`sealed into ${file} (opens; fingerprint ${seed.fingerprint}). Start with WALLET_SEED_FILE=${file} and the passphrase by WALLET_SEED_PASSPHRASE_FD or the terminal\n`);
  } else {
    const passphrase = await readPassphrase(fd, { prompt: promptHidden }, `passphrase of ${file} (not shown): `);
    const seed = await openSealedSeedFile(file, passphrase);
    process.stdout.write(`${file} opens: fingerprint ${seed.fingerprint}\n`);
  }
} catch (error) {
  process.stderr.write(`seed: ${error instanceof SeedError ? error.message : String(error)}\n`);
  process.exit(1);
}
