import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatCell } from '../dashboard/cells.js';
import { CHART_KINDS, FILTER_OPERATORS, FORMAT_CHOICES, GRANULARITIES, buildQuery, chartTitle, columnFormats, drawingFor, emptyBuilder, orderableMembers, suggestKind, timeColumn, withFormats } from './builder.js';
import type { BuilderFilter, BuilderState, ChartDraft, ChartKind, FilterOperator, FormatChoice, FormatPick, Meta, MetaCube, MetaMember, PreviewAnswer, SemanticQuery, Titles } from './builder.js';
import type { BuilderKey, BuilderTranslate } from './builderMessages.js';
import type { ChartSnapshot } from './ChartView.js';
import { useChartView, usePrefersDark } from './useChart.js';

type MessageKey = BuilderKey;
type Translate = BuilderTranslate;

const PREVIEW_DELAY_MS = 400;
const PREVIEW_ROWS = 20;

const KIND_LABELS: Record<ChartKind, MessageKey> = {
  line: 'kindLine', bar: 'kindBar', area: 'kindArea', kpi: 'kindKpi', table: 'kindTable', map: 'kindMap', sankey: 'kindSankey',
};

const FORMAT_LABELS: Record<FormatChoice, MessageKey> = { model: 'formatModel', number: 'formatNumber', currency: 'formatCurrency', percent: 'formatPercent' };

const memberLabel = (member: MetaMember) => member.shortTitle ?? member.title ?? member.name;

/** The titles of a deployment's members, for axes and chart titles. */
export function titlesOf(meta: Meta): Titles {
  const titles: Record<string, string> = {};
  for (const cube of meta.cubes) {
    for (const member of [...cube.measures, ...cube.dimensions]) titles[member.name] = memberLabel(member);
  }
  return titles;
}

type Preview = { kind: 'idle' } | { kind: 'loading'; previous?: PreviewAnswer | undefined } | { kind: 'ready'; answer: PreviewAnswer } | { kind: 'failed'; message: string; field?: string | undefined };

/**
 * The chart builder (issue 34): a view, then its measures, dimensions, a time dimension with its grain and date range,
 * filters with every operator of the query format, order and limit; a live preview (debounced), with where its answer
 * came from; the chart its shape suggests, which can be changed; a submit ("Add to dashboard" in the console, "Save"
 * in the embed). One builder for both apps (issue 35): what differs comes in as props: how a query runs (`runQuery`:
 * the console's deployment preview, the embed's explore/query), how a failure reads (`describeFailure`; undefined: the
 * app handled it, e.g. signed out), the words (`t`), and the admins' details (`adminDetails`: the SQL that ran and
 * "why is this slow", which only the console shows).
 */
