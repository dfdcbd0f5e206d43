import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import type { Deployment } from '../api.js';
import { describeError } from '../errors.js';
import type { Translate } from '../i18n.js';
import { checkModel, getMeta, getModel, listPreAggregations, replaceModel } from './api.js';
import type { DeploymentModel, MetaCube, ModelCheck, ModelMeta, PreAggregationStatus } from './api.js';
import { jsonSyntaxProblem } from './json.js';

/** What the shell gives the model page, which it loads as a chunk of its own. */
export interface ModelPageProps {
  t: Translate;
  deployments: Deployment[];
  /** Admins read and edit the model itself; members read its meta. */
  isAdmin: boolean;
  onSignedOut: () => void;
}

const CHECK_DELAY_MS = 400;

type Check =
  | { kind: 'idle' }
  | { kind: 'checking' }
  | { kind: 'syntax'; message: string }
  | { kind: 'refused'; field: string | undefined; message: string }
  | { kind: 'passed'; result: ModelCheck };

/**
 * The model (issue 34, part 6): the deployment's semantic views with their members, joins and pre-aggregations (the
 * meta every platform user reads), their access policies (admins), and, for admins, an editor of the views' JSON.
 * The editor checks as its author types, with svc's own checks (`POST .../model/check`: the import's, at their JSON
 * path), shows what a save would change and the published widgets it would break, and saves over the revision read
 * (If-Match); someone else's save in between is a conflict, shown, never overwritten. The data source is not edited
 * here: a save leaves it as it is.
 */
