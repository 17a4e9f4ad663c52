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

/** One currency's balance as of the same moment as the history it came with (POST /api/{account}/asset/transactions). */
export type HistoryBalance = Pick<AssetItem, 'currency' | 'totalAvailable' | 'onHold'>;
