import { apiCall } from './client.ts';

/** The published proof (public) and the caller's leaf in it (README "Proof of reserves"; http/reserves.ts). */
export type ReservesProof = {
  id: string;
  asOf: string;
  assets: { currency: string; network: string; decimals: number }[];
  liabilities: { root: { hash: string; sums: string[] }; leaves: number; totals: Record<string, string> };
  reserves: Record<string, string>;
};
export type ReserveLeaf = { proofId: string; asOf: string; nonce: string; leaf: string; balances: string[]; path: { side: 'left' | 'right'; hash: string; sums: string[] }[] };

export const getReserves = () => apiCall<ReservesProof>('/reserves', { public: true });
export const getMyReserveLeaf = () => apiCall<ReserveLeaf>('/reserves/mine');
