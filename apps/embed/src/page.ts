import type { Surface } from '@svc/protocol';

/** What svc's server put into the page (apps/server embed.service `EmbedPageConfig`). */
export interface PageConfig {
  allowedOrigins: string[];
  /** An admin's preview session's page: svc's own origin (the console) frames it, and is its only host. */
  preview?: true;
}

/** The page's config from its inert JSON block; an empty allow-list when it is missing or unreadable. */
export function readPageConfig(doc: Document = document): PageConfig {
  try {
    const parsed = JSON.parse(doc.getElementById('svc-embed-config')?.textContent ?? '{}') as Partial<PageConfig>;
    const allowedOrigins = Array.isArray(parsed.allowedOrigins) ? parsed.allowedOrigins.filter((o) => typeof o === 'string') : [];
    return parsed.preview === true ? { allowedOrigins, preview: true } : { allowedOrigins };
  } catch {
    return { allowedOrigins: [] };
  }
}

/** An in-embed route: which surface, and what it shows. */
export type Route =
  | { surface: 'dashboard'; kind: 'dashboard'; path: string; publicId: string }
  | { surface: 'dashboard'; kind: 'workbook'; path: string; deploymentId: number; workbookId: number }
  | { surface: 'chat'; kind: 'chat'; path: string }
  | { surface: 'app'; kind: 'app'; path: string; publicId?: string }
  | { surface: Surface; kind: 'not-found'; path: string };

/**
 * Reads an in-embed path (SPEC: `/embed/dashboard/<public_id>`, `/embed/d/<deployment_id>/app/workbook/<workbook_id>`,
 * `/embed/chat`, `/embed/app/...`). A path given without the `/embed` prefix (`/dashboard/q1`) means the same.
 */
export function parseRoute(rawPath: string, current: Surface = 'dashboard'): Route {
  const path = normalizePath(rawPath);
  const parts = path.split('/').slice(2).map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  const [head, ...rest] = parts;
  if (head === 'dashboard' && rest.length === 1 && rest[0] !== '') return { surface: 'dashboard', kind: 'dashboard', path, publicId: rest[0]! };
  if (head === 'd' && rest.length === 4 && rest[1] === 'app' && rest[2] === 'workbook' && isId(rest[0]) && isId(rest[3])) {
    return { surface: 'dashboard', kind: 'workbook', path, deploymentId: Number(rest[0]), workbookId: Number(rest[3]) };
  }
  if (head === 'chat' && rest.length === 0) return { surface: 'chat', kind: 'chat', path };
  if (head === 'app') return rest[0] ? { surface: 'app', kind: 'app', path, publicId: rest[0] } : { surface: 'app', kind: 'app', path };
  return { surface: current, kind: 'not-found', path };
}

const isId = (value: string | undefined) => value !== undefined && /^[1-9][0-9]{0,9}$/.test(value) && Number(value) <= 2147483647;

/** `/dashboard/x` and `/embed/dashboard/x/` both become `/embed/dashboard/x`; no query, no fragment. */
export function normalizePath(rawPath: string): string {
  let path = rawPath.split(/[?#]/)[0] ?? '';
  if (!path.startsWith('/')) path = `/${path}`;
  if (!path.startsWith('/embed/') && path !== '/embed') path = `/embed${path}`;
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

/** The embed URL's own options (SDK `embedUrl`): `allowExport`, `colorScheme`, `locale`, `timezone`, `path`, `comments`, `view`, `f_*` filters. */
export interface UrlOptions {
  sessionId: string | undefined;
  allowExport: boolean;
  colorScheme: string | undefined;
  locale: string | undefined;
  timezone: string | undefined;
  path: string | undefined;
  /** How the comment panel starts: `open`, `collapsed` or `auto` (comments/panelPlacement.ts). */
  comments: string | undefined;
  /** A saved view of the dashboard to open at load (issue 35; the SDK's `view`). */
  view: string | undefined;
  filters: string[];
}

export function readUrlOptions(url: URL): UrlOptions {
  const params = url.searchParams;
  const filters: string[] = [];
  for (const [name, value] of params) if (name.startsWith('f_')) filters.push(`${name}=${value}`);
  return {
    sessionId: params.get('session') ?? undefined,
    allowExport: params.get('allowExport') === 'true',
    colorScheme: params.get('colorScheme') ?? undefined,
    locale: params.get('locale') ?? undefined,
    timezone: params.get('timezone') ?? undefined,
    path: params.get('path') ?? undefined,
    comments: params.get('comments') ?? undefined,
    view: params.get('view') ?? undefined,
    filters,
  };
}

/**
 * Removes `session` from the page's own URL (issue 6: the id is spent once redeemed, and must not linger in the
 * address, the history or a reload). The other parameters stay.
 */
export function stripSessionFromUrl(win: Window = window): void {
  const url = new URL(win.location.href);
  if (!url.searchParams.has('session')) return;
  url.searchParams.delete('session');
  win.history.replaceState(win.history.state, '', url.pathname + url.search + url.hash);
}
