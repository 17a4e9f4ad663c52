import { atom } from 'nanostores';
import { getMyReserveLeaf, getReserves, type ReserveLeaf, type ReservesProof } from '../api/reserves.ts';
import { WalletError } from '../api/errors.ts';
import { includedIn } from '../lib/reserves.ts';

/**
 * Settings → Proof of reserves: the newest proof and whether the user's balances are in it, checked here, in the
 * browser, by walking the user's leaf up its path to the published root (lib/reserves.ts), not by the server's word.
 */
export type ReservesState =
  | { state: 'loading' }
  | { state: 'none' }
  | { state: 'failed' }
  | { state: 'ready'; proof: ReservesProof; leaf: ReserveLeaf | undefined; included: 'yes' | 'no' | 'not-in-proof' };

export const $reserves = atom<ReservesState>({ state: 'loading' });

const notFound = (error: unknown) => error instanceof WalletError && error.status === 404;

export async function loadReserves(): Promise<void> {
  $reserves.set({ state: 'loading' });
  try {
    const proof = await getReserves().catch((error: unknown) => {
      if (notFound(error)) return undefined;
      throw error;
    });
    if (!proof) return $reserves.set({ state: 'none' });
    const leaf = await getMyReserveLeaf().catch((error: unknown) => {
      if (notFound(error)) return undefined;
      throw error;
    });
    const included = !leaf || leaf.proofId !== proof.id ? 'not-in-proof' : includedIn(proof.liabilities.root, leaf, leaf.path) ? 'yes' : 'no';
    $reserves.set({ state: 'ready', proof, leaf, included });
  } catch {
    $reserves.set({ state: 'failed' });
  }
}
