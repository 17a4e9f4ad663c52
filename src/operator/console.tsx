/**
 * The operator console's island (/operator/*), apart from the wallet's: its own sign-in, texts and screens. A screen
 * is one entry of SCREENS (path, nav text, least role, component).
 */
import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ConsoleError, createCall } from './api.ts';
import { createSession, type Session } from './session.ts';
import { texts, type TextKey } from './texts.ts';
import { Button, ConsoleProvider, type ConsoleContext, type Operator } from './ui.tsx';
import { SearchScreen } from './screens/search.tsx';
import { UserScreen } from './screens/user.tsx';
import { AdjustmentsScreen } from './screens/adjustments.tsx';
import { MailScreen } from './screens/mail.tsx';
import { StuckScreen } from './screens/stuck.tsx';
import { AuditScreen } from './screens/audit.tsx';
import { RolesScreen } from './screens/roles.tsx';
import { ReviewsScreen } from './screens/reviews.tsx';

type Role = Operator['role'];
const RANK: Record<Role, number> = { support: 1, finance: 2, admin: 3 };

/** The screens of the navigation, in its order. */
const SCREENS: { path: string; text: TextKey; role: Role; screen: () => ReactNode }[] = [
  { path: '/operator', text: 'nav_search', role: 'support', screen: () => <SearchScreen /> },
  { path: '/operator/reviews', text: 'nav_reviews', role: 'finance', screen: () => <ReviewsScreen /> },
  { path: '/operator/adjustments', text: 'nav_adjustments', role: 'support', screen: () => <AdjustmentsScreen /> },
  { path: '/operator/mail', text: 'nav_mail', role: 'support', screen: () => <MailScreen /> },
  { path: '/operator/stuck', text: 'nav_stuck', role: 'support', screen: () => <StuckScreen /> },
  { path: '/operator/audit', text: 'nav_audit', role: 'support', screen: () => <AuditScreen /> },
  { path: '/operator/roles', text: 'nav_roles', role: 'admin', screen: () => <RolesScreen /> },
];

const USER_PATH = /^\/operator\/users\/([0-9a-f-]{36})$/i;

function setCookie(name: string, value: string): void {
  document.cookie = `${name}=${encodeURIComponent(value)}; Path=/; Max-Age=31536000; SameSite=Lax`;
}

type Phase = { name: 'starting' } | { name: 'signed-out' } | { name: 'refused'; message: string } | { name: 'ready'; operator: Operator };

