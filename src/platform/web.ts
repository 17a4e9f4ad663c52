import type { Platform } from './platform.ts';

export function webPlatform(): Platform {
  return {
    kind: 'web',
    leave: (path, options) => (options?.replace ? window.location.replace(path) : window.location.assign(path)),
    applyTheme: (dark) => {
      document.documentElement.dataset.theme = dark ? 'dark' : 'light';
    },
    prefersDark: () => window.matchMedia('(prefers-color-scheme: dark)').matches,
    setCookie: (text) => {
      // Over https every cookie is Secure, the ones the server sets and these (issue 14).
      document.cookie = window.location.protocol === 'https:' ? `${text}; Secure` : text;
    },
    readCookie: (name) => {
      const found = document.cookie.split('; ').find((pair) => pair.startsWith(`${name}=`));
      return found === undefined ? undefined : decodeURIComponent(found.slice(name.length + 1));
    },
    now: () => Date.now(),
  };
}
