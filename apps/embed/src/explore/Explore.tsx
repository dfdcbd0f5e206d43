import './explore.css';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import type { ReportSnapshot } from '../api.js';
import { useDialogFocus } from '../dialogFocus.js';
import { ApiError } from '../session.js';
import type { EmbedSession } from '../session.js';
import { Builder } from './Builder.js';
import type { ChartDraft, ChartKind, Meta, PreviewAnswer } from './builder.js';

/** How a saved chart is drawn: line, bar and area by their vega-lite spec (as the builder drew them), the others by their kind. */
const drawingOf = (chart: SavedChart) => ({ kind: chart.spec !== undefined && chart.spec !== null ? 'vega' : chart.kind, spec: chart.spec ?? null });
import { chartStart } from './chartEdit.js';
import type { ChartStart } from './chartEdit.js';
import { deleteChart, deleteView, fetchExploreMeta, fetchView, listCharts, listViews, runExploreQuery, saveChart, saveView, updateChart, updateView } from './exploreApi.js';
import type { SavedChart, SavedView, ViewState, Visibility } from './exploreApi.js';
import { exploreTranslator } from './exploreMessages.js';
import type { ExploreTranslate } from './exploreMessages.js';
import { useChartView, usePrefersDark } from './useChart.js';

/** What the dashboard asked the explore part to open: the builder (blank, or from a CHART widget). `seq` tells a new ask from the last. */
export interface ExploreRequest { widgetId?: string | undefined; seq: number }

export interface ExploreBarProps {
  session: EmbedSession;
  /** Generate Session's settings.explore: view (open charts and views) or create (also build and save). */
  level: 'view' | 'create';
  locale: string;
  timezone: string;
  publicId: string;
  /** A CHART widget's snapshot and title, for "Explore" from it. */
  widgetChart(widgetId: string): { snapshot: ReportSnapshot; title: string } | undefined;
  /** The state the dashboard keeps for widget data, which "Save view" stores. */
  current: ViewState;
  request: ExploreRequest | undefined;
  /** A saved view to open at load (the SDK's `view` option). */
  initialViewId?: string | undefined;
  activeView: SavedView | undefined;
  /** A view was opened (restore its filters, grain and swaps), or changed (its charts). */
  onOpenView(view: SavedView): void;
  onViewChanged(view: SavedView | undefined): void;
  onChartSaved(event: { chartId: string; title: string; visibility: Visibility }): void;
  onViewSaved(event: { viewId: string; name: string; visibility: Visibility; publicId: string }): void;
  onError(error: unknown, context: string): void;
}

type Overlay = { kind: 'builder'; start?: ChartStart | undefined; from?: string | undefined } | { kind: 'chart'; chart: SavedChart };

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Exploration in the embed (issue 35), its own chunk: the dashboard loads it only when the session's
 * settings.explore is view or create. A bar under the dashboard's title: "New chart" (create), "Charts" (the
 * viewer's own and those shared with their company) and "Views" (saved filters, grain and swaps); the builder and a
 * saved chart open full frame, over the dashboard, with a Back.
 */
