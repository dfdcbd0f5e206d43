import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, getDashboard } from '../api.js';
import type { AuthoredDashboard } from '../api.js';
import { describeError } from '../errors.js';
import type { PreviewPageProps } from '../pages.js';

/** The widths the embed's responsive layouts are checked at: a phone, a tablet, a laptop. */
export const PREVIEW_WIDTHS = [420, 768, 1280] as const;
type Width = (typeof PREVIEW_WIDTHS)[number];
type Version = 'published' | 'draft';

interface PreviewSession { sessionId: string; expiresAt: string; url: string; version: Version }

/** Whom the page previews as: a tenant (or none) and the security context, as typed. */
interface Viewer { tenant: string; contextText: string }

const mintPreview = (publicId: string, body: { embedTenantName?: string; securityContext: Record<string, unknown>; draft: boolean }) =>
  call<PreviewSession>('POST', `/api/v1/dashboards/${encodeURIComponent(publicId)}/preview-sessions`, body);

const listTenants = () => call<{ items: Array<{ id: number; name: string }> }>('GET', '/api/v1/embed/tenants');

/** The context a tenant starts with: the demo's policies read `{securityContext.tenant}`. */
const contextOf = (tenant: string) => JSON.stringify(tenant === '' ? {} : { tenant });

/**
 * "View as a customer" (issue 34 part 4; docs/console.md): the dashboard through the embed runtime itself, the real
 * `/embed/dashboard/<publicId>` page in a frame, as a viewer of a chosen embed tenant and security context sees it,
 * published or its draft, at the embed's widths. Each showing mints a single-use preview session (admins only:
 * `POST /api/v1/dashboards/{publicId}/preview-sessions`) whose id the frame's address carries until the page's boot
 * script strips it, as the SDK's frames do. The page is framed by the console only (its frame-ancestors say 'self'
 * for a preview session and for nothing else); its events come to this page, whose origin it accepts, and its
 * `content-size` sets the frame's height.
 */
