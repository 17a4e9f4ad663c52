// The layer rules of ARCHITECTURE.md "Layout", checked by `npm run lint:deps` (part of `npm test`).
// Paths are relative to the repository root; tests/unit/architecture/layers.test.ts proves each kind of rule bites.
import type { IConfiguration } from 'dependency-cruiser';

const port = '^src/server/adapters/[^/]+/port\\.ts$';
const jobsPort = '^src/server/jobs/port\\.ts$';
const config = '^src/server/config[^/]*\\.ts$';

const configuration: IConfiguration = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No import cycles anywhere in src (type-only imports count).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'lib-imports-only-lib',
      comment: 'src/lib is pure code shared by browser and server: it imports nothing of the project outside src/lib (npm packages are fine, Node built-ins are not); the translations in i18n/*.json are data it reads, not code.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { pathNot: ['^src/lib/', '^node_modules/', '^i18n/[^/]+\\.json$'] },
    },
    {
      name: 'domain-not-to-outer-layers',
      comment: 'The domain talks to the outside only through port files: no http, jobs, idp, adapter implementation, config*.ts or main.ts.',
      severity: 'error',
      from: { path: '^src/server/domain/' },
      to: { path: ['^src/server/(http|jobs|idp|adapters)/', config, '^src/server/main\\.ts$'], pathNot: port },
    },
    {
      name: 'ledger-writes-only-from-orders',
      comment: "Every ledger entry is a step of a flow: ledger-writes.ts (post, transfer, hold, release, settle) is imported only by domain/orders/, whose entries.ts writes each entry under a key from entry-keys.ts (ARCHITECTURE.md, Orders).",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/server/domain/orders/' },
      to: { path: '^src/server/domain/ledger-writes\\.ts$' },
    },
    {
      name: 'adapters-not-to-inner-layers',
      comment: 'Adapters receive their options and never import the domain, http, jobs (a jobs port file excepted), idp or config*.ts.',
      severity: 'error',
      from: { path: '^src/server/adapters/' },
      to: { path: ['^src/server/(domain|http|jobs|idp)/', config], pathNot: jobsPort },
    },
    {
      name: 'http-not-to-adapter-implementations',
      comment: 'http calls the domain; it may name an adapter port, never an implementation.',
      severity: 'error',
      from: { path: '^src/server/http/' },
      to: { path: '^src/server/adapters/', pathNot: port },
    },
    {
      name: 'idp-not-to-http',
      comment: 'The identity provider is mounted beside the gateway, not inside it: it never imports http.',
      severity: 'error',
      from: { path: '^src/server/idp/' },
      to: { path: '^src/server/http/' },
    },
    {
      name: 'idp-not-to-adapter-implementations',
      comment: 'Like http, the identity provider names an adapter port (the secrets key, its sealed settings), never an implementation.',
      severity: 'error',
      from: { path: '^src/server/idp/' },
      to: { path: '^src/server/adapters/', pathNot: port },
    },
    {
      name: 'http-not-to-jobs',
      comment: 'http and jobs are siblings that both call the domain.',
      severity: 'error',
      from: { path: '^src/server/http/' },
      to: { path: '^src/server/jobs/' },
    },
    {
      name: 'stores-not-to-react',
      comment: 'Stores are framework-free: nothing in src/stores knows React.',
      severity: 'error',
      from: { path: '^src/stores/' },
      to: { path: '^node_modules/(react|react-dom|@nanostores/react)/' },
    },
    {
      name: 'stores-not-to-wallet',
      comment: 'The wallet renders the stores, never the other way round.',
      severity: 'error',
      from: { path: '^src/stores/' },
      to: { path: '^src/wallet/' },
    },
    {
      name: 'wallet-not-to-api',
      comment: 'The wallet reaches the gateway only through the stores.',
      severity: 'error',
      from: { path: '^src/wallet/' },
      to: { path: '^src/api/' },
    },
    {
      name: 'browser-not-to-server',
      comment: 'Browser code (and src/lib, shared with it) never imports the server.',
      severity: 'error',
      from: { path: '^src/(api|stores|wallet|platform|lib|operator)/' },
      to: { path: '^src/server/' },
    },
    {
      name: 'users-not-to-operator',
      comment: "The operator console (src/operator) is its own island: nothing of the users' side loads it.",
      severity: 'error',
      from: { path: '^src/(api|stores|wallet|platform|lib|layouts)/' },
      to: { path: '^src/operator/' },
    },
  ],
  options: {
    doNotFollow: { path: '^node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs'],
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.tsx', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};

export default configuration;
