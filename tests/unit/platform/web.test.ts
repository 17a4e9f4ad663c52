import { afterEach, describe, expect, it, vi } from 'vitest';
import { webPlatform } from '../../../src/platform/web.ts';
import { preferenceCookie } from '../../../src/lib/preferences.ts';

/** The cookie lines the page writes, on a stand-in document at a given protocol. */
function cookiesWritten(protocol: string): string[] {
  const written: string[] = [];
  vi.stubGlobal('window', { location: { protocol } });
  vi.stubGlobal('document', {
    set cookie(line: string) {
      written.push(line);
    },
  });
  webPlatform().setCookie(preferenceCookie('theme', 'dark'));
  return written;
}

describe('web platform cookies', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('are Secure when the page is served over https', () => {
    expect(cookiesWritten('https:')).toEqual(['theme=dark; Path=/; Max-Age=31536000; SameSite=Lax; Secure']);
  });

  it('stay without Secure over http (a browser would not keep them)', () => {
    expect(cookiesWritten('http:')).toEqual(['theme=dark; Path=/; Max-Age=31536000; SameSite=Lax']);
  });
});
