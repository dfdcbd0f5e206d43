import { useEffect, useState } from 'preact/hooks';
import type { FunctionComponent } from 'preact';
import { ApiError, listDeployments, logout } from './api.js';
import type { Deployment } from './api.js';
import { translator } from './i18n.js';
import { SignIn } from './SignIn.js';
import { describeError } from './errors.js';
import type { ModelPageProps, SettingsPageProps, WorkspacePageProps } from './pages.js';

/** The workspace page is its own chunk: the sign-in page does not wait for it. */
const loadWorkspace = () => import('./Workspace.js').then((module) => module.WorkspacePage);
/** The embedding settings and the model are others, each loaded when opened. */
const loadSettings = () => import('./settings/Settings.js').then((module) => module.SettingsPage);
const loadModel = () => import('./model/Model.js').then((module) => module.ModelPage);

/** The console's pages, by the address's `page` (none: the workspace). */
type PageName = 'workspace' | 'embedding' | 'model';
const pageOf = (): PageName => {
  const page = new URLSearchParams(location.search).get('page');
  return page === 'embedding' || page === 'model' ? page : 'workspace';
};
const PAGE_TITLES = { workspace: 'workspace', embedding: 'embeddingSettings', model: 'model' } as const;

type State =
  | { kind: 'checking' }
  | { kind: 'signed-out'; notice?: string }
  | { kind: 'signed-in'; deployments: Deployment[] }
  | { kind: 'failed'; message: string };

/** Who signed in, kept for the top bar (the API has no "who am I" yet); sessionStorage, so it ends with the tab. */
const WHO_KEY = 'svc-console-email';
const USER_KEY = 'svc-console-user';

interface Who { id: number; role: string }
function readWho(): Who | undefined {
  try {
    const parsed = JSON.parse(sessionStorage.getItem(USER_KEY) ?? 'null') as Partial<Who> | null;
    return typeof parsed?.id === 'number' && typeof parsed.role === 'string' ? { id: parsed.id, role: parsed.role } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The console's shell (issue 34): asks the API whether the console cookie signs someone in (the deployments list
 * answers 401 otherwise), then shows the sign-in form or the workspace.
 */
export function App({ locale }: { locale: string }) {
  const [t] = useState(() => translator(locale));
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [Workspace, setWorkspace] = useState<FunctionComponent<WorkspacePageProps> | undefined>(undefined);
  const [email, setEmail] = useState(() => sessionStorage.getItem(WHO_KEY) ?? undefined);
  const [who, setWho] = useState(readWho);
  const [page, setPage] = useState<PageName>(pageOf);
  const [Settings, setSettings] = useState<FunctionComponent<SettingsPageProps> | undefined>(undefined);
  const [Model, setModel] = useState<FunctionComponent<ModelPageProps> | undefined>(undefined);

  useEffect(() => {
    const onPop = () => setPage(pageOf());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    if (page === 'embedding' && Settings === undefined) {
      loadSettings().then((component) => setSettings(() => component), (error: unknown) => setState({ kind: 'failed', message: describeError(t, error) }));
    }
    if (page === 'model' && Model === undefined) {
      loadModel().then((component) => setModel(() => component), (error: unknown) => setState({ kind: 'failed', message: describeError(t, error) }));
    }
  }, [page, Settings, Model, t]);

  const open = (next: PageName) => (event: Event) => {
    event.preventDefault();
    history.pushState(null, '', next === 'workspace' ? location.pathname : `${location.pathname}?page=${next}`);
    setPage(next);
  };

  const enter = async () => {
    try {
      const [{ items }, page] = await Promise.all([listDeployments(), loadWorkspace()]);
      setWorkspace(() => page);
      setState({ kind: 'signed-in', deployments: items });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) setState({ kind: 'signed-out' });
      else setState({ kind: 'failed', message: describeError(t, error) });
    }
  };

  useEffect(() => {
    void enter();
    // Once, on load.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    document.title = state.kind === 'signed-in' ? `${t(PAGE_TITLES[page])} · ${t('appName')}` : t('appName');
  }, [state.kind, page, t]);

  if (state.kind === 'checking') return <p class="status" role="status">{t('loading')}</p>;
  if (state.kind === 'failed') {
    return (
      <main>
        <p class="error" role="alert">{state.message}</p>
        <button type="button" onClick={() => { setState({ kind: 'checking' }); void enter(); }}>{t('retry')}</button>
      </main>
    );
  }
  if (state.kind === 'signed-out') {
    return (
      <SignIn t={t} notice={state.notice} onSignedIn={(user) => {
        sessionStorage.setItem(WHO_KEY, user.email);
        sessionStorage.setItem(USER_KEY, JSON.stringify({ id: user.id, role: user.role }));
        setEmail(user.email);
        setWho({ id: user.id, role: user.role });
        setState({ kind: 'checking' });
        void enter();
      }} />
    );
  }

  const signOut = async () => {
    try {
      await logout();
    } finally {
      sessionStorage.removeItem(WHO_KEY);
      sessionStorage.removeItem(USER_KEY);
      setEmail(undefined);
      setWho(undefined);
      setState({ kind: 'signed-out' });
    }
  };
  return (
    <>
      <header class="topbar">
        <p class="brand">{t('appName')}</p>
        <nav aria-label={t('pages')}>
          <a href={location.pathname} aria-current={page === 'workspace' ? 'page' : undefined} onClick={open('workspace')}>{t('workspace')}</a>
          {who?.role !== 'member' ? (
            <a href={`${location.pathname}?page=embedding`} aria-current={page === 'embedding' ? 'page' : undefined} onClick={open('embedding')}>{t('embeddingSettings')}</a>
          ) : null}
          <a href={`${location.pathname}?page=model`} aria-current={page === 'model' ? 'page' : undefined} onClick={open('model')}>{t('model')}</a>
        </nav>
        {email !== undefined ? <span class="who">{t('signedInAs', { email })}</span> : <span class="who" />}
        <button type="button" onClick={() => void signOut()}>{t('signOut')}</button>
      </header>
      {page === 'model'
        ? (Model !== undefined
          ? <Model t={t} deployments={state.deployments} isAdmin={who?.role === 'admin'} onSignedOut={() => setState({ kind: 'signed-out', notice: t('sessionEnded') })} />
          : <p class="status" role="status">{t('loading')}</p>)
        : page === 'embedding'
        ? (Settings !== undefined
          ? <Settings t={t} locale={locale} deployments={state.deployments} userId={who?.id} onSignedOut={() => setState({ kind: 'signed-out', notice: t('sessionEnded') })} />
          : <p class="status" role="status">{t('loading')}</p>)
        : Workspace !== undefined
        ? <Workspace t={t} locale={locale} deployments={state.deployments} onSignedOut={() => setState({ kind: 'signed-out', notice: t('sessionEnded') })} />
        : null}
    </>
  );
}
