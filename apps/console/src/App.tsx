import { useEffect, useState } from 'preact/hooks';
import type { FunctionComponent } from 'preact';
import { ApiError, listDeployments, logout, me } from './api.js';
import type { Deployment } from './api.js';
import { translator } from './i18n.js';
import type { MessageKey } from './i18n.js';
import { SignIn } from './SignIn.js';
import { describeError } from './errors.js';
import { editorUrl, previewUrl, readRoute } from './pages.js';
import type { EditorPageProps, ModelPageProps, PreviewPageProps, Route, SettingsPageProps, WorkspacePageProps } from './pages.js';

/**
 * Each page is a chunk of its own, loaded when it is first shown: the sign-in page waits for none of them, and only
 * who edits loads the editor (the chart builder, the draft, the grid).
 */
const PAGES = {
  workspace: () => import('./Workspace.js').then((module) => module.WorkspacePage as FunctionComponent<never>),
  editor: () => import('./Editor.js').then((module) => module.EditorPage as FunctionComponent<never>),
  embedding: () => import('./settings/Settings.js').then((module) => module.SettingsPage as FunctionComponent<never>),
  model: () => import('./model/Model.js').then((module) => module.ModelPage as FunctionComponent<never>),
  preview: () => import('./preview/Preview.js').then((module) => module.PreviewPage as FunctionComponent<never>),
};
type PageName = keyof typeof PAGES;

/** The pages of the top bar, with their titles; the editor titles itself. */
const NAV: Array<{ page: Exclude<PageName, 'editor' | 'preview'>; label: MessageKey; href: string; adminsOnly: boolean }> = [
  { page: 'workspace', label: 'workspace', href: '/console', adminsOnly: false },
  { page: 'model', label: 'model', href: '/console?page=model', adminsOnly: false },
  { page: 'embedding', label: 'embeddingSettings', href: '/console?page=embedding', adminsOnly: true },
];

type State =
  | { kind: 'checking' }
  | { kind: 'signed-out'; notice?: string }
  | { kind: 'signed-in'; deployments: Deployment[] }
  | { kind: 'failed'; message: string };

/** Who is signed in, as `GET /api/v1/me` answers: the top bar's name, and whether the admins' pages are offered. */
interface Who { id: number; email: string; role: string }

/**
 * The console's shell (issue 34): asks the API whether the console cookie signs someone in (the deployments list
 * answers 401 otherwise), then shows the sign-in form, or the page the address names with the top bar's pages.
 */
export function App({ locale }: { locale: string }) {
  const [t] = useState(() => translator(locale));
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [loaded, setLoaded] = useState<Partial<Record<PageName, FunctionComponent<never>>>>({});
  const [route, setRoute] = useState<Route>(() => readRoute(location.search));
  const [who, setWho] = useState<Who | undefined>(undefined);

  const load = async (page: PageName) => {
    const component = await PAGES[page]();
    setLoaded((before) => ({ ...before, [page]: component }));
  };

  const enter = async () => {
    try {
      const [{ items }, { user }] = await Promise.all([listDeployments(), me(), load(readRoute(location.search).page)]);
      setWho({ id: user.id, email: user.email, role: user.role });
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
    if (loaded[route.page] === undefined) load(route.page).catch((error: unknown) => setState({ kind: 'failed', message: describeError(t, error) }));
    // load reads nothing else that changes.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [route.page, loaded]);

  const navigate = (url: string) => {
    history.pushState(null, '', url);
    setRoute(readRoute(location.search));
    scrollTo(0, 0);
  };

  useEffect(() => {
    if (route.page === 'editor') return;
    if (route.page === 'preview') {
      document.title = `${t('previewTitle')} · ${t('appName')}`;
      return;
    }
    const label = NAV.find((entry) => entry.page === route.page)?.label ?? 'workspace';
    document.title = state.kind === 'signed-in' ? `${t(label)} · ${t('appName')}` : t('appName');
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
      <SignIn t={t} notice={state.notice} onSignedIn={() => {
        setState({ kind: 'checking' });
        void enter();
      }} />
    );
  }

  const signOut = async () => {
    try {
      await logout();
    } finally {
      setWho(undefined);
      setState({ kind: 'signed-out' });
    }
  };
  const sessionEnded = () => setState({ kind: 'signed-out', notice: t('sessionEnded') });
  const isAdmin = who?.role === 'admin';
  const loading = <p class="status" role="status">{t('loading')}</p>;

  const page = () => {
    const Page = loaded[route.page];
    if (Page === undefined) return loading;
    if (route.page === 'editor') {
      const deploymentId = route.deploymentId !== undefined && state.deployments.some((d) => d.id === route.deploymentId) ? route.deploymentId : state.deployments[0]?.id;
      if (deploymentId === undefined) return <main><p>{t('noDeployments')}</p></main>;
      const back = new URLSearchParams({ deployment: String(deploymentId) });
      if (route.folderId !== undefined) back.set('folder', String(route.folderId));
      const Editor = Page as FunctionComponent<EditorPageProps>;
      return <Editor key={route.publicId} t={t} locale={locale} deploymentId={deploymentId} publicId={route.publicId} backUrl={`/console?${back.toString()}`} {...(isAdmin ? { previewHref: previewUrl(deploymentId, route.publicId) } : {})} navigate={navigate} onSignedOut={sessionEnded} />;
    }
    if (route.page === 'preview') {
      // An admin's page: a member is not offered it (the API refuses them a preview session, 403).
      if (!isAdmin) return <main><p class="error" role="alert">{t('previewAdminsOnly')}</p></main>;
      const deploymentId = route.deploymentId ?? state.deployments[0]?.id;
      const Preview = Page as FunctionComponent<PreviewPageProps>;
      return <Preview key={route.publicId} t={t} publicId={route.publicId} editorUrl={deploymentId === undefined ? '/console' : editorUrl(deploymentId, route.publicId, undefined)} navigate={navigate} onSignedOut={sessionEnded} />;
    }
    if (route.page === 'embedding') {
      const Settings = Page as FunctionComponent<SettingsPageProps>;
      return <Settings t={t} locale={locale} deployments={state.deployments} userId={who?.id} onSignedOut={sessionEnded} />;
    }
    if (route.page === 'model') {
      const Model = Page as FunctionComponent<ModelPageProps>;
      return <Model t={t} deployments={state.deployments} isAdmin={isAdmin} onSignedOut={sessionEnded} />;
    }
    const Workspace = Page as FunctionComponent<WorkspacePageProps>;
    return <Workspace t={t} locale={locale} deployments={state.deployments} navigate={navigate} onSignedOut={sessionEnded} />;
  };

  return (
    <>
      <header class="topbar">
        <p class="brand">{t('appName')}</p>
        <nav aria-label={t('pages')}>
          {NAV.filter((entry) => !entry.adminsOnly || who?.role === 'admin').map((entry) => (
            <a key={entry.page} href={entry.href} aria-current={route.page === entry.page ? 'page' : undefined}
              onClick={(event) => { event.preventDefault(); navigate(entry.href); }}>{t(entry.label)}</a>
          ))}
        </nav>
        {who !== undefined ? <span class="who">{t('signedInAs', { email: who.email })}</span> : <span class="who" />}
        <button type="button" onClick={() => void signOut()}>{t('signOut')}</button>
      </header>
      {page()}
    </>
  );
}
