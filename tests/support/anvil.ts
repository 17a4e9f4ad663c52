/**
 * A real Ethereum node for tests: anvil (the binary of the npm package @foundry-rs/anvil-linux-amd64, an optional dependency) on a free port, and the test's own
 * ERC-20 contracts compiled by solc (tests/support/evm/*.sol) and deployed by anvil's first funded account.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createTestClient, createWalletClient, encodeFunctionData, http, parseAbi, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { freePort } from './server.ts';

/** Anvil's first default account (public test key of the "test test … junk" mnemonic), funded with 10 000 ETH. */
export const ANVIL_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const anvilAccount = privateKeyToAccount(ANVIL_KEY);

// The binary ships in the platform's optional package (its `bin`, so npm ci installs it executable).
const ANVIL_BIN = join(dirname(fileURLToPath(import.meta.url)), `../../node_modules/@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}/bin/anvil`);

export const tokenAbi = parseAbi([
  'function mint(address to, uint256 value)',
  'function balanceOf(address owner) view returns (uint256)',
  'function transfer(address to, uint256 value)',
]);

/** The call data of the test tokens' `mint(to, amount)`. */
export function mintCall(to: Address, amount: bigint): Hex {
  return encodeFunctionData({ abi: tokenAbi, functionName: 'mint', args: [to, amount] });
}

export async function startAnvil(args: string[] = []) {
  const port = await freePort();
  const child: ChildProcess = spawn(ANVIL_BIN, ['--port', String(port), '--silent', ...args], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const transport = http(url);
  const chain = { ...foundry, rpcUrls: { default: { http: [url] } } };
  const publicClient = createPublicClient({ chain, transport });
  const testClient = createTestClient({ chain, transport, mode: 'anvil' });
  const wallet = createWalletClient({ chain, transport, account: anvilAccount });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await publicClient.getChainId();
      break;
    } catch (error) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`anvil did not start on ${url}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Sends from anvil's funded account and waits for the receipt (automine on). */
  const send = async (request: { to: Address; value?: bigint; data?: Hex }) => publicClient.waitForTransactionReceipt({ hash: await wallet.sendTransaction(request), pollingInterval: 50 });

  return {
    url,
    publicClient,
    testClient,
    wallet,
    send,
    async deploy(kind: 'TetherLike' | 'StandardToken'): Promise<Address> {
      const { abi, bytecode } = await compiled(kind);
      const hash = await wallet.deployContract({ abi, bytecode, args: [] });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      if (!receipt.contractAddress) throw new Error(`${kind} was not deployed`);
      return receipt.contractAddress;
    },
    balanceOf: (token: Address, owner: Address) => publicClient.readContract({ address: token, abi: tokenAbi, functionName: 'balanceOf', args: [owner] }),
    mine: (blocks = 1) => testClient.mine({ blocks }),
    stop: () => {
      child.kill('SIGKILL');
    },
  };
}

export type Anvil = Awaited<ReturnType<typeof startAnvil>>;

const cache = new Map<string, Promise<{ abi: Abi; bytecode: Hex }>>();

/** Compiles one of tests/support/evm/*.sol with solc from npm (once per source text: the output is kept in the temporary directory). */
export function compiled(kind: string): Promise<{ abi: Abi; bytecode: Hex }> {
  let found = cache.get(kind);
  if (!found) {
    found = (async () => {
      const source = await readFile(join(dirname(fileURLToPath(import.meta.url)), 'evm', `${kind}.sol`), 'utf8');
      const kept = join(tmpdir(), `wallet-solc-${kind}-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.json`);
      const cached = await readFile(kept, 'utf8').catch(() => undefined);
      if (cached) return JSON.parse(cached) as { abi: Abi; bytecode: Hex };
      const solc = createRequire(import.meta.url)('solc') as { compile: (input: string) => string };
      const input = { language: 'Solidity', sources: { [`${kind}.sol`]: { content: source } }, settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } } };
      const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
        errors?: { severity: string; formattedMessage: string }[];
        contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
      };
      const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
      if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
      const contract = output.contracts[`${kind}.sol`]?.[kind];
      if (!contract) throw new Error(`solc produced no ${kind}`);
      const result = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` as Hex };
      await writeFile(kept, JSON.stringify(result));
      return result;
    })();
    cache.set(kind, found);
  }
  return found;
}
