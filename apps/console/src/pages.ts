import type { Deployment } from './api.js';
import type { Translate } from './i18n.js';

/** What the shell (App.tsx) gives the workspace page, which it loads as a chunk of its own. */
export interface WorkspacePageProps {
  t: Translate;
  locale: string;
  deployments: Deployment[];
  /** Goes to another page of the console (an address under /console), as a link would. */
  navigate: (url: string) => void;
  /** The API answered 401: the cookie's session ended. */
  onSignedOut: () => void;
}

export type { SettingsPageProps } from './settings/Settings.js';
export type { ModelPageProps } from './model/Model.js';
/** What the shell gives the dashboard editor, a chunk of its own too. */
export interface EditorPageProps {
  t: Translate;
  locale: string;
  deploymentId: number;
  publicId: string;
  /** The workspace's address the editor goes back to (its folder). */
  backUrl: string;
  /** "View as a customer" of this dashboard, for an admin; undefined for a member, who is not offered it. */
  previewHref?: string;
  navigate: (url: string) => void;
  onSignedOut: () => void;
}

/** What the shell gives "View as a customer" (preview/Preview.tsx), a chunk of its own. */
export interface PreviewPageProps {
  t: Translate;
  publicId: string;
  /** The editor's address, which the page goes back to. */
  editorUrl: string;
  navigate: (url: string) => void;
  onSignedOut: () => void;
}

/** "View as a customer" of a dashboard: its address survives a reload, as the editor's does. */
export function previewUrl(deploymentId: number, publicId: string): string {
  return `/console?${new URLSearchParams({ deployment: String(deploymentId), dashboard: publicId, page: 'preview' }).toString()}`;
}

/** The editor's address: it survives a reload. */
export function editorUrl(deploymentId: number, publicId: string, folderId: number | undefined): string {
  const params = new URLSearchParams({ deployment: String(deploymentId), dashboard: publicId });
  if (folderId !== undefined) params.set('folder', String(folderId));
  return `/console?${params.toString()}`;
}

/**
 * The page an address shows: the editor of `?dashboard=` (its "View as a customer" with `&page=preview`), the page
 * `?page=` names, else the workspace.
 */
export type Route =
  | { page: 'workspace' }
  | { page: 'embedding' }
  | { page: 'model' }
  | { page: 'editor'; deploymentId: number | undefined; publicId: string; folderId: number | undefined }
  | { page: 'preview'; deploymentId: number | undefined; publicId: string };

export function readRoute(search: string): Route {
  const params = new URLSearchParams(search);
  const number = (name: string) => {
    const value = params.get(name);
    return value !== null && /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : undefined;
  };
  const publicId = params.get('dashboard');
  const page = params.get('page');
  if (publicId !== null && /^[A-Za-z0-9_.-]{1,200}$/.test(publicId) && page === 'preview') return { page: 'preview', deploymentId: number('deployment'), publicId };
  if (publicId !== null && /^[A-Za-z0-9_.-]{1,200}$/.test(publicId)) return { page: 'editor', deploymentId: number('deployment'), publicId, folderId: number('folder') };
  if (page === 'embedding' || page === 'model') return { page };
  return { page: 'workspace' };
}
