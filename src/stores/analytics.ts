/**
 * Analytics in the browser (SPEC §3, §7, §8, §9) on the RudderStack JavaScript SDK, the 'bundled' build (its plugins
 * are part of our own lazy chunk: nothing loads from a content network). It starts after the first screen is drawn,
 * configured from GET /api/client-config, and is off when the gateway names no source (no write key, tests).
 * Events: a page per route, identify with the account id once signed in (never an e-mail, address or amount),
 * 'load' once per app start with the app type, 'Page Unloaded' with timeOnPage (the SDK's page lifecycle, which
 * needs its beacon transport), the campaign of the `utm_` parameters the app was opened with. Sessions are the
 * SDK's (SPEC §9: the id is the session's start in ms, 13 digits). Any failure is logged once and never reaches
 * the app.
 */
import { getClientConfig } from '../api/user.ts';
import type { AnalyticsSource } from '../api/session.ts';
import { platform } from '../platform/platform.ts';
import { $routesReady, $authState, type AuthState } from './auth.ts';
import { $accountId } from './account.ts';
import { $router } from './router.ts';

/** SPEC §3: where the app runs, carried by the 'load' event. */
export function appType(): 'tg' | 'web' {
  return platform().kind === 'tg' ? 'tg' : 'web';
}

/** SPEC §3: the 'load' event, once per app start, with the account id and the app type. */
export function loadEvent(accountId: string): { event: 'load'; properties: { account: string; appType: 'tg' | 'web' } } {
  return { event: 'load', properties: { account: accountId, appType: appType() } };
}

/** SPEC §3: the campaign of the `utm_` parameters, named as the SDK names them (utm_campaign is `name`). */
export function campaignOf(search: string): Record<string, string> {
  const campaign: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(search)) {
    if (!key.startsWith('utm_') || key.length === 4 || value === '') continue;
    const name = key.slice(4);
    campaign[name === 'campaign' ? 'name' : name] = value.slice(0, 200);
  }
  return campaign;
}

type Options = Record<string, unknown>;

/** The part of the SDK this store calls (RudderAnalytics): a test passes a recorder. */
export type AnalyticsSdk = {
  load: (writeKey: string, dataPlaneUrl: string, options: Options) => void;
  page: (name: string, properties: Options, options: Options) => void;
  track: (event: string, properties: Options, options: Options) => void;
  identify: (userId: string, traits: Options, options: Options) => void;
  reset: () => void;
};

export type AnalyticsDeps = {
  /** The source from the client config; undefined is off. */
  source: () => Promise<AnalyticsSource | undefined>;
  /** The SDK, loaded lazily. */
  loadSdk: () => Promise<AnalyticsSdk>;
  /** Runs `work` once the first screen is drawn and the browser is idle. */
  afterFirstScreen: (work: () => void) => () => void;
  log: (message: string, error?: unknown) => void;
  /** The page the app was opened on, read when the store starts (before any redirect drops the query). */
  location: () => { path: string; search: string; origin: string; title: string };
};

const sdkModule = () => import('./analytics-sdk.ts');

export const BROWSER_DEPS: AnalyticsDeps = {
  source: async () => (await getClientConfig()).analytics,
  loadSdk: async () => new (await sdkModule()).RudderAnalytics() as unknown as AnalyticsSdk,
  afterFirstScreen(work) {
    let cancel = (): void => {};
    const stop = $routesReady.subscribe((ready) => {
      if (!ready) return;
      const idle = window.requestIdleCallback ?? ((callback: () => void) => window.setTimeout(callback, 1));
      const handle = idle(() => work(), { timeout: 3_000 });
      cancel = () => (window.cancelIdleCallback ?? window.clearTimeout)(handle);
    });
    return () => {
      stop();
      cancel();
    };
  },
  log: (message, error) => console.warn(`analytics: ${message}`, error ?? ''),
  location: () => ({ path: window.location.pathname, search: window.location.search, origin: window.location.origin, title: document.title }),
};

