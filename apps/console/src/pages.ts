import type { Deployment } from './api.js';
import type { Translate } from './i18n.js';

/** What the shell (App.tsx) gives the workspace page, which it loads as a chunk of its own. */
export interface WorkspacePageProps {
  t: Translate;
  locale: string;
  deployments: Deployment[];
  /** The API answered 401: the cookie's session ended. */
  onSignedOut: () => void;
}

export type { SettingsPageProps } from './settings/Settings.js';
export type { ModelPageProps } from './model/Model.js';
