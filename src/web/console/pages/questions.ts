/**
 * A booking link's custom questions, edited inside the link's form: add, edit, remove and reorder;
 * each question's errors from the API (`questions.<i>.<field>`) beside its field.
 */
import type { Item, Result } from '@kairos/sdk';
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { Field } from '../lib/ui.js';

type Question = Item<Result<'listBookingLinks'>>['questions'][number];
type Kind = Question['type'];

/** A question as the form holds it: choices as text, one a line; `key` keeps the row across moves. */
export interface Draft {
  key: number;
  id: string;
  label: string;
  type: Kind;
  required: boolean;
  options: string;
}

const KINDS: readonly (readonly [Kind, string])[] = [
  ['text', 'Short text'],
  ['textarea', 'Long text'],
  ['email', 'E-mail address'],
  ['phone', 'Phone number'],
  ['select', 'One of a list'],
  ['checkbox', 'Yes or no (a checkbox)'],
];

let keys = 0;

export function drafts(questions: readonly Question[] | undefined): Draft[] {
  return (questions ?? []).map((q) => ({
    key: ++keys,
    id: q.id,
    label: q.label,
    type: q.type,
    required: q.required,
    options: (q.options ?? []).join('\n'),
  }));
}

/** An answer key out of a label: lower case, a–z, 0–9 and _, at most 40 characters. */
function keyOf(label: string): string {
  const k = label
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40);
  return k || 'question';
}

/** The questions as the API takes them. */
export function questionsBody(list: readonly Draft[]): unknown[] {
  return list.map((q) => ({
    id: q.id.trim() || keyOf(q.label),
    label: q.label.trim(),
    type: q.type,
    required: q.required,
    ...(q.type === 'select'
      ? {
          options: q.options
            .split('\n')
            .map((o) => o.trim())
            .filter(Boolean),
        }
      : {}),
  }));
}

export function Questions(p: {
  pre: string;
  list: Draft[];
  onChange: (list: Draft[]) => void;
  errors: Record<string, string>;
  error?: string | undefined;
}): VNode {
  const set = (i: number, patch: Partial<Draft>) =>
    p.onChange(p.list.map((q, j) => (j === i ? { ...q, ...patch } : q)));
  const move = (i: number, by: number) => {
    const list = [...p.list];
    const [q] = list.splice(i, 1);
    if (q) list.splice(i + by, 0, q);
    p.onChange(list);
  };
  const add = () =>
    p.onChange([...p.list, { key: ++keys, id: '', label: '', type: 'text', required: false, options: '' }]);
  const value = (e: Event) => (e.currentTarget as HTMLInputElement).value;
  return html`<fieldset class="questions" aria-describedby=${p.error ? `${p.pre}-questions-error` : undefined}>
    <legend>Questions for the person booking</legend>
    ${p.list.length === 0 ? html`<p class="hint">None: the page asks for a name and an e-mail address only.</p>` : null}
    ${p.error ? html`<p class="error" id=${`${p.pre}-questions-error`}>${p.error}</p>` : null}
    <ol class="question-list">
      ${p.list.map((q, i) => {
        const id = `${p.pre}-q${q.key}`;
        const err = (f: string) => p.errors[`questions.${i}.${f}`];
        const n = `question ${i + 1}`;
        return html`<li key=${q.key} class="question">
          <${Field} id=${`${id}-label`} label=${`Question ${i + 1}`} error=${err('label')}>
            ${(a: Record<string, unknown>) => html`<input ...${a} value=${q.label} maxlength="200" onInput=${(e: Event) => set(i, { label: value(e) })} />`}
          <//>
          <${Field} id=${`${id}-id`} label="Answer key (optional)" hint="a–z, 0–9 and _; the booking's answers are keyed by it. Empty: made from the question." error=${err('id')}>
            ${(a: Record<string, unknown>) => html`<input ...${a} value=${q.id} maxlength="40" onInput=${(e: Event) => set(i, { id: value(e) })} />`}
          <//>
          <${Field} id=${`${id}-type`} label="Answer" error=${err('type')}>
            ${(
              a: Record<string, unknown>,
            ) => html`<select ...${a} onChange=${(e: Event) => set(i, { type: value(e) as Kind })}>
              ${KINDS.map(([k, label]) => html`<option value=${k} key=${k} selected=${q.type === k}>${label}</option>`)}
            </select>`}
          <//>
          ${
            q.type === 'select'
              ? html`<${Field} id=${`${id}-options`} label="Choices, one a line" error=${err('options') ?? p.errors[`questions.${i}.options.0`]}>
                  ${(a: Record<string, unknown>) => html`<textarea ...${a} rows="3" value=${q.options} onInput=${(e: Event) => set(i, { options: value(e) })}></textarea>`}
                <//>`
              : null
          }
          <label class="choice"><input type="checkbox" checked=${q.required} onChange=${(e: Event) => set(i, { required: (e.currentTarget as HTMLInputElement).checked })} /> Required<span class="sr"> (${n})</span></label>
          <div class="actions start">
            <button type="button" class="secondary" disabled=${i === 0} onClick=${() => move(i, -1)}>Move up<span class="sr"> ${n}</span></button>
            <button type="button" class="secondary" disabled=${i === p.list.length - 1} onClick=${() => move(i, 1)}>Move down<span class="sr"> ${n}</span></button>
            <button type="button" class="secondary" onClick=${() => p.onChange(p.list.filter((_, j) => j !== i))}>Remove<span class="sr"> ${n}</span></button>
          </div>
        </li>`;
      })}
    </ol>
    <div><button type="button" class="secondary" onClick=${add}>Add a question</button></div>
  </fieldset>`;
}
