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
};

let current: Platform | undefined;

export function setPlatform(platform: Platform): void {
  current = platform;
}

export function platform(): Platform {
  if (!current) throw new Error('the platform is not set: call setPlatform() before using the stores');
  return current;
}
