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
  pages: 'Pages',
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
  // the embedding settings page (settings/Settings.tsx)
  embeddingSettings: 'Embedding',
  save: 'Save',
  saved: 'Saved.',
  cancel: 'Cancel',
  delete: 'Delete',
  rename: 'Rename',
  done: 'Done',
  copy: 'Copy',
  copied: 'Copied.',
  copyFailed: 'The browser did not allow copying: select the text and copy it.',
  shownOnce: 'It is shown this once: copy it now and keep it somewhere safe.',
  onLine: 'Line {line}: {message}',
  created: 'Created',
  description: 'Description',
  status: 'Status',
  actions: 'Actions',
  allowedOrigins: 'Allowed origins',
  allowedOriginsHint: 'The host pages that may show your dashboards in an iframe: exact origins such as https://app.example.com, one a line.',
  originsField: 'Origins, one a line',
  sessionSnippet: 'Embed a dashboard',
  sessionSnippetHint: 'Your backend mints a session for each viewer with an admin\'s API key (SVC_API_KEY), then opens the embed with it. The code below does that as written.',
  findDashboard: 'Find a dashboard',
  dashboard: 'Dashboard',
  noPublishedDashboard: 'No published dashboard',
  embedTenant: 'Customer (embed tenant)',
  externalId: 'Viewer id (externalId)',
  securityContext: 'Security context (JSON)',
  securityContextHint: 'What your access policies read for this viewer, as {securityContext.<key>}.',
  contextNotJson: 'The security context is not valid JSON.',
  contextNotObject: 'The security context must be a JSON object, such as {"tenant": "customer-a"}.',
  snippetLanguage: 'Language',
  snippetOf: 'Generate Session in {language}',
  snippetNeeds: 'Pick a published dashboard and a customer to see the code.',
  embedTenants: 'Customers (embed tenants)',
  embedTenantsHint: 'Each of your customers is an embed tenant: its viewers, threads and mentions are kept apart from every other.',
  noTenants: 'No customer yet: Generate Session adds one the first time it names it, or add one here.',
  newTenantName: 'New customer',
  tenantNameRule: 'Lower-case letters, digits and dashes; it starts with a letter (customer-c).',
  addTenant: 'Add customer',
  viewerCount: '{count} viewers',
  viewers: 'Viewers',
  viewersOf: 'The viewers of {name}',
  noViewers: 'No viewer yet.',
  username: 'Name',
  newNameOf: 'New name of {name}',
  renameRevokes: 'Renaming ends the customer\'s open sessions: their tokens carry the old name.',
  confirmDeleteTenant: 'Delete {name}, its viewers and threads',
  webhooks: 'Webhooks',
  webhooksHint: 'svc posts comment and session events to your endpoints, signed with the endpoint\'s secret (Standard Webhooks).',
  noEndpoints: 'No endpoint yet.',
  endpointUrl: 'Endpoint URL',
  events: 'Events',
  addEndpoint: 'Add endpoint',
  signingSecret: 'The signing secret:',
  disabled: 'Disabled',
  deliveries: 'Deliveries',
  deliveriesOf: 'Deliveries to {url}',
  noDeliveries: 'Nothing delivered yet.',
  event: 'Event',
  attempts: 'Attempts',
  lastError: 'Last answer',
  replay: 'Replay',
  delivery_pending: 'Pending',
  delivery_delivered: 'Delivered',
  delivery_failed: 'Failed',
  confirmDeleteEndpoint: 'Delete this endpoint',
  apiKeys: 'Your API keys',
  apiKeysHint: 'Keys for your backend\'s calls to svc, as you. svc keeps only a hash: a key is shown once, when it is made.',
  noKeys: 'You have no API key.',
  unnamedKey: 'Unnamed key',
  keyEndsWith: 'ends with {hint}',
  keyName: 'Name of the new key',
  createKey: 'Create key',
  newKey: 'Your new API key:',
  confirmDeleteKey: 'Delete {name}',
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
