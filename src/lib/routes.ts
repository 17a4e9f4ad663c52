// Pure data shared by the browser's router and the server's security headers (which paths host the camera).
/** Every signed-in path of SPEC §2, declared once; screens and stores refer to routes by these names. */
export const ROUTES = {
  home: '/home',
  asset: '/home/asset/:currency',
  receive: '/home/asset/:currency/receive',
  send: '/home/asset/:currency/send',
  sendReview: '/home/asset/:currency/send/review',
  sendProgress: '/home/asset/:currency/send/progress',
  transaction: '/home/asset/:currency/transaction/:id/:type',
  buySell: '/home/buy-sell',
  selectAssetReceive: '/select-asset/receive',
  selectAssetSend: '/select-asset/send',
  manageAssets: '/manage-assets',
  buyGet: '/buy/get',
  buyPay: '/buy/pay',
  buyMethod: '/buy/method',
  buyOrder: '/buy/order',
  buyOrderReview: '/buy/order/review',
  sellGet: '/sell/get',
  sellPay: '/sell/pay',
  sellOrder: '/sell/order',
  sellOrderReview: '/sell/order/review',
  sellSuccess: '/sell/success',
  swap: '/swap',
  swapFrom: '/swap/from',
  swapTo: '/swap/to',
  swapOrder: '/swap/order',
  swapOrderReview: '/swap/order/review',
  swapOrderSuccess: '/swap/order/success',
  settings: '/settings',
  selectCurrency: '/settings/select-currency',
  selectLanguage: '/settings/select-language',
  feedback: '/settings/feedback',
  reserves: '/settings/reserves',
  walletProtection: '/settings/wallet-protection',
  email: '/settings/wallet-protection/email',
  emailAdd: '/settings/wallet-protection/email/add',
  emailEdit: '/settings/wallet-protection/email/edit',
  emailVerifyOld: '/settings/wallet-protection/email/verification/old',
  emailVerifyNew: '/settings/wallet-protection/email/verification/new',
  passcode: '/settings/passcode',
  passcodeDisable: '/settings/passcode/disable',
  passcodeEnable: '/settings/passcode/enable',
  passcodeChange: '/settings/passcode/change',
  passcodeSuccess: '/settings/passcode/success',
  addressBook: '/settings/address-book',
  addressBookCreate: '/settings/address-book/create',
  addressBookItem: '/settings/address-book/:id',
  addressBookEdit: '/settings/address-book/:id/edit',
  addressBookDelete: '/settings/address-book/:id/delete',
  // The 'soon' tabs are wallet paths too: like everything but the auth and error pages, they need sign-in (SPEC §6).
  exchange: '/exchange',
  notifications: '/notifications',
} as const;

/** The Astro pages outside the island (prerendered shells and server pages): linked to, never routed by the island. */
export const PAGES = {
  auth: '/auth',
  signIn: '/auth/login',
  terms: '/terms',
  privacy: '/privacy',
  miniApp: '/tg',
  reserves: '/reserves',
} as const;

/**
 * A hint, not a credential: the wallet says on this device that someone is signed in, so the entry pages (/auth,
 * /auth/login) send them home without a script. The tokens stay in the browser's storage; the wallet clears the hint
 * before it ever sends anyone to sign in, so a stale hint costs one bounce, never a loop.
 */
export const SIGNED_IN_COOKIE = 'signed_in';

export function signedInCookie(signedIn: boolean): string {
  return `${SIGNED_IN_COOKIE}=${signedIn ? '1; Max-Age=31536000' : '; Max-Age=0'}; Path=/; SameSite=Lax`;
}

/** SPEC §8: the error page of a code. */
export function errorPagePath(code: string): string {
  return `/error/${encodeURIComponent(code)}`;
}
