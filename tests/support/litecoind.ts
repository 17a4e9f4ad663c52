import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { coinsToUnits, createRpc, RpcError, type Rpc } from '../../src/server/adapters/chains/utxo/rpc.ts';

/**
 * A Litecoin Core node in -regtest for one test file: free RPC port, temporary data directory, -txindex, its own
 * wallet ("funder") with 101 mined blocks so it can pay. Stop it after.
 */
export type Litecoind = {
  /** http://user:password@127.0.0.1:port, as LITECOIN_RPC_URL. */
  url: string;
  /** The node's data directory (its chain under `regtest/`): a halted node's may be copied or replaced before `restart`. */
  datadir: string;
  rpc: Rpc;
  /** The node's own wallet (funding, receiving). */
  wallet: Rpc;
  /** A fresh address of the node's wallet (bech32 unless `type` says). */
  newAddress(type?: 'bech32' | 'legacy'): Promise<string>;
  /** Mines `blocks` blocks to the node's wallet; returns the new tip height. */
  mine(blocks: number): Promise<number>;
  /** Sends `amount` (decimal LTC) from the node's wallet; returns the transaction hash. */
  send(address: string, amount: string): Promise<string>;
  /** Litoshi an address of the node's wallet received with at least `minConf` confirmations. */
  received(address: string, minConf?: number): Promise<bigint>;
  /** Stops the node and keeps its data directory and port, as a node that went down would (`restart` brings it back). */
  halt(): Promise<void>;
  /** Starts the halted node again on the same port and data directory, with its chain and wallet as they were. */
  restart(): Promise<void>;
  stop(): Promise<void>;
};

/** A free TCP port on 127.0.0.1 (probed, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a process has ended, by an exit or a signal. */
const ended = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** A running litecoind process: `exited` settles when it ends. */
type NodeProcess = { child: ChildProcess; exited: Promise<void> };

/** Spawns litecoind on `datadir` and `port` and waits until its RPC answers. */
async function launch(datadir: string, port: number, extraArgs: string[], rpc: Rpc): Promise<NodeProcess> {
  const child: ChildProcess = spawn(
    'litecoind',
    [
      '-regtest',
      `-datadir=${datadir}`,
      `-rpcport=${port}`,
      '-rpcbind=127.0.0.1',
      '-rpcallowip=127.0.0.1',
      '-rpcuser=test',
      '-rpcpassword=test',
      '-listen=0',
      '-txindex=1',
      '-fallbackfee=0.0002',
      // Litecoin Core relays no BIP125 replacement unless told to (the README's node requirements say so).
      '-mempoolreplacement=1',
      '-server=1',
      '-printtoconsole=0',
      ...extraArgs,
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await rpc.call('getblockchaininfo');
      return { child, exited };
    } catch (error) {
      if (child.exitCode !== null) throw new Error(`litecoind exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Asks the node to stop (killed if it does not within 10 s) and waits for the process to end. */
async function shutDown(node: NodeProcess, rpc: Rpc): Promise<void> {
  if (ended(node.child)) return;
  try {
    await rpc.call('stop');
  } catch (error) {
    if (!(error instanceof RpcError)) node.child.kill('SIGKILL');
  }
  const timeout = setTimeout(() => node.child.kill('SIGKILL'), 10_000);
  await node.exited;
  clearTimeout(timeout);
}

/** `name` goes into the data directory's name (whose node it is, when several run). */
export async function startLitecoind(extraArgs: string[] = [], name = ''): Promise<Litecoind> {
  const datadir = await mkdtemp(join(tmpdir(), `litecoind-${name ? `${name}-` : ''}`));
  const port = await freePort();
  const url = `http://test:test@127.0.0.1:${port}`;
  const rpc = createRpc(url);
  let running = await launch(datadir, port, extraArgs, rpc);
  await rpc.call('createwallet', 'funder');
  const wallet = createRpc(`${url}/wallet/funder`);
  const newAddress = async (type: 'bech32' | 'legacy' = 'bech32') => wallet.call<string>('getnewaddress', '', type);
  const minerAddress = await newAddress();
  const mine = async (blocks: number) => {
    await rpc.call('generatetoaddress', blocks, minerAddress);
    return rpc.call<number>('getblockcount');
  };
  await mine(101);
  return {
    url,
    datadir,
    rpc,
    wallet,
    newAddress,
    mine,
    send: (address, amount) => wallet.call<string>('sendtoaddress', address, amount),
    received: async (address, minConf = 1) => coinsToUnits(await wallet.call<string>('getreceivedbyaddress', address, minConf)),
    async halt() {
      await shutDown(running, rpc);
    },
    async restart() {
      if (!ended(running.child)) return;
      running = await launch(datadir, port, extraArgs, rpc);
      // A wallet created at runtime is not loaded at the next start by itself.
      await rpc.call('loadwallet', 'funder');
    },
    async stop() {
      await shutDown(running, rpc);
      await rm(datadir, { recursive: true, force: true });
    },
  };
}
