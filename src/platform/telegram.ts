import {
  backButton,
  biometry,
  init,
  mainButton,
  miniApp,
  retrieveLaunchParams,
  retrieveRawInitData,
  themeParams,
  viewport,
} from '@telegram-apps/sdk';
import type { MessengerLaunch, Platform } from './platform.ts';
import { webPlatform } from './web.ts';

/** SPEC §9 themes: what the messenger's chrome and native buttons are painted with. */
const THEME = {
  dark: { background: '#202025', primary: '#ffffff', onPrimary: '#202025' },
  light: { background: '#ffffff', primary: '#202025', onPrimary: '#ffffff' },
} as const;

type Hex = `#${string}`;

/** Runs a step the running Telegram version may not support; an unsupported step is skipped, never fatal. */
function attempt(step: () => unknown): void {
  try {
    const result = step();
    if (result instanceof Promise) result.catch(() => undefined);
  } catch {
    // an older client without the method: the app works without it
  }
}

/** The launch facts of SPEC §4's messenger branch: init data and the `link_token` the app was opened with. */
function launchFacts(): MessengerLaunch {
  const initData = retrieveRawInitData() ?? '';
  let userId: number | undefined;
  try {
    const user = new URLSearchParams(initData).get('user');
    const id = user ? (JSON.parse(user) as { id?: unknown }).id : undefined;
    userId = typeof id === 'number' ? id : undefined;
  } catch {
    userId = undefined;
  }
  // The mini app's own URL carries it (…/tg?link_token=…); a start parameter `link_<code>` works as well.
  const query = new URLSearchParams(window.location.search).get('link_token') ?? undefined;
  let startParam: string | undefined;
  try {
    startParam = retrieveLaunchParams().tgWebAppStartParam;
  } catch {
    startParam = undefined;
  }
  const fromStart = startParam?.startsWith('link_') ? startParam.slice(5) : undefined;
  return { initData, userId, linkToken: query || fromStart || undefined };
}

/** Keeps the messenger's safe areas (notches, its own header in full screen) as CSS variables the layout pads by. */
function bindSafeAreas(): void {
  const apply = () => {
    const style = document.documentElement.style;
    const top = (viewport.safeAreaInsetTop() ?? 0) + (viewport.contentSafeAreaInsetTop() ?? 0);
    const bottom = (viewport.safeAreaInsetBottom() ?? 0) + (viewport.contentSafeAreaInsetBottom() ?? 0);
    style.setProperty('--tg-safe-top', `${top}px`);
    style.setProperty('--tg-safe-bottom', `${bottom}px`);
  };
  apply();
  viewport.state.sub(apply);
}

/**
 * The Telegram mini app platform (@telegram-apps/sdk): `ready()` at once, the window expanded, the theme mapped
 * (Telegram's dark or light picks ours when the user chose none; the messenger's header, background and buttons
 * take our colours), the native main and back buttons, biometrics where supported, safe areas as CSS variables.
 * Storage, cookies and navigation are the browser's, as on the web.
 */
export async function createTelegramPlatform(options: { nativeButtons: boolean } = { nativeButtons: true }): Promise<Platform> {
  init();
  attempt(() => miniApp.mountSync());
  attempt(() => miniApp.ready());
  attempt(() => themeParams.mountSync());
  const web = webPlatform();
  const launch = launchFacts();

  await Promise.race([
    (async () => {
      try {
        await viewport.mount();
        attempt(() => viewport.expand());
        bindSafeAreas();
      } catch {
        // no viewport information: the browser's own safe-area insets apply
      }
    })(),
    new Promise((resolve) => setTimeout(resolve, 1500)),
  ]);

  attempt(() => backButton.mount());
  attempt(() => mainButton.mount());
  // Biometrics are initialised where supported (SPEC §4, Theme); the toggle reads their state later.
  if (biometry.isSupported()) attempt(() => biometry.mount(undefined));

  let palette: (typeof THEME)['dark' | 'light'] = THEME.dark;
  const applyTheme = (dark: boolean) => {
    web.applyTheme(dark);
    palette = dark ? THEME.dark : THEME.light;
    attempt(() => miniApp.setHeaderColor(palette.background as Hex));
    attempt(() => miniApp.setBackgroundColor(palette.background as Hex));
    attempt(() => miniApp.setBottomBarColor(palette.background as Hex));
    attempt(() => mainButton.setParams({ backgroundColor: palette.primary as Hex, textColor: palette.onPrimary as Hex }));
  };

  let shown = 0;
  let client: string | undefined;
  try {
    client = retrieveLaunchParams().tgWebAppPlatform;
  } catch {
    client = undefined;
  }
  return {
    ...web,
    kind: 'tg',
    client,
    applyTheme,
    // Without a choice of the user's, the theme follows the messenger's.
    prefersDark: () => themeParams.isDark() ?? web.prefersDark(),
    messenger: launch,
    mainButton: !options.nativeButtons ? undefined : {
      show(state, onClick) {
        const token = ++shown;
        attempt(() =>
          mainButton.setParams({
            text: state.label,
            isVisible: true,
            isEnabled: !state.disabled && !state.busy,
            isLoaderVisible: state.busy,
            backgroundColor: palette.primary as Hex,
            textColor: palette.onPrimary as Hex,
          }),
        );
        let off: VoidFunction = () => {};
        attempt(() => {
          off = mainButton.onClick(() => {
            if (!state.disabled && !state.busy) onClick();
          });
        });
        return () => {
          off();
          // A newer screen's button may already be showing: only the last one hides it.
          if (token === shown) attempt(() => mainButton.setParams({ isVisible: false, isLoaderVisible: false }));
        };
      },
    },
    backButton: !options.nativeButtons ? undefined : {
      setVisible: (visible) => attempt(() => (visible ? backButton.show() : backButton.hide())),
      onClick: (handler) => {
        let off: VoidFunction = () => {};
        attempt(() => {
          off = backButton.onClick(handler);
        });
        return () => off();
      },
    },
    biometry: biometry.isSupported()
      ? {
          supported: () => biometry.isAvailable(),
          granted: () => biometry.state().accessGranted,
          requested: () => biometry.state().accessRequested,
          requestAccess: async () => {
            try {
              return await biometry.requestAccess();
            } catch {
              return false;
            }
          },
          openSettings: () => attempt(() => biometry.openSettings()),
        }
      : undefined,
  };
}
