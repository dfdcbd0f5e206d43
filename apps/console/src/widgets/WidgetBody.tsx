import { useEffect, useState } from 'preact/hooks';
import { ApiError, previewQuery } from '../api.js';
import type { DashboardWidget, Draft, Meta } from '../api.js';
import { parentOf, widgetsOf } from '../draft.js';
import { describeError } from '../errors.js';
import type { Translate } from '../i18n.js';
import { BoardChart } from './BoardChart.js';
import { GRAINS, findMember } from './forms.js';
import { useMarkdown } from '../../../embed/src/dashboard/useMarkdown.js';

/** What a board cell's body needs of the editor. */
export interface BoardContext {
  t: Translate;
  locale: string;
  deploymentId: number;
  draft: Draft;
  meta: Meta;
  nameOf: (widget: DashboardWidget) => string;
  onEdit: (widget: DashboardWidget) => void;
  onDelete: (widget: DashboardWidget) => void;
  onSignedOut: () => void;
  /** svc's refusal of the last save, when its JSON path names a widget. */
  refused?: { widgetId: string; message: string } | undefined;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * A widget's body on the editor's board, drawn as the embed draws it where that is practical: a TEXT's Markdown
 * rendered, a FILTER, TIME_GRAIN or FIELD as its control (choosing in it changes nothing: viewers choose), a divider as
 * a rule, a container with its children, a CHART as its chart over its snapshot's rows (BoardChart).
 */
export function WidgetBody({ widget, ctx }: { widget: DashboardWidget; ctx: BoardContext }) {
  const { t } = ctx;
  const refused = ctx.refused?.widgetId === widget.id ? <p class="error" role="alert">{t('widgetRefused', { message: ctx.refused.message })}</p> : null;
  let body;
  switch (widget.type) {
    case 'TEXT': body = <MarkdownBody markdown={text(widget.config?.markdown) ?? text(widget.config?.text) ?? ''} />; break;
    case 'FILTER': body = <FilterControl widget={widget} ctx={ctx} />; break;
    case 'TIME_GRAIN': body = <TimeGrainControl widget={widget} ctx={ctx} />; break;
    case 'FIELD': body = <FieldControl widget={widget} ctx={ctx} />; break;
    case 'CHART':
      body = <BoardChart widget={widget} name={ctx.nameOf(widget)} t={t} locale={ctx.locale} deploymentId={ctx.deploymentId} draft={ctx.draft} onSignedOut={ctx.onSignedOut} />;
      break;
    case 'DIVIDER': body = <hr class="board-divider" />; break;
    case 'CONTAINER':
    case 'PARENT': body = <ContainerBody widget={widget} ctx={ctx} />; break;
    default:
      body = (
        <p class="meta">
          <span class="kind">{widget.type}</span>{' · '}
          {t('position', { x: widget.position.x, y: widget.position.y, w: widget.position.w, h: widget.position.h })}
        </p>
      );
  }
  return <div class="widget-body">{refused}{body}</div>;
}

/** Markdown rendered by the embed's own renderer (marked and DOMPurify), loaded with the first TEXT widget. */
function MarkdownBody({ markdown }: { markdown: string }) {
  const html = useMarkdown(markdown);
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html ?? '' }} />;
}

/** Values of a dimension already asked for, by deployment and member: a board redrawn does not ask again. */
const valuesAsked = new Map<string, Promise<unknown[]>>();