export function ModelPage({ t, deployments, isAdmin, onSignedOut }: ModelPageProps) {
  const [deploymentId, setDeploymentId] = useState(deployments[0]?.id);
  const [meta, setMeta] = useState<ModelMeta | undefined>(undefined);
  const [model, setModel] = useState<DeploymentModel | undefined>(undefined);
  const [builds, setBuilds] = useState<{ items: PreAggregationStatus[] } | { error: string } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  const fail = (caught: unknown): string | undefined => {
    if (caught instanceof ApiError && caught.status === 401) {
      onSignedOut();
      return undefined;
    }
    return describeError(t, caught);
  };

  const load = async () => {
    if (deploymentId === undefined) return;
    setError(undefined);
    try {
      const [readMeta, readModel] = await Promise.all([getMeta(deploymentId), isAdmin ? getModel(deploymentId) : Promise.resolve(undefined)]);
      setMeta(readMeta);
      setModel(readModel);
    } catch (caught) {
      setError(fail(caught));
    }
    // The builds' status (admins): read on its own, so that a slow data source never holds the views back.
    if (isAdmin) {
      listPreAggregations(deploymentId).then(setBuilds, (caught: unknown) => {
        const message = fail(caught);
        if (message !== undefined) setBuilds({ error: message });
      });
    }
  };

  useEffect(() => {
    setMeta(undefined);
    setModel(undefined);
    setBuilds(undefined);
    void load();
    // load reads the deployment (and t, which never changes).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [deploymentId]);

  if (deploymentId === undefined) return <main><h1>{t('model')}</h1><p>{t('noDeployments')}</p></main>;
  const policiesOf = (view: string) => model?.semanticViews.find((v) => v.name === view)?.accessPolicy;
  return (
    <main class="model">
      <h1>{t('model')}</h1>
      {deployments.length > 1 ? (
        <div class="toolbar">
          <div class="field">
            <label for="model-deployment">{t('deployment')}</label>
            <select id="model-deployment" value={String(deploymentId)} onChange={(event) => setDeploymentId(Number(event.currentTarget.value))}>
              {deployments.map((d) => <option key={d.id} value={String(d.id)}>{d.name}</option>)}
            </select>
          </div>
        </div>
      ) : null}
      {error !== undefined ? <p class="form-error" role="alert">{error}</p> : null}
      {meta === undefined && error === undefined ? <p class="status" role="status">{t('loading')}</p> : null}
      {meta !== undefined ? (
        <section class="panel" aria-labelledby="views-title">
          <h2 id="views-title">{t('views')}</h2>
          <p class="hint">{t('modelRevision', { revision: meta.modelRevision })}{model?.demoModel === true ? ` · ${t('demoModel')}` : ''}</p>
          {meta.cubes.map((cube) => <ViewCard key={cube.name} t={t} cube={cube} policies={policiesOf(cube.name)} showPolicies={isAdmin}
            builds={builds === undefined ? undefined : 'error' in builds ? builds : { items: builds.items.filter((b) => b.view === cube.name) }} />)}
        </section>
      ) : null}
      {isAdmin && model !== undefined ? <ModelEditor key={`${deploymentId}-${model.modelRevision}`} t={t} deploymentId={deploymentId} model={model} fail={fail} onSaved={load} /> : null}
    </main>
  );
}

function ViewCard({ t, cube, policies, showPolicies, builds }: {
  t: Translate; cube: MetaCube; policies: unknown[] | undefined; showPolicies: boolean; builds: { items: PreAggregationStatus[] } | { error: string } | undefined;
}) {
  return (
    <details class="view-card" data-view={cube.name}>
      <summary>
        <span class="name">{cube.title}</span> <code>{cube.name}</code>
        <span class="meta"> · {t('memberCounts', { measures: cube.measures.length, dimensions: cube.dimensions.length })}</span>
      </summary>
      <table class="grid-table">
        <caption>{t('membersOf', { view: cube.title })}</caption>
        <thead><tr><th scope="col">{t('member')}</th><th scope="col">{t('title')}</th><th scope="col">{t('kind')}</th><th scope="col">{t('type')}</th><th scope="col">{t('format')}</th></tr></thead>
        <tbody>
          {cube.measures.map((m) => <tr key={m.name}><td><code>{m.name}</code></td><td>{m.shortTitle}</td><td>{t('measure')}</td><td>{m.aggType ?? m.type}</td><td>{m.format ?? ''}</td></tr>)}
          {cube.dimensions.map((d) => <tr key={d.name}><td><code>{d.name}</code></td><td>{d.shortTitle}</td><td>{t('dimension')}{d.primaryKey === true ? ` (${t('primaryKey')})` : ''}</td><td>{d.type}</td><td>{d.format ?? ''}</td></tr>)}
        </tbody>
      </table>
      <p><strong>{t('joins')}:</strong> {cube.joins.length === 0 ? t('noneListed') : cube.joins.map((j) => j.name).join(', ')}</p>
      <div>
        <strong>{t('preAggregations')}:</strong>{' '}
        {cube.preAggregations.length === 0 ? t('noneListed') : (
          <ul class="plain">
            {cube.preAggregations.map((p) => (
              <li key={p.name}>
                <code>{p.name}</code>: {[...p.measures, ...p.dimensions].join(', ')}
                {p.timeDimension !== null ? ` · ${p.timeDimension}${p.granularity !== null ? ` ${t('by')} ${p.granularity}` : ''}` : ''}
                {builds !== undefined && 'items' in builds ? <BuildStatus t={t} builds={builds.items.filter((b) => b.name === p.name)} /> : null}
              </li>
            ))}
          </ul>
        )}
      </div>
      {builds !== undefined && 'error' in builds ? <p class="form-error">{t('buildsError', { message: builds.error })}</p> : null}
      {showPolicies ? (
        <div>
          <strong>{t('accessPolicies')}:</strong>{' '}
          {policies === undefined || policies.length === 0 ? t('noPolicy') : <pre class="snippet">{JSON.stringify(policies, null, 2)}</pre>}
        </div>
      ) : null}
    </details>
  );
}

/** A pre-aggregation's builds, one per time zone: built when, rows, size, partitions, when next due; or why due, and the last failure. */
function BuildStatus({ t, builds }: { t: Translate; builds: PreAggregationStatus[] }) {
  const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  const kb = (bytes: number) => `${Math.max(1, Math.round(bytes / 1024))} KB`;
  return (
    <ul class="plain builds">
      {builds.map((b) => (
        <li key={b.timezone} class="build" data-built={String(b.built)} data-timezone={b.timezone}>
          <span class={`badge ${b.built ? 'published' : 'draft'}`}>{t(b.built ? 'built' : 'notBuilt')}</span>{' '}
          {b.timezone}
          {b.built && b.builtAt !== null
            ? <>{' · '}<time dateTime={b.builtAt}>{t('builtAt', { when: when(b.builtAt) })}</time>{` · ${t('buildRows', { rows: b.rows ?? 0 })}`}
              {b.sizeBytes !== null ? ` · ${kb(b.sizeBytes)}` : ''}{` · ${t('buildPartitions', { count: b.partitions.length })}`}</>
            : null}
          {b.due !== null ? ` · ${t('buildDue', { why: b.due })}` : b.nextDueAt !== null ? ` · ${t('buildNextDue', { when: when(b.nextDueAt) })}` : ''}
          {b.lastError !== null ? <span class="error">{` · ${t('buildFailed', { when: when(b.lastError.at), message: b.lastError.message })}`}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** The views' JSON, checked as it is typed, with what a save would change, saved over the revision read. */
function ModelEditor({ t, deploymentId, model, fail, onSaved }: { t: Translate; deploymentId: number; model: DeploymentModel; fail: (caught: unknown) => string | undefined; onSaved: () => Promise<void> }) {
  const original = JSON.stringify(model.semanticViews, null, 2);
  const [text, setText] = useState(original);
  const [check, setCheck] = useState<Check>({ kind: 'idle' });
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<{ message: string; conflict: boolean } | undefined>(undefined);
  const [saved, setSaved] = useState('');
  const [forceAsked, setForceAsked] = useState(false);
  const request = useRef(0);

  useEffect(() => {
    setForceAsked(false);
    if (text === original) {
      setCheck({ kind: 'idle' });
      return;
    }
    const syntax = jsonSyntaxProblem(text);
    if (syntax !== undefined) {
      setCheck({ kind: 'syntax', message: t('jsonSyntax', { message: syntax }) });
      return;
    }
    setCheck({ kind: 'checking' });
    const mine = ++request.current;
    const timer = setTimeout(() => {
      checkModel(deploymentId, { semanticViews: JSON.parse(text) as unknown }).then(
        (result) => mine === request.current && setCheck({ kind: 'passed', result }),
        (caught: unknown) => {
          if (mine !== request.current) return;
          const message = fail(caught);
          if (message !== undefined) setCheck({ kind: 'refused', field: caught instanceof ApiError ? caught.field : undefined, message });
        },
      );
    }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
    // fail and t never change what they say.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text, original, deploymentId]);

  const save = async (force: boolean) => {
    setSaving(true);
    setSaveError(undefined);
    setSaved('');
    try {
      const next = await replaceModel(deploymentId, { semanticViews: JSON.parse(text) as unknown }, model.modelRevision, force);
      setSaved(t('modelSaved', { revision: next.modelRevision }));
      await onSaved();
    } catch (caught) {
      const message = fail(caught);
      if (message !== undefined) setSaveError({ message: caught instanceof ApiError && caught.status === 412 ? t('modelConflict') : message, conflict: caught instanceof ApiError && caught.status === 412 });
    } finally {
      setSaving(false);
    }
  };

  const breaks = check.kind === 'passed' ? check.result.breaks : [];
  const invalid = check.kind === 'syntax' || check.kind === 'refused';
  return (
    <section class="panel" aria-labelledby="editor-title">
      <h2 id="editor-title">{t('editModel')}</h2>
      <p class="hint">{t('editModelHint')}</p>
      <div class="field">
        <label for="model-json">{t('viewsJson')}</label>
        <textarea id="model-json" class="code" rows={24} spellcheck={false} value={text} onInput={(event) => setText(event.currentTarget.value)}
          aria-describedby="model-check" {...(invalid ? { 'aria-invalid': true } : {})} />
      </div>
      <div id="model-check" class="check-result" aria-live="polite">
        {check.kind === 'idle' ? <p class="hint">{t('modelUnchanged')}</p> : null}
        {check.kind === 'checking' ? <p class="hint">{t('checking')}</p> : null}
        {check.kind === 'syntax' ? <p class="form-error">{check.message}</p> : null}
        {check.kind === 'refused' ? <p class="form-error">{check.field !== undefined ? `${check.field}: ` : ''}{check.message}</p> : null}
        {check.kind === 'passed' ? <ChangeList t={t} check={check.result} /> : null}
      </div>
      {saveError !== undefined ? (
        <div class="form-error" role="alert">
          <p>{saveError.message}</p>
          {saveError.conflict ? <button type="button" onClick={() => void onSaved()}>{t('reloadTheirModel')}</button> : null}
        </div>
      ) : null}
      <div class="row">
        {breaks.length > 0 && !forceAsked
          ? <button type="button" class="primary" disabled={saving} onClick={() => setForceAsked(true)}>{t('saveModel')}</button>
          : null}
        {breaks.length > 0 && forceAsked
          ? <button type="button" class="danger" disabled={saving} onClick={() => void save(true)}>{t('saveBreaking', { count: breaks.length })}</button>
          : null}
        {breaks.length === 0
          ? <button type="button" class="primary" disabled={saving || check.kind !== 'passed'} onClick={() => void save(false)}>{t('saveModel')}</button>
          : null}
        <button type="button" disabled={saving || text === original} onClick={() => setText(original)}>{t('discardChanges')}</button>
        <span class="ok" role="status">{saved}</span>
      </div>
    </section>
  );
}

/** What a save would do: each view's changes, then the published widgets it would break. */
function ChangeList({ t, check }: { t: Translate; check: ModelCheck }) {
  const names = (list: string[]) => list.join(', ');
  return (
    <div class="changes">
      <h3>{t('whatChanges')}</h3>
      {check.changes.length === 0 && !check.dataSourceChanged ? <p>{t('noChange')}</p> : (
        <ul>
          {check.changes.map((c) => (
            <li key={c.view} data-change={c.change}>
              <code>{c.view}</code> {t(`view_${c.change}`)}
              {c.membersAdded.length > 0 && c.change === 'changed' ? <span>; {t('added')}: {names(c.membersAdded)}</span> : null}
              {c.membersRemoved.length > 0 && c.change === 'changed' ? <span>; {t('removed')}: {names(c.membersRemoved)}</span> : null}
              {c.membersChanged.length > 0 ? <span>; {t('changed')}: {names(c.membersChanged)}</span> : null}
            </li>
          ))}
        </ul>
      )}
      {check.breaks.length > 0 ? (
        <div class="breaks">
          <h3>{t('wouldBreak', { count: check.breaks.length })}</h3>
          <ul>
            {check.breaks.map((b) => <li key={`${b.publicId}/${b.widgetId}/${b.field}`}><code>{b.publicId}</code> / <code>{b.widgetId}</code>: {b.message}</li>)}
          </ul>
        </div>
      ) : <p class="ok">{t('breaksNothing')}</p>}
    </div>
  );
}