export function OperatorConsole(props: { locale: 'en' | 'ru'; theme: 'dark' | 'light' | undefined }) {
  const [locale, setLocale] = useState(props.locale);
  const [theme, setTheme] = useState<'dark' | 'light'>(props.theme ?? (window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  const t = useMemo(() => texts(locale), [locale]);
  const [path, setPath] = useState(window.location.pathname.replace(/\/+$/, '') || '/operator');
  const [session, setSession] = useState<Session>();
  const [phase, setPhase] = useState<Phase>({ name: 'starting' });

  const navigate = useCallback((to: string) => {
    window.history.pushState(null, '', to);
    setPath(to);
    window.scrollTo(0, 0);
  }, []);
  useEffect(() => {
    const back = () => setPath(window.location.pathname.replace(/\/+$/, '') || '/operator');
    window.addEventListener('popstate', back);
    return () => window.removeEventListener('popstate', back);
  }, []);
  useEffect(() => {
    document.documentElement.lang = locale;
    document.documentElement.dataset.theme = theme;
  }, [locale, theme]);

  const call = useMemo(() => createCall(async () => (session ? session.token() : null), () => setPhase({ name: 'signed-out' })), [session]);

  useEffect(() => {
    let live = true;
    void (async () => {
      const made = await createSession().catch(() => undefined);
      if (!made) return live && setPhase({ name: 'refused', message: t('sign_in_unavailable') });
      if (!live) return;
      setSession(made);
      if (window.location.pathname.startsWith('/operator/callback')) {
        const to = await made.callback().catch(() => '/operator');
        window.history.replaceState(null, '', to);
        setPath(to);
      }
      if (!(await made.token())) return setPhase({ name: 'signed-out' });
      try {
        const me = await createCall(made.token, () => setPhase({ name: 'signed-out' }))<Operator>('GET', '/me');
        if (live) setPhase({ name: 'ready', operator: me });
      } catch (error) {
        if (live && error instanceof ConsoleError && error.status !== 401) setPhase({ name: 'refused', message: error.status === 403 ? t('sign_in_no_role') : error.message });
      }
    })();
    return () => {
      live = false;
    };
    // The session is made once; texts follow the language without signing in again.
  }, []);

  const header = (
    <header className="flex items-center gap-4 px-6 h-16 border-b border-line">
      <strong className="text-lg">{t('title')}</strong>
      <span className="flex-1" />
      {phase.name === 'ready' && (
        <span className="text-sm text-muted" data-testid="operator-who">
          {phase.operator.email} · {phase.operator.role}
        </span>
      )}
      <Button
        kind="ghost"
        testId="toggle-language"
        onClick={() => {
          const next = locale === 'en' ? 'ru' : 'en';
          setCookie('lang', next === 'ru' ? 'RUS' : 'ENG');
          setLocale(next);
        }}
      >
        {locale === 'en' ? 'Русский' : 'English'}
      </Button>
      <Button
        kind="ghost"
        testId="toggle-theme"
        onClick={() => {
          const next = theme === 'dark' ? 'light' : 'dark';
          setCookie('theme', next);
          setTheme(next);
        }}
      >
        {t(theme === 'dark' ? 'theme_light' : 'theme_dark')}
      </Button>
      {session && phase.name !== 'signed-out' && (
        <Button kind="ghost" testId="sign-out" onClick={() => void session.signOut()}>
          {t('sign_out')}
        </Button>
      )}
    </header>
  );

  let body: ReactNode;
  if (phase.name === 'starting') body = <p className="text-muted">{t('common_loading')}</p>;
  else if (phase.name === 'signed-out')
    body = (
      <div className="card max-w-120 flex flex-col gap-4">
        <p className="m-0">{t('sign_in_text')}</p>
        <Button onClick={() => void session?.signIn()} disabled={!session} testId="sign-in">
          {t('sign_in')}
        </Button>
      </div>
    );
  else if (phase.name === 'refused')
    body = (
      <p role="alert" className="text-danger" data-testid="refused">
        {phase.message}
      </p>
    );
  else body = <Screens path={path} context={{ t, call, navigate, operator: phase.operator }} />;

  return (
    <div className="min-h-dvh">
      {header}
      {body && <main className="px-6 py-6 max-w-[1280px] mx-auto">{body}</main>}
    </div>
  );
}

/** The navigation and the screen of `path`, as the operator's role allows. */
export function Screens(props: { path: string; context: ConsoleContext }) {
  const { t, navigate, operator } = props.context;
  const allowed = SCREENS.filter((s) => RANK[operator.role] >= RANK[s.role]);
  const user = USER_PATH.exec(props.path)?.[1];
  const current = allowed.find((s) => s.path === props.path) ?? (user ? undefined : allowed[0]);
  return (
    <ConsoleProvider value={props.context}>
      <nav className="flex gap-2 mb-6 flex-wrap" aria-label={t('title')}>
        {allowed.map((s) => (
          <a
            key={s.path}
            href={s.path}
            data-testid={`nav-${s.path.split('/')[2] ?? 'search'}`}
            className={`btn h-10 text-sm no-underline ${s === current ? 'bg-primary text-bg' : 'bg-surface text-fg'}`}
            onClick={(e) => {
              e.preventDefault();
              navigate(s.path);
            }}
          >
            {t(s.text)}
          </a>
        ))}
      </nav>
      {user ? <UserScreen key={user} userId={user} /> : current?.screen()}
    </ConsoleProvider>
  );
}
