/**
 * Statement parts whose text is made once per shape (docs/design.md#store, "A batch's statement").
 *
 * Kysely builds a tree of nodes for every query and compiles it to text each time. For the writes a
 * request sends in one statement (a booking's row, its occupancy, event, mails, meeting and jobs: 2.8
 * KB of SQL with ~90 parameters) that cost ~0.18 ms a booking, though the text is the same each time
 * for the same shape. A part here is a piece of SQL as its parameters and a key naming its text; the
 * text is made only the first time a statement of that shape is sent (`statement`), then looked up.
 *
 * - `part` is a tagged template like Kysely's `sql`: each interpolation is a parameter, or a part
 *   (nested). Its call site names its text, so the same template always gives the same text.
 * - `rowsInsert` is `INSERT INTO table (columns) VALUES (…), (…)`: the table, columns and row count
 *   name its text.
 * - `compiledPart` wraps a statement Kysely compiled (its text is its key).
 */
import { CompiledQuery } from 'kysely';

export class SqlPart {
  constructor(
    /** Names the text: two parts with equal keys have equal text around their parameters. */
    readonly key: string,
    readonly params: readonly unknown[],
    /** The text around the parameters (one more string than parameters), made when first needed. */
    readonly strings: () => readonly string[],
  ) {}
}

const sites = new WeakMap<TemplateStringsArray, string>();
let nextSite = 0;

function siteOf(strings: TemplateStringsArray): string {
  let site = sites.get(strings);
  if (site === undefined) {
    site = `t${nextSite++}`;
    sites.set(strings, site);
  }
  return site;
}

/** Appends `inner`'s text to `out` (whose last string is still open), then `after`. */
function splice(out: string[], inner: readonly string[], after: string): void {
  out[out.length - 1] += inner[0]!;
  for (let i = 1; i < inner.length; i++) out.push(inner[i]!);
  out[out.length - 1] += after;
}

/**
 * A part written as a template: `${value}` is a parameter, `${aPart}` that part's text and
 * parameters. Only values go in: names of tables or columns belong in the template's text.
 */
export function part(strings: TemplateStringsArray, ...values: unknown[]): SqlPart {
  const site = siteOf(strings);
  if (!values.some((v) => v instanceof SqlPart)) return new SqlPart(site, values, () => strings);
  let key = site;
  const params: unknown[] = [];
  values.forEach((v, i) => {
    if (v instanceof SqlPart) {
      key += `|${i}(${v.key})`;
      params.push(...v.params);
    } else params.push(v);
  });
  return new SqlPart(key, params, () => {
    const out = [strings[0]!];
    values.forEach((v, i) => {
      if (v instanceof SqlPart) splice(out, v.strings(), strings[i + 1]!);
      else out.push(strings[i + 1]!);
    });
    return out;
  });
}

/** A name as an identifier (`*` as itself). */
const quote = (name: string) => (name === '*' ? name : `"${name.replace(/"/g, '""')}"`);

/**
 * `INSERT INTO table (columns) VALUES …` of `rows`, which give the same columns (a column whose value
 * is undefined is left out, as Kysely does); a value may be a part (an expression, e.g. a range built
 * from two parameters). `returning` names the columns the insert answers.
 */
export function rowsInsert(
  table: string,
  rows: readonly Record<string, unknown>[],
  returning: readonly string[] = [],
): SqlPart {
  if (rows.length === 0) throw new Error('rowsInsert: no rows');
  const columns = Object.keys(rows[0]!).filter((c) => rows[0]![c] !== undefined);
  let key = `i:${table}:${columns.join(',')}:${rows.length}:${returning.join(',')}`;
  const params: unknown[] = [];
  let nested = false;
  for (const [r, row] of rows.entries()) {
    let given = 0;
    for (const c in row) if (row[c] !== undefined) given++;
    if (given !== columns.length) throw new Error(`rowsInsert: row ${r} of ${table} gives other columns`);
    for (const [i, c] of columns.entries()) {
      const v = row[c];
      if (v === undefined) throw new Error(`rowsInsert: row ${r} of ${table} gives other columns`);
      if (v instanceof SqlPart) {
        nested = true;
        key += `|${r}.${i}(${v.key})`;
        params.push(...v.params);
      } else params.push(v);
    }
  }
  return new SqlPart(key, params, () => {
    const out = [`insert into ${quote(table)} (${columns.map(quote).join(', ')}) values (`];
    for (const [r, row] of rows.entries()) {
      for (const [i, c] of columns.entries()) {
        const after = i < columns.length - 1 ? ', ' : r < rows.length - 1 ? '), (' : ')';
        const v = row[c];
        if (nested && v instanceof SqlPart) splice(out, v.strings(), after);
        else out.push(after);
      }
    }
    if (returning.length > 0) out[out.length - 1] += ` returning ${returning.map(quote).join(', ')}`;
    return out;
  });
}

/** A statement Kysely compiled, as a part (its text is its key: nothing is saved, it only joins). */
export function compiledPart(compiled: { sql: string; parameters: readonly unknown[] }): SqlPart {
  return new SqlPart(compiled.sql, compiled.parameters, () => {
    const pieces = compiled.sql.split(/\$(\d+)/);
    const out: string[] = [];
    for (let i = 0; i < pieces.length; i += 2) {
      // Kysely numbers each parameter once, in the order of the text.
      if (i > 0 && Number(pieces[i - 1]) !== i / 2) throw new Error('compiledPart: parameters out of order');
      out.push(pieces[i]!);
    }
    if (out.length !== compiled.parameters.length + 1) throw new Error('compiledPart: parameter count');
    return out;
  });
}

/** Texts of statements by their pieces' keys; shapes are few, so this rarely starts over. */
const texts = new Map<string, string>();
const MAX_TEXTS = 500;

/**
 * One statement of literal text and parts, in order: its text made once per shape (the literals and
 * the parts' keys), its parameters the parts' in order.
 */
export function statement(pieces: readonly (string | SqlPart)[]): CompiledQuery {
  let key = '';
  const params: unknown[] = [];
  for (const p of pieces) {
    if (typeof p === 'string') key += `${p}\u0001`;
    else {
      key += `\u0002${p.key}\u0001`;
      for (const v of p.params) params.push(v);
    }
  }
  let text = texts.get(key);
  if (text === undefined) {
    text = '';
    let n = 0;
    for (const p of pieces) {
      if (typeof p === 'string') {
        text += p;
        continue;
      }
      const strings = p.strings();
      if (strings.length !== p.params.length + 1)
        throw new Error('statement: a part and its parameters differ');
      text += strings[0];
      for (let i = 1; i < strings.length; i++) text += `$${++n}${strings[i]}`;
    }
    if (texts.size >= MAX_TEXTS) texts.clear();
    texts.set(key, text);
  }
  return CompiledQuery.raw(text, params as unknown[]);
}
