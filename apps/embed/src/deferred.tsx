import { useEffect, useState } from 'react';
import type { ComponentType, ReactNode } from 'react';
import type { Translate } from './i18n.js';

/**
 * A component of a chunk loaded on first use, shown by `fallback` until then. Not lazy(): under React, a Suspense
 * boundary held back content that resolved soon after its fallback showed (React's 300 ms fallback throttle), which
 * delayed `dashboard-loaded` by that much; here a chunk that arrived is shown at the next render, whatever the renderer.
 */
export function deferred<P extends object>(load: () => Promise<ComponentType<P>>, fallback: (props: P) => ReactNode): ComponentType<P> & { preload(): void } {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<ComponentType<P>> | undefined;
  const preload = () => {
    pending ??= load().then((component) => {
      loaded = component;
      return component;
    });
    return pending;
  };
  function Deferred(props: P) {
    const [component, setComponent] = useState<ComponentType<P> | undefined>(() => loaded);
    const [failure, setFailure] = useState<unknown>(undefined);
    useEffect(() => {
      if (component !== undefined) return;
      // Even a chunk that arrived between this render and this effect is taken: the promise answers at once.
      let live = true;
      preload().then((arrived) => live && setComponent(() => arrived), (error: unknown) => live && setFailure(error ?? 'the chunk did not load'));
      return () => {
        live = false;
      };
    }, [component]);
    if (component !== undefined) {
      const Component = component;
      return <Component {...props} />;
    }
    if (failure !== undefined) return <p className="status error" role="alert">{failure instanceof Error ? failure.message : String(failure)}</p>;
    return <>{fallback(props)}</>;
  }
  return Object.assign(Deferred, { preload: () => void preload().catch(() => undefined) });
}

/** What a chunk shows while it loads. */
export const loading = ({ t }: { t: Translate }) => <p className="status" role="status">{t('loading')}</p>;