export function ExploreBar(props: ExploreBarProps) {
  const { session, level, locale, publicId, request } = props;
  const t = useMemo(() => exploreTranslator(locale), [locale]);
  const [panel, setPanel] = useState<'charts' | 'views' | undefined>(undefined);
  const [overlay, setOverlay] = useState<Overlay | undefined>(undefined);
  const [meta, setMeta] = useState<Meta | undefined>(undefined);
  const [charts, setCharts] = useState<SavedChart[] | undefined>(undefined);
  const [status, setStatus] = useState('');
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const callbacks = useRef(props);
  callbacks.current = props;
  const create = level === 'create';

  const loadMeta = useCallback(async (): Promise<Meta> => {
    if (meta !== undefined) return meta;
    const loaded = await fetchExploreMeta(session);
    setMeta(loaded);
    return loaded;
  }, [meta, session]);

  const reloadCharts = useCallback(() => {
    listCharts(session).then(({ charts: list }) => setCharts(list), (error: unknown) => setFailure(t('loadFailed', { message: message(error) })));
  }, [session, t]);

  const openBuilder = useCallback(async (widgetId?: string) => {
    setFailure(undefined);
    try {
      const loaded = await loadMeta();
      const chart = widgetId !== undefined ? callbacks.current.widgetChart(widgetId) : undefined;
      const started = chart !== undefined ? chartStart(chart.snapshot, loaded) : undefined;
      setOverlay({ kind: 'builder', start: started?.start, from: chart?.title });
    } catch (error) {
      setFailure(t('loadFailed', { message: message(error) }));
      callbacks.current.onError(error, 'explore');
    }
  }, [loadMeta, t]);

  // "Explore" on a widget, or the host's svc:action:explore.
  useEffect(() => {
    if (request === undefined || !create) return;
    void openBuilder(request.widgetId);
    // A new request (its seq) opens the builder; openBuilder's identity does not.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [request?.seq]);

  // The host's view at load: opened once, as if picked from the Views menu.
  useEffect(() => {
    if (props.initialViewId === undefined) return;
    fetchView(session, publicId, props.initialViewId).then((view) => callbacks.current.onOpenView(view), (error: unknown) => {
      setFailure(t('loadFailed', { message: message(error) }));
      callbacks.current.onError(error, 'view');
    });
    // At load only.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    if (panel === 'charts' && charts === undefined) reloadCharts();
  }, [panel, charts, reloadCharts]);

  const describeFailure = useCallback((caught: unknown) => ({ message: message(caught), field: undefined }), []);
  const save = async (draft: ChartDraft, kind: ChartKind, visibility: Visibility) => {
    // Saved as the builder's kind (line, bar, ...), with the drawing's vega-lite spec when it has one.
    const saved = await saveChart(session, { title: draft.title, query: draft.meta.query, kind, spec: draft.spec, visibility });
    setStatus(t('chartSaved', { title: saved.title }));
    setCharts(undefined);
    callbacks.current.onChartSaved({ chartId: saved.id, title: saved.title, visibility: saved.visibility });
  };

  return (
    <div className="explore">
      <div className="explore-bar" role="group" aria-label={t('explore')}>
        {create ? <button type="button" className="explore-new" onClick={() => void openBuilder()}>{t('newChart')}</button> : null}
        <button type="button" aria-expanded={panel === 'charts'} aria-controls="explore-charts" onClick={() => setPanel(panel === 'charts' ? undefined : 'charts')}>{t('charts')}</button>
        <button type="button" aria-expanded={panel === 'views'} aria-controls="explore-views" onClick={() => setPanel(panel === 'views' ? undefined : 'views')}>{t('views')}</button>
      </div>
      <p className="visually-hidden" role="status">{status}</p>
      {failure !== undefined ? <p className="explore-error" role="alert">{failure}</p> : null}
      {panel === 'charts' ? (
        <ChartsPanel t={t} charts={charts} create={create} session={session} activeView={props.activeView}
          onOpen={(chart) => setOverlay({ kind: 'chart', chart })} onChanged={reloadCharts} onStatus={setStatus}
          onViewChanged={(view) => callbacks.current.onViewChanged(view)} />
      ) : null}
      {panel === 'views' ? (
        <ViewsPanel t={t} session={session} publicId={publicId} create={create} current={props.current} activeView={props.activeView}
          onOpen={(view) => { callbacks.current.onOpenView(view); setStatus(t('viewOpened', { name: view.name })); }}
          onDeleted={(view) => { if (props.activeView?.id === view.id) callbacks.current.onViewChanged(undefined); }}
          onSaved={(view) => {
            setStatus(t('viewSaved', { name: view.name }));
            callbacks.current.onViewChanged(view);
            callbacks.current.onViewSaved({ viewId: view.id, name: view.name, visibility: view.visibility, publicId: view.publicId });
          }} />
      ) : null}
      {overlay !== undefined ? (
        <ExploreFrame t={t} onBack={() => setOverlay(undefined)}>
          {overlay.kind === 'builder' && meta !== undefined ? (
            <EmbedBuilder t={t} locale={locale} meta={meta} start={overlay.start} from={overlay.from} session={session} timezone={props.timezone}
              describeFailure={describeFailure} onSave={save} />
          ) : overlay.kind === 'chart' ? (
            <SavedChartView t={t} chart={overlay.chart} session={session} locale={locale} timezone={props.timezone} />
          ) : null}
        </ExploreFrame>
      ) : null}
    </div>
  );
}

/** The full-frame view over the dashboard (a modal dialog): Back, or Escape, returns to the dashboard and to the button that opened it. */
function ExploreFrame({ t, onBack, children }: { t: ExploreTranslate; onBack(): void; children: ReactNode }) {
  const dialog = useRef<HTMLDivElement>(null);
  useDialogFocus(dialog);
  useEffect(() => {
    dialog.current?.querySelector<HTMLElement>('.explore-back')?.focus();
  }, []);
  return (
    <div className="explore-frame" role="dialog" aria-modal="true" aria-labelledby="explore-title" ref={dialog}
      onKeyDown={(event) => { if (event.key === 'Escape') { event.stopPropagation(); onBack(); } }}>
      <div className="explore-frame-head">
        <button type="button" className="explore-back" onClick={onBack}>← {t('back')}</button>
        <h1 id="explore-title">{t('exploreTitle')}</h1>
      </div>
      {children}
    </div>
  );
}

/** The shared builder (Builder.tsx), run through explore/query under the viewer's policy, saved as the viewer's chart. */
function EmbedBuilder({ t, locale, meta, start, from, session, timezone, describeFailure, onSave }: {
  t: ExploreTranslate; locale: string; meta: Meta; start: ChartStart | undefined; from: string | undefined; session: EmbedSession; timezone: string;
  describeFailure: (caught: unknown) => { message: string; field?: string | undefined }; onSave(draft: ChartDraft, kind: ChartKind, visibility: Visibility): Promise<void>;
}) {
  const [visibility, setVisibility] = useState<Visibility>('private');
  const chosen = useRef(visibility);
  chosen.current = visibility;
  const run = useCallback((query: ChartDraft['meta']['query']): Promise<PreviewAnswer> => runExploreQuery(session, { query }, timezone), [session, timezone]);
  return (
    <div className="explore-builder" data-from={from}>
      <Builder t={t} locale={locale} meta={meta} runQuery={run} runKey={timezone} describeFailure={describeFailure} otherViews
        initial={start} submitLabel={t('saveChart')} submittedMessage={(title) => t('chartSaved', { title })}
        onAdd={(draft, kind) => onSave(draft, kind, chosen.current)}
        extra={(
          <fieldset className="explore-visibility">
            <legend>{t('visibility')}</legend>
            {(['private', 'tenant'] as const).map((value) => (
              <label key={value} className="check">
                <input type="radio" name="explore-visibility" value={value} checked={visibility === value} onChange={() => setVisibility(value)} />
                {t(value === 'private' ? 'visibilityPrivate' : 'visibilityTenant')}
              </label>
            ))}
          </fieldset>
        )} />
    </div>
  );
}

/** A saved chart drawn from explore/query `{ chartId }`: under the viewer who opens it, with their policy. */
function SavedChartView({ t, chart, session, locale, timezone, compact = false }: { t: ExploreTranslate; chart: SavedChart; session: EmbedSession; locale: string; timezone: string; compact?: boolean }) {
  const [answer, setAnswer] = useState<PreviewAnswer | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const dark = usePrefersDark();
  const Chart = useChartView();
  useEffect(() => {
    let live = true;
    runExploreQuery(session, { chartId: chart.id }, timezone).then((a) => live && setAnswer(a), (error: unknown) => live && setFailure(error instanceof ApiError && error.status === 404 ? t('chartGone') : t('loadFailed', { message: message(error) })));
    return () => { live = false; };
  }, [session, chart.id, timezone, t]);
  const Heading = compact ? 'h3' : 'h2';
  return (
    <section className="explore-chart" data-chart-id={chart.id} aria-label={chart.title}>
      <Heading className="explore-chart-title">{chart.title}</Heading>
      {failure !== undefined ? <p className="explore-error" role="alert">{failure}</p>
        : answer === undefined || Chart === undefined ? <p className="hint" role="status">{t('loading')}</p>
          : answer.rows.length === 0 ? <p className="hint">{t('previewEmpty')}</p>
            : <div className="explore-chart-body"><Chart snapshot={drawingOf(chart)} data={answer} dark={dark} locale={locale} label={chart.title} chartId={`saved-${chart.id}`} /></div>}
    </section>
  );
}

/** "My charts" and "Shared": the viewer's own charts and those their company's viewers shared; rename and delete only one's own. */
function ChartsPanel({ t, charts, create, session, activeView, onOpen, onChanged, onStatus, onViewChanged }: {
  t: ExploreTranslate; charts: SavedChart[] | undefined; create: boolean; session: EmbedSession; activeView: SavedView | undefined;
  onOpen(chart: SavedChart): void; onChanged(): void; onStatus(text: string): void; onViewChanged(view: SavedView): void;
}) {
  const [renaming, setRenaming] = useState<string | undefined>(undefined);
  const [title, setTitle] = useState('');
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const act = (work: Promise<unknown>, done: string) => work.then(() => { setFailure(undefined); onStatus(done); onChanged(); }, (error: unknown) => setFailure(t('actionFailed', { message: message(error) })));
  const addToView = (chart: SavedChart) => {
    if (activeView === undefined) return;
    const placed = activeView.state.charts ?? [];
    if (placed.some((p) => p.chartId === chart.id)) return;
    const state: ViewState = { ...activeView.state, charts: [...placed, { chartId: chart.id, x: 0, y: placed.length * 6, w: 6, h: 6 }] };
    updateView(session, activeView.publicId, activeView.id, { state }).then((view) => {
      onViewChanged(view);
      onStatus(t('addedToView', { title: chart.title, view: view.name }));
    }, (error: unknown) => setFailure(t('actionFailed', { message: message(error) })));
  };
  const list = (items: SavedChart[], label: string, id: string) => (
    <section aria-labelledby={id}>
      <h2 id={id} className="explore-list-title">{label}</h2>
      {items.length === 0 ? <p className="hint">{t('noCharts')}</p> : (
        <ul className="explore-list">
          {items.map((chart) => (
            <li key={chart.id} data-chart-id={chart.id}>
              {renaming === chart.id ? (
                <form onSubmit={(event) => { event.preventDefault(); act(updateChart(session, chart.id, { title: title.trim() }), t('chartSaved', { title: title.trim() })); setRenaming(undefined); }}>
                  <label>{t('newTitle')} <input value={title} onInput={(event) => setTitle(event.currentTarget.value)} /></label>
                  <button type="submit" disabled={title.trim() === ''}>{t('saveTitle')}</button>
                  <button type="button" onClick={() => setRenaming(undefined)}>{t('cancel')}</button>
                </form>
              ) : (
                <>
                  <button type="button" className="explore-open" aria-label={t('openChart', { title: chart.title })} onClick={() => onOpen(chart)}>{chart.title}</button>
                  <span className="explore-mark">{chart.visibility === 'tenant' ? (chart.mine ? t('sharedBy') : t('sharedByName', { name: chart.author.username })) : t('privateMark')}</span>
                  {chart.mine ? (
                    <>
                      <button type="button" aria-label={t('renameChart', { title: chart.title })} onClick={() => { setRenaming(chart.id); setTitle(chart.title); }}>{t('rename')}</button>
                      <button type="button" aria-label={t('deleteChart', { title: chart.title })}
                        onClick={() => { if (confirm(t('confirmDeleteChart', { title: chart.title }))) act(deleteChart(session, chart.id), ''); }}>{t('delete')}</button>
                    </>
                  ) : null}
                  {create ? <button type="button" disabled={activeView === undefined} title={activeView === undefined ? t('needView') : undefined} onClick={() => addToView(chart)}>{t('addToView')}</button> : null}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
  return (
    <div id="explore-charts" className="explore-panel">
      {failure !== undefined ? <p className="explore-error" role="alert">{failure}</p> : null}
      {charts === undefined ? <p className="hint" role="status">{t('loading')}</p> : (
        <>
          {list(charts.filter((c) => c.mine), t('myCharts'), 'explore-mine')}
          {list(charts.filter((c) => !c.mine), t('shared'), 'explore-shared')}
          {create && activeView === undefined ? <p className="hint">{t('needView')}</p> : null}
        </>
      )}
    </div>
  );
}

/** Saved views of this dashboard: save the current filters, grain and swaps (create); open one to restore them. */
function ViewsPanel({ t, session, publicId, create, current, activeView, onOpen, onSaved, onDeleted }: {
  t: ExploreTranslate; session: EmbedSession; publicId: string; create: boolean; current: ViewState; activeView: SavedView | undefined;
  onOpen(view: SavedView): void; onSaved(view: SavedView): void; onDeleted(view: SavedView): void;
}) {
  const [views, setViews] = useState<SavedView[] | undefined>(undefined);
  const [name, setName] = useState('');
  const [visibility, setVisibility] = useState<Visibility>('private');
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const reload = useCallback(() => {
    listViews(session, publicId).then(({ views: list }) => setViews(list), (error: unknown) => setFailure(t('loadFailed', { message: message(error) })));
  }, [session, publicId, t]);
  useEffect(reload, [reload]);
  const save = (event: Event) => {
    event.preventDefault();
    const state: ViewState = { ...current, ...(activeView?.state.charts !== undefined ? { charts: activeView.state.charts } : {}) };
    saveView(session, publicId, { name: name.trim(), state, visibility }).then((view) => {
      setName('');
      setFailure(undefined);
      onSaved(view);
      reload();
    }, (error: unknown) => setFailure(t('actionFailed', { message: message(error) })));
  };
  return (
    <div id="explore-views" className="explore-panel">
      {create ? (
        <form className="explore-save-view" onSubmit={save}>
          <label>{t('viewName')} <input value={name} onInput={(event) => setName(event.currentTarget.value)} /></label>
          <label>{t('visibility')}{' '}
            <select value={visibility} onChange={(event) => setVisibility(event.currentTarget.value as Visibility)}>
              <option value="private">{t('visibilityPrivate')}</option>
              <option value="tenant">{t('visibilityTenant')}</option>
            </select>
          </label>
          <button type="submit" className="primary" disabled={name.trim() === ''}>{t('saveView')}</button>
        </form>
      ) : null}
      {failure !== undefined ? <p className="explore-error" role="alert">{failure}</p> : null}
      <h2 className="explore-list-title">{t('views')}</h2>
      {views === undefined ? <p className="hint" role="status">{t('loading')}</p> : views.length === 0 ? <p className="hint">{t('noViews')}</p> : (
        <ul className="explore-list">
          {views.map((view) => (
            <li key={view.id} data-view-id={view.id}>
              <button type="button" className="explore-open" aria-label={t('openView', { name: view.name })} aria-current={activeView?.id === view.id ? 'true' : undefined} onClick={() => onOpen(view)}>{view.name}</button>
              <span className="explore-mark">{view.visibility === 'tenant' ? t('sharedBy') : t('privateMark')}</span>
              {view.mine ? (
                <button type="button" aria-label={t('deleteView', { name: view.name })} onClick={() => deleteView(session, publicId, view.id).then(() => { onDeleted(view); reload(); }, (error: unknown) => setFailure(t('actionFailed', { message: message(error) })))}>{t('delete')}</button>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export interface PersonalChartsProps {
  session: EmbedSession;
  locale: string;
  timezone: string;
  view: SavedView;
  canEdit: boolean;
  onViewChanged(view: SavedView): void;
}

/** The saved charts a view adds to the viewer's personal layout, below the author's dashboard (which never changes). */
export function PersonalCharts({ session, locale, timezone, view, canEdit, onViewChanged }: PersonalChartsProps) {
  const t = useMemo(() => exploreTranslator(locale), [locale]);
  const [charts, setCharts] = useState<SavedChart[] | undefined>(undefined);
  useEffect(() => {
    listCharts(session).then(({ charts: list }) => setCharts(list), () => setCharts([]));
  }, [session, view.id]);
  const placed = view.state.charts ?? [];
  if (placed.length === 0) return null;
  return (
    <section className="personal-charts" aria-labelledby="personal-charts-title">
      <h2 id="personal-charts-title">{t('personalCharts')}</h2>
      <div className="personal-grid">
        {placed.map((p) => {
          const chart = charts?.find((c) => c.id === p.chartId);
          return (
            <div key={p.chartId} className="personal-chart" style={{ gridColumn: `span ${Math.max(1, Math.min(12, p.w))}` }}>
              {chart === undefined ? <p className="hint">{charts === undefined ? t('loading') : t('chartGone')}</p>
                : <SavedChartView t={t} chart={chart} session={session} locale={locale} timezone={timezone} compact />}
              {canEdit ? (
                <button type="button" aria-label={t('removeFromView', { title: chart?.title ?? p.chartId })}
                  onClick={() => updateView(session, view.publicId, view.id, { state: { ...view.state, charts: placed.filter((c) => c.chartId !== p.chartId) } }).then(onViewChanged, () => undefined)}>×</button>
              ) : null}
            </div>
          );
        })}
      </div>
    </section>
  );
}