export function Builder({ t, locale, meta, runQuery, runKey, describeFailure, onAdd, initial, submitLabel, submittedMessage, adminDetails = false, otherViews = false, extra }: {
  t: Translate; locale: string; meta: Meta;
  runQuery: (query: SemanticQuery) => Promise<PreviewAnswer>;
  /** What the queries run against (the console's deployment): a new one runs the preview again. */
  runKey?: string | number | undefined;
  describeFailure: (caught: unknown) => { message: string; field?: string | undefined } | undefined;
  /** The chart, on submit, and the kind picked (line, bar, ...: the drawing's `kind` is `vega` for the first three); a promise that fails shows its failure (the embed's save). */
  onAdd: (chart: ChartDraft, kind: ChartKind) => void | Promise<unknown>;
  /** A chart being edited: the builder starts from its query, kind and title (explore/chartEdit.ts). */
  initial?: { state: BuilderState; kind: ChartKind | undefined; title: string } | undefined; submitLabel?: string | undefined;
  /** What the status line says once the chart is submitted; the console's "added to the dashboard" by default. */
  submittedMessage?: ((title: string) => string) | undefined;
  adminDetails?: boolean | undefined;
  /**
   * Offers the dimensions of the other views too, each view's in a group of its own (the model joins them: revenue
   * of orders by the products' category). The embed's explore turns it on; the console keeps one view's members.
   */
  otherViews?: boolean | undefined;
  /** More controls next to the submit (the embed's visibility). */
  extra?: ComponentChildren;
}) {
  const [state, setState] = useState<BuilderState>(() => initial?.state ?? emptyBuilder(meta.cubes[0]?.name ?? ''));
  const [kindChoice, setKindChoice] = useState<ChartKind | undefined>(initial?.kind);
  const [title, setTitle] = useState(initial?.title ?? '');
  const [preview, setPreview] = useState<Preview>({ kind: 'idle' });
  const [added, setAdded] = useState('');
  const [formatPicks, setFormatPicks] = useState<Record<string, FormatPick>>({});
  const dark = usePrefersDark();
  const Chart = useChartView();
  const request = useRef(0);
  const run = useRef(runQuery);
  run.current = runQuery;
  const describe = useRef(describeFailure);
  describe.current = describeFailure;
  const titles = useMemo(() => titlesOf(meta), [meta]);
  const cube: MetaCube | undefined = meta.cubes.find((c) => c.name === state.view);
  const query = buildQuery(state);
  const queryKey = JSON.stringify(query ?? null);
  const suggested = suggestKind(query);
  const kind = kindChoice ?? suggested;
  const formatsKey = JSON.stringify(columnFormats(formatPicks, query) ?? null);
  // One drawing per query, kind and formats: the chart is drawn again only when one of them changes (not as a title
  // is typed). formatsKey and queryKey stand for the formats and the query.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const formats = useMemo(() => columnFormats(formatPicks, query), [formatsKey]);
  const snapshot = useMemo((): ChartSnapshot | undefined => (query === undefined ? undefined
    : { ...drawingFor(kind, query, titles, formats), ...(formats !== undefined ? { preferences: { columnFormats: formats } } : {}) }),
  // eslint-disable-next-line react-hooks/exhaustive-deps
  [queryKey, kind, titles, formats]);
  const pickFormat = (member: string, patch: Partial<FormatPick>) =>
    setFormatPicks((before) => ({ ...before, [member]: { ...(before[member] ?? { choice: 'model', decimals: '' }), ...patch } }));

  const change = (patch: Partial<BuilderState>) => setState((before) => ({ ...before, ...patch }));
  const toggle = (list: 'measures' | 'dimensions', member: string, on: boolean) =>
    setState((before) => ({ ...before, [list]: on ? [...before[list], member] : before[list].filter((m) => m !== member) }));
  const changeFilter = (index: number, patch: Partial<BuilderFilter>) =>
    setState((before) => ({ ...before, filters: before.filters.map((f, i) => (i === index ? { ...f, ...patch } : f)) }));

  useEffect(() => {
    if (query === undefined) {
      setPreview({ kind: 'idle' });
      return undefined;
    }
    const id = ++request.current;
    setPreview((before) => ({ kind: 'loading', previous: before.kind === 'ready' ? before.answer : before.kind === 'loading' ? before.previous : undefined }));
    const timer = setTimeout(() => {
      run.current(query).then(
        (answer) => { if (id === request.current) setPreview({ kind: 'ready', answer }); },
        (caught: unknown) => {
          if (id !== request.current) return;
          const failure = describe.current(caught);
          if (failure !== undefined) setPreview({ kind: 'failed', message: failure.message, field: failure.field });
        },
      );
    }, PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
    // queryKey stands for the query.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [queryKey, runKey]);

  const add = () => {
    if (query === undefined) return;
    const chartName = title.trim() !== '' ? title.trim() : chartTitle(query, titles);
    const said = submittedMessage?.(chartName) ?? t('chartAdded', { title: chartName });
    const done = onAdd({ title: chartName, ...drawingFor(kind, query, titles, formats), meta: { query }, ...(formats !== undefined ? { preferences: { columnFormats: formats } } : {}) }, kind);
    if (done === undefined) setAdded(said);
    else {
      setAdded('');
      done.then(() => setAdded(said), (caught: unknown) => { const failure = describeFailure(caught); if (failure !== undefined) setAdded(failure.message); });
    }
  };

  const dimensions = cube?.dimensions.filter((d) => d.type !== 'time') ?? [];
  const times = cube?.dimensions.filter((d) => d.type === 'time') ?? [];
  const members = cube ? [...cube.dimensions, ...cube.measures] : [];
  const orderable = orderableMembers(state);
  const shown = preview.kind === 'ready' ? preview.answer : preview.kind === 'loading' ? preview.previous : undefined;

  return (
    <section class="builder" aria-labelledby="builder-title">
      <h2 id="builder-title">{t('builder')}</h2>
      <div class="builder-grid">
        <div class="builder-controls">
          <div class="field">
            <label for="b-view">{t('view')}</label>
            <select id="b-view" value={state.view} onChange={(e) => { setState(emptyBuilder(e.currentTarget.value)); setKindChoice(undefined); }}>
              {meta.cubes.map((c) => <option key={c.name} value={c.name}>{c.title ?? c.name}</option>)}
            </select>
          </div>
          <fieldset>
            <legend>{t('measures')}</legend>
            <MemberChecks members={cube?.measures ?? []} picked={state.measures} onToggle={(member, on) => toggle('measures', member, on)} />
          </fieldset>
          <fieldset>
            <legend>{t('dimensions')}</legend>
            <MemberChecks members={dimensions} picked={state.dimensions} onToggle={(member, on) => toggle('dimensions', member, on)} />
          </fieldset>
          {otherViews ? meta.cubes.filter((c) => c.name !== state.view).map((other) => {
            const joined = other.dimensions.filter((d) => d.type !== 'time');
            return joined.length === 0 ? null : (
              <fieldset key={other.name} class="joined">
                <legend>{t('dimensionsOf', { view: other.title ?? other.name })}</legend>
                <MemberChecks members={joined} picked={state.dimensions} onToggle={(member, on) => toggle('dimensions', member, on)} />
              </fieldset>
            );
          }) : null}
          <fieldset>
            <legend>{t('time')}</legend>
            <div class="row">
              <div class="field">
                <label for="b-time">{t('timeDimension')}</label>
                <select id="b-time" value={state.timeDimension} onChange={(e) => change({ timeDimension: e.currentTarget.value, orderBy: '' })}>
                  <option value="">{t('none')}</option>
                  {times.map((d) => <option key={d.name} value={d.name}>{memberLabel(d)}</option>)}
                </select>
              </div>
              <div class="field">
                <label for="b-grain">{t('grain')}</label>
                <select id="b-grain" value={state.granularity} disabled={state.timeDimension === ''} onChange={(e) => change({ granularity: e.currentTarget.value, orderBy: '' })}>
                  {GRANULARITIES.map((g) => <option key={g} value={g}>{g}</option>)}
                </select>
              </div>
              <div class="field">
                <label for="b-from">{t('dateFrom')}</label>
                <input id="b-from" type="date" value={state.dateFrom} disabled={state.timeDimension === ''} onInput={(e) => change({ dateFrom: e.currentTarget.value })} />
              </div>
              <div class="field">
                <label for="b-to">{t('dateTo')}</label>
                <input id="b-to" type="date" value={state.dateTo} disabled={state.timeDimension === ''} onInput={(e) => change({ dateTo: e.currentTarget.value })} />
              </div>
            </div>
          </fieldset>
          <fieldset>
            <legend>{t('filters')}</legend>
            {state.filters.map((filter, index) => {
              const n = index + 1;
              return (
                <div class="row filter" key={index}>
                  <div class="field">
                    <label for={`b-filter-${n}-member`}>{t('filterMember', { n })}</label>
                    <select id={`b-filter-${n}-member`} value={filter.member} onChange={(e) => changeFilter(index, { member: e.currentTarget.value })}>
                      <option value="">{t('pick')}</option>
                      {members.map((m) => <option key={m.name} value={m.name}>{memberLabel(m)}</option>)}
                    </select>
                  </div>
                  <div class="field">
                    <label for={`b-filter-${n}-operator`}>{t('filterOperator', { n })}</label>
                    <select id={`b-filter-${n}-operator`} value={filter.operator} onChange={(e) => changeFilter(index, { operator: e.currentTarget.value as FilterOperator })}>
                      {FILTER_OPERATORS.map((o) => <option key={o} value={o}>{o}</option>)}
                    </select>
                  </div>
                  <div class="field">
                    <label for={`b-filter-${n}-values`}>{t('filterValues', { n })}</label>
                    <input id={`b-filter-${n}-values`} value={filter.values} disabled={filter.operator === 'set' || filter.operator === 'notSet'}
                      aria-describedby="b-filter-hint" onInput={(e) => changeFilter(index, { values: e.currentTarget.value })} />
                  </div>
                  <button type="button" onClick={() => setState((before) => ({ ...before, filters: before.filters.filter((_, i) => i !== index) }))}>
                    {t('removeFilter', { n })}
                  </button>
                </div>
              );
            })}
            <p id="b-filter-hint" class="hint">{t('filterHint')}</p>
            <button type="button" onClick={() => change({ filters: [...state.filters, { member: '', operator: 'equals', values: '' }] })}>{t('addFilter')}</button>
          </fieldset>
          <div class="row">
            <div class="field">
              <label for="b-order">{t('orderBy')}</label>
              <select id="b-order" value={state.orderBy} onChange={(e) => change({ orderBy: e.currentTarget.value })}>
                <option value="">{t('none')}</option>
                {orderable.map((m) => <option key={m} value={m}>{titles[m] ?? (state.timeDimension !== '' && m === timeColumn(state.timeDimension, state.granularity) ? `${titles[state.timeDimension] ?? state.timeDimension} (${state.granularity})` : m)}</option>)}
              </select>
            </div>
            <div class="field">
              <label for="b-direction">{t('direction')}</label>
              <select id="b-direction" value={state.orderDirection} disabled={state.orderBy === ''} onChange={(e) => change({ orderDirection: e.currentTarget.value as 'asc' | 'desc' })}>
                <option value="asc">{t('ascending')}</option>
                <option value="desc">{t('descending')}</option>
              </select>
            </div>
            <div class="field">
              <label for="b-limit">{t('limit')}</label>
              <input id="b-limit" inputMode="numeric" value={state.limit} onInput={(e) => change({ limit: e.currentTarget.value })} />
            </div>
          </div>
        </div>
        <div class="builder-preview">
          <div class="row">
            <div class="field">
              <label for="b-kind">{t('chartKind')}</label>
              <select id="b-kind" value={kind} aria-describedby="b-kind-hint" onChange={(e) => setKindChoice(e.currentTarget.value as ChartKind)}>
                {CHART_KINDS.map((k) => <option key={k} value={k}>{t(KIND_LABELS[k])}</option>)}
              </select>
              <p id="b-kind-hint" class="hint">{t('suggested', { kind: t(KIND_LABELS[suggested]) })}</p>
            </div>
            <div class="field">
              <label for="b-title">{t('chartTitle')}</label>
              <input id="b-title" value={title} placeholder={query ? chartTitle(query, titles) : ''} onInput={(e) => setTitle(e.currentTarget.value)} />
            </div>
          </div>
          {(query?.measures ?? []).length > 0 ? (
            <fieldset class="formats">
              <legend>{t('formats')}</legend>
              {(query?.measures ?? []).map((member, i) => {
                const pick = formatPicks[member] ?? { choice: 'model', decimals: '' };
                return (
                  <div class="row" key={member}>
                    <div class="field">
                      <label for={`b-format-${i + 1}`}>{t('formatOf', { member: titles[member] ?? member })}</label>
                      <select id={`b-format-${i + 1}`} value={pick.choice} onChange={(e) => pickFormat(member, { choice: e.currentTarget.value as FormatChoice })}>
                        {FORMAT_CHOICES.map((c) => <option key={c} value={c}>{t(FORMAT_LABELS[c])}</option>)}
                      </select>
                    </div>
                    <div class="field">
                      <label for={`b-decimals-${i + 1}`}>{t('decimalsOf', { member: titles[member] ?? member })}</label>
                      <input id={`b-decimals-${i + 1}`} inputMode="numeric" value={pick.decimals} disabled={pick.choice === 'model'} aria-describedby="b-decimals-hint"
                        onInput={(e) => pickFormat(member, { decimals: e.currentTarget.value })} />
                    </div>
                  </div>
                );
              })}
              <p id="b-decimals-hint" class="hint">{t('decimalsHint')}</p>
            </fieldset>
          ) : null}
          {extra}
          <button type="button" class="primary" disabled={query === undefined} onClick={add}>{submitLabel ?? t('addToDashboard')}</button>
          <p class="visually-hidden" role="status">{added}</p>
          <h3>{t('preview')}</h3>
          <div aria-live="polite" class="preview-status">
            {preview.kind === 'idle' ? <p class="hint">{t('previewIdle')}</p> : null}
            {preview.kind === 'loading' ? <p class="hint">{t('previewLoading')}</p> : null}
            {preview.kind === 'ready' ? <p class="source" data-source={preview.answer.source}>{t('previewSource', { source: preview.answer.source, rows: preview.answer.rows.length })}</p> : null}
          </div>
          {preview.kind === 'failed' ? <p class="error" role="alert">{t('previewError', { message: preview.message })}</p> : null}
          {shown !== undefined && preview.kind !== 'failed' && snapshot !== undefined ? (
            <div class="preview-chart" role="region" aria-label={t('previewChart')}>
              {shown.rows.length === 0 ? <p class="hint">{t('previewEmpty')}</p> : Chart !== undefined ? <Chart snapshot={snapshot} data={shown} dark={dark} locale={locale} label={t('previewChart')} /> : <p class="hint">{t('previewLoading')}</p>}
            </div>
          ) : null}
          {shown !== undefined && preview.kind !== 'failed' && kind !== 'table' ? <PreviewTable answer={shown} formats={formats} locale={locale} t={t} /> : null}
          {adminDetails && shown?.statement !== undefined && preview.kind !== 'failed' ? <Statement statement={shown.statement} t={t} /> : null}
          {adminDetails && shown?.rollupHint !== undefined && shown.source === 'warehouse' && preview.kind !== 'failed' ? <RollupHintView hint={shown.rollupHint} t={t} /> : null}
        </div>
      </div>
    </section>
  );
}

/** A checkbox per member (measures, or dimensions), checked when the query has it. */
function MemberChecks({ members, picked, onToggle }: { members: readonly MetaMember[]; picked: readonly string[]; onToggle: (member: string, on: boolean) => void }) {
  return (
    <>
      {members.map((m) => (
        <label key={m.name} class="check">
          <input type="checkbox" checked={picked.includes(m.name)} onChange={(e) => onToggle(m.name, e.currentTarget.checked)} />
          {memberLabel(m)}
        </label>
      ))}
    </>
  );
}

/** The answer's first rows, each cell as the embed shows it (its column's format: the model's, or the one chosen). */
function PreviewTable({ answer, formats, locale, t }: { answer: PreviewAnswer; formats: Parameters<typeof withFormats>[1]; locale: string; t: Translate }) {
  const columns = withFormats(answer.columns, formats);
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={t('previewTable')}>
      <table class="preview-table">
        <thead><tr>{answer.columns.map((c) => <th key={c.name} scope="col">{c.title ?? c.name}{c.granularity ? ` (${c.granularity})` : ''}</th>)}</tr></thead>
        <tbody>
          {answer.rows.slice(0, PREVIEW_ROWS).map((row, i) => <tr key={i}>{row.map((value, j) => <td key={j}>{formatCell(columns[j]!, value, locale)}</td>)}</tr>)}
        </tbody>
      </table>
      {answer.rows.length > PREVIEW_ROWS ? <p class="hint">{t('previewMore', { shown: PREVIEW_ROWS, rows: answer.rows.length })}</p> : null}
    </div>
  );
}

/** The statement that ran and where (admins only: the answer carries it only for them). */
function Statement({ statement, t }: { statement: NonNullable<PreviewAnswer['statement']>; t: Translate }) {
  return (
    <details class="statement">
      <summary>{t('sqlTitle', { on: statement.on })}</summary>
      <pre class="sql"><code>{statement.sql}</code></pre>
      {statement.parameters.length > 0 ? (
        <>
          <p class="hint">{t('sqlParameters')}</p>
          <ol class="parameters">{statement.parameters.map((value, i) => <li key={i}><code>{JSON.stringify(value)}</code></li>)}</ol>
        </>
      ) : null}
    </details>
  );
}

/**
 * "Why is this slow": the data source answered; why each pre-aggregation of the view did not, and one that would, in
 * the model's JSON shape, to paste into the view's `preAggregations` on the model page (admins only).
 */
function RollupHintView({ hint, t }: { hint: NonNullable<PreviewAnswer['rollupHint']>; t: Translate }) {
  return (
    <details class="rollup-hint">
      <summary>{t('slowTitle')}</summary>
      {hint.reasons.length === 0 ? <p>{t('slowNoRollups')}</p> : (
        <ul class="reasons">{hint.reasons.map((r) => <li key={r.rollup}><code>{r.rollup}</code>: {r.reason}</li>)}</ul>
      )}
      {hint.suggestion !== null ? (
        <>
          <p>{t('slowSuggestion', { view: hint.suggestion.view })}</p>
          <pre class="suggestion"><code>{JSON.stringify(hint.suggestion.preAggregation, null, 2)}</code></pre>
        </>
      ) : <p>{t('slowUnsuggested', { why: hint.unsuggested ?? '' })}</p>}
    </details>
  );
}
