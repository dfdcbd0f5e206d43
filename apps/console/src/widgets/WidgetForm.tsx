import { useEffect, useRef, useState } from 'preact/hooks';
import type { DashboardWidget, Draft, Meta } from '../api.js';
import { childCandidates } from '../draft.js';
import type { MessageKey, Translate } from '../i18n.js';
import { GRAINS, checkForm, findMember, formOf, memberTitle, swapCandidates } from './forms.js';
import type { FormProblem, FormType, WidgetForm as Form } from './forms.js';

export const TYPE_NAMES: Record<FormType, MessageKey> = {
  TEXT: 'typeText', FILTER: 'typeFilter', TIME_GRAIN: 'typeTimeGrain', FIELD: 'typeField', CONTAINER: 'typeContainer', DIVIDER: 'typeDivider',
};

/**
 * The form of a widget other than a CHART, new (`widget` undefined) or already on the dashboard: its settings, checked
 * in words under each field when saved (the form keeps what was typed), and svc's refusal of the widget when the
 * last save was refused at its JSON path. `onSave` gets the config the embed reads and, for a container, its children.
 */
export function WidgetForm({ t, meta, draft, type, widget, name, nameOf, refused, onSave, onCancel }: {
  t: Translate; meta: Meta; draft: Draft; type: FormType; widget: DashboardWidget | undefined; name: string; nameOf: (widget: DashboardWidget) => string;
  refused: string | undefined;
  onSave: (config: Record<string, unknown>, children: string[]) => void; onCancel: () => void;
}) {
  const [form, setForm] = useState<Form>(() => formOf(type, widget, draft));
  const [problems, setProblems] = useState<FormProblem[]>([]);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const change = (patch: Partial<Form>) => setForm((before) => ({ ...before, ...patch }));
  const toggle = (list: 'grains' | 'candidates' | 'children', value: string, on: boolean) =>
    setForm((before) => ({ ...before, [list]: on ? [...before[list].filter((v) => v !== value), value] : before[list].filter((v) => v !== value) }));
  const problemOf = (field: FormProblem['field']) => problems.find((p) => p.field === field);
  const id = (field: string) => `w-${field}`;
  const invalid = (field: FormProblem['field']) => (problemOf(field) !== undefined ? { 'aria-invalid': true, 'aria-describedby': `${id(field)}-problem ${id(field)}-hint` } : { 'aria-describedby': `${id(field)}-hint` });
  const problemText = (field: FormProblem['field']) => {
    const problem = problemOf(field);
    return problem === undefined ? null : <p id={`${id(field)}-problem`} class="error">{t(problem.message)}</p>;
  };

  const save = (event: Event) => {
    event.preventDefault();
    const checked = checkForm(form, meta);
    setProblems(checked.problems);
    if (checked.config === undefined) {
      const first = checked.problems[0]!.field;
      document.getElementById(first === 'grains' || first === 'candidates' ? `${id(first)}-0` : id(first))?.focus();
      return;
    }
    onSave(checked.config, form.children);
  };

  const dimensions = meta.cubes.map((cube) => ({ cube, members: cube.dimensions }));
  const fieldMembers = meta.cubes.flatMap((cube) => [{ cube, kind: 'measures' as const, members: cube.measures }, { cube, kind: 'dimensions' as const, members: cube.dimensions }]);
  const candidates = form.member === '' ? [] : swapCandidates(meta, form.member);
  const children = childCandidates(draft, widget?.id);
  const titleHint: MessageKey | undefined = type === 'FILTER' ? 'formTitleFilter' : type === 'TIME_GRAIN' ? 'formTitleGrain' : type === 'FIELD' ? 'formTitleField' : undefined;

  return (
    <form class="widget-form" aria-labelledby="w-heading" onSubmit={save} noValidate>
      <h3 id="w-heading" ref={heading} tabIndex={-1}>{widget === undefined ? t('formNew', { kind: t(TYPE_NAMES[type]) }) : t('formEdit', { name })}</h3>
      {refused !== undefined ? <p class="error" role="alert">{t('widgetRefused', { message: refused })}</p> : null}
      {problems.length > 0 ? <div role="alert" class="visually-hidden">{problems.map((p) => t(p.message)).join(' ')}</div> : null}
      {type === 'TEXT' ? (
        <div class="field">
          <label for={id('markdown')}>{t('formMarkdown')}</label>
          <textarea id={id('markdown')} rows={4} value={form.markdown} {...invalid('markdown')} onInput={(e) => change({ markdown: e.currentTarget.value })} />
          {problemText('markdown')}
          <span id={`${id('markdown')}-hint`} hidden />
        </div>
      ) : null}
      {type === 'FILTER' ? (
        <div class="field">
          <label for={id('member')}>{t('filterDimension')}</label>
          <select id={id('member')} value={form.member} {...invalid('member')} onChange={(e) => change({ member: e.currentTarget.value })}>
            <option value="">{t('pick')}</option>
            {dimensions.map(({ cube, members }) => (
              <optgroup key={cube.name} label={cube.title ?? cube.name}>
                {members.map((m) => <option key={m.name} value={m.name}>{memberTitle(m)}</option>)}
              </optgroup>
            ))}
          </select>
          {problemText('member')}
          <p id={`${id('member')}-hint`} class="hint">{t('filterDimensionHint')}</p>
        </div>
      ) : null}
      {type === 'FIELD' ? (
        <>
          <div class="field">
            <label for={id('member')}>{t('fieldMember')}</label>
            <select id={id('member')} value={form.member} {...invalid('member')}
              onChange={(e) => { const member = e.currentTarget.value; const allowed = new Set(swapCandidates(meta, member).map((m) => m.name)); change({ member, candidates: form.candidates.filter((c) => allowed.has(c)) }); }}>
              <option value="">{t('pick')}</option>
              {fieldMembers.map(({ cube, kind, members }) => (
                <optgroup key={`${cube.name}-${kind}`} label={t('membersOfKind', { view: cube.title ?? cube.name, kind: t(kind) })}>
                  {members.map((m) => <option key={m.name} value={m.name}>{memberTitle(m)}</option>)}
                </optgroup>
              ))}
            </select>
            {problemText('member')}
            <p id={`${id('member')}-hint`} class="hint">{t('fieldMemberHint')}</p>
          </div>
          <fieldset class="checks" {...(problemOf('candidates') !== undefined ? { 'aria-describedby': `${id('candidates')}-problem` } : {})}>
            <legend>{t('fieldCandidates')}</legend>
            {form.member === '' || findMember(meta, form.member) === undefined ? <p class="hint">{t('pickMemberFirst')}</p> : candidates.map((m, i) => (
              <label key={m.name} class="check">
                <input type="checkbox" id={i === 0 ? `${id('candidates')}-0` : undefined} checked={form.candidates.includes(m.name)} onChange={(e) => toggle('candidates', m.name, e.currentTarget.checked)} />
                {memberTitle(m)}
              </label>
            ))}
            <p id={`${id('candidates')}-hint`} class="hint">{t('fieldCandidatesHint')}</p>
            {problemText('candidates')}
          </fieldset>
        </>
      ) : null}
      {type === 'TIME_GRAIN' ? (
        <fieldset class="checks" {...(problemOf('grains') !== undefined ? { 'aria-describedby': `${id('grains')}-problem` } : {})}>
          <legend>{t('grainsOffered')}</legend>
          {GRAINS.map((grain, i) => (
            <label key={grain} class="check">
              <input type="checkbox" id={i === 0 ? `${id('grains')}-0` : undefined} checked={form.grains.includes(grain)} onChange={(e) => toggle('grains', grain, e.currentTarget.checked)} />
              {grain}
            </label>
          ))}
          <p id={`${id('grains')}-hint`} class="hint">{t('grainsHint')}</p>
          {problemText('grains')}
        </fieldset>
      ) : null}
      {type !== 'TEXT' && type !== 'DIVIDER' ? (
        <div class="field">
          <label for={id('title')}>{t('formTitle')}</label>
          <input id={id('title')} value={form.title} {...invalid('title')} onInput={(e) => change({ title: e.currentTarget.value })} />
          {problemText('title')}
          {titleHint !== undefined ? <p id={`${id('title')}-hint`} class="hint">{t(titleHint)}</p> : <span id={`${id('title')}-hint`} hidden />}
        </div>
      ) : null}
      {type === 'CONTAINER' ? (
        <fieldset class="checks">
          <legend>{t('containerChildren')}</legend>
          {children.length === 0 ? <p class="hint">{t('noChildCandidates')}</p> : children.map((child) => (
            <label key={child.id} class="check">
              <input type="checkbox" checked={form.children.includes(child.id)} onChange={(e) => toggle('children', child.id, e.currentTarget.checked)} />
              {nameOf(child)}
            </label>
          ))}
          <p class="hint">{t('containerChildrenHint')}</p>
        </fieldset>
      ) : null}
      <div class="row">
        <button type="submit" class="primary">{t('saveWidget')}</button>
        <button type="button" onClick={onCancel}>{t('cancel')}</button>
      </div>
    </form>
  );
}
