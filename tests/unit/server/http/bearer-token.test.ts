import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../../../src/server/net/bearer-token.ts';

describe('the bearer token of an Authorization header', () => {
  it('is what follows the scheme, whatever its case and the spaces around the token', () => {
    expect(bearerToken('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearerToken('bearer   abc.def.ghi  ')).toBe('abc.def.ghi');
    expect(bearerToken('BEARER\tabc')).toBe('abc');
  });

  it('is nothing for another scheme, a scheme alone or no header', () => {
    for (const header of [undefined, '', 'Bearer', 'Bearer   ', 'Basic dXNlcjpwYXNz', 'Bearerabc', 'Token abc']) expect(bearerToken(header), String(header)).toBeUndefined();
  });
});