/** The SDK's load options: its transport, lifecycle and storage; never a third party's address. */
export function loadOptions(source: AnalyticsSource, origin: string): Options {
  return {
    configUrl: source.configUrl,
    // Plugins are bundled; these only ever point at our own origin, so nothing is fetched from a content network.
    pluginsSDKBaseURL: `${origin}/analytics/plugins`,
    destSDKBaseURL: `${origin}/analytics/integrations`,
    polyfillIfRequired: false,
    plugins: ['BeaconQueue', 'XhrQueue', 'StorageEncryption', 'StorageMigrator'],
    // SPEC §9: 'Page Unloaded' with timeOnPage is sent by the beacon transport only; it flushes every 2 s.
    useBeacon: true,
    beaconQueueOptions: { maxItems: 10, flushQueueInterval: 2_000 },
    autoTrack: { pageLifecycle: { enabled: true } },
    sessions: { autoTrack: true },
    logLevel: 'ERROR',
  };
}

type Call = (sdk: AnalyticsSdk) => void;

/**
 * Starts analytics for this app start; returns the stop. Route changes and the sign-in before the SDK is ready
 * are queued with their time and page, and sent once it is.
 */
export function startAnalytics(deps: AnalyticsDeps = BROWSER_DEPS): () => void {
  const { search, origin } = deps.location();
  const campaign = campaignOf(search);
  // The SDK's tab_url is the whole address, hash included: the mini app's launch data must never reach analytics.
  const common = (): Options => {
    const here = deps.location();
    return { originalTimestamp: new Date().toISOString(), page: { tab_url: `${here.origin}${here.path}${here.search}` }, ...(Object.keys(campaign).length ? { campaign } : {}) };
  };
  const pending: Call[] = [];
  let sdk: AnalyticsSdk | undefined;
  let off = false;
  const failed = new Set<string>();
  // SPEC §8: each kind of failure is logged once; the app goes on without analytics.
  const fail = (what: string, error?: unknown) => {
    if (failed.has(what)) return;
    failed.add(what);
    deps.log(what, error);
  };
  const send = (call: Call) => {
    if (off) return;
    if (!sdk) {
      pending.push(call);
      return;
    }
    try {
      call(sdk);
    } catch (error) {
      fail('an event could not be sent', error);
    }
  };

  let lastPath: string | undefined;
  const stopRouter = $router.subscribe((page) => {
    if (!page || page.path === lastPath) return;
    lastPath = page.path;
    const here = deps.location();
    const properties = { path: page.path, url: `${origin}${page.path}`, search: here.search, title: here.title };
    const options = common();
    send((s) => s.page(page.route, properties, options));
  });

  let identified: string | null = null;
  let loadSent = false;
  const stopAccount = $accountId.subscribe((accountId) => {
    if (!accountId || accountId === identified) return;
    identified = accountId;
    const options = common();
    send((s) => s.identify(accountId, {}, options));
    if (loadSent) return;
    loadSent = true;
    const { event, properties } = loadEvent(accountId);
    send((s) => s.track(event, properties, options));
  });
  const stopAuth = $authState.listen((state: AuthState) => {
    if (state !== 'anonymous' || identified === null) return;
    identified = null;
    send((s) => s.reset());
  });

  const cancelStart = deps.afterFirstScreen(() => {
    void (async () => {
      const source = await deps.source().catch((error: unknown) => fail('the client configuration could not be read', error));
      if (!source || off) {
        off = true;
        pending.length = 0;
        return;
      }
      const loaded = await deps.loadSdk().catch((error: unknown) => fail('the SDK could not be loaded', error));
      if (!loaded || off) {
        off = true;
        pending.length = 0;
        return;
      }
      try {
        loaded.load(source.writeKey, source.dataPlaneUrl, loadOptions(source, origin));
      } catch (error) {
        fail('the SDK could not start', error);
        off = true;
        return;
      }
      sdk = loaded;
      for (const call of pending.splice(0)) send(call);
    })();
  });

  return () => {
    off = true;
    cancelStart();
    stopRouter();
    stopAccount();
    stopAuth();
  };
}
