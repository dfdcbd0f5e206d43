import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { ApiError, listWorkspace } from '../api.js';
import type { Deployment } from '../api.js';
import { describeError } from '../errors.js';
import type { Translate } from '../i18n.js';
import {
  WEBHOOK_EVENTS, createApiKey, createEndpoint, createTenant, deleteApiKey, deleteEndpoint, deleteTenant, getSettings, listApiKeys, listDeliveries,
  listEndpoints, listTenantUsers, listTenants, renameTenant, replayDelivery, updateSettings,
} from './api.js';
import type { ApiKey, EmbedTenant, EmbedUser, WebhookDelivery, WebhookEndpoint, WebhookEvent } from './api.js';
import { SNIPPET_LANGUAGES, sessionSnippets } from './snippets.js';
import type { SnippetLanguage } from './snippets.js';

/** What the shell gives the embedding settings page, which it loads as a chunk of its own. */
export interface SettingsPageProps {
  t: Translate;
  locale: string;
  deployments: Deployment[];
  /** The signed-in user's id: the API keys shown are theirs. */
  userId: number | undefined;
  onSignedOut: () => void;
}

/** A section's failure in words, or undefined when the session ended (the shell then shows the sign-in form). */
type Fail = (caught: unknown) => string | undefined;

type Load<T> = { kind: 'loading' } | { kind: 'loaded'; value: T } | { kind: 'failed'; message: string };

/** Reads once on mount, and again on `reload()`; a failure is kept in words for the section to show. */
function useLoad<T>(read: () => Promise<T>, fail: Fail): [Load<T>, () => Promise<void>, (value: T) => void] {
  const [state, setState] = useState<Load<T>>({ kind: 'loading' });
  const reload = async () => {
    try {
      setState({ kind: 'loaded', value: await read() });
    } catch (caught) {
      const message = fail(caught);
      if (message !== undefined) setState({ kind: 'failed', message });
    }
  };
  useEffect(() => {
    void reload();
    // Once on mount; reload() again after a change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return [state, reload, (value) => setState({ kind: 'loaded', value })];
}

/**
 * The embedding settings (issue 34, part 5): the host origins allowed to frame the embed; a Generate Session snippet
 * in curl, Node and Python for a dashboard, complete as written; the embed tenants (the host's customers) with their
 * viewers; webhook endpoints with their delivery log; the signed-in user's API keys, each shown once. Every section
 * reads and writes through the admin API; an error is shown in words in its section and what was typed stays.
 */
export function SettingsPage({ t, locale, deployments, userId, onSignedOut }: SettingsPageProps) {
  const fail: Fail = (caught) => {
    if (caught instanceof ApiError && caught.status === 401) {
      onSignedOut();
      return undefined;
    }
    return describeError(t, caught);
  };
  const dates = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
  const [tenantsVersion, setTenantsVersion] = useState(0);
  return (
    <main class="settings">
      <h1 tabIndex={-1}>{t('embeddingSettings')}</h1>
      <Origins t={t} fail={fail} />
      <SessionSnippet t={t} fail={fail} deployments={deployments} tenantsVersion={tenantsVersion} />
      <Tenants t={t} fail={fail} dates={dates} onChanged={() => setTenantsVersion((v) => v + 1)} />
      <Webhooks t={t} fail={fail} dates={dates} />
      {userId !== undefined ? <ApiKeys t={t} fail={fail} dates={dates} userId={userId} /> : null}
    </main>
  );
}

/** A refusal of a form's call, in words, with the field svc named (`error.field`). */
interface FormError { message: string; field: string | undefined }

/**
 * A form's submit: `busy` while `run` runs, its refusal in `error` (none when the session ended: the shell shows the
 * sign-in form), what was typed left as it was.
 */
function useSubmit(fail: Fail) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<FormError | undefined>(undefined);
  const submit = (run: () => Promise<void>) => async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await run();
    } catch (caught) {
      const message = fail(caught);
      if (message !== undefined) setError({ message, field: caught instanceof ApiError ? caught.field : undefined });
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}

function Section({ id, title, intro, children }: { id: string; title: string; intro?: string; children: ComponentChildren }) {
  return (
    <section class="panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {intro !== undefined ? <p class="hint">{intro}</p> : null}
      {children}
    </section>
  );
}

function Failure({ message }: { message: string | undefined }) {
  return message !== undefined ? <p class="form-error" role="alert">{message}</p> : null;
}

/** A destructive button that asks once more, in place: the second press does it, Cancel goes back. */
function ConfirmButton({ t, label, confirm, onConfirm }: { t: Translate; label: string; confirm: string; onConfirm: () => Promise<void> }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  if (!asking) return <button type="button" onClick={() => setAsking(true)}>{label}</button>;
  return (
    <span class="confirm">
      <button type="button" ref={confirmRef} class="danger" disabled={busy} onClick={() => {
        setBusy(true);
        void onConfirm().finally(() => {
          setBusy(false);
          setAsking(false);
        });
      }}>{confirm}</button>
      <button type="button" onClick={() => setAsking(false)}>{t('cancel')}</button>
    </span>
  );
}

/** A secret the API shows once (an API key, a webhook's signing secret): shown until dismissed, never stored. */
function ShownOnce({ t, label, value, onDone }: { t: Translate; label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="shown-once" role="status">
      <p><strong>{label}</strong> {t('shownOnce')}</p>
      <code class="secret">{value}</code>
      <div class="row">
        <CopyButton t={t} text={value} onCopied={() => setCopied(true)} />
        <button type="button" onClick={onDone}>{t('done')}</button>
        {copied ? <span class="ok">{t('copied')}</span> : null}
      </div>
    </div>
  );
}

function CopyButton({ t, text, onCopied }: { t: Translate; text: string; onCopied?: () => void }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <>
      <button type="button" onClick={() => {
        navigator.clipboard.writeText(text).then(() => {
          setState('copied');
          onCopied?.();
        }, () => setState('failed'));
      }}>{t('copy')}</button>
      <span class="visually-hidden" role="status">{state === 'copied' ? t('copied') : state === 'failed' ? t('copyFailed') : ''}</span>
      {state === 'failed' ? <span class="error">{t('copyFailed')}</span> : null}
    </>
  );
}

