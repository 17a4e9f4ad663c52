/** What the wallet needs from where it runs: a browser tab, the Telegram mini app, or a test. */
export type Platform = {
  kind: 'web' | 'tg' | 'test';
  /** Navigates away from the island (the auth shells are separate pages); `replace` keeps it out of the history. */
  leave: (path: string, options?: { replace?: boolean }) => void;
  /** Applies the theme to the document. */
  applyTheme: (dark: boolean) => void;
  /** Whether the system prefers a dark theme. */
  prefersDark: () => boolean;
  /** Writes a cookie the server-rendered shells read. */
  setCookie: (text: string) => void;
  readCookie: (name: string) => string | undefined;
  now: () => number;
  /** Biometric unlock (SPEC §4), present only where the platform offers it (the mini app); absent on the web. */
  biometry?: {
    supported: () => boolean;
    granted: () => boolean;
    requested: () => boolean;
    requestAccess: () => Promise<boolean>;
    openSettings: () => void;
  };
  /** Inside the mini app: the messenger's client ('ios', 'android', 'tdesktop', 'web'…); absent elsewhere. */
  client?: string;
  /** Inside the mini app: what the messenger sign-in needs (SPEC §4, the messenger branch); absent elsewhere. */
  messenger?: MessengerLaunch;
  /** The messenger's native main button, in place of a screen's main action (SPEC §2, §6); absent on the web. */
  mainButton?: NativeMainButton;
  /** The messenger's native back button; absent on the web. */
  backButton?: { setVisible: (visible: boolean) => void; onClick: (handler: () => void) => () => void };
};

export type MessengerLaunch = {
  /** The raw init data string the messenger handed the mini app. */
  initData: string;
  /** The Telegram user's id from the init data, to tell a stored user of another Telegram account apart. */
  userId: number | undefined;
  /** SPEC §4: the `link_token` query parameter the app was opened with, if any. */
  linkToken: string | undefined;
};

export type NativeMainButton = {
  /** Shows the button with this label and state; the returned function hides it again (and drops the handler). */
  show: (state: { label: string; disabled: boolean; busy: boolean }, onClick: () => void) => () => void;
};

let current: Platform | undefined;

export function setPlatform(platform: Platform): void {
  current = platform;
}

export function platform(): Platform {
  if (!current) throw new Error('the platform is not set: call setPlatform() before using the stores');
  return current;
}
