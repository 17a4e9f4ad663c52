import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/server/config.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.port).toBe(4321);
    expect(config.publicUrl).toBe('http://localhost:4321');
    expect(config.databaseUrl).toBeUndefined();
    expect(config.dataDir.endsWith('/data')).toBe(true);
    expect(config.logLevel).toBe('info');
  });

  it('treats an empty variable as unset and trims a trailing slash from PUBLIC_URL', () => {
    const config = loadConfig({ PORT: '', PUBLIC_URL: 'https://wallet.example/' });
    expect(config.port).toBe(4321);
    expect(config.publicUrl).toBe('https://wallet.example');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'nonsense'],
    ['DATABASE_URL', 'mysql://root@localhost/x'],
    ['PUBLIC_URL', 'ftp://x'],
    ['LOG_LEVEL', 'loud'],
  ])('refuses %s=%s with one line naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message.startsWith(`${name} is invalid`)).toBe(true);
    expect(message).not.toContain('\n');
  });

  it('hides the password of a bad DATABASE_URL', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u:secret@h/x' })).toThrow(/\*\*\*/);
  });
});