/** `allowedEmbedOrigins`, one per line; svc's 400 names the line (`allowedEmbedOrigins[i]`). */
function Origins({ t, fail }: { t: Translate; fail: Fail }) {
  const [text, setText] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState('');
  const { busy, error, submit } = useSubmit(fail);
  const [state] = useLoad(async () => {
    const settings = await getSettings();
    setText(settings.allowedEmbedOrigins.join('\n'));
    return settings;
  }, fail);
  const save = submit(async () => {
    setSaved('');
    const origins = (text ?? '').split('\n').map((line) => line.trim()).filter((line) => line !== '');
    const settings = await updateSettings({ allowedEmbedOrigins: origins });
    setText(settings.allowedEmbedOrigins.join('\n'));
    setSaved(t('saved'));
  });
  // svc names the origin by its index: the page, by its line.
  const line = /^allowedEmbedOrigins\[(\d+)\]$/.exec(error?.field ?? '');
  const message = error === undefined ? undefined : line !== null ? t('onLine', { line: Number(line[1]) + 1, message: error.message }) : error.message;
  return (
    <Section id="origins" title={t('allowedOrigins')} intro={t('allowedOriginsHint')}>
      {state.kind === 'failed' ? <Failure message={state.message} /> : null}
      {state.kind === 'loading' ? <p class="status">{t('loading')}</p> : null}
      {text !== undefined ? (
        <form onSubmit={(event) => void save(event)} noValidate>
          <div class="field">
            <label for="origins-text">{t('originsField')}</label>
            <textarea id="origins-text" rows={4} spellcheck={false} value={text} onInput={(event) => setText(event.currentTarget.value)}
              {...(error !== undefined ? { 'aria-invalid': true, 'aria-describedby': 'origins-error' } : {})} />
          </div>
          {message !== undefined ? <p id="origins-error" class="form-error" role="alert">{message}</p> : null}
          <div class="row">
            <button type="submit" class="primary" disabled={busy}>{t('save')}</button>
            <span class="ok" role="status">{saved}</span>
          </div>
        </form>
      ) : null}
    </Section>
  );
}

