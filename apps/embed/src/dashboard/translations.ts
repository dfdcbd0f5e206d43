import type { Dashboard } from '../api.js';

// A dashboard's translated content (issue 38; docs/authoring.md "Translated content"): `config.translations` maps a
// locale to the texts it replaces. The embed shows the viewer's locale, falling back subtag by subtag
// (`zh-Hant-TW`, `zh-Hant`, `zh`), then the dashboard's own words. The interface's words are i18n.ts's.

export type Translations = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** The locales to look in, most specific first: `pt-BR` -> `pt-BR`, `pt`. */
export function fallbackChain(locale: string): string[] {
  let canonical: string;
  try {
    canonical = Intl.getCanonicalLocales(locale)[0] ?? locale;
  } catch {
    canonical = locale;
  }
  const parts = canonical.split('-');
  return parts.map((_, i) => parts.slice(0, parts.length - i).join('-'));
}

/** The text of `key` in the first locale of the chain that translates it, else undefined. */
export function translatedText(translations: Translations | null | undefined, locale: string, key: string): string | undefined {
  if (translations === null || translations === undefined) return undefined;
  for (const tag of fallbackChain(locale)) {
    const texts = Object.hasOwn(translations, tag) ? translations[tag] : undefined;
    const text = texts !== undefined && Object.hasOwn(texts, key) ? texts[key] : undefined;
    if (typeof text === 'string') return text;
  }
  return undefined;
}

/**
 * The dashboard as the viewer's locale reads it: its title and description, each widget's heading (a CHART's too,
 * as `config.title`, which the widget prefers to its report's title) and each TEXT widget's markdown replaced where
 * a translation exists. The same object when nothing is translated.
 */
export function localizeDashboard(dashboard: Dashboard, locale: string): Dashboard {
  const translations = (dashboard.config as { translations?: Translations | null }).translations;
  if (translations === null || translations === undefined || Object.keys(translations).length === 0) return dashboard;
  const pick = (key: string) => translatedText(translations, locale, key);
  const title = pick('title');
  const description = pick('description');
  const widgets = dashboard.config.widgets?.map((widget) => {
    const heading = pick(`widgets.${widget.id}.title`);
    const markdown = widget.type === 'TEXT' ? pick(`widgets.${widget.id}.markdown`) : undefined;
    if (heading === undefined && markdown === undefined) return widget;
    return { ...widget, config: { ...widget.config, ...(heading !== undefined ? { title: heading } : {}), ...(markdown !== undefined ? { markdown } : {}) } };
  });
  return {
    ...dashboard,
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    config: { ...dashboard.config, ...(title !== undefined ? { title } : {}), ...(description !== undefined ? { description } : {}), ...(widgets !== undefined ? { widgets } : {}) },
  };
}
