import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getDashboard, getMeta, listVersions, previewQuery, publishDashboard, restoreVersion, saveDraft } from './api.js';
import type { AuthoredDashboard, DashboardVersion, DashboardWidget, Draft, Meta, SnapshotInput } from './api.js';
import { Builder } from '../../embed/src/explore/Builder.js';
import { Board } from './Board.js';
import { ReadOnlyDashboard } from './ReadOnly.js';
import { addChart, addText, addWidget, draftOf, editWidget, placeWidgets, record, redo, removeWidget, replaceChart, setChildren, snapshotIndexFor, startHistory, undo, widgetsOf } from './draft.js';
import type { ControlType, History } from './draft.js';
import { describeError } from './errors.js';
import type { EditorPageProps } from './pages.js';
import type { MessageKey, Translate } from './i18n.js';
import { chartStart } from '../../embed/src/explore/chartEdit.js';
import { isFormType, widgetAtPath } from './widgets/forms.js';
import type { FormType } from './widgets/forms.js';
import { WidgetForm } from './widgets/WidgetForm.js';
import type { BoardContext } from './widgets/WidgetBody.js';

const AUTOSAVE_DELAY_MS = 800;

type Loaded = { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; meta: Meta };
type Save = { kind: 'saved' } | { kind: 'pending' } | { kind: 'saving' } | { kind: 'failed'; message: string; widgetId?: string | undefined } | { kind: 'conflict' };
/** The widget whose form is open: a new one of a type, or one on the dashboard (a CHART's form is the chart builder). */
type Editing = { type: FormType; widgetId?: undefined } | { type: FormType | 'CHART'; widgetId: string };

/** The "Add a widget" menu: each control type with its button's words (TEXT and CHART have their own). */
const ADD_MENU: ReadonlyArray<[ControlType, MessageKey]> = [
  ['FILTER', 'newFilterControl'], ['TIME_GRAIN', 'newTimeGrain'], ['FIELD', 'newField'], ['CONTAINER', 'newContainer'], ['DIVIDER', 'newDivider'],
];

/**
 * The dashboard editor (issue 34), a page of its own (`/console?deployment=1&dashboard=<publicId>`): the chart
 * builder, the dashboard's widgets, the draft saved as it changes (`PUT .../draft` over the ETag read, a 412 shown
 * as a conflict and never overwritten), undo and redo, publish, and the versions with restore.
 */
