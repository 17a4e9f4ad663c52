import { useStore } from '@nanostores/react';
import { lazy, Suspense, useEffect } from 'react';
import { $router, sectionOf, type RouteName } from '../stores/router.ts';
import { inFlow } from '../stores/navigation.ts';
import { $routesReady, startAuth } from '../stores/auth.ts';
import { $t, type Translate } from '../stores/i18n.ts';
import { $selectedLanguage, syncPreferences } from '../stores/settings.ts';
import { localeOf } from '../lib/preferences.ts';
import { followSession } from '../stores/user.ts';
import { FullScreenSpinner, Spinner } from './ui/spinner.tsx';
import { ToastHost } from './ui/toast.tsx';
import { BottomNav } from './ui/bottom-nav.tsx';
import { PlaceholderScreen } from './screens/common/placeholder.tsx';
import { ComingSoonScreen } from './screens/common/coming-soon.tsx';

// The custody screens load on demand (size budget: island ≤ 100 KB gzip); Home's chunk is fetched during the sign-in hold.
const loadHome = () => import('./screens/home/home.tsx');
const HomeScreen = lazy(() => loadHome().then((module) => ({ default: module.HomeScreen })));
const AssetScreen = lazy(() => import('./screens/asset/asset.tsx').then((module) => ({ default: module.AssetScreen })));
const ReceiveScreen = lazy(() => import('./screens/asset/receive.tsx').then((module) => ({ default: module.ReceiveScreen })));
const TransactionScreen = lazy(() => import('./screens/asset/transaction.tsx').then((module) => ({ default: module.TransactionScreen })));
const SelectAssetScreen = lazy(() => import('./screens/select-asset/select-asset.tsx').then((module) => ({ default: module.SelectAssetScreen })));
const ManageAssetsScreen = lazy(() => import('./screens/manage-assets/manage-assets.tsx').then((module) => ({ default: module.ManageAssetsScreen })));
const SettingsArea = lazy(() => import('./screens/settings/index.tsx').then((module) => ({ default: module.SettingsArea })));
const SellArea = lazy(() => import('./screens/sell/index.tsx').then((module) => ({ default: module.SellArea })));
const SwapArea = lazy(() => import('./screens/swap/index.tsx').then((module) => ({ default: module.SwapArea })));
const BuyArea = lazy(() => import('./screens/buy/index.tsx').then((module) => ({ default: module.BuyArea })));
const SendArea = lazy(() => import('./screens/send/index.tsx').then((module) => ({ default: module.SendArea })));
const AddressBookArea = lazy(() => import('./screens/address-book/index.tsx').then((module) => ({ default: module.AddressBookArea })));
const ProtectionArea = lazy(() => import('./screens/settings/protection-area.tsx').then((module) => ({ default: module.ProtectionArea })));

/** Picks the screen for the current route; screens not built yet show a placeholder with their title. */
function Screen({ route }: { route: RouteName; t: Translate }) {
  switch (route) {
    case 'settings':
    case 'selectCurrency':
    case 'selectLanguage':
    case 'feedback':
    case 'reserves':
      return <SettingsArea route={route} />;
    case 'walletProtection':
    case 'email':
    case 'emailAdd':
    case 'emailEdit':
    case 'emailVerifyOld':
    case 'emailVerifyNew':
    case 'passcode':
    case 'passcodeDisable':
    case 'passcodeEnable':
    case 'passcodeChange':
    case 'passcodeSuccess':
      return <ProtectionArea route={route} />;
    case 'swap':
    case 'swapFrom':
    case 'swapTo':
    case 'swapOrder':
    case 'swapOrderReview':
    case 'swapOrderSuccess':
      return <SwapArea route={route} />;
    case 'buySell':
    case 'buyGet':
    case 'buyPay':
    case 'buyMethod':
    case 'buyOrder':
    case 'buyOrderReview':
      return <BuyArea route={route} />;
    case 'sellGet':
    case 'sellPay':
    case 'sellOrder':
    case 'sellOrderReview':
    case 'sellSuccess':
      return <SellArea route={route} />;
    case 'home':
      return <HomeScreen />;
    case 'asset':
      return <AssetScreen />;
    case 'receive':
      return <ReceiveScreen />;
    case 'transaction':
      return <TransactionScreen />;
    case 'selectAssetReceive':
      return <SelectAssetScreen purpose="receive" />;
    case 'selectAssetSend':
      return <SelectAssetScreen purpose="send" />;
    case 'send':
    case 'sendReview':
    case 'sendProgress':
      return <SendArea route={route} />;
    case 'addressBook':
    case 'addressBookCreate':
    case 'addressBookItem':
    case 'addressBookEdit':
    case 'addressBookDelete':
      return <AddressBookArea route={route} />;
    case 'manageAssets':
      return <ManageAssetsScreen />;
    case 'exchange':
    case 'notifications':
      return <ComingSoonScreen />;
    default:
      return <PlaceholderScreen title={route} />;
  }
}

export function WalletApp() {
  const ready = useStore($routesReady);
  const page = useStore($router);
  const t = useStore($t);
  const language = useStore($selectedLanguage);
  useEffect(() => {
    document.documentElement.lang = localeOf(language);
  }, [language]);
  useEffect(() => {
    syncPreferences();
    const stopFollowing = followSession();
    // SPEC §3: page, identify and 'load' events, from a chunk of their own (the SDK loads after the first screen).
    let stopAnalytics = (): void => {};
    void import('../stores/analytics.ts').then((analytics) => (stopAnalytics = analytics.startAnalytics()));
    // Withdrawals on their way are followed wherever the user is, to say how they ended (SPEC §2); its own small chunk.
    let stopWatching = (): void => {};
    void import('../stores/withdrawal-watch.ts').then((watch) => (stopWatching = watch.startWithdrawalWatch()));
    void loadHome();
    void startAuth();
    return () => {
      stopFollowing();
      stopWatching();
      stopAnalytics();
    };
  }, []);
  if (!ready || !page) return <FullScreenSpinner label={t('common_loading')} name={t('app_name')} />;
  return (
    <>
      <main className="flex-1">
        <Suspense fallback={<div className="flex justify-center pt-24"><Spinner label={t('common_loading')} /></div>}>
          <Screen route={page.route} t={t} />
        </Suspense>
      </main>
      {!inFlow(page.route) && <BottomNav t={t} active={sectionOf(page.route)} />}
      <ToastHost />
    </>
  );
}
