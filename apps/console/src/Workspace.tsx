import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, copyDashboard, createDashboard, createFolder, getDashboard, listWorkspace, moveItem, renameItem, setFavorite, workspacePermissions } from './api.js';
import type { AuthoredDashboard, FolderPathEntry, OrderDirection, OrderField, PageInfo, WorkspaceItem, WorkspacePermissions } from './api.js';
import { editorUrl } from './pages.js';
import type { WorkspacePageProps } from './pages.js';
import { describeError } from './errors.js';
import type { MessageKey, Translate } from './i18n.js';

/** The four orders of the listing (SPEC part A's orderByField), each in the direction a person expects first. */
const ORDERS: Record<string, { field: OrderField; direction: OrderDirection; label: MessageKey }> = {
  updated: { field: 'updated_at', direction: 'DESC', label: 'orderUpdated' },
  created: { field: 'created_at', direction: 'DESC', label: 'orderCreated' },
  name: { field: 'name', direction: 'ASC', label: 'orderName' },
  viewed: { field: 'viewer_last_viewed_at', direction: 'DESC', label: 'orderViewed' },
};
type OrderKey = keyof typeof ORDERS;

const PAGE_SIZE = 50;
const SEARCH_DELAY_MS = 250;

/** Where the page is: in the address (`?deployment=1&folder=7`), the folder's path in the history entry's state. */
interface Place { deploymentId: number | undefined; folderId: number | undefined; path: FolderPathEntry[] }

function readPlace(): Place {
  const params = new URLSearchParams(location.search);
  const number = (name: string) => {
    const value = params.get(name);
    return value !== null && /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : undefined;
  };
  const state = history.state as { path?: FolderPathEntry[] } | null;
  return { deploymentId: number('deployment'), folderId: number('folder'), path: Array.isArray(state?.path) ? state.path : [] };
}

function placeUrl(place: Place): string {
  const params = new URLSearchParams();
  if (place.deploymentId !== undefined) params.set('deployment', String(place.deploymentId));
  if (place.folderId !== undefined) params.set('folder', String(place.folderId));
  const query = params.toString();
  return `${location.pathname}${query === '' ? '' : `?${query}`}`;
}

type DashboardState = { kind: 'loading' } | { kind: 'loaded'; dashboard: AuthoredDashboard } | { kind: 'failed'; message: string };
/** What the caller may do with an item (`GET .../workspace/permissions`); unknown until asked, and nothing is offered until then. */
type ItemPermission = WorkspacePermissions['items'][number];
/** A folder the caller may move things to: the root is `id` null. */
interface Destination { id: number | null; name: string }

/**
 * The workspace page (issue 34, SPEC part A): a deployment's folders, workbooks and reports as the listing API
 * answers them (folders first), with search, the four orders, favourites, folders opened with breadcrumbs, and
 * further pages through the cursor. A workbook shows its dashboard's title and status (read-only for now).
 */
