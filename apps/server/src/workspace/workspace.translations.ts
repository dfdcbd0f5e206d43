// A dashboard's translated content (issue 38 part 6; docs/authoring.md "Translated content"): `config.translations`
// maps a locale to the texts it replaces, keyed by what they translate. The embed shows the viewer's locale and
// falls back language by language (`pt-BR`, then `pt`, then the dashboard's own words); the interface's own words
// are the embed's catalogues, not these.

/** At most this many locales on one dashboard, and texts in one locale: generous for a product, bounded for a row. */
export const MAX_TRANSLATION_LOCALES = 64;
export const MAX_TRANSLATED_TEXTS = 2000;
/** A title or description (a TEXT widget's markdown may be longer). */
const MAX_TEXT = 2000;
const MAX_MARKDOWN = 100_000;

interface WidgetLike {
  id: string;
  type: string;
}

export interface TranslationProblem {
  /** The JSON path under the dashboard's config: `translations.ja.widgets.w1.title`. */
  field: string;
  message: string;
}

/** The canonical BCP 47 form of a tag, or undefined when it is not one. */
function canonicalLocale(tag: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

/**
 * The keys a dashboard's texts are translated under: `title`, `description`, and for each widget
 * `widgets.<id>.title` (its heading: a CHART's report title, a control's label) and, for a TEXT widget,
 * `widgets.<id>.markdown`. Undefined for any other key, else the longest text it may hold.
 */
function keyLimit(key: string, widgets: ReadonlyMap<string, WidgetLike>): number | undefined {
  if (key === 'title' || key === 'description') return MAX_TEXT;
  const match = /^widgets\.(.+)\.(title|markdown)$/.exec(key);
  if (match === null) return undefined;
  const widget = widgets.get(match[1]!);
  if (widget === undefined) return undefined;
  if (match[2] === 'markdown') return widget.type === 'TEXT' ? MAX_MARKDOWN : undefined;
  return MAX_TEXT;
}

/**
 * The first problem of a config's `translations`, at its path (undefined when there is none or it is fine): an
 * object of canonical locale tags (`pt-BR`, not `pt-br`: one dashboard cannot hold two spellings of one locale),
 * each an object of known text keys (a key naming no widget is a typo that would never show) to strings.
 */
export function translationsProblem(config: { translations?: unknown; widgets?: readonly WidgetLike[] | null }): TranslationProblem | undefined {
  const translations = config.translations;
  if (translations === undefined || translations === null) return undefined;
  if (typeof translations !== 'object' || Array.isArray(translations)) return { field: 'translations', message: 'an object of locales (e.g. "ja", "pt-BR") to translated texts' };
  const locales = Object.entries(translations as Record<string, unknown>);
  if (locales.length > MAX_TRANSLATION_LOCALES) return { field: 'translations', message: `at most ${MAX_TRANSLATION_LOCALES} locales` };
  const widgets = new Map((config.widgets ?? []).map((widget) => [widget.id, widget]));
  for (const [locale, texts] of locales) {
    const at = `translations.${locale}`;
    const canonical = canonicalLocale(locale);
    if (canonical === undefined) return { field: at, message: `"${locale}" is not a BCP 47 locale tag (e.g. "ja", "pt-BR", "zh-Hant")` };
    if (canonical !== locale) return { field: at, message: `write the locale "${canonical}" (its canonical form)` };
    if (typeof texts !== 'object' || texts === null || Array.isArray(texts)) return { field: at, message: 'an object of text keys ("title", "description", "widgets.<id>.title", "widgets.<id>.markdown") to strings' };
    const entries = Object.entries(texts as Record<string, unknown>);
    if (entries.length > MAX_TRANSLATED_TEXTS) return { field: at, message: `at most ${MAX_TRANSLATED_TEXTS} texts in one locale` };
    for (const [key, text] of entries) {
      const field = `${at}.${key}`;
      const limit = keyLimit(key, widgets);
      if (limit === undefined) {
        return { field, message: 'translates nothing: the keys are "title", "description", "widgets.<id>.title" of a widget of this dashboard, and "widgets.<id>.markdown" of a TEXT widget' };
      }
      if (typeof text !== 'string') return { field, message: 'a string' };
      if (text.length > limit) return { field, message: `at most ${limit} characters` };
    }
  }
  return undefined;
}