export function EditorPage({ t, locale, deploymentId, publicId, backUrl, previewHref, navigate, onSignedOut }: EditorPageProps) {
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const [dashboard, setDashboard] = useState<AuthoredDashboard | undefined>(undefined);
  const [history, setHistory] = useState<History | undefined>(undefined);
  const [save, setSave] = useState<Save>({ kind: 'saved' });
  const [versions, setVersions] = useState<DashboardVersion[] | undefined>(undefined);
  const [versionsError, setVersionsError] = useState<string | undefined>(undefined);
  const [action, setAction] = useState<{ busy: boolean; error?: string | undefined; done?: string | undefined }>({ busy: false });
  const [text, setText] = useState('');
  const [editing, setEditing] = useState<Editing | undefined>(undefined);
  const revision = useRef(0);
  const saved = useRef<Draft | undefined>(undefined);
  const present = useRef<Draft | undefined>(undefined);
  const inFlight = useRef(false);
  const again = useRef(false);
  const conflict = useRef(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  present.current = history?.present;

  const failed = (caught: unknown): string | undefined => {
    if (caught instanceof ApiError && caught.status === 401) {
      onSignedOut();
      return undefined;
    }
    return describeError(t, caught);
  };

  /** Takes the dashboard as svc answered it: its revision, and its draft as the one saved. */
  const adopt = (answer: AuthoredDashboard, resetHistory: boolean) => {
    setDashboard(answer);
    revision.current = answer.draftRevision;
    if (resetHistory) {
      const draft = draftOf(answer);
      saved.current = draft;
      setHistory(startHistory(draft));
    }
  };

  const loadVersions = async () => {
    try {
      setVersions((await listVersions(publicId)).items);
      setVersionsError(undefined);
    } catch (caught) {
      const message = failed(caught);
      if (message !== undefined) setVersionsError(message);
    }
  };

  const load = async () => {
    setLoaded({ kind: 'loading' });
    try {
      const [answer, meta] = await Promise.all([getDashboard(publicId), getMeta(deploymentId)]);
      adopt(answer, true);
      conflict.current = false;
      setSave({ kind: 'saved' });
      setLoaded({ kind: 'ready', meta });
      void loadVersions();
    } catch (caught) {
      const message = failed(caught);
      if (message !== undefined) setLoaded({ kind: 'failed', message });
    }
  };

  useEffect(() => {
    void load();
    // Once per dashboard.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [publicId, deploymentId]);

  const title = history?.present.title ?? dashboard?.published?.title ?? publicId;
  useEffect(() => {
    document.title = `${title} · ${t('appName')}`;
  }, [title, t]);

  const saveNow = async (): Promise<void> => {
    const draft = present.current;
    if (draft === undefined || draft === saved.current || conflict.current) return;
    if (inFlight.current) {
      again.current = true;
      return;
    }
    inFlight.current = true;
    setSave({ kind: 'saving' });
    try {
      const answer = await saveDraft(publicId, draft, revision.current);
      saved.current = draft;
      adopt(answer, false);
      setSave(present.current === draft ? { kind: 'saved' } : { kind: 'pending' });
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 412) {
        conflict.current = true;
        setSave({ kind: 'conflict' });
      } else {
        const message = failed(caught);
        // A refusal at a widget's JSON path (`config.widgets[3].config.member`) is shown on that widget and its form too.
        const widgetId = caught instanceof ApiError && caught.status === 400 ? widgetAtPath(draft, caught.field) : undefined;
        if (message !== undefined) setSave({ kind: 'failed', message, widgetId });
      }
    } finally {
      inFlight.current = false;
      if (again.current) {
        again.current = false;
        void saveNow();
      }
    }
  };

  // Autosave: a change is saved once the editing pauses.
  useEffect(() => {
    if (history === undefined || history.present === saved.current || conflict.current) return undefined;
    setSave({ kind: 'pending' });
    const timer = setTimeout(() => void saveNow(), AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
    // saveNow reads refs.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [history?.present]);

  // Leaving the editor (Back, the breadcrumb) saves what the autosave had not saved yet; closing the tab with a change
  // not yet saved asks first.
  useEffect(() => {
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      if (present.current !== undefined && present.current !== saved.current && !conflict.current) event.preventDefault();
    };
    addEventListener('beforeunload', onBeforeUnload);
    return () => {
      removeEventListener('beforeunload', onBeforeUnload);
      void saveNow();
    };
    // On unmount only; saveNow reads refs.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const change = (next: (draft: Draft) => Draft) => setHistory((before) => (before === undefined ? before : record(before, next(before.present))));

  // Ctrl+Z and Ctrl+Shift+Z (or Ctrl+Y) outside a text field: undo and redo.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey)) return;
      const target = event.target as HTMLElement | null;
      if (target !== null && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT')) return;
      const key = event.key.toLowerCase();
      if (key === 'z' && !event.shiftKey) setHistory((h) => (h === undefined ? h : undo(h)));
      else if ((key === 'z' && event.shiftKey) || key === 'y') setHistory((h) => (h === undefined ? h : redo(h)));
      else return;
      event.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const publish = async () => {
    setAction({ busy: true });
    try {
      const answer = await publishDashboard(publicId, revision.current);
      adopt(answer, false);
      setAction({ busy: false, done: t('publishedVersion', { version: answer.published?.versionNumber ?? '' }) });
      void loadVersions();
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 412) {
        conflict.current = true;
        setSave({ kind: 'conflict' });
        setAction({ busy: false });
        return;
      }
      const message = failed(caught);
      setAction({ busy: false, ...(message !== undefined ? { error: t('publishError', { message }) } : {}) });
    }
  };

  const restore = async (version: number) => {
    setAction({ busy: true });
    try {
      const answer = await restoreVersion(publicId, version);
      adopt(answer, true);
      conflict.current = false;
      setSave({ kind: 'saved' });
      setAction({ busy: false, done: t('restored', { version }) });
    } catch (caught) {
      const message = failed(caught);
      setAction({ busy: false, ...(message !== undefined ? { error: t('restoreError', { message }) } : {}) });
    }
  };

  const back = (event: Event) => {
    event.preventDefault();
    navigate(backUrl);
  };

  const breadcrumbs = (
    <nav class="breadcrumbs" aria-label={t('breadcrumb')}>
      <ol>
        <li><a href={backUrl} onClick={back}>{t('workspace')}</a></li>
        <li><span aria-current="page">{title}</span></li>
      </ol>
    </nav>
  );

  if (loaded.kind === 'loading' || (loaded.kind === 'ready' && (history === undefined || dashboard === undefined))) {
    return <main>{breadcrumbs}<p class="status" role="status">{t('loading')}</p></main>;
  }
  if (loaded.kind === 'failed') {
    return (
      <main>
        {breadcrumbs}
        <h1>{t('editorTitle')}</h1>
        <div role="alert"><p class="error">{t('dashboardLoadError', { message: loaded.message })}</p></div>
        <button type="button" onClick={() => void load()}>{t('retry')}</button>
      </main>
    );
  }
  if (dashboard!.canEdit === false) return <ReadOnlyDashboard t={t} dashboard={dashboard!} title={title} breadcrumbs={breadcrumbs} onBack={back} />;
  const draft = history!.present;
  const widgets = widgetsOf(draft);
  const hasDraft = dashboard!.draft !== null || draft !== saved.current;
  const nameOf = (widget: DashboardWidget): string => {
    const titled = typeof widget.config?.title === 'string' && widget.config.title !== '' ? widget.config.title : undefined;
    switch (widget.type) {
      case 'TEXT': return titled ?? t('textWidget');
      case 'FILTER': return titled ?? (typeof widget.config?.member === 'string' ? widget.config.member : widget.id);
      case 'TIME_GRAIN': return titled ?? t('timeGrainControl');
      case 'FIELD': return titled ?? t('fieldControl');
      case 'CONTAINER': return titled ?? t('containerWidget');
      case 'DIVIDER': return t('dividerWidget');
      default: break;
    }
    const index = snapshotIndexFor(draft, widget);
    return titled ?? (index !== undefined ? draft.reportSnapshots[index]?.title : undefined) ?? widget.id;
  };
  const refused = save.kind === 'failed' && save.widgetId !== undefined ? { widgetId: save.widgetId, message: save.message } : undefined;
  const editedWidget = editing?.widgetId !== undefined ? widgets.find((w) => w.id === editing.widgetId) : undefined;
  const editedSnapshotIndex = editing?.type === 'CHART' && editedWidget !== undefined ? snapshotIndexFor(draft, editedWidget) : undefined;
  const editedSnapshot = editedSnapshotIndex !== undefined ? draft.reportSnapshots[editedSnapshotIndex] : undefined;
  const chartEdit = editedSnapshot !== undefined ? chartStart(editedSnapshot, loaded.meta) : undefined;
  /** A form closed: says what was saved, and takes the focus back to the board (the form it was in is gone). */
  const announceSaved = (name: string) => {
    setAction({ busy: false, done: t('widgetSaved', { name }) });
    requestAnimationFrame(() => document.getElementById('board-title')?.focus());
  };
  const closeForm = () => {
    setEditing(undefined);
    requestAnimationFrame(() => document.getElementById('board-title')?.focus());
  };
  const openEdit = (widget: DashboardWidget) => {
    if (widget.type === 'CHART') {
      setEditing({ type: 'CHART', widgetId: widget.id });
      requestAnimationFrame(() => document.getElementById('chart-edit')?.focus());
    } else if (isFormType(widget.type)) {
      setEditing({ type: widget.type, widgetId: widget.id });
    }
  };
  const saveForm = (config: Record<string, unknown>, children: string[]) => {
    if (editing === undefined || editing.type === 'CHART') return;
    const type = editing.type;
    change((d) => {
      let next: Draft;
      let id = editing.widgetId;
      if (id === undefined) {
        const added = type === 'TEXT' ? addText(d, String(config.markdown ?? '')) : addWidget(d, type, config);
        next = added.draft;
        id = added.widgetId;
      } else {
        next = editWidget(d, id, config);
      }
      if (type === 'CONTAINER') next = setChildren(next, id, children);
      return next;
    });
    const name = typeof config.title === 'string' ? config.title : t(type === 'TEXT' ? 'textWidget' : type === 'DIVIDER' ? 'dividerWidget' : 'containerWidget');
    setEditing(undefined);
    announceSaved(name);
  };
  const boardContext: BoardContext = {
    t, locale, deploymentId, draft, meta: loaded.meta, nameOf, onEdit: openEdit, onSignedOut, refused,
    onDelete: (widget) => change((d) => removeWidget(d, widget.id)),
  };

  return (
    <main class="editor">
      {breadcrumbs}
      <div class="editor-head">
        <h1 ref={headingRef} tabIndex={-1}>{title}</h1>
        <span class={`badge ${dashboard!.status}`}>{t(dashboard!.status)}</span>
        <SaveStatus t={t} save={save} onRetry={() => void saveNow()} onReload={() => void load()} />
      </div>
      <div class="toolbar">
        <div class="field">
          <label for="e-title">{t('dashboardTitle')}</label>
          <input id="e-title" value={draft.title ?? ''} onChange={(e) => { const value = e.currentTarget.value; change((d) => ({ ...d, title: value })); }} />
        </div>
        <button type="button" disabled={history!.past.length === 0} onClick={() => setHistory((h) => (h === undefined ? h : undo(h)))} aria-keyshortcuts="Control+Z">{t('undo')}</button>
        <button type="button" disabled={history!.future.length === 0} onClick={() => setHistory((h) => (h === undefined ? h : redo(h)))} aria-keyshortcuts="Control+Shift+Z">{t('redo')}</button>
        <button type="button" class="primary" disabled={action.busy || save.kind !== 'saved' || !hasDraft} onClick={() => void publish()}>{t('publish')}</button>
        {previewHref !== undefined ? <button type="button" onClick={() => navigate(previewHref)}>{t('viewAsCustomer')}</button> : null}
        <button type="button" onClick={back}>{t('back')}</button>
      </div>
      <div aria-live="polite">{action.done !== undefined ? <p class="done">{action.done}</p> : null}</div>
      {action.error !== undefined ? <p class="error" role="alert">{action.error}</p> : null}

      {editing?.type === 'CHART' && chartEdit !== undefined ? (
        <div class="chart-edit">
          <p id="chart-edit" tabIndex={-1}>{t('editingChart', { name: nameOf(editedWidget!) })}</p>
          {!chartEdit.complete ? <p class="hint">{t('chartIncomplete')}</p> : null}
          {refused?.widgetId === editing.widgetId ? <p class="error" role="alert">{t('widgetRefused', { message: refused.message })}</p> : null}
          <button type="button" onClick={closeForm}>{t('cancelEdit')}</button>
        </div>
      ) : null}
      {editing?.type === 'CHART' && editedWidget !== undefined && chartEdit === undefined ? (
        <div class="chart-edit">
          <p id="chart-edit" tabIndex={-1}>{t('chartNotEditable')}</p>
          <button type="button" onClick={closeForm}>{t('cancelEdit')}</button>
        </div>
      ) : null}
      <Builder key={editing?.type === 'CHART' && chartEdit !== undefined ? `edit-${editing.widgetId}` : 'new'}
        t={t} locale={locale} meta={loaded.meta} adminDetails runKey={deploymentId}
        runQuery={(query) => previewQuery(deploymentId, query)}
        describeFailure={(caught) => {
          if (caught instanceof ApiError && caught.status === 401) { onSignedOut(); return undefined; }
          return { message: describeError(t, caught), field: caught instanceof ApiError ? caught.field : undefined };
        }}
        {...(editing?.type === 'CHART' && chartEdit !== undefined ? { initial: chartEdit.start, submitLabel: t('saveChart') } : {})}
        onAdd={(snapshot: SnapshotInput) => {
          if (editing?.type === 'CHART' && chartEdit !== undefined) {
            const id = editing.widgetId;
            change((d) => replaceChart(d, id, snapshot));
            setEditing(undefined);
            announceSaved(typeof snapshot.title === 'string' ? snapshot.title : id);
          } else {
            change((d) => addChart(d, snapshot).draft);
          }
        }} />

      <section class="board" aria-labelledby="board-title">
        <h2 id="board-title" tabIndex={-1}>{t('widgets')}</h2>
        <p id="board-keys" class="hint">{t('boardKeys')}</p>
        {widgets.length === 0 ? <p class="hint">{t('noWidgets')}</p> : (
          <Board t={t} widgets={widgets} nameOf={nameOf} ctx={boardContext}
            onPlace={(layout) => change((d) => placeWidgets(d, layout))}
            onMove={(id, position) => change((d) => placeWidgets(d, [{ i: id, ...position }]))}
            onEdit={openEdit} onDelete={boardContext.onDelete} />
        )}
        {editing !== undefined && editing.type !== 'CHART' && (editing.widgetId === undefined || editedWidget !== undefined) ? (
          <WidgetForm key={`${editing.type}-${editing.widgetId ?? 'new'}`} t={t} meta={loaded.meta} draft={draft} type={editing.type} widget={editedWidget}
            name={editedWidget !== undefined ? nameOf(editedWidget) : ''} nameOf={nameOf}
            refused={refused !== undefined && refused.widgetId === editing.widgetId ? refused.message : undefined}
            onSave={saveForm} onCancel={closeForm} />
        ) : null}
        <div class="field text-widget">
          <label for="e-text">{t('textMarkdown')}</label>
          <textarea id="e-text" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </div>
        <button type="button" disabled={text.trim() === ''} onClick={() => { change((d) => addText(d, text).draft); setText(''); }}>{t('addText')}</button>
        <div class="add-menu" role="group" aria-labelledby="add-menu-title">
          <span id="add-menu-title" class="add-menu-title">{t('addWidget')}</span>
          {ADD_MENU.map(([type, label]) => (
            <button key={type} type="button" onClick={() => {
              if (type === 'DIVIDER') {
                change((d) => addWidget(d, 'DIVIDER').draft);
                announceSaved(t('dividerWidget'));
              } else {
                setEditing({ type });
              }
            }}>{t(label)}</button>
          ))}
        </div>
      </section>

      <section class="versions" aria-labelledby="versions-title">
        <h2 id="versions-title">{t('versions')}</h2>
        {versionsError !== undefined ? <p class="error" role="alert">{t('versionsError', { message: versionsError })}</p> : null}
        {versions !== undefined && versions.length === 0 ? <p class="hint">{t('noVersions')}</p> : null}
        {versions !== undefined && versions.length > 0 ? (
          <ul class="items">
            {versions.map((v) => (
              <li key={v.versionNumber} class="version">
                <span class="name">{t('version', { version: v.versionNumber })}</span>
                <span class="meta">{v.title ?? ''} · {new Date(v.publishedAt).toLocaleString(locale)}{v.current ? ` · ${t('current')}` : ''}</span>
                <button type="button" disabled={action.busy} onClick={() => void restore(v.versionNumber)}>{t('restore', { version: v.versionNumber })}</button>
              </li>
            ))}
          </ul>
        ) : null}
      </section>
    </main>
  );
}

function SaveStatus({ t, save, onRetry, onReload }: { t: Translate; save: Save; onRetry: () => void; onReload: () => void }) {
  if (save.kind === 'conflict') {
    return (
      <div class="conflict" role="alert">
        <p class="error">{t('conflict')}</p>
        <button type="button" onClick={onReload}>{t('reloadTheirs')}</button>
      </div>
    );
  }
  if (save.kind === 'failed') {
    return (
      <div role="alert">
        <p class="error">{t('saveError', { message: save.message })}</p>
        <button type="button" onClick={onRetry}>{t('retry')}</button>
      </div>
    );
  }
  return <p class="save-status" role="status">{t(save.kind === 'saved' ? 'savedDraft' : save.kind === 'saving' ? 'saving' : 'unsaved')}</p>;
}
