/**
 * A client of a TronGrid-compatible full-node HTTP API (java-tron's /wallet/* endpoints, `visible: false`: addresses
 * in hex with the 0x41 prefix). Only the calls the adapter makes, with the fields it reads.
 */
import { callTimeoutMs } from '../../../net/call-budget.ts';

export type TronContract = {
  type: string;
  parameter: { value: Record<string, unknown>; type_url: string };
};

export type TronRawData = {
  contract: TronContract[];
  ref_block_bytes: string;
  ref_block_hash: string;
  expiration: number;
  timestamp: number;
  fee_limit?: number;
};

/** A transaction as blocks carry it and broadcasttransaction takes it. */
export type TronTransaction = {
  txID: string;
  raw_data: TronRawData;
  raw_data_hex: string;
  signature?: string[];
  visible?: boolean;
  ret?: { contractRet?: string }[];
};

export type TronBlock = {
  blockID: string;
  block_header: { raw_data: { number: number; timestamp: number; parentHash?: string } };
  transactions?: TronTransaction[];
};

export type TronLog = { address: string; topics: string[]; data?: string };

/** gettransactioninfobyid: empty ({}) until the transaction is in a block. */
export type TronTransactionInfo = {
  id?: string;
  blockNumber?: number;
  blockTimeStamp?: number;
  fee?: number;
  result?: 'FAILED';
  resMessage?: string;
  receipt?: { result?: string; energy_usage_total?: number; net_fee?: number; energy_fee?: number };
  log?: TronLog[];
};

export type TronAccount = { address?: string; balance?: number };

export type TronAccountResource = {
  freeNetLimit?: number;
  freeNetUsed?: number;
  NetLimit?: number;
  NetUsed?: number;
  EnergyLimit?: number;
  EnergyUsed?: number;
};

export type TronConstantResult = {
  result?: { result?: boolean; code?: string; message?: string };
  energy_used?: number;
  constant_result?: string[];
};

export type TronBroadcastResult = { result?: boolean; code?: string; message?: string; txid?: string };

export type TronChainParameters = { chainParameter: { key: string; value?: number }[] };

export type TronApi = {
  nowBlock(): Promise<TronBlock>;
  /** The block at `num`, or undefined above the tip. */
  blockByNum(num: number): Promise<TronBlock | undefined>;
  transactionInfo(txId: string): Promise<TronTransactionInfo>;
  transactionInfosOfBlock(num: number): Promise<TronTransactionInfo[]>;
  transactionById(txId: string): Promise<TronTransaction | undefined>;
  pendingTransaction(txId: string): Promise<TronTransaction | undefined>;
  broadcast(transaction: TronTransaction): Promise<TronBroadcastResult>;
  constantCall(call: { owner: string; contract: string; selector: string; parameter: string }): Promise<TronConstantResult>;
  account(address: string): Promise<TronAccount>;
  accountResource(address: string): Promise<TronAccountResource>;
  chainParameters(): Promise<Record<string, number>>;
};

/** A full node that answered with an HTTP error or something that is not JSON: worth trying again later. */
export class TronApiError extends Error {}

export function createTronApi(options: { apiUrl: string; apiKey?: string | undefined; timeoutMs?: number }): TronApi {
  const base = options.apiUrl.replace(/\/+$/, '');
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.apiKey) headers['TRON-PRO-API-KEY'] = options.apiKey;
    const response = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(callTimeoutMs(options.timeoutMs ?? 15_000)) });
    const text = await response.text();
    if (!response.ok) throw new TronApiError(`TRON API ${path} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
    try {
      return (text.trim() === '' ? {} : JSON.parse(text)) as T;
    } catch {
      throw new TronApiError(`TRON API ${path} answered something that is not JSON: ${text.slice(0, 200)}`);
    }
  };
  const present = <T extends object>(value: T): T | undefined => (Object.keys(value).length === 0 ? undefined : value);
  return {
    nowBlock: () => post<TronBlock>('/wallet/getnowblock', { visible: false }),
    async blockByNum(num) {
      const block = await post<TronBlock>('/wallet/getblockbynum', { num, visible: false });
      return block.blockID ? block : undefined;
    },
    transactionInfo: (txId) => post<TronTransactionInfo>('/wallet/gettransactioninfobyid', { value: txId }),
    async transactionInfosOfBlock(num) {
      const infos = await post<TronTransactionInfo[] | Record<string, never>>('/wallet/gettransactioninfobyblocknum', { num });
      return Array.isArray(infos) ? infos : [];
    },
    transactionById: async (txId) => present(await post<TronTransaction>('/wallet/gettransactionbyid', { value: txId, visible: false })),
    pendingTransaction: async (txId) => present(await post<TronTransaction>('/wallet/gettransactionfrompending', { value: txId })),
    broadcast: (transaction) => post<TronBroadcastResult>('/wallet/broadcasttransaction', transaction),
    constantCall: ({ owner, contract, selector, parameter }) =>
      post<TronConstantResult>('/wallet/triggerconstantcontract', { owner_address: owner, contract_address: contract, function_selector: selector, parameter, visible: false }),
    account: (address) => post<TronAccount>('/wallet/getaccount', { address, visible: false }),
    accountResource: (address) => post<TronAccountResource>('/wallet/getaccountresource', { address, visible: false }),
    async chainParameters() {
      const parameters = await post<TronChainParameters>('/wallet/getchainparameters', {});
      return Object.fromEntries((parameters.chainParameter ?? []).map((p) => [p.key, p.value ?? 0]));
    },
  };
}
