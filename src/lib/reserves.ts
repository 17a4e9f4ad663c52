/**
 * The proof of reserves' Merkle sum tree (README "Proof of reserves"), shared by the server that builds it and the
 * browser that checks a user's leaf. Every node carries one sum per asset (atomic units, never negative) and its hash
 * commits to them, so a balance cannot be hidden by a negative one:
 *   leaf = sha256("por-leaf:" + nonce + ":" + sums joined by ",")
 *   node = sha256("por-node:" + left hash + ":" + right hash + ":" + (left sums + right sums) joined by ",")
 * Leaves are sorted by hash; a level's odd last node goes up unchanged. Hashes are lower-case hex.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

export type SumNode = { hash: string; sums: readonly bigint[] };
/** A sibling on the way from a leaf to the root; `side` is where the sibling sits. */
export type PathStep = { side: 'left' | 'right'; hash: string; sums: readonly bigint[] };

const hex = (text: string) => bytesToHex(sha256(utf8ToBytes(text)));
const joined = (sums: readonly bigint[]) => sums.map(String).join(',');

export class ReservesTreeError extends Error {}

export function leafHash(nonce: string, sums: readonly bigint[]): string {
  if (sums.some((s) => s < 0n)) throw new ReservesTreeError('a leaf has a negative balance');
  return hex(`por-leaf:${nonce}:${joined(sums)}`);
}

/** The parent of two nodes: its sums are theirs added, its hash commits to both children and to those sums. */
export function parentOf(left: SumNode, right: SumNode): SumNode {
  if (left.sums.length !== right.sums.length) throw new ReservesTreeError('nodes with different asset counts');
  if ([...left.sums, ...right.sums].some((s) => s < 0n)) throw new ReservesTreeError('a node has a negative sum');
  const sums = left.sums.map((s, i) => s + (right.sums[i] ?? 0n));
  return { hash: hex(`por-node:${left.hash}:${right.hash}:${joined(sums)}`), sums };
}

/** The tree over `leaves` (any order): its root and each leaf's path to it, by the leaf's hash. */
export function buildSumTree(leaves: readonly SumNode[], assets: number): { root: SumNode; paths: Map<string, PathStep[]> } {
  if (leaves.length === 0) return { root: { hash: hex('por-empty'), sums: Array.from({ length: assets }, () => 0n) }, paths: new Map() };
  let level = [...leaves].sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  // Which leaves sit under each node of the current level, to extend their paths as the level is paired.
  let under = level.map((leaf) => [leaf.hash]);
  const paths = new Map(level.map((leaf) => [leaf.hash, [] as PathStep[]]));
  while (level.length > 1) {
    const next: SumNode[] = [];
    const nextUnder: string[][] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i] as SumNode;
      const right = level[i + 1];
      if (!right) {
        next.push(left);
        nextUnder.push(under[i] ?? []);
        continue;
      }
      for (const hash of under[i] ?? []) paths.get(hash)?.push({ side: 'right', hash: right.hash, sums: right.sums });
      for (const hash of under[i + 1] ?? []) paths.get(hash)?.push({ side: 'left', hash: left.hash, sums: left.sums });
      next.push(parentOf(left, right));
      nextUnder.push([...(under[i] ?? []), ...(under[i + 1] ?? [])]);
    }
    level = next;
    under = nextUnder;
  }
  return { root: level[0] as SumNode, paths };
}

/** The root a leaf's path leads to; throws on a negative sum or a mismatched step. */
export function rootOf(leaf: SumNode, path: readonly PathStep[]): SumNode {
  let node = leaf;
  for (const step of path) node = step.side === 'left' ? parentOf(step, node) : parentOf(node, step);
  return node;
}

/** Whether the leaf of `nonce` and `balances` leads by `path` to `root` (hash and every sum). */
export function includedIn(root: { hash: string; sums: readonly string[] }, leaf: { nonce: string; balances: readonly string[] }, path: readonly { side: 'left' | 'right'; hash: string; sums: readonly string[] }[]): boolean {
  try {
    const start = { hash: leafHash(leaf.nonce, leaf.balances.map(toUnits)), sums: leaf.balances.map(toUnits) };
    const top = rootOf(start, path.map((step) => ({ side: step.side, hash: step.hash, sums: step.sums.map(toUnits) })));
    return top.hash === root.hash && top.sums.length === root.sums.length && top.sums.every((s, i) => String(s) === root.sums[i]);
  } catch {
    return false;
  }
}

function toUnits(value: string): bigint {
  if (!/^-?\d{1,90}$/.test(value)) throw new ReservesTreeError(`not an integer: ${value}`);
  return BigInt(value);
}
