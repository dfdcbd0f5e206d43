/**
 * The server's and the embed's floors, kept by a tool (issue 32 item 5): `npm run lint` runs dependency-cruiser
 * with these rules, and a broken one fails `npm test`. The violations that stood when the rules came in are listed
 * in `.dependency-cruiser-known-violations.json` and tolerated (`--ignore-known`) until issue 32 removes them; a new
 * one fails at once. When a listed one is fixed, regenerate the list (`npm run lint:deps:baseline`) so it cannot
 * come back.
 */
const FEATURES = '(accounts|audit|comments|cube|dashboards|data|deployments|embed|explore|import|sessions|webhooks|workspace)';

/**
 * The data path's rooms (issue 32) and what each may import of the others: the flow runs one way, route -> scope ->
 * policy -> plan -> cache -> data source. semantic/ is the vocabulary every room speaks; a room imports only rooms
 * below it, and none imports the orchestration at data/'s root (data.service, data.run, data.scope, ...).
 */
const DATA_ROOMS = {
  semantic: [],
  policy: ['semantic'],
  warehouse: ['semantic'],
  cache: ['semantic'],
  compiler: ['semantic', 'policy'],
  preagg: ['semantic', 'policy', 'compiler', 'warehouse', 'cache'],
  plan: ['semantic', 'policy', 'compiler', 'preagg'],
};

/** @type {import('dependency-cruiser').IForbiddenRuleType[]} */
const DATA_FLOW = Object.entries(DATA_ROOMS).map(([room, below]) => ({
  name: `data-flow-${room}`,
  severity: 'error',
  comment: `data/${room}/ imports ${below.length === 0 ? 'no other part of data/' : `only data/{${below.join(',')}}/ of data/`}: the data path runs one way (docs/architecture.md).`,
  from: { path: `^apps/server/src/data/${room}/`, pathNot: '\\.test\\.ts$' },
  to: { path: '^apps/server/src/data/', pathNot: `^apps/server/src/data/(${[room, ...below].join('|')})/` },
}));

/**
 * The embed's chart modules the console draws its preview with (apps/embed/src/explore/ChartView.tsx), the Markdown
 * of TEXT widgets (widgets/WidgetBody.tsx), and the one chart builder both apps use (explore/Builder.tsx and its pure
 * helpers, issue 35; the embed's explore panel around it, which fetches, is not shared).
 */
const SHARED_CHARTS = 'dashboard/(charts\\.tsx|sankey\\.tsx|vega\\.ts|grain\\.ts|useMarkdown\\.ts|cells\\.ts|chartKeys\\.ts|tableColumns\\.ts|charts\\.css|markdown\\.ts)|format\\.ts'
  + '|explore/(Builder\\.tsx|builder\\.ts|builderMessages\\.ts|chartEdit\\.ts|ChartView\\.tsx|useChart\\.ts)';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: two modules that each need the other cannot be understood, tested or moved apart.',
      from: { path: '^apps/(server|embed|console)/src/' },
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing-of-svc',
      severity: 'error',
      comment: 'core/ (errors, config, cursors, events) is the floor: it imports nothing of svc (DESIGN.md). Tests may reach across.',
      from: { path: '^apps/server/src/core/', pathNot: '\\.test\\.ts$' },
      to: { path: '^apps/server/src/', pathNot: '^apps/server/src/core/' },
    },
    {
      name: 'http-imports-no-feature',
      severity: 'error',
      comment: 'http/ (auth hooks, errors, OpenAPI, limits, metrics) depends on no feature: app.ts injects what it needs (DESIGN.md).',
      from: { path: '^apps/server/src/http/', pathNot: '\\.test\\.ts$' },
      to: { path: `^apps/server/src/${FEATURES}/` },
    },
    {
      name: 'db-imports-no-feature',
      severity: 'error',
      comment: 'db/ (Kysely, migrations, the change feed) sits under the features.',
      from: { path: '^apps/server/src/db/', pathNot: '\\.test\\.ts$' },
      to: { path: `^apps/server/src/${FEATURES}/` },
    },
    {
      name: 'workspace-imports-no-dashboards',
      severity: 'error',
      comment: 'dashboards/ imports workspace/ (its read check needs the grants); workspace/ gets what it needs of dashboards/ from app.ts, so the arrow runs one way.',
      from: { path: '^apps/server/src/workspace/', pathNot: '\\.test\\.ts$' },
      to: { path: '^apps/server/src/dashboards/' },
    },
    {
      name: 'dashboards-imports-no-data',
      severity: 'error',
      comment: "data/ reads dashboards (a widget's snapshot); the authoring API's checks of a draft against the model come to dashboards/ from app.ts (DraftChecks), so the arrow runs one way.",
      from: { path: '^apps/server/src/dashboards/', pathNot: '\\.test\\.ts$' },
      to: { path: '^apps/server/src/data/' },
    },
    {
      name: 'no-test-code-in-production',
      severity: 'error',
      comment: 'Production code never imports a test or the test helpers.',
      from: { path: '^apps/server/src/', pathNot: '\\.test\\.ts$' },
      to: { path: ['\\.test\\.ts$', '^apps/server/test/'] },
    },
    {
      name: 'console-imports-only-the-embeds-charts',
      severity: 'error',
      comment: "The console draws charts with the embed's own components (docs/decisions.md, issue 34): of the embed it imports those, their pure helpers, their stylesheet and the types of an answer, never the embed's session, fetching or pages.",
      from: { path: '^apps/console/src/' },
      to: { path: '^apps/embed/src/', pathNot: `^apps/embed/src/(${SHARED_CHARTS}|api\\.ts|assets\\.d\\.ts)$` },
    },
    {
      name: 'embed-charts-stay-pure',
      severity: 'error',
      comment: "The embed's chart modules the console imports reach nothing of the embed but each other and the answer's types: a chart that needed the embed's session or context would break the console's preview.",
      from: { path: `^apps/embed/src/(${SHARED_CHARTS})$` },
      to: { path: '^apps/embed/src/', pathNot: `^apps/embed/src/(${SHARED_CHARTS}|api\\.ts)$` },
    },
    ...DATA_FLOW,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '(^|/)dist/'] },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts'] },
  },
};