function FilterControl({ widget, ctx }: { widget: DashboardWidget; ctx: BoardContext }) {
  const { t, meta, deploymentId } = ctx;
  const member = text(widget.config?.member) ?? '';
  const found = findMember(meta, member);
  const label = text(widget.config?.title) ?? member;
  const isTime = found?.member.type === 'time';
  const [values, setValues] = useState<{ kind: 'loading' } | { kind: 'ready'; values: unknown[] } | { kind: 'failed'; message: string }>({ kind: 'loading' });
  useEffect(() => {
    if (member === '' || isTime) return undefined;
    let live = true;
    const key = `${deploymentId} ${member}`;
    let asked = valuesAsked.get(key);
    if (asked === undefined) {
      asked = previewQuery(deploymentId, { dimensions: [member], limit: 1000 }).then((answer) => answer.rows.map((row) => row[0]));
      valuesAsked.set(key, asked);
      asked.catch(() => valuesAsked.delete(key));
    }
    asked.then((found) => live && setValues({ kind: 'ready', values: found }), (caught: unknown) => {
      if (!live) return;
      if (caught instanceof ApiError && caught.status === 401) ctx.onSignedOut();
      else setValues({ kind: 'failed', message: describeError(t, caught) });
    });
    return () => {
      live = false;
    };
    // ctx changes with every draft; the values depend on the member only.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [deploymentId, member, isTime]);
  const id = `board-${widget.id}-control`;
  if (isTime) {
    return (
      <fieldset class="board-control">
        <legend>{label}</legend>
        <span class="date-range">
          <input type="date" aria-label={`${label} ${t('dateFrom')}`} />
          <input type="date" aria-label={`${label} ${t('dateTo')}`} />
        </span>
      </fieldset>
    );
  }
  return (
    <div class="board-control field">
      <label for={id}>{label}</label>
      <select id={id} disabled={values.kind !== 'ready'}>
        <option value="">{t('allValues')}</option>
        {values.kind === 'ready' ? values.values.map((value) => <option key={JSON.stringify(value)} value={JSON.stringify(value)}>{String(value)}</option>) : null}
      </select>
      {values.kind === 'failed' ? <p class="hint">{t('valuesError', { message: values.message })}</p> : null}
    </div>
  );
}

function TimeGrainControl({ widget, ctx }: { widget: DashboardWidget; ctx: BoardContext }) {
  const { t } = ctx;
  const options = Array.isArray(widget.config?.options) ? (widget.config.options as unknown[]).filter((o): o is string => typeof o === 'string') : [...GRAINS];
  const id = `board-${widget.id}-control`;
  return (
    <div class="board-control field">
      <label for={id}>{text(widget.config?.title) ?? t('timeGrainControl')}</label>
      <select id={id}>
        <option value="">{t('asDesigned')}</option>
        {options.map((option) => <option key={option} value={option}>{option}</option>)}
      </select>
    </div>
  );
}

function FieldControl({ widget, ctx }: { widget: DashboardWidget; ctx: BoardContext }) {
  const { t } = ctx;
  const options = Array.isArray(widget.config?.options) ? (widget.config.options as Array<string | { member?: string; title?: string }>) : [];
  const id = `board-${widget.id}-control`;
  return (
    <div class="board-control field">
      <label for={id}>{text(widget.config?.title) ?? t('fieldControl')}</label>
      <select id={id} value={text(widget.config?.member) ?? ''}>
        {options.map((option) => {
          const value = typeof option === 'string' ? option : option.member ?? '';
          return <option key={value} value={value}>{typeof option === 'string' ? option : option.title ?? value}</option>;
        })}
      </select>
    </div>
  );
}

/** A container: its title, then its children on a grid of their own (positions relative to it, as the embed lays them). */
function ContainerBody({ widget, ctx }: { widget: DashboardWidget; ctx: BoardContext }) {
  const { t } = ctx;
  const children = widgetsOf(ctx.draft).filter((w) => parentOf(w) === widget.id);
  const cols = Math.max(1, ...children.map((w) => w.position.x + w.position.w));
  return (
    <div class="board-container">
      {children.length === 0 ? <p class="hint">{t('noChildCandidates')}</p> : (
        <div class="board-nested" style={{ gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))` }}>
          {children.map((child) => {
            const name = ctx.nameOf(child);
            return (
              <div key={child.id} class="board-item board-child" data-widget-id={child.id} data-widget-type={child.type}
                style={{ gridColumn: `${child.position.x + 1} / span ${child.position.w}`, gridRow: `${child.position.y + 1} / span ${child.position.h}` }}>
                <div class="board-item-head">
                  <span class="name">{name}</span>
                  <button type="button" class="edit" onClick={() => ctx.onEdit(child)}>{t('editWidget', { name })}</button>
                  <button type="button" class="delete" onClick={() => ctx.onDelete(child)}>{t('deleteWidget', { name })}</button>
                </div>
                <WidgetBody widget={child} ctx={ctx} />
              </div>
            );
          })}
        </div>
      )}
    </div>
  );
}