interface DashboardChoice { publicId: string; name: string }

/** Published dashboards whose workbook's name contains `search` (all folders), or those at the root without one. */
async function findDashboards(deploymentId: number, search: string): Promise<DashboardChoice[]> {
  const page = await listWorkspace(deploymentId, { search, orderByField: 'name', orderByDirection: 'ASC', first: 50 });
  return page.items.flatMap((item) => (item.type === 'WORKBOOK' && item.publishedDashboard != null ? [{ publicId: item.publishedDashboard.publicId, name: item.name }] : []));
}

/**
 * Generate Session for one dashboard, for a viewer of one embed tenant, in three languages. The security context is
 * the host's to decide (what the access policies read); it starts as `{ "tenant": <the tenant's name> }`, the demo's
 * convention, until it is edited.
 */
function SessionSnippet({ t, fail, deployments, tenantsVersion }: { t: Translate; fail: Fail; deployments: Deployment[]; tenantsVersion: number }) {
  const [deploymentId, setDeploymentId] = useState(deployments[0]?.id);
  const [search, setSearch] = useState('');
  const [choices, setChoices] = useState<DashboardChoice[]>([]);
  const [publicId, setPublicId] = useState('');
  const [tenants, setTenants] = useState<EmbedTenant[]>([]);
  const [tenant, setTenant] = useState('');
  const [externalId, setExternalId] = useState('viewer-1');
  const [contextText, setContextText] = useState<string | undefined>(undefined);
  const [language, setLanguage] = useState<SnippetLanguage>('curl');
  const [error, setError] = useState<string | undefined>(undefined);

  useEffect(() => {
    if (deploymentId === undefined) return;
    const timer = setTimeout(() => {
      findDashboards(deploymentId, search.trim()).then((found) => {
        setChoices(found);
        if (found.length > 0 && !found.some((c) => c.publicId === publicId)) setPublicId(found[0]!.publicId);
      }, (caught: unknown) => setError(fail(caught)));
    }, 250);
    return () => clearTimeout(timer);
    // publicId is only read to keep a choice that is still listed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [deploymentId, search]);

  useEffect(() => {
    listTenants().then(({ items }) => {
      setTenants(items);
      if (!items.some((x) => x.name === tenant)) setTenant(items[0]?.name ?? '');
    }, (caught: unknown) => setError(fail(caught)));
    // Read again when the tenants section changed them.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tenantsVersion]);

  const context = (() => {
    if (contextText === undefined) return { value: tenant === '' ? {} : { tenant } };
    try {
      const parsed: unknown = JSON.parse(contextText);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: t('contextNotObject') };
      return { value: parsed as Record<string, unknown> };
    } catch {
      return { error: t('contextNotJson') };
    }
  })();
  const ready = deploymentId !== undefined && publicId !== '' && tenant !== '' && externalId.trim() !== '' && context.value !== undefined;
  const snippets = ready
    ? sessionSnippets(location.origin, { deploymentId, publicId, embedTenantName: tenant, externalId: externalId.trim(), securityContext: context.value! })
    : undefined;
  const labels: Record<SnippetLanguage, string> = { curl: 'curl', node: 'Node', python: 'Python' };

  return (
    <Section id="snippet" title={t('sessionSnippet')} intro={t('sessionSnippetHint')}>
      <Failure message={error} />
      <div class="toolbar">
        {deployments.length > 1 ? (
          <div class="field">
            <label for="snippet-deployment">{t('deployment')}</label>
            <select id="snippet-deployment" value={String(deploymentId)} onChange={(event) => setDeploymentId(Number(event.currentTarget.value))}>
              {deployments.map((d) => <option key={d.id} value={String(d.id)}>{d.name}</option>)}
            </select>
          </div>
        ) : null}
        <div class="field">
          <label for="snippet-search">{t('findDashboard')}</label>
          <input id="snippet-search" type="search" value={search} placeholder={t('searchPlaceholder')} onInput={(event) => setSearch(event.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="snippet-dashboard">{t('dashboard')}</label>
          <select id="snippet-dashboard" value={publicId} onChange={(event) => setPublicId(event.currentTarget.value)}>
            {choices.length === 0 ? <option value="">{t('noPublishedDashboard')}</option> : null}
            {choices.map((c) => <option key={c.publicId} value={c.publicId}>{`${c.name} (${c.publicId})`}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="snippet-tenant">{t('embedTenant')}</label>
          <select id="snippet-tenant" value={tenant} onChange={(event) => setTenant(event.currentTarget.value)}>
            {tenants.length === 0 ? <option value="">{t('noTenants')}</option> : null}
            {tenants.map((x) => <option key={x.id} value={x.name}>{x.name}</option>)}
          </select>
        </div>
        <div class="field">
          <label for="snippet-external">{t('externalId')}</label>
          <input id="snippet-external" value={externalId} onInput={(event) => setExternalId(event.currentTarget.value)} />
        </div>
      </div>
      <div class="field">
        <label for="snippet-context">{t('securityContext')}</label>
        <textarea id="snippet-context" rows={3} spellcheck={false} value={contextText ?? JSON.stringify(context.value ?? {}, null, 2)}
          onInput={(event) => setContextText(event.currentTarget.value)}
          {...(context.error !== undefined ? { 'aria-invalid': true, 'aria-describedby': 'snippet-context-error' } : {})} />
        {context.error !== undefined ? <p id="snippet-context-error" class="form-error" role="alert">{context.error}</p> : <p class="hint">{t('securityContextHint')}</p>}
      </div>
      <div class="segmented" role="group" aria-label={t('snippetLanguage')}>
        {SNIPPET_LANGUAGES.map((l) => (
          <button key={l} type="button" aria-pressed={language === l} onClick={() => setLanguage(l)}>{labels[l]}</button>
        ))}
      </div>
      {snippets !== undefined ? (
        <>
          <pre class="snippet" data-language={language} tabIndex={0} aria-label={t('snippetOf', { language: labels[language] })}><code>{snippets[language]}</code></pre>
          <CopyButton t={t} text={snippets[language]} />
        </>
      ) : <p class="hint">{t('snippetNeeds')}</p>}
    </Section>
  );
}

/** The embed tenants (the host's customers): add, rename, delete (offboard), and each one's viewers. */
function Tenants({ t, fail, dates, onChanged }: { t: Translate; fail: Fail; dates: Intl.DateTimeFormat; onChanged: () => void }) {
  const [state, reload] = useLoad(async () => (await listTenants()).items, fail);
  const [name, setName] = useState('');
  const { busy, error, submit } = useSubmit(fail);
  const changed = async () => {
    await reload();
    onChanged();
  };
  const add = submit(async () => {
    await createTenant(name.trim());
    setName('');
    await changed();
  });
  return (
    <Section id="tenants" title={t('embedTenants')} intro={t('embedTenantsHint')}>
      {state.kind === 'failed' ? <Failure message={state.message} /> : null}
      {state.kind === 'loaded' ? (
        state.value.length === 0 ? <p>{t('noTenants')}</p> : (
          <ul class="rows" aria-label={t('embedTenants')}>
            {state.value.map((tenant) => <TenantRow key={tenant.id} t={t} fail={fail} dates={dates} tenant={tenant} onChanged={changed} />)}
          </ul>
        )
      ) : null}
      <form class="inline-form" onSubmit={(event) => void add(event)} noValidate>
        <div class="field">
          <label for="tenant-new">{t('newTenantName')}</label>
          <input id="tenant-new" value={name} pattern="[a-z][a-z0-9-]{0,34}[a-z0-9]" aria-describedby="tenant-new-hint" onInput={(event) => setName(event.currentTarget.value)}
            {...(error !== undefined ? { 'aria-invalid': true } : {})} />
          <p id="tenant-new-hint" class="hint">{t('tenantNameRule')}</p>
        </div>
        <button type="submit" disabled={busy || name.trim() === ''}>{t('addTenant')}</button>
      </form>
      <Failure message={error?.message} />
    </Section>
  );
}

function TenantRow({ t, fail, dates, tenant, onChanged }: { t: Translate; fail: Fail; dates: Intl.DateTimeFormat; tenant: EmbedTenant; onChanged: () => Promise<void> }) {
  const [renaming, setRenaming] = useState<string | undefined>(undefined);
  const [users, setUsers] = useState<EmbedUser[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const act = async (run: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await run();
      return true;
    } catch (caught) {
      setError(fail(caught));
      return false;
    }
  };
  return (
    <li class="row-item" data-tenant={tenant.name}>
      <div class="row">
        <span class="name">{tenant.name}</span>
        <span class="meta">{t('viewerCount', { count: tenant.userCount })} · {dates.format(new Date(tenant.createdAt))}</span>
        <span class="actions">
          <button type="button" aria-expanded={users !== undefined} onClick={() => {
            if (users !== undefined) setUsers(undefined);
            else void act(async () => setUsers((await listTenantUsers(tenant.name)).users));
          }}>{t('viewers')}</button>
          <button type="button" onClick={() => setRenaming(renaming === undefined ? tenant.name : undefined)} aria-expanded={renaming !== undefined}>{t('rename')}</button>
          <ConfirmButton t={t} label={t('delete')} confirm={t('confirmDeleteTenant', { name: tenant.name })}
            onConfirm={async () => {
              if (await act(() => deleteTenant(tenant.id))) await onChanged();
            }} />
        </span>
      </div>
      {renaming !== undefined ? (
        <form class="inline-form" noValidate onSubmit={(event) => {
          event.preventDefault();
          void act(() => renameTenant(tenant.id, renaming.trim())).then(async (ok) => {
            if (ok) {
              setRenaming(undefined);
              await onChanged();
            }
          });
        }}>
          <div class="field">
            <label for={`tenant-rename-${tenant.id}`}>{t('newNameOf', { name: tenant.name })}</label>
            <input id={`tenant-rename-${tenant.id}`} value={renaming} onInput={(event) => setRenaming(event.currentTarget.value)} />
            <p class="hint">{t('renameRevokes')}</p>
          </div>
          <button type="submit">{t('save')}</button>
        </form>
      ) : null}
      <Failure message={error} />
      {users !== undefined ? (
        users.length === 0 ? <p class="hint">{t('noViewers')}</p> : (
          <table class="grid-table">
            <caption class="visually-hidden">{t('viewersOf', { name: tenant.name })}</caption>
            <thead><tr><th scope="col">{t('username')}</th><th scope="col">{t('externalId')}</th><th scope="col">{t('email')}</th><th scope="col">{t('created')}</th></tr></thead>
            <tbody>
              {users.map((u) => <tr key={u.id}><td>{u.username}</td><td>{u.externalId}</td><td>{u.email ?? ''}</td><td>{dates.format(new Date(u.createdAt))}</td></tr>)}
            </tbody>
          </table>
        )
      ) : null}
    </li>
  );
}

/** Webhook endpoints: add one (its signing secret shown once), delete one, and read and replay its deliveries. */
function Webhooks({ t, fail, dates }: { t: Translate; fail: Fail; dates: Intl.DateTimeFormat }) {
  const [state, reload] = useLoad(async () => (await listEndpoints()).items, fail);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>(['comment.created']);
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const { busy, error, submit } = useSubmit(fail);
  const add = submit(async () => {
    const created = await createEndpoint({ url: url.trim(), eventTypes: events, ...(description.trim() !== '' ? { description: description.trim() } : {}) });
    setSecret(created.secret);
    setUrl('');
    setDescription('');
    await reload();
  });
  const invalid = (field: string) => (error?.field?.startsWith(field) === true ? { 'aria-invalid': true, 'aria-describedby': 'webhook-error' } : {});
  return (
    <Section id="webhooks" title={t('webhooks')} intro={t('webhooksHint')}>
      {state.kind === 'failed' ? <Failure message={state.message} /> : null}
      {state.kind === 'loaded' ? (
        state.value.length === 0 ? <p>{t('noEndpoints')}</p> : (
          <ul class="rows" aria-label={t('webhooks')}>
            {state.value.map((endpoint) => <EndpointRow key={endpoint.id} t={t} fail={fail} dates={dates} endpoint={endpoint} onChanged={reload} />)}
          </ul>
        )
      ) : null}
      {secret !== undefined ? <ShownOnce t={t} label={t('signingSecret')} value={secret} onDone={() => setSecret(undefined)} /> : null}
      <form class="stacked-form" onSubmit={(event) => void add(event)} noValidate>
        <div class="field">
          <label for="webhook-url">{t('endpointUrl')}</label>
          <input id="webhook-url" type="url" value={url} placeholder="https://example.com/svc-webhooks" onInput={(event) => setUrl(event.currentTarget.value)} {...invalid('url')} />
        </div>
        <div class="field">
          <label for="webhook-description">{t('description')}</label>
          <input id="webhook-description" value={description} onInput={(event) => setDescription(event.currentTarget.value)} {...invalid('description')} />
        </div>
        <fieldset class="checks" {...invalid('eventTypes')}>
          <legend>{t('events')}</legend>
          {WEBHOOK_EVENTS.map((type) => (
            <label key={type} class="check">
              <input type="checkbox" checked={events.includes(type)} onChange={(event) => {
                const on = event.currentTarget.checked;
                setEvents((before) => (on ? [...before, type] : before.filter((x) => x !== type)));
              }} />
              <code>{type}</code>
            </label>
          ))}
        </fieldset>
        {error !== undefined ? <p id="webhook-error" class="form-error" role="alert">{error.message}</p> : null}
        <button type="submit" disabled={busy || url.trim() === '' || events.length === 0}>{t('addEndpoint')}</button>
      </form>
    </Section>
  );
}

const STATUS_CLASS: Record<WebhookDelivery['status'], string> = { delivered: 'published', pending: 'draft', failed: 'failed' };

function EndpointRow({ t, fail, dates, endpoint, onChanged }: { t: Translate; fail: Fail; dates: Intl.DateTimeFormat; endpoint: WebhookEndpoint; onChanged: () => Promise<void> }) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const showDeliveries = async () => {
    setError(undefined);
    try {
      setDeliveries((await listDeliveries(endpoint.id)).items);
    } catch (caught) {
      setError(fail(caught));
    }
  };
  return (
    <li class="row-item" data-endpoint={endpoint.url}>
      <div class="row">
        <span class="name">{endpoint.url}</span>
        <span class="meta">
          {endpoint.eventTypes.join(', ')}
          {endpoint.enabled ? null : <> · <span class="error">{t('disabled')}{endpoint.disabledReason !== null ? `: ${endpoint.disabledReason}` : ''}</span></>}
        </span>
        <span class="actions">
          <button type="button" aria-expanded={deliveries !== undefined} onClick={() => (deliveries !== undefined ? setDeliveries(undefined) : void showDeliveries())}>{t('deliveries')}</button>
          <ConfirmButton t={t} label={t('delete')} confirm={t('confirmDeleteEndpoint')} onConfirm={async () => {
            try {
              await deleteEndpoint(endpoint.id);
              await onChanged();
            } catch (caught) {
              setError(fail(caught));
            }
          }} />
        </span>
      </div>
      <Failure message={error} />
      {deliveries !== undefined ? (
        deliveries.length === 0 ? <p class="hint">{t('noDeliveries')}</p> : (
          <table class="grid-table">
            <caption class="visually-hidden">{t('deliveriesOf', { url: endpoint.url })}</caption>
            <thead><tr><th scope="col">{t('event')}</th><th scope="col">{t('status')}</th><th scope="col">{t('attempts')}</th><th scope="col">{t('created')}</th><th scope="col">{t('lastError')}</th><th scope="col"><span class="visually-hidden">{t('actions')}</span></th></tr></thead>
            <tbody>
              {deliveries.map((d) => {
                const last = d.attemptLog[d.attemptLog.length - 1];
                return (
                  <tr key={d.id}>
                    <td><code>{d.eventType}</code></td>
                    <td><span class={`badge ${STATUS_CLASS[d.status]}`}>{t(`delivery_${d.status}`)}</span></td>
                    <td>{d.attempts}</td>
                    <td>{dates.format(new Date(d.createdAt))}</td>
                    <td>{last?.error ?? (last?.statusCode != null ? String(last.statusCode) : '')}</td>
                    <td>{d.status === 'failed' ? <button type="button" onClick={() => {
                      replayDelivery(endpoint.id, d.id).then(() => showDeliveries(), (caught: unknown) => setError(fail(caught)));
                    }}>{t('replay')}</button> : null}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )
      ) : null}
    </li>
  );
}

/** The signed-in user's API keys: by name and last four characters; a new one shown once; delete. */
function ApiKeys({ t, fail, dates, userId }: { t: Translate; fail: Fail; dates: Intl.DateTimeFormat; userId: number }) {
  const [state, reload] = useLoad(async () => (await listApiKeys(userId)).items, fail);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<string | undefined>(undefined);
  const [rowError, setRowError] = useState<string | undefined>(undefined);
  const { busy, error, submit } = useSubmit(fail);
  const add = submit(async () => {
    const key = await createApiKey(userId, name.trim());
    setCreated(key.key);
    setName('');
    await reload();
  });
  const rows = (keys: ApiKey[]) => (
    <ul class="rows" aria-label={t('apiKeys')}>
      {keys.map((key) => (
        <li key={key.id} class="row-item" data-key={key.name ?? ''}>
          <div class="row">
            <span class="name">{key.name ?? t('unnamedKey')}</span>
            <span class="meta">{key.hint !== null ? t('keyEndsWith', { hint: key.hint }) : ''} · {dates.format(new Date(key.createdAt))}</span>
            <span class="actions">
              <ConfirmButton t={t} label={t('delete')} confirm={t('confirmDeleteKey', { name: key.name ?? t('unnamedKey') })} onConfirm={async () => {
                try {
                  setRowError(undefined);
                  await deleteApiKey(userId, key.id);
                  await reload();
                } catch (caught) {
                  setRowError(fail(caught));
                }
              }} />
            </span>
          </div>
        </li>
      ))}
    </ul>
  );
  return (
    <Section id="keys" title={t('apiKeys')} intro={t('apiKeysHint')}>
      {state.kind === 'failed' ? <Failure message={state.message} /> : null}
      {state.kind === 'loaded' ? (state.value.length === 0 ? <p>{t('noKeys')}</p> : rows(state.value)) : null}
      {created !== undefined ? <ShownOnce t={t} label={t('newKey')} value={created} onDone={() => setCreated(undefined)} /> : null}
      <form class="inline-form" onSubmit={(event) => void add(event)} noValidate>
        <div class="field">
          <label for="key-name">{t('keyName')}</label>
          <input id="key-name" value={name} maxLength={100} onInput={(event) => setName(event.currentTarget.value)} />
        </div>
        <button type="submit" disabled={busy || name.trim() === ''}>{t('createKey')}</button>
      </form>
      <Failure message={error?.message ?? rowError} />
    </Section>
  );
}
