import { emitEvent, mockTelegramEnv, retrieveLaunchParams } from '@telegram-apps/sdk';
import { setPlatform, platform } from '../platform/platform.ts';
import { createTelegramPlatform } from '../platform/telegram.ts';
import { $router, ROUTES, type RouteName } from '../stores/router.ts';

/** Set for the tab once the mini app started, so a reload on a deeper path (/home/…) starts it again. */
export const MINI_APP_FLAG = 'wallet:miniApp';

/** The development Telegram user of this tab (its id and language), kept across reloads. */
const DEV_USER_KEY = 'wallet:tgDevUser';

/** The bottom navigation's tabs: no back button there (SPEC §2). */
const ROOT_ROUTES: readonly RouteName[] = ['home', 'exchange', 'notifications', 'settings'];

function hasLaunchParams(): boolean {
  try {
    retrieveLaunchParams();
    return true;
  } catch {
    return false;
  }
}

/**
 * Outside Telegram with the server in development mode (no bot token): init data of a test Telegram user signed
 * by the server, and a mocked messenger that answers the SDK's requests. False when the server has no such mode.
 */
async function mockDevelopmentTelegram(): Promise<boolean> {
  const query = new URLSearchParams(window.location.search);
  // The dev user chosen on /tg?dev_user=… stays the tab's across reloads of deeper paths (issue 19 item 27).
  const kept = new URLSearchParams(window.sessionStorage.getItem(DEV_USER_KEY) ?? '');
  const params = new URLSearchParams();
  for (const [from, to] of [['dev_user', 'id'], ['dev_lang', 'language_code']] as const) {
    const value = query.get(from) ?? kept.get(to);
    if (value) params.set(to, value);
  }
  window.sessionStorage.setItem(DEV_USER_KEY, params.toString());
  const response = await fetch(`/api/tg/dev/init-data?${params.toString()}`, { headers: { accept: 'application/json' } }).catch(() => undefined);
  if (!response?.ok) return false;
  const { initData } = (await response.json()) as { initData: string };
  const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
  const insets = { top: 0, bottom: 0, left: 0, right: 0 };
  mockTelegramEnv({
    launchParams: {
      tgWebAppData: initData,
      tgWebAppVersion: '8.0',
      tgWebAppPlatform: 'tdesktop',
      tgWebAppThemeParams: dark ? { bg_color: '#17212b', text_color: '#f5f5f5', button_color: '#5288c1', button_text_color: '#ffffff' } : { bg_color: '#ffffff', text_color: '#000000', button_color: '#2481cc', button_text_color: '#ffffff' },
    },
    onEvent(event, next) {
      const [name] = event;
      if (name === 'web_app_request_safe_area') return emitEvent('safe_area_changed', insets);
      if (name === 'web_app_request_content_safe_area') return emitEvent('content_safe_area_changed', insets);
      if (name === 'web_app_request_theme') return emitEvent('theme_changed', { theme_params: {} });
      if (name === 'web_app_biometry_get_info') return emitEvent('biometry_info_received', { available: false });
      // Nothing else has a listener here: a plain browser tab is the 'messenger'.
      void next;
    },
  });
  return true;
}

/** The native back button shows off the tabs and goes back in the history (SPEC §4: it follows navigation). */
function followNavigation(): void {
  const button = platform().backButton;
  if (!button) return;
  button.onClick(() => window.history.back());
  $router.subscribe((page) => button.setVisible(page !== undefined && !ROOT_ROUTES.includes(page.route) && page.path !== ROUTES.home));
}

/**
 * Starts the mini app: the Telegram platform (from the launch parameters, or mocked in development mode) in
 * place of the browser's. 'outside' when this is neither Telegram nor a development server.
 */
export async function startTelegram(): Promise<'ready' | 'outside'> {
  // A real messenger talks through its webview proxy (mobile, desktop) or a parent frame (web versions).
  const inMessenger = 'TelegramWebviewProxy' in window || window.self !== window.top;
  const real = inMessenger && hasLaunchParams();
  if (!real && !(await mockDevelopmentTelegram())) {
    window.sessionStorage.removeItem(MINI_APP_FLAG);
    return 'outside';
  }
  // A plain browser in development has no native buttons to show: the page keeps its own back arrow and main
  // button (the in-page stand-ins); inside Telegram the native ones replace them.
  setPlatform(await createTelegramPlatform({ nativeButtons: real }));
  window.sessionStorage.setItem(MINI_APP_FLAG, '1');
  followNavigation();
  return 'ready';
}
