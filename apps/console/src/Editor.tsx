import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, getDashboard, getMeta, listVersions, publishDashboard, restoreVersion, saveDraft } from './api.js';
import type { AuthoredDashboard, DashboardVersion, DashboardWidget, Draft, Meta, SnapshotInput } from './api.js';
import { Builder } from './Builder.js';
import { Board } from './Board.js';
import { ReadOnlyDashboard } from './ReadOnly.js';
import { addChart, addText, draftOf, placeWidgets, record, redo, removeWidget, snapshotIndexFor, startHistory, undo, widgetsOf } from './draft.js';
import type { History } from './draft.js';
import { describeError } from './errors.js';
import type { EditorPageProps } from './pages.js';
import type { Translate } from './i18n.js';

const AUTOSAVE_DELAY_MS = 800;

type Loaded = { kind: 'loading' } | { kind: 'failed'; message: string } | { kind: 'ready'; meta: Meta };
type Save = { kind: 'saved' } | { kind: 'pending' } | { kind: 'saving' } | { kind: 'failed'; message: string } | { kind: 'conflict' };

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
        if (message !== undefined) setSave({ kind: 'failed', message });
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
    if (widget.type === 'TEXT') return t('textWidget');
    const index = snapshotIndexFor(draft, widget);
    return (index !== undefined ? draft.reportSnapshots[index]?.title : undefined) ?? widget.id;
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

      <Builder t={t} locale={locale} deploymentId={deploymentId} meta={loaded.meta} onSignedOut={onSignedOut}
        onAdd={(snapshot: SnapshotInput) => change((d) => addChart(d, snapshot).draft)} />

      <section class="board" aria-labelledby="board-title">
        <h2 id="board-title">{t('widgets')}</h2>
        <p id="board-keys" class="hint">{t('boardKeys')}</p>
        {widgets.length === 0 ? <p class="hint">{t('noWidgets')}</p> : (
          <Board t={t} widgets={widgets} nameOf={nameOf}
            onPlace={(layout) => change((d) => placeWidgets(d, layout))}
            onMove={(id, position) => change((d) => placeWidgets(d, [{ i: id, ...position }]))}
            onDelete={(widget) => change((d) => removeWidget(d, widget.id))} />
        )}
        <div class="field text-widget">
          <label for="e-text">{t('textMarkdown')}</label>
          <textarea id="e-text" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </div>
        <button type="button" disabled={text.trim() === ''} onClick={() => { change((d) => addText(d, text).draft); setText(''); }}>{t('addText')}</button>
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
