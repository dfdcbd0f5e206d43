import type { ComponentChildren } from 'preact';
import type { AuthoredDashboard } from './api.js';
import type { Translate } from './i18n.js';

/**
 * A dashboard the caller reads but may not change (`canEdit` false: a member without an editor grant), opened at the
 * editor's address: its title, status and widgets, a sentence saying why it cannot be changed, and no control that
 * would write. svc refuses such a member's writes anyway (403); the page does not offer them.
 */
export function ReadOnlyDashboard({ t, dashboard, title, breadcrumbs, onBack }: {
  t: Translate; dashboard: AuthoredDashboard; title: string; breadcrumbs: ComponentChildren; onBack: (event: Event) => void;
}) {
  const shown = dashboard.published ?? dashboard.draft;
  const snapshots = shown?.reportSnapshots ?? [];
  const widgets = shown?.config.widgets ?? [];
  return (
    <main class="editor read-only">
      {breadcrumbs}
      <div class="editor-head">
        <h1 tabIndex={-1}>{title}</h1>
        <span class={`badge ${dashboard.status}`}>{t(dashboard.status)}</span>
        <span class="badge">{t('readOnly')}</span>
      </div>
      <p class="read-only-why" role="note">{t('readOnlyWhy')}</p>
      {dashboard.published === null ? <p class="hint">{t('readOnlyDraft')}</p> : null}
      <section aria-labelledby="read-only-widgets">
        <h2 id="read-only-widgets">{t('readOnlyWidgets')}</h2>
        {widgets.length === 0 ? <p class="hint">{t('readOnlyNoWidgets')}</p> : (
          <ul class="items">
            {widgets.map((widget, i) => {
              const chart = widget.type === 'CHART' ? snapshots[widgets.filter((w) => w.type === 'CHART').indexOf(widget)] : undefined;
              return <li key={widget.id} class="item read-only-widget"><span class="name">{chart?.title ?? (widget.type === 'TEXT' ? t('textWidget') : `${widget.type} ${i + 1}`)}</span></li>;
            })}
          </ul>
        )}
      </section>
      <button type="button" onClick={onBack}>{t('back')}</button>
    </main>
  );
}
