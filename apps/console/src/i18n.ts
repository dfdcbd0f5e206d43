/**
 * The console's own words, as the embed keeps its own (apps/embed/src/i18n.ts): one catalogue per language, English
 * the fallback of every missing message and of unknown languages; a locale picks its language's catalogue
 * (`de-CH` -> `de`), while dates and numbers follow the full locale through Intl.
 */
const en = {
  loading: 'Loading…',
  appName: 'svc console',
  signInTitle: 'Sign in to svc',
  email: 'Email',
  password: 'Password',
  tenantName: 'Account (tenant name)',
  tenantNameHint: 'This email belongs to users of several accounts: type the account\'s tenant name.',
  signIn: 'Sign in',
  signingIn: 'Signing in…',
  signOut: 'Sign out',
  signedInAs: 'Signed in as {email}',
  wrongPassword: 'The email or the password is wrong.',
  tooManyAttempts: 'Too many sign-in attempts: wait a minute and try again.',
  offline: 'svc could not be reached. Check that it is running, then try again.',
  unexpected: 'Something went wrong: {message}',
  deployment: 'Deployment',
  noDeployments: 'This account has no deployment yet.',
  workspace: 'Workspace',
  breadcrumb: 'Folders',
  search: 'Search',
  searchPlaceholder: 'Search by name',
  order: 'Order',
  orderUpdated: 'Last updated first',
  orderCreated: 'Newest first',
  orderName: 'Name, A to Z',
  orderViewed: 'Last viewed by me first',
  items: 'Items',
  empty: 'Nothing here yet.',
  noMatch: 'Nothing matches “{search}”.',
  loadMore: 'Show more',
  folder: 'Folder',
  workbook: 'Workbook',
  report: 'Report',
  favorite: 'Favourite {name}',
  favoriteAdded: '{name} is a favourite.',
  favoriteRemoved: '{name} is no longer a favourite.',
  published: 'Published',
  draft: 'Draft',
  archived: 'Archived',
  unpublishedChanges: 'unpublished changes',
  noDashboard: 'No dashboard',
  updated: 'Updated {date}',
  listError: 'The workspace could not be loaded: {message}',
  favoriteError: 'The favourite could not be changed: {message}',
  dashboardError: 'Status unknown: {message}',
  retry: 'Try again',
  sessionEnded: 'Your session has ended: sign in again.',
  newDashboard: 'New dashboard',
  newDashboardTitle: 'Title of the new dashboard',
  titleRequired: 'Type a title for the dashboard.',
  create: 'Create',
  cancel: 'Cancel',
  createError: 'The dashboard could not be created: {message}',
  edit: 'Edit',
  editNamed: 'Edit {name}',
  editorTitle: 'Dashboard editor',
  dashboardLoadError: 'The dashboard could not be opened: {message}',
  dashboardTitle: 'Dashboard title',
  back: 'Back to the workspace',
  undo: 'Undo',
  redo: 'Redo',
  publish: 'Publish',
  publishedVersion: 'Published as version {version}.',
  publishError: 'The dashboard could not be published: {message}',
  restored: 'Version {version} is restored into the draft: publish it to show it.',
  restoreError: 'The version could not be restored: {message}',
  savedDraft: 'Draft saved',
  saving: 'Saving…',
  unsaved: 'Unsaved changes',
  saveError: 'The draft could not be saved: {message}',
  conflict: 'Someone else saved this dashboard since you opened it, so your change was not saved. Reload to see their version, then redo your change.',
  reloadTheirs: 'Reload their version',
  widgets: 'Widgets',
  noWidgets: 'No widget yet: build a chart above and add it, or add a text.',
  textWidget: 'Text',
  position: 'column {x}, row {y}, {w} wide, {h} high',
  deleteWidget: 'Delete {name}',
  moveWidget: 'Move or resize {name}',
  boardKeys: 'Drag a widget by its handle, resize it by its corner. With the handle focused, the arrow keys move it and Shift with the arrow keys resizes it.',
  textMarkdown: 'Text (Markdown)',
  addText: 'Add text',
  versions: 'Versions',
  noVersions: 'Not published yet.',
  version: 'Version {version}',
  current: 'what viewers see',
  restore: 'Restore version {version}',
  versionsError: 'The versions could not be loaded: {message}',
  builder: 'Chart builder',
  view: 'View',
  measures: 'Measures',
  dimensions: 'Dimensions',
  time: 'Time',
  timeDimension: 'Time dimension',
  grain: 'Grain',
  dateFrom: 'From',
  dateTo: 'To',
  none: 'None',
  pick: 'Pick a member',
  filters: 'Filters',
  filterMember: 'Filter {n}: member',
  filterOperator: 'Filter {n}: operator',
  filterValues: 'Filter {n}: values',
  filterHint: 'Values are separated by commas; a date range is two dates (2025-01-01, 2025-12-31).',
  removeFilter: 'Remove filter {n}',
  addFilter: 'Add a filter',
  orderBy: 'Order by',
  direction: 'Direction',
  ascending: 'Ascending',
  descending: 'Descending',
  limit: 'Limit',
  chartKind: 'Chart',
  suggested: 'Suggested for this query: {kind}',
  chartTitle: 'Chart title',
  addToDashboard: 'Add to dashboard',
  chartAdded: '“{title}” is added to the dashboard.',
  preview: 'Preview',
  previewIdle: 'Pick a measure or a dimension to see a preview.',
  previewLoading: 'Running the query…',
  previewSource: 'Answered from: {source} · {rows} rows',
  previewError: 'The preview failed: {message}',
  previewTable: 'Preview of the answer',
  previewMore: 'The first {shown} of {rows} rows.',
  kindLine: 'Line',
  kindBar: 'Bars',
  kindArea: 'Area',
  kindKpi: 'KPI (one value)',
  kindTable: 'Table',
  kindMap: 'Map',
  kindSankey: 'Sankey',
};

export type Messages = typeof en;
export type MessageKey = keyof Messages;

const catalogues: Record<string, Partial<Messages>> = {
  en,
  de: {
    loading: 'Wird geladen…',
    signInTitle: 'Bei svc anmelden',
    email: 'E-Mail',
    password: 'Passwort',
    tenantName: 'Konto (Tenant-Name)',
    signIn: 'Anmelden',
    signingIn: 'Anmeldung…',
    signOut: 'Abmelden',
    wrongPassword: 'E-Mail oder Passwort ist falsch.',
    search: 'Suchen',
    order: 'Sortierung',
    loadMore: 'Mehr anzeigen',
    published: 'Veröffentlicht',
    draft: 'Entwurf',
  },
};

/** The catalogue's language for a locale: `de-CH` -> `de`; English for a language without one. */
export function languageOf(locale: string): string {
  const language = locale.split('-')[0]!.toLowerCase();
  return Object.hasOwn(catalogues, language) ? language : 'en';
}

export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;

/** A translator for a locale: `t('signedInAs', { email })`. */
export function translator(locale: string): Translate {
  const catalogue = catalogues[languageOf(locale)]!;
  let numbers: Intl.NumberFormat | undefined;
  return (key, values) => {
    const template = catalogue[key] ?? en[key];
    return values === undefined ? template : template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = values[name];
      return typeof value === 'number' ? (numbers ??= new Intl.NumberFormat(locale)).format(value) : String(value ?? '');
    });
  };
}

/** The browser's locale (the console has no setting of its own yet). */
export const browserLocale = (): string => navigator.language || 'en';
