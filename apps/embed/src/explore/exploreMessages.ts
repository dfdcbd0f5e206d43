import { builderMessages } from './builderMessages.js';

/**
 * The words of the embed's exploration (issue 35): the shared builder's (builderMessages.ts) and the panels' around
 * it, in English. They live in the explore chunk, not in the embed's catalogue (i18n.ts), so that a session without
 * exploration loads none of them; other languages can be added here as the catalogue's are.
 */
const exploreMessages = {
  ...builderMessages,
  explore: 'Explore',
  exploreWidget: 'Explore {title}',
  newChart: 'New chart',
  exploreTitle: 'Explore',
  back: 'Back to the dashboard',
  charts: 'Charts',
  myCharts: 'My charts',
  shared: 'Shared',
  noCharts: 'No charts here yet.',
  open: 'Open',
  openChart: 'Open {title}',
  rename: 'Rename',
  renameChart: 'Rename {title}',
  deleteChart: 'Delete {title}',
  confirmDeleteChart: 'Delete “{title}”?',
  newTitle: 'New title',
  saveTitle: 'Save title',
  cancel: 'Cancel',
  saveChart: 'Save chart',
  chartSaved: '“{title}” is saved.',
  visibility: 'Who sees it',
  visibilityPrivate: 'Only me',
  visibilityTenant: 'Everyone at my company',
  sharedBy: 'shared',
  sharedByName: 'shared by {name}',
  privateMark: 'private',
  loadFailed: 'This could not be loaded: {message}',
  actionFailed: 'That did not work: {message}',
  views: 'Views',
  saveView: 'Save view',
  viewName: 'View name',
  viewSaved: 'View “{name}” is saved.',
  viewOpened: 'View “{name}” is open.',
  noViews: 'No saved views yet.',
  openView: 'Open view {name}',
  deleteView: 'Delete view {name}',
  addToView: 'Add to my view',
  addedToView: '“{title}” is added to view “{view}”.',
  needView: 'Open or save a view first: your charts are added to it, never to the dashboard.',
  personalCharts: 'My charts in this view',
  removeFromView: 'Remove {title} from this view',
  chartGone: 'This chart is no longer available.',
  loading: 'Loading…',
  delete: 'Delete',
};

export type ExploreKey = keyof typeof exploreMessages;
export type ExploreTranslate = (key: ExploreKey, values?: Record<string, string | number>) => string;

/** The explore chunk's `t()`: a message with its `{name}` placeholders filled (numbers in the locale's format). */
export function exploreTranslator(locale: string): ExploreTranslate {
  let numbers: Intl.NumberFormat | undefined;
  return (key, values) => {
    const template: string = exploreMessages[key];
    return values === undefined ? template : template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = values[name];
      return typeof value === 'number' ? (numbers ??= new Intl.NumberFormat(locale)).format(value) : String(value ?? '');
    });
  };
}