export function WorkspacePage({ t, locale, deployments, navigate, onSignedOut }: WorkspacePageProps) {
  const [place, setPlace] = useState<Place>(readPlace);
  const [searchInput, setSearchInput] = useState('');
  const [search, setSearch] = useState('');
  const [order, setOrder] = useState<OrderKey>('updated');
  const [items, setItems] = useState<WorkspaceItem[]>([]);
  const [pageInfo, setPageInfo] = useState<PageInfo | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>(undefined);
  const [announcement, setAnnouncement] = useState('');
  const [dashboards, setDashboards] = useState<Record<string, DashboardState>>({});
  const [permissions, setPermissions] = useState<Record<number, ItemPermission | undefined>>({});
  const [canCreate, setCanCreate] = useState<Record<string, boolean>>({});
  const headingRef = useRef<HTMLHeadingElement>(null);
  const listRequest = useRef(0);

  const deploymentId = place.deploymentId !== undefined && deployments.some((d) => d.id === place.deploymentId)
    ? place.deploymentId
    : deployments[0]?.id;
  const deployment = deployments.find((d) => d.id === deploymentId);

  const failed = (caught: unknown): string | undefined => {
    if (caught instanceof ApiError && caught.status === 401) {
      onSignedOut();
      return undefined;
    }
    return describeError(t, caught);
  };

  useEffect(() => {
    const onPop = () => setPlace(readPlace());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    const timer = setTimeout(() => setSearch(searchInput.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [searchInput]);

  const load = async (after: string | undefined) => {
    if (deploymentId === undefined) return;
    const request = ++listRequest.current;
    setLoading(true);
    setError(undefined);
    try {
      const { field, direction } = ORDERS[order]!;
      const page = await listWorkspace(deploymentId, {
        folderId: place.folderId, search, orderByField: field, orderByDirection: direction, after, first: PAGE_SIZE,
      });
      if (request !== listRequest.current) return;
      setItems((before) => (after === undefined ? page.items : [...before, ...page.items]));
      setPageInfo(page.pageInfo);
    } catch (caught) {
      if (request !== listRequest.current) return;
      const message = failed(caught);
      if (message !== undefined) setError(t('listError', { message }));
    } finally {
      if (request === listRequest.current) setLoading(false);
    }
  };

  useEffect(() => {
    void load(undefined);
    // load reads these (and t, which never changes).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [deploymentId, place.folderId, search, order]);

  // What the caller may do here and with the items shown: asked once per item, and once per folder. Edit, Rename,
  // Move, New dashboard and New folder are offered only where svc says the caller may.
  const folderKey = `${deploymentId}:${place.folderId ?? 'root'}`;
  useEffect(() => {
    if (deploymentId === undefined) return;
    const asked = items.filter((item) => !(item.id in permissions)).map((item) => item.id).slice(0, 200);
    if (asked.length === 0 && folderKey in canCreate) return;
    setPermissions((before) => ({ ...before, ...Object.fromEntries(asked.map((id) => [id, undefined])) }));
    workspacePermissions(deploymentId, asked, place.folderId).then(
      (answer) => {
        setCanCreate((before) => ({ ...before, [folderKey]: answer.folder.canCreate }));
        setPermissions((before) => ({ ...before, ...Object.fromEntries(answer.items.map((p) => [p.id, p])) }));
      },
      (caught: unknown) => {
        const message = failed(caught);
        if (message !== undefined) setError(t('listError', { message }));
      },
    );
    // `permissions` and `canCreate` are what was asked already.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [items, folderKey]);

  /** The dashboard a workbook opens: a published one's, or a draft's for who may change it. */
  const publicIdOf = (item: WorkspaceItem): string | undefined =>
    item.type !== 'WORKBOOK' ? undefined : (permissions[item.id]?.dashboardPublicId ?? item.publishedDashboard?.publicId ?? undefined);

  // Each workbook's dashboard, read once: its status and title come from the authoring API.
  useEffect(() => {
    for (const item of items) {
      const publicId = publicIdOf(item);
      if (publicId === undefined || dashboards[publicId] !== undefined) continue;
      setDashboards((before) => ({ ...before, [publicId]: { kind: 'loading' } }));
      getDashboard(publicId).then(
        (dashboard) => setDashboards((before) => ({ ...before, [publicId]: { kind: 'loaded', dashboard } })),
        (caught: unknown) => {
          const message = failed(caught);
          if (message !== undefined) setDashboards((before) => ({ ...before, [publicId]: { kind: 'failed', message } }));
        },
      );
    }
    // Only new items need a read; `dashboards` is what was read.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [items, permissions]);

  const go = (next: Place) => {
    history.pushState({ path: next.path }, '', placeUrl(next));
    setPlace(next);
    setSearchInput('');
    setSearch('');
    setTimeout(() => headingRef.current?.focus(), 0);
  };

  const openFolder = (item: WorkspaceItem) => {
    const parents = item.folderPath ?? place.path;
    go({ deploymentId, folderId: item.id, path: [...parents, { id: item.id, name: item.name }] });
  };

  const toggleFavorite = async (item: WorkspaceItem) => {
    if (deploymentId === undefined) return;
    const next = item.isFavorite !== true;
    try {
      await setFavorite(deploymentId, item.id, next);
      setItems((before) => before.map((x) => (x.id === item.id ? { ...x, isFavorite: next } : x)));
      setAnnouncement(t(next ? 'favoriteAdded' : 'favoriteRemoved', { name: item.name }));
    } catch (caught) {
      const message = failed(caught);
      if (message !== undefined) setAnnouncement(t('favoriteError', { message }));
    }
  };

  if (deployment === undefined) {
    return <main><h1>{t('workspace')}</h1><p>{t('noDeployments')}</p></main>;
  }

  const current = place.path[place.path.length - 1];
  const mayCreate = canCreate[folderKey] === true;
  // Where a row may be moved: the root, the folders above this one, and the folders shown (never into itself).
  const destinations: Destination[] = [
    { id: null, name: t('moveRoot') },
    ...place.path.map((entry) => ({ id: entry.id, name: entry.name })),
    ...items.filter((item) => item.type === 'FOLDER' && !place.path.some((entry) => entry.id === item.id)).map((item) => ({ id: item.id, name: item.name })),
  ];
  const title = place.folderId === undefined ? deployment.name : (current?.name ?? t('folder'));
  const dates = new Intl.DateTimeFormat(locale, { dateStyle: 'medium' });

  return (
    <main>
      <nav class="breadcrumbs" aria-label={t('breadcrumb')}>
        <ol>
          <li>
            {place.folderId === undefined
              ? <span aria-current="page">{deployment.name}</span>
              : <a href={placeUrl({ deploymentId, folderId: undefined, path: [] })} onClick={(event) => { event.preventDefault(); go({ deploymentId, folderId: undefined, path: [] }); }}>{deployment.name}</a>}
          </li>
          {place.folderId !== undefined && place.path.length === 0 ? <li><span aria-current="page">{t('folder')}</span></li> : null}
          {place.path.map((entry, index) => {
            const last = index === place.path.length - 1;
            const target: Place = { deploymentId, folderId: entry.id, path: place.path.slice(0, index + 1) };
            return (
              <li key={entry.id}>
                {last
                  ? <span aria-current="page">{entry.name}</span>
                  : <a href={placeUrl(target)} onClick={(event) => { event.preventDefault(); go(target); }}>{entry.name}</a>}
              </li>
            );
          })}
        </ol>
      </nav>
      <h1 ref={headingRef} tabIndex={-1}>{title}</h1>
      <div class="toolbar">
        {deployments.length > 1 ? (
          <div class="field">
            <label for="ws-deployment">{t('deployment')}</label>
            <select id="ws-deployment" value={String(deploymentId)} onChange={(event) => go({ deploymentId: Number(event.currentTarget.value), folderId: undefined, path: [] })}>
              {deployments.map((d) => <option key={d.id} value={String(d.id)}>{d.name}</option>)}
            </select>
          </div>
        ) : null}
        <div class="field">
          <label for="ws-search">{t('search')}</label>
          <input id="ws-search" type="search" placeholder={t('searchPlaceholder')} value={searchInput} onInput={(event) => setSearchInput(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="ws-order">{t('order')}</label>
          <select id="ws-order" value={order} onChange={(event) => setOrder(event.currentTarget.value as OrderKey)}>
            {Object.entries(ORDERS).map(([key, o]) => <option key={key} value={key}>{t(o.label)}</option>)}
          </select>
        </div>
        {mayCreate ? <NameForm t={t} id="ws-new-title" opener={t('newDashboard')} openerClass="primary new-dashboard" label={t('newDashboardTitle')} submitLabel={t('create')}
          emptyMessage={t('titleRequired')} failMessage={(message) => t('createError', { message })} onSignedOut={onSignedOut}
          onSubmit={async (title) => {
            const created = await createDashboard(deployment.id, { title, ...(place.folderId !== undefined ? { folderId: place.folderId } : {}) });
            navigate(editorUrl(deployment.id, created.publicId, place.folderId));
          }} /> : null}
        {mayCreate ? <NameForm t={t} id="ws-new-folder" opener={t('newFolder')} openerClass="new-folder" label={t('newFolderName')} submitLabel={t('create')}
          emptyMessage={t('folderNameRequired')} failMessage={(message) => t('folderCreateError', { message })} onSignedOut={onSignedOut}
          onSubmit={async (name) => {
            const folder = await createFolder(deployment.id, { name, ...(place.folderId !== undefined ? { parentId: place.folderId } : {}) });
            setAnnouncement(t('folderCreated', { name: folder.name }));
            await load(undefined);
          }} /> : null}
      </div>
      <p class="visually-hidden" role="status">{announcement}</p>
      {error !== undefined ? (
        <div role="alert">
          <p class="error">{error}</p>
          <button type="button" onClick={() => void load(undefined)}>{t('retry')}</button>
        </div>
      ) : null}
      {!loading && error === undefined && items.length === 0
        ? <p>{search === '' ? t('empty') : t('noMatch', { search })}</p>
        : null}
      {items.length > 0 ? (
        <ul class="items" aria-label={t('items')} aria-busy={loading}>
          {items.map((item) => (
            <Item key={item.id} item={item} t={t} dates={dates} showLocation={search !== ''}
              publicId={publicIdOf(item)} permission={permissions[item.id]}
              dashboard={publicIdOf(item) !== undefined ? dashboards[publicIdOf(item)!] : undefined}
              destinations={destinations.filter((d) => d.id !== item.id && d.id !== (item.folderId ?? null))}
              onOpen={() => openFolder(item)} onFavorite={() => void toggleFavorite(item)}
              onEdit={(publicId) => navigate(editorUrl(deployment.id, publicId, place.folderId))}
              onSignedOut={onSignedOut}
              onRename={async (name) => {
                const renamed = await renameItem(deployment.id, item.id, name);
                setItems((before) => before.map((x) => (x.id === item.id ? { ...x, name: renamed.name } : x)));
                setAnnouncement(t('renamed', { name: renamed.name }));
              }}
              onCopy={async (title, copyOf) => {
                const copy = await copyDashboard(deployment.id, { title, copyOf, ...(mayCreate && place.folderId !== undefined ? { folderId: place.folderId } : {}) });
                navigate(editorUrl(deployment.id, copy.publicId, mayCreate ? place.folderId : undefined));
              }}
              onMove={async (to) => {
                await moveItem(deployment.id, item.id, to.id);
                setAnnouncement(t('moved', { name: item.name, folder: to.name }));
                await load(undefined);
              }} />
          ))}
        </ul>
      ) : null}
      {loading ? <p class="status" role="status">{t('loading')}</p> : null}
      {!loading && pageInfo?.hasNextPage === true && typeof pageInfo.endCursor === 'string' ? (
        <button type="button" class="more" onClick={() => void load(pageInfo.endCursor ?? undefined)}>{t('loadMore')}</button>
      ) : null}
    </main>
  );
}

/**
 * A name asked in place: a button opens a small form (focused), which calls `onSubmit` with the trimmed name. An
 * empty name or svc's refusal is shown in words in the form, which keeps what was typed; a 401 ends the session.
 */
function NameForm({ t, id, opener, openerAria, openerClass, label, initial = '', submitLabel, emptyMessage, failMessage, onSubmit, onSignedOut, onClose }: {
  t: Translate; id: string; opener: string; openerAria?: string; openerClass?: string; label: string; initial?: string; submitLabel: string; emptyMessage: string;
  failMessage: (message: string) => string; onSubmit: (name: string) => Promise<void>; onSignedOut: () => void; onClose?: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(initial);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (open) input.current?.focus();
  }, [open]);
  if (!open) return <button type="button" class={openerClass} aria-label={openerAria} onClick={() => setOpen(true)}>{opener}</button>;
  const close = () => {
    setOpen(false);
    setError(undefined);
    setName(initial);
    onClose?.();
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    if (name.trim() === '') {
      setError(emptyMessage);
      input.current?.focus();
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await onSubmit(name.trim());
      setBusy(false);
      close();
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 401) onSignedOut();
      else setError(failMessage(describeError(t, caught)));
      setBusy(false);
    }
  };
  return (
    <form class="name-form" onSubmit={(event) => void submit(event)} aria-label={openerAria ?? opener}>
      <div class="field">
        <label for={id}>{label}</label>
        <input id={id} ref={input} value={name} maxLength={255} aria-invalid={error !== undefined} aria-describedby={error !== undefined ? `${id}-error` : undefined}
          onInput={(event) => setName(event.currentTarget.value)} />
      </div>
      <button type="submit" class="primary" disabled={busy}>{submitLabel}</button>
      <button type="button" onClick={close}>{t('cancel')}</button>
      {error !== undefined ? <p id={`${id}-error`} class="form-error" role="alert">{error}</p> : null}
    </form>
  );
}

/**
 * Move in place: a button opens a small form (focused) choosing the destination among `destinations`; svc's refusal
 * (a folder into itself, a folder the caller may not change) is shown in words in the form, which keeps the choice.
 */
function MoveForm({ t, item, destinations, onMove, onSignedOut }: {
  t: Translate; item: WorkspaceItem; destinations: Destination[]; onMove: (to: Destination) => Promise<void>; onSignedOut: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [choice, setChoice] = useState(0);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const select = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    if (open) select.current?.focus();
  }, [open]);
  const id = `ws-move-${item.id}`;
  if (!open) return <button type="button" class="move" aria-label={t('moveNamed', { name: item.name })} onClick={() => setOpen(true)}>{t('move')}</button>;
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onMove(destinations[choice]!);
      setOpen(false);
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 401) onSignedOut();
      else setError(t('moveError', { message: describeError(t, caught) }));
    }
    setBusy(false);
  };
  return (
    <form class="name-form" onSubmit={(event) => void submit(event)} aria-label={t('moveNamed', { name: item.name })}>
      <div class="field">
        <label for={id}>{t('moveTo', { name: item.name })}</label>
        <select id={id} ref={select} value={String(choice)} aria-invalid={error !== undefined} aria-describedby={error !== undefined ? `${id}-error` : undefined}
          onChange={(event) => setChoice(Number(event.currentTarget.value))}>
          {destinations.map((d, i) => <option key={d.id ?? 'root'} value={String(i)}>{d.name}</option>)}
        </select>
      </div>
      <button type="submit" class="primary" disabled={busy}>{t('move')}</button>
      <button type="button" onClick={() => { setOpen(false); setError(undefined); }}>{t('cancel')}</button>
      {error !== undefined ? <p id={`${id}-error`} class="form-error" role="alert">{error}</p> : null}
    </form>
  );
}

const KIND: Record<WorkspaceItem['type'], MessageKey> = { FOLDER: 'folder', WORKBOOK: 'workbook', REPORT: 'report' };
/**
 * Each kind's icon as an SVG path (24 x 24, drawn in the text's colour): emoji depend on the system having a colour
 * emoji font, and without one they show as empty boxes (as in Debian's Chromium with no fonts-noto-color-emoji).
 */
const ICON: Record<WorkspaceItem['type'], string> = {
  FOLDER: 'M3 6.5A1.5 1.5 0 0 1 4.5 5h4.6l2 2h8.4A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z',
  WORKBOOK: 'M4 4h16v16H4zM7 16h2v-5H7zm4 0h2V8h-2zm4 0h2v-3h-2z',
  REPORT: 'M6 3h8l4 4v14H6zM9 12h6v1.5H9zm0 3h6v1.5H9z',
};

const KindIcon = ({ type }: { type: WorkspaceItem['type'] }) => (
  <svg class="kind-icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false"><path d={ICON[type]} fill="currentColor" fill-rule="evenodd" /></svg>
);

function Item({ item, t, dates, showLocation, publicId, permission, dashboard, destinations, onOpen, onFavorite, onEdit, onRename, onCopy, onMove, onSignedOut }: {
  item: WorkspaceItem; t: Translate; dates: Intl.DateTimeFormat; showLocation: boolean; publicId: string | undefined; permission: ItemPermission | undefined;
  dashboard: DashboardState | undefined; destinations: Destination[]; onOpen: () => void; onFavorite: () => void; onEdit: (publicId: string) => void;
  onRename: (name: string) => Promise<void>; onCopy: (title: string, copyOf: string) => Promise<void>; onMove: (to: Destination) => Promise<void>; onSignedOut: () => void;
}) {
  const canEdit = permission?.canEdit === true;
  const favorite = item.isFavorite === true;
  const location = showLocation && item.folderPath !== undefined && item.folderPath.length > 0 ? item.folderPath.map((p) => p.name).join(' / ') : undefined;
  return (
    <li class="item" data-type={item.type}>
      <KindIcon type={item.type} />
      <div>
        <span class="kind">{t(KIND[item.type])}</span>{' '}
        <span class="name">
          {item.type === 'FOLDER' ? <button type="button" class="link" onClick={onOpen}>{item.name}</button> : item.name}
        </span>
        {location !== undefined ? <div class="location">{location}</div> : null}
        {item.type === 'WORKBOOK' ? <div class="meta"><DashboardStatus t={t} item={item} dashboard={dashboard} /></div> : null}
      </div>
      <span class="meta when">{t('updated', { date: dates.format(new Date(item.updatedAt)) })}</span>
      <span class="item-actions">
        {publicId !== undefined && permission !== undefined
          ? <button type="button" class={canEdit ? 'edit' : 'view'} aria-label={t(canEdit ? 'editNamed' : 'viewNamed', { name: item.name })} onClick={() => onEdit(publicId)}>{t(canEdit ? 'edit' : 'view')}</button>
          : null}
        {publicId !== undefined && permission !== undefined ? (
          <NameForm t={t} id={`ws-copy-${item.id}`} opener={t('copy')} openerAria={t('copyNamed', { name: item.name })} openerClass="copy" label={t('copyNameOf', { name: item.name })}
            initial={t('copyOf', { name: item.name })} submitLabel={t('copy')} emptyMessage={t('titleRequired')} failMessage={(message) => t('copyError', { message })}
            onSubmit={(title) => onCopy(title, publicId)} onSignedOut={onSignedOut} />
        ) : null}
        {canEdit ? (
          <NameForm t={t} id={`ws-rename-${item.id}`} opener={t('rename')} openerAria={t('renameNamed', { name: item.name })} openerClass="rename" label={t('newNameOf', { name: item.name })}
            initial={item.name} submitLabel={t('save')} emptyMessage={t('folderNameRequired')} failMessage={(message) => t('renameError', { message })}
            onSubmit={onRename} onSignedOut={onSignedOut} />
        ) : null}
        {canEdit && destinations.length > 0 ? <MoveForm t={t} item={item} destinations={destinations} onMove={onMove} onSignedOut={onSignedOut} /> : null}
      </span>
      <button type="button" class="star" aria-pressed={favorite} aria-label={t('favorite', { name: item.name })} onClick={onFavorite}>
        <span aria-hidden="true">{favorite ? '★' : '☆'}</span>
      </button>
    </li>
  );
}

/**
 * A workbook's dashboard: its title and status from `GET /api/v1/dashboards/{publicId}`. The listing names the
 * publicId of published dashboards only; one never published shows as a draft, by the listing's `dashboardDraft`.
 */
function DashboardStatus({ t, item, dashboard }: { t: Translate; item: WorkspaceItem; dashboard: DashboardState | undefined }) {
  if (item.publishedDashboard == null && dashboard?.kind !== 'loaded') {
    return item.dashboardDraft != null ? <span class="badge draft">{t('draft')}</span> : <span>{t('noDashboard')}</span>;
  }
  if (dashboard === undefined || dashboard.kind === 'loading') return <span>{t('loading')}</span>;
  if (dashboard.kind === 'failed') return <span class="error">{t('dashboardError', { message: dashboard.message })}</span>;
  const { status, draft, published } = dashboard.dashboard;
  const title = published?.title ?? draft?.title ?? item.publishedDashboard?.title ?? item.name;
  return (
    <span class="dashboard-status">
      <span class="dashboard-title">{title}</span>{' '}
      <span class={`badge ${status}`}>{t(status)}</span>
      {draft !== null && status === 'published' ? <span> · {t('unpublishedChanges')}</span> : null}
    </span>
  );
}