export function PreviewPage({ t, publicId, editorUrl, navigate, onSignedOut }: PreviewPageProps) {
  const [dashboard, setDashboard] = useState<AuthoredDashboard | undefined>(undefined);
  const [tenants, setTenants] = useState<string[] | undefined>(undefined);
  const [viewer, setViewer] = useState<Viewer>({ tenant: '', contextText: '{}' });
  const [version, setVersion] = useState<Version>('published');
  const [width, setWidth] = useState<Width>(1280);
  const [shown, setShown] = useState<{ src: string; label: string } | undefined>(undefined);
  const [height, setHeight] = useState(600);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const frame = useRef<HTMLIFrameElement>(null);

  const fail = (caught: unknown): string | undefined => {
    if (caught instanceof ApiError && caught.status === 401) {
      onSignedOut();
      return undefined;
    }
    if (caught instanceof ApiError && caught.status === 403) return t('previewAdminsOnly');
    return describeError(t, caught);
  };

  useEffect(() => {
    getDashboard(publicId).then((found) => {
      setDashboard(found);
      if (found.published === null) setVersion('draft');
    }, (caught: unknown) => setError(fail(caught)));
    listTenants().then(({ items }) => {
      const names = items.map((x) => x.name);
      setTenants(names);
      if (names.length > 0) setViewer({ tenant: names[0]!, contextText: contextOf(names[0]!) });
    }, (caught: unknown) => setError(fail(caught)));
    // Once per dashboard (the shell keys this page by it).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // The embed's events, from this frame only, at this origin only (the preview's page posts to no other).
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== location.origin || frame.current === null || event.source !== frame.current.contentWindow) return;
      const data = event.data as { source?: unknown; direction?: unknown; type?: unknown; payload?: { height?: unknown } } | null;
      if (data?.source !== 'svc-embed' || data.direction !== 'event') return;
      if (data.type === 'svc:event:content-size' && typeof data.payload?.height === 'number') setHeight(Math.max(200, Math.ceil(data.payload.height)));
    };
    addEventListener('message', onMessage);
    return () => removeEventListener('message', onMessage);
  }, []);

  const context = (() => {
    try {
      const parsed: unknown = JSON.parse(viewer.contextText);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: t('contextNotObject') };
      return { value: parsed as Record<string, unknown> };
    } catch {
      return { error: t('contextNotJson') };
    }
  })();
  const neverPublished = dashboard !== undefined && dashboard.published === null && version === 'published';

  const show = async (event: Event) => {
    event.preventDefault();
    if (context.value === undefined || neverPublished) return;
    setBusy(true);
    setError(undefined);
    try {
      const session = await mintPreview(publicId, { ...(viewer.tenant === '' ? {} : { embedTenantName: viewer.tenant }), securityContext: context.value, draft: version === 'draft' });
      const who = viewer.tenant === '' ? t('previewNoTenant') : viewer.tenant;
      setShown({ src: `${session.url}?session=${encodeURIComponent(session.sessionId)}`, label: t('previewFrame', { who, version: t(version) }) });
    } catch (caught) {
      setShown(undefined);
      setError(fail(caught));
    } finally {
      setBusy(false);
    }
  };

  const back = (event: Event) => {
    event.preventDefault();
    navigate(editorUrl);
  };

  return (
    <main class="preview">
      <nav class="breadcrumbs" aria-label={t('breadcrumb')}>
        <ol><li><a href={editorUrl} onClick={back}>{t('previewBack', { title: dashboard?.draft?.title ?? dashboard?.published?.title ?? publicId })}</a></li></ol>
      </nav>
      <h1>{t('previewTitle')}</h1>
      <p class="hint">{t('previewIntro')}</p>
      <form class="toolbar" onSubmit={(event) => void show(event)}>
        <div class="field">
          <label for="preview-tenant">{t('embedTenant')}</label>
          <select id="preview-tenant" value={viewer.tenant} onChange={(event) => { const tenant = event.currentTarget.value; setViewer({ tenant, contextText: contextOf(tenant) }); }}>
            {(tenants ?? []).map((name) => <option key={name} value={name}>{name}</option>)}
            <option value="">{t('previewNoTenant')}</option>
          </select>
        </div>
        <div class="field">
          <label for="preview-context">{t('securityContext')}</label>
          <textarea id="preview-context" rows={2} spellcheck={false} value={viewer.contextText}
            onInput={(event) => { const contextText = event.currentTarget.value; setViewer((v) => ({ ...v, contextText })); }}
            {...(context.error !== undefined ? { 'aria-invalid': true, 'aria-describedby': 'preview-context-error' } : {})} />
          {context.error !== undefined ? <p id="preview-context-error" class="form-error" role="alert">{context.error}</p> : <p class="hint">{t('securityContextHint')}</p>}
        </div>
        <fieldset class="choice">
          <legend>{t('previewVersion')}</legend>
          <div class="segmented">
            {(['published', 'draft'] as const).map((v) => <button key={v} type="button" aria-pressed={version === v} onClick={() => setVersion(v)}>{t(v)}</button>)}
          </div>
        </fieldset>
        <button type="submit" class="primary" disabled={busy || context.value === undefined || neverPublished || dashboard === undefined}>{t('previewShow')}</button>
      </form>
      {neverPublished ? <p class="form-error" role="alert">{t('previewNeverPublished')}</p> : null}
      {error !== undefined ? <p class="error" role="alert">{error}</p> : null}
      <fieldset class="choice">
        <legend>{t('previewWidth')}</legend>
        <div class="segmented">
          {PREVIEW_WIDTHS.map((w) => <button key={w} type="button" aria-pressed={width === w} onClick={() => setWidth(w)}>{t('previewPixels', { width: String(w) })}</button>)}
        </div>
      </fieldset>
      {shown !== undefined ? (
        // Scrolled sideways when the window is narrower than the width: reachable by the keyboard too.
        <div class="preview-stage" tabIndex={0} role="region" aria-label={shown.label}>
          <iframe ref={frame} key={shown.src} class="preview-frame" src={shown.src} title={shown.label} width={width} height={height}
            style={{ width: `${width}px`, height: `${height}px` }} />
        </div>
      ) : <p class="hint">{t('previewNothingYet')}</p>}
    </main>
  );
}
