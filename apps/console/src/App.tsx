import { useEffect, useState } from 'preact/hooks';
import type { FunctionComponent } from 'preact';
import { ApiError, listDeployments, logout } from './api.js';
import type { Deployment } from './api.js';
import { translator } from './i18n.js';
import { SignIn } from './SignIn.js';
import { describeError } from './errors.js';
import { readRoute } from './pages.js';
import type { EditorPageProps, Route, WorkspacePageProps } from './pages.js';

/** The workspace page is its own chunk: the sign-in page does not wait for it. */
const loadWorkspace = () => import('./Workspace.js').then((module) => module.WorkspacePage);
/** So is the dashboard editor (the chart builder, the draft): only who edits loads it. */
const loadEditor = () => import('./Editor.js').then((module) => module.EditorPage);

type State =
  | { kind: 'checking' }
  | { kind: 'signed-out'; notice?: string }
  | { kind: 'signed-in'; deployments: Deployment[] }
  | { kind: 'failed'; message: string };

/** Who signed in, kept for the top bar (the API has no "who am I" yet); sessionStorage, so it ends with the tab. */
const WHO_KEY = 'svc-console-email';

/**
 * The console's shell (issue 34): asks the API whether the console cookie signs someone in (the deployments list
 * answers 401 otherwise), then shows the sign-in form or the workspace.
 */
export function App({ locale }: { locale: string }) {
  const [t] = useState(() => translator(locale));
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [Workspace, setWorkspace] = useState<FunctionComponent<WorkspacePageProps> | undefined>(undefined);
  const [Editor, setEditor] = useState<FunctionComponent<EditorPageProps> | undefined>(undefined);
  const [route, setRoute] = useState<Route>(() => readRoute(location.search));
  const [email, setEmail] = useState(() => sessionStorage.getItem(WHO_KEY) ?? undefined);

  const enter = async () => {
    try {
      const editing = readRoute(location.search).page === 'editor';
      const [{ items }, page] = await Promise.all([listDeployments(), editing ? loadEditor() : loadWorkspace()]);
      if (editing) setEditor(() => page as FunctionComponent<EditorPageProps>);
      else setWorkspace(() => page as FunctionComponent<WorkspacePageProps>);
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

  // The page follows the address: a link, the browser's Back and Forward.
  useEffect(() => {
    const onPop = () => setRoute(readRoute(location.search));
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    if (route.page === 'editor' && Editor === undefined) loadEditor().then((page) => setEditor(() => page), (error: unknown) => setState({ kind: 'failed', message: describeError(t, error) }));
    if (route.page === 'workspace' && Workspace === undefined) loadWorkspace().then((page) => setWorkspace(() => page), (error: unknown) => setState({ kind: 'failed', message: describeError(t, error) }));
  }, [route, Editor, Workspace, t]);

  const navigate = (url: string) => {
    history.pushState(null, '', url);
    setRoute(readRoute(location.search));
    scrollTo(0, 0);
  };

  useEffect(() => {
    if (route.page === 'editor') return;
    document.title = state.kind === 'signed-in' ? `${t('workspace')} · ${t('appName')}` : t('appName');
  }, [state.kind, t, route.page]);

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
        setEmail(user.email);
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
      setEmail(undefined);
      setState({ kind: 'signed-out' });
    }
  };
  const sessionEnded = () => setState({ kind: 'signed-out', notice: t('sessionEnded') });
  const editorPage = (editing: Extract<Route, { page: 'editor' }>) => {
    const deploymentId = editing.deploymentId !== undefined && state.deployments.some((d) => d.id === editing.deploymentId) ? editing.deploymentId : state.deployments[0]?.id;
    if (deploymentId === undefined) return <main><p>{t('noDeployments')}</p></main>;
    if (Editor === undefined) return <p class="status" role="status">{t('loading')}</p>;
    const back = new URLSearchParams({ deployment: String(deploymentId) });
    if (editing.folderId !== undefined) back.set('folder', String(editing.folderId));
    return <Editor key={editing.publicId} t={t} locale={locale} deploymentId={deploymentId} publicId={editing.publicId} backUrl={`/console?${back.toString()}`} navigate={navigate} onSignedOut={sessionEnded} />;
  };
  return (
    <>
      <header class="topbar">
        <p class="brand">{t('appName')}</p>
        {email !== undefined ? <span class="who">{t('signedInAs', { email })}</span> : <span class="who" />}
        <button type="button" onClick={() => void signOut()}>{t('signOut')}</button>
      </header>
      {route.page === 'editor'
        ? editorPage(route)
        : Workspace !== undefined
          ? <Workspace t={t} locale={locale} deployments={state.deployments} navigate={navigate} onSignedOut={sessionEnded} />
          : <p class="status" role="status">{t('loading')}</p>}
    </>
  );
}
