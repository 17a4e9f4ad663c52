/** The most a slippage setting may be, in basis points (10 %): beyond it the guard would guard nothing. */
export const MAX_SLIPPAGE_BPS = 1000;
