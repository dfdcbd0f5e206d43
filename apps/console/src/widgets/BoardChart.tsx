import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, previewSnapshot } from '../api.js';
import type { DashboardWidget, Draft, PreviewAnswer, SnapshotInput } from '../api.js';
import type { ChartSnapshot } from '../../../embed/src/explore/ChartView.js';
import { useChartView, usePrefersDark } from '../../../embed/src/explore/useChart.js';
import { snapshotIndexFor } from '../draft.js';
import { describeError } from '../errors.js';
import type { Translate } from '../i18n.js';

/** At most this many charts' queries run at once: a board of many charts does not flood the data source. */
const PARALLEL_QUERIES = 3;
/** Answers kept, by deployment and snapshot: a board redrawn (a drag, a keystroke, a resize) does not ask again. */
const KEPT_ANSWERS = 50;
/** A resize settles for this long before the chart is drawn again at its new size. */
const RESIZE_SETTLE_MS = 150;

const answers = new Map<string, Promise<PreviewAnswer>>();
let running = 0;
const waiting: Array<() => void> = [];

/** The query of a snapshot, run once per deployment and snapshot (its JSON), PARALLEL_QUERIES at a time. */
function answerOf(deploymentId: number, snapshot: SnapshotInput, key: string): Promise<PreviewAnswer> {
  const cacheKey = `${deploymentId} ${key}`;
  const kept = answers.get(cacheKey);
  if (kept !== undefined) return kept;
  const asked = new Promise<void>((resolve) => {
    if (running < PARALLEL_QUERIES) resolve();
    else waiting.push(resolve);
  }).then(() => {
    running += 1;
    return previewSnapshot(deploymentId, { meta: snapshot.meta ?? null, ...(typeof snapshot.sqlQuery === 'string' ? { sqlQuery: snapshot.sqlQuery } : {}) });
  }).finally(() => {
    running -= 1;
    waiting.shift()?.();
  });
  answers.set(cacheKey, asked);
  // A failure is not kept: the next change of the snapshot, or the next page, asks again.
  asked.catch(() => answers.delete(cacheKey));
  if (answers.size > KEPT_ANSWERS) answers.delete(answers.keys().next().value!);
  return asked;
}

type Answer = { kind: 'loading' } | { kind: 'ready'; answer: PreviewAnswer } | { kind: 'failed'; message: string };

/** The cell's size in pixels, once a resize has settled (react-grid-layout changes it as the corner is dragged). */
function useSettledSize(element: { current: HTMLElement | null }): string | undefined {
  const [size, setSize] = useState<string | undefined>(undefined);
  useEffect(() => {
    const node = element.current;
    if (node === null || typeof ResizeObserver !== 'function') return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const measure = () => setSize(`${Math.round(node.clientWidth)}x${Math.round(node.clientHeight)}`);
    measure();
    const observer = new ResizeObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(measure, RESIZE_SETTLE_MS);
    });
    observer.observe(node);
    return () => {
      clearTimeout(timer);
      observer.disconnect();
    };
  }, [element]);
  return size;
}

/**
 * A CHART widget on the editor's board, drawn as the builder's preview draws it (apps/embed/src/explore/ChartView.tsx, the embed's own
 * chart modules, a lazy chunk) over its report snapshot's rows from the authors' preview (`POST .../query` with the
 * snapshot). The query runs once per change of the snapshot; the chart fills the cell and is drawn again, at the new
 * size, when a resize settles. Loading is announced politely; a failure says its message in the cell.
 */
export function BoardChart({ widget, name, t, locale, deploymentId, draft, onSignedOut }: {
  widget: DashboardWidget; name: string; t: Translate; locale: string; deploymentId: number; draft: Draft; onSignedOut: () => void;
}) {
  const index = snapshotIndexFor(draft, widget);
  const found = index === undefined ? undefined : draft.reportSnapshots[index];
  const key = found === undefined ? '' : JSON.stringify(found);
  // One snapshot object per JSON: the chart is not drawn again when the draft changes elsewhere.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const snapshot = useMemo(() => found, [key]);
  const [state, setState] = useState<Answer>({ kind: 'loading' });
  const Chart = useChartView();
  const dark = usePrefersDark();
  const area = useRef<HTMLDivElement>(null);
  const size = useSettledSize(area);
  useEffect(() => {
    if (snapshot === undefined) return undefined;
    let live = true;
    setState({ kind: 'loading' });
    answerOf(deploymentId, snapshot, key).then((answer) => live && setState({ kind: 'ready', answer }), (caught: unknown) => {
      if (!live) return;
      if (caught instanceof ApiError && caught.status === 401) onSignedOut();
      else setState({ kind: 'failed', message: describeError(t, caught) });
    });
    return () => {
      live = false;
    };
    // The answer depends on the snapshot (its JSON) only, not on the rest of the draft.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [deploymentId, key]);
  if (snapshot === undefined) return <p class="error">{t('chartMissing')}</p>;
  const drawing = snapshot as ChartSnapshot;
  return (
    <div class="board-chart" data-state={state.kind} data-size={size}>
      <div class="board-chart-status" aria-live="polite">
        {state.kind === 'loading' || (state.kind === 'ready' && Chart === undefined) ? <p class="hint">{t('chartLoading', { name })}</p> : null}
        {state.kind === 'failed' ? <p class="error">{t('chartFailed', { message: state.message })}</p> : null}
      </div>
      <div class="board-chart-area" ref={area}>
        {state.kind === 'ready' && Chart !== undefined && size !== undefined
          ? (state.answer.rows.length === 0 ? <p class="hint">{t('previewEmpty')}</p>
            : <Chart key={size} snapshot={drawing} data={state.answer} dark={dark} locale={locale} label={name} chartId={`board-${widget.id}`} />)
          : null}
      </div>
    </div>
  );
}
