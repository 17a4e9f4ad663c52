/** The console's shared pieces: its context (texts, calls, navigation, the operator) and a few plain components. */
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import type { Call } from './api.ts';
import { ConsoleError } from './api.ts';
import type { TextKey, Translate } from './texts.ts';

export type Operator = { id: string; email: string; role: 'support' | 'finance' | 'admin' };
export type ConsoleContext = {
  t: Translate;
  call: Call;
  navigate: (path: string) => void;
  operator: Operator;
  /** Answers already known by path, shown before (or instead of) loading them: the screens' tests render with them. */
  known?: Readonly<Record<string, unknown>>;
};

const Context = createContext<ConsoleContext | null>(null);
export const ConsoleProvider = Context.Provider;

export function useConsole(): ConsoleContext {
  const context = useContext(Context);
  if (!context) throw new Error('outside the console');
  return context;
}

export const canFinance = (operator: Operator) => operator.role === 'finance' || operator.role === 'admin';

/**
 * A moment as operators read it beside logs and the command line: `2026-11-28 20:57:11 UTC`, one zone for every
 * operator wherever they sit (the API's ISO time, to the second); what does not parse is shown as it came.
 */
export function utc(value: string): string {
  const moment = new Date(value);
  if (Number.isNaN(moment.getTime())) return value;
  const iso = moment.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** How long something has waited, in hours and minutes, in the console's language. */
export function age(t: Translate, seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours > 0 ? t('age_hours_minutes', { hours, minutes }) : t('age_minutes', { minutes });
}

/** Loads `path` now and whenever `reload` is called; the error is the refusal's words. */
export function useLoad<T>(path: string | null): { data: T | undefined; error: string | undefined; reload: () => void } {
  const { call, known } = useConsole();
  const [data, setData] = useState<T | undefined>(path === null ? undefined : (known?.[path] as T | undefined));
  const [error, setError] = useState<string>();
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (path === null) return;
    let live = true;
    setError(undefined);
    call<T>('GET', path).then(
      (answer) => live && setData(answer),
      (failure: unknown) => live && setError(failure instanceof Error ? failure.message : String(failure)),
    );
    return () => {
      live = false;
    };
  }, [call, path, round]);
  return { data, error, reload: useCallback(() => setRound((n) => n + 1), []) };
}

/** Runs an action, keeping its refusal (code and words) to show beside it. */
export function useAction(): { run: (work: () => Promise<unknown>) => Promise<boolean>; error: string | undefined; busy: boolean } {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      return true;
    } catch (failure) {
      setError(failure instanceof ConsoleError ? `${failure.code}: ${failure.message}` : String(failure));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { run, error, busy };
}

export function Section(props: { title: string; children: ReactNode; testId?: string }) {
  return (
    <section className="card flex flex-col gap-3" data-testid={props.testId}>
      <h2 className="m-0 text-lg font-600">{props.title}</h2>
      {props.children}
    </section>
  );
}

export function Refusal(props: { error: string | undefined }) {
  return props.error ? (
    <p role="alert" className="m-0 text-danger text-sm">
      {props.error}
    </p>
  ) : null;
}

/** A table of rows; `empty` when there are none. Only long texts (ids, hashes) break inside a word. */
export function Table(props: { head: TextKey[]; rows: ReactNode[][]; empty?: TextKey; testId?: string }) {
  const { t } = useConsole();
  if (props.rows.length === 0) return <p className="m-0 text-muted text-sm">{t(props.empty ?? 'common_none')}</p>;
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-sm border-collapse" data-testid={props.testId}>
        <thead>
          <tr>
            {props.head.map((key) => (
              <th key={key} className="text-left font-600 text-muted py-2 pr-4 border-b border-line whitespace-nowrap">
                {t(key)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((cells, i) => (
            <tr key={i} className="border-b border-line">
              {cells.map((cell, j) => (
                <td key={j} className={`py-2 pr-4 align-top ${typeof cell === 'string' && cell.length > 24 ? '[overflow-wrap:anywhere]' : ''}`}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Button(props: { children: ReactNode; onClick: () => void; disabled?: boolean; kind?: 'primary' | 'ghost'; testId?: string }) {
  return (
    <button type="button" className={`${props.kind === 'ghost' ? 'btn bg-bg text-fg border border-line' : 'btn-primary'} h-10 text-sm`} disabled={props.disabled} onClick={props.onClick} data-testid={props.testId}>
      {props.children}
    </button>
  );
}

export function Input(props: { label: string; value: string; onChange: (value: string) => void; testId?: string; placeholder?: string }) {
  return (
    <label className="flex flex-col gap-1 text-sm text-muted min-w-40 flex-1">
      {props.label}
      <input className="field h-10 text-sm" value={props.value} placeholder={props.placeholder} onChange={(e) => props.onChange(e.target.value)} data-testid={props.testId} />
    </label>
  );
}

/** A link inside the console: a plain anchor that navigates without a reload. */
export function Go(props: { to: string; children: ReactNode; testId?: string }) {
  const { navigate } = useConsole();
  return (
    <a
      href={props.to}
      className="text-accent no-underline hover:underline"
      data-testid={props.testId}
      onClick={(e) => {
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}
