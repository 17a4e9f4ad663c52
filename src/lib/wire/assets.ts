/** SPEC §3 account balance item, amounts as exact decimal strings (GET /api/{account}/asset). */
export type AssetItem = {
  currency: string;
  isCrypto: boolean;
  isToken: boolean;
  /** Spendable now. */
  totalAvailable: string;
  /** Set aside for operations in flight (withdrawals, swaps). */
  onHold: string;
  depositAddress: string | null;
};
