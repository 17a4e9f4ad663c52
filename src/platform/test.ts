import type { Platform } from './platform.ts';

/** Stands in for the browser in unit tests: records where the app went and what it wrote. */
export function testPlatform(overrides: Partial<Platform> = {}): Platform & { left: string[]; cookies: Map<string, string>; dark: boolean | undefined } {
  const left: string[] = [];
  const cookies = new Map<string, string>();
  const state = { dark: undefined as boolean | undefined };
  return {
    kind: 'test',
    left,
    cookies,
    get dark() {
      return state.dark;
    },
    leave: (path) => void left.push(path),
    applyTheme: (dark) => {
      state.dark = dark;
    },
    prefersDark: () => false,
    setCookie: (text) => {
      const [pair = ''] = text.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), decodeURIComponent(pair.slice(at + 1)));
    },
    readCookie: (name) => cookies.get(name),
    now: () => Date.now(),
    ...overrides,
  };
}
