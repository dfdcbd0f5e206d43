import type { DashboardWidget, Draft, Meta, MetaCube, MetaMember } from '../api.js';
import { parentOf, widgetsOf } from '../draft.js';
import type { MessageKey } from '../i18n.js';

/**
 * The forms of the editor's widgets other than CHART (issue 34): what each holds while it is typed, read from a widget
 * already added, and checked into the config the embed reads (apps/embed/src/dashboard/Widget.tsx; docs/data.md
 * "Widgets in the embed"):
 *
 * - TEXT: `markdown`;
 * - FILTER: `member` (a dimension) and `title` (the member's title unless one is typed);
 * - TIME_GRAIN: `options`, the grains offered, and `title`;
 * - FIELD: `member`, `options` (`{ member, title }`: the member itself first, then the members that may stand in for
 *   it, of its view and of its kind, as svc's data endpoint swaps only those) and `title`;
 * - CONTAINER: `title`; its children are the widgets whose `config.parentId` names it (draft.ts setChildren);
 * - DIVIDER: nothing.
 */

export type FormType = 'TEXT' | 'FILTER' | 'TIME_GRAIN' | 'FIELD' | 'CONTAINER' | 'DIVIDER';

/** The grains a TIME_GRAIN control offers (the embed's list when a control names none). */
export const GRAINS = ['day', 'week', 'month', 'quarter', 'year'] as const;

/** What a form holds, as typed. */
export interface WidgetForm {
  type: FormType;
  title: string;
  markdown: string;
  member: string;
  grains: string[];
  candidates: string[];
  children: string[];
}

export interface FormProblem { field: 'title' | 'markdown' | 'member' | 'grains' | 'candidates'; message: MessageKey }

export const isFormType = (type: string): type is FormType => ['TEXT', 'FILTER', 'TIME_GRAIN', 'FIELD', 'CONTAINER', 'DIVIDER'].includes(type);

const text = (value: unknown) => (typeof value === 'string' ? value : '');

const optionMember = (option: unknown): string => (typeof option === 'string' ? option : typeof option === 'object' && option !== null ? text((option as { member?: unknown }).member) : '');

/** An empty form of a type; with a widget, its form filled from its config (to edit it). */
export function formOf(type: FormType, widget?: DashboardWidget, draft?: Draft): WidgetForm {
  const config = widget?.config ?? {};
  const options = Array.isArray(config.options) ? config.options : [];
  const member = text(config.member);
  return {
    type,
    title: text(config.title),
    markdown: text(config.markdown) || text(config.text),
    member,
    grains: type === 'TIME_GRAIN' ? (options.length > 0 ? options.map(optionMember).filter((g) => g !== '') : [...GRAINS]) : [],
    candidates: type === 'FIELD' ? options.map(optionMember).filter((m) => m !== '' && m !== member) : [],
    children: widget !== undefined && draft !== undefined ? widgetsOf(draft).filter((w) => parentOf(w) === widget.id).map((w) => w.id) : [],
  };
}

/** A member of the meta with its view and whether it is a measure. */
export interface FoundMember { cube: MetaCube; member: MetaMember; measure: boolean }

export function findMember(meta: Meta, name: string): FoundMember | undefined {
  for (const cube of meta.cubes) {
    const measure = cube.measures.find((m) => m.name === name);
    if (measure !== undefined) return { cube, member: measure, measure: true };
    const dimension = cube.dimensions.find((d) => d.name === name);
    if (dimension !== undefined) return { cube, member: dimension, measure: false };
  }
  return undefined;
}

export const memberTitle = (member: MetaMember) => member.shortTitle ?? member.title ?? member.name;

/** The members a FIELD control may offer for its member: the others of its view and of its kind. */
export function swapCandidates(meta: Meta, member: string): MetaMember[] {
  const found = findMember(meta, member);
  if (found === undefined) return [];
  return (found.measure ? found.cube.measures : found.cube.dimensions).filter((m) => m.name !== member && (found.measure || (m.type === 'time') === (found.member.type === 'time')));
}

/**
 * The config a form makes (the keys it owns: one set to undefined is removed from the widget), or the problems that
 * keep it from making one, each named by its field and said in words.
 */
export function checkForm(form: WidgetForm, meta: Meta): { config: Record<string, unknown>; problems: [] } | { config?: undefined; problems: FormProblem[] } {
  const problems: FormProblem[] = [];
  const title = form.title.trim();
  switch (form.type) {
    case 'TEXT':
      if (form.markdown.trim() === '') problems.push({ field: 'markdown', message: 'problemMarkdown' });
      return problems.length > 0 ? { problems } : { config: { markdown: form.markdown, text: undefined }, problems: [] };
    case 'FILTER': {
      const found = form.member === '' ? undefined : findMember(meta, form.member);
      if (form.member === '') problems.push({ field: 'member', message: 'problemFilterMember' });
      else if (found === undefined || found.measure) problems.push({ field: 'member', message: 'problemNotDimension' });
      if (problems.length > 0) return { problems };
      return { config: { member: form.member, title: title !== '' ? title : memberTitle(found!.member) }, problems: [] };
    }
    case 'TIME_GRAIN': {
      const grains = GRAINS.filter((g) => form.grains.includes(g));
      if (grains.length === 0) problems.push({ field: 'grains', message: 'problemGrains' });
      if (problems.length > 0) return { problems };
      return { config: { options: grains, title: title !== '' ? title : undefined, default: undefined }, problems: [] };
    }
    case 'FIELD': {
      const found = form.member === '' ? undefined : findMember(meta, form.member);
      if (found === undefined) problems.push({ field: 'member', message: 'problemFieldMember' });
      const allowed = new Set(found === undefined ? [] : swapCandidates(meta, form.member).map((m) => m.name));
      const candidates = form.candidates.filter((c) => c !== form.member);
      if (found !== undefined && candidates.length === 0) problems.push({ field: 'candidates', message: 'problemCandidates' });
      else if (found !== undefined && candidates.some((c) => !allowed.has(c))) problems.push({ field: 'candidates', message: 'problemCandidateKind' });
      if (problems.length > 0) return { problems };
      const option = (name: string) => ({ member: name, title: memberTitle(findMember(meta, name)!.member) });
      return { config: { member: form.member, options: [option(form.member), ...candidates.map(option)], title: title !== '' ? title : undefined }, problems: [] };
    }
    case 'CONTAINER':
      if (title === '') problems.push({ field: 'title', message: 'problemContainerTitle' });
      return problems.length > 0 ? { problems } : { config: { title }, problems: [] };
    case 'DIVIDER':
      return { config: {}, problems: [] };
  }
}

/**
 * The widget a refusal of svc names by its JSON path (`config.widgets[3].config.member: ...`), in the draft that was
 * sent: where the editor shows it.
 */
export function widgetAtPath(draft: Draft, field: string | undefined): string | undefined {
  const match = field === undefined ? null : /^config\.widgets\[(\d+)\]/.exec(field);
  return match === null ? undefined : widgetsOf(draft)[Number(match[1])]?.id;
}
