import { describe, expect, it } from 'vitest';
import { createKeyedTurns } from '../../../../src/server/db/keyed-turns.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('turns per key', () => {
  it('runs work sharing a key one at a time in arrival order, and work on other keys at once', async () => {
    const idle: string[] = [];
    const inTurn = createKeyedTurns((key) => idle.push(key));
    const log: string[] = [];
    const job = (name: string, keys: string[]) =>
      inTurn(keys, async () => {
        log.push(`${name} in`);
        await tick();
        log.push(`${name} out`);
        return name;
      });
    const results = await Promise.all([job('a', ['x']), job('b', ['x', 'y']), job('c', ['z']), job('d', ['y'])]);
    expect(results).toEqual(['a', 'b', 'c', 'd']);
    // c shares no key and starts at once; b waits for a, d waits for b.
    expect(log.indexOf('c in')).toBeLessThan(log.indexOf('a out'));
    expect(log.indexOf('b in')).toBeGreaterThan(log.indexOf('a out'));
    expect(log.indexOf('d in')).toBeGreaterThan(log.indexOf('b out'));
    expect(idle.sort()).toEqual(['x', 'y', 'z']);
  });

  it('passes the turn on when work fails, and crossing key sets in opposite orders do not wait on each other forever', async () => {
    const inTurn = createKeyedTurns();
    const failing = inTurn(['p'], async () => {
      await tick();
      throw new Error('no');
    });
    const next = inTurn(['p'], async () => 'next');
    await expect(failing).rejects.toThrow('no');
    expect(await next).toBe('next');
    const crossed = await Promise.all([inTurn(['m', 'n'], async () => tick().then(() => 1)), inTurn(['n', 'm'], async () => tick().then(() => 2))]);
    expect(crossed).toEqual([1, 2]);
  });
});

describe('a bounded wait', () => {
  it('runs the work past its wait without the turn, and the work after it still waits for the work before', async () => {
    const inTurn = createKeyedTurns();
    const log: string[] = [];
    let release = () => {};
    const first = inTurn(['k'], () => new Promise<void>((resolve) => (release = resolve)).then(() => log.push('first out')));
    const impatient = inTurn(['k'], async () => log.push('impatient in'), 20);
    const patient = inTurn(['k'], async () => log.push('patient in'));
    await impatient;
    expect(log).toEqual(['impatient in']);
    await tick();
    expect(log).toEqual(['impatient in']);
    release();
    await Promise.all([first, patient]);
    expect(log).toEqual(['impatient in', 'first out', 'patient in']);
  });

  it('keeps its turn when the work outlasts the wait', async () => {
    const inTurn = createKeyedTurns();
    const log: string[] = [];
    const slow = inTurn(['s'], () => new Promise<void>((resolve) => setTimeout(resolve, 40)).then(() => log.push('slow out')), 10);
    const next = inTurn(['s'], async () => log.push('next in'));
    await Promise.all([slow, next]);
    expect(log).toEqual(['slow out', 'next in']);
  });
});
