/**
 * The house checks (npm run check:house; docs/architecture.md#house-rules):
 *
 * - table ownership: each table belongs to the module (or mechanism) whose `tables.ts` registers it on
 *   the database type; a module's non-test sources may touch only its own tables, through Kysely
 *   (`selectFrom('t')`, `innerJoin('t as x', …)`, …) or in raw `sql` text (`FROM t`, `JOIN t`, …).
 * - room size: no non-test source file under src/ is over 600 lines (migrations aside).
 * - api.ts holds types only: no values, no value imports or re-exports (docs/architecture.md#the-module-shape).
 * - the map is whole: every non-test source file under src/platform, src/db, src/lib, src/jobs and
 *   src/modules is named in docs/architecture.md (`unmapped`), migrations and a module's standard rooms
 *   aside.
 * - tests leave the test process as they found it: no writes to process.env, no fake timers, stubbed
 *   globals or module mocks (the test files of a worker share one process: vitest.config.ts).
 *
 * Today's known violations are listed in scripts/house-debt.json: they are allowed and reported as
 * debt, and an entry that is no longer needed fails the check, so the list only shrinks.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const MAX_LINES = 600;

export interface TableUse {
  file: string;
  line: number;
  table: string;
}

export interface SideDoor extends TableUse {
  module: string;
  owner: string;
}

export interface Debt {
  oversize: string[];
  sideDoors: { module: string; table: string }[];
  /** Import circles owed (checked by scripts/deps.ts). */
  cycles?: string[];
  /** Modules whose api.ts still holds values (it should hold types only). */
  valueApis?: string[];
}

/**
 * What in an `api.ts` is not a type: values (const, function, class, enum), value imports and
 * re-exports. The module shape keeps api.ts types only, so importing it runs nothing.
 */
export function valuesIn(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (node: ts.Node) => `${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      const typeOnly =
        clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push(`${at(st)}: a value import`);
    } else if (ts.isExportDeclaration(st)) {
      const typeOnly =
        st.isTypeOnly ||
        (st.exportClause &&
          ts.isNamedExports(st.exportClause) &&
          st.exportClause.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) out.push(`${at(st)}: a value re-export`);
    } else if (
      ts.isVariableStatement(st) ||
      ts.isFunctionDeclaration(st) ||
      ts.isClassDeclaration(st) ||
      ts.isEnumDeclaration(st) ||
      ts.isExportAssignment(st) ||
      ts.isExpressionStatement(st)
    ) {
      const kind = ts.isVariableStatement(st)
        ? 'variable'
        : ts.isFunctionDeclaration(st)
          ? 'function'
          : ts.isClassDeclaration(st)
            ? 'class'
            : ts.isEnumDeclaration(st)
              ? 'enum'
              : 'statement';
      out.push(`${at(st)}: a value (${kind})`);
    }
  }
  return out;
}

/** Every value in the modules' api.ts files, by module folder. */
export function valueApis(root: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of listFiles(root, 'src/modules')) {
    const m = /^src\/modules\/([^/]+)\/api\.ts$/.exec(file);
    if (!m) continue;
    const values = valuesIn(file, readFileSync(join(root, file), 'utf8'));
    if (values.length > 0) out.set(m[1]!, values);
  }
  return out;
}

/** Every file under `dir` (recursively), as paths relative to `root` with `/` separators. */
export function listFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(join(root, dir));
  return out.sort();
}

const isTest = (path: string): boolean => /\.test\.tsx?$/.test(path);

/** The table names a `tables.ts` registers: the members of its `interface DB { … }` augmentation. */
export function registeredTables(source: string): string[] {
  const names: string[] = [];
  for (const block of source.matchAll(/interface\s+DB\s*\{([^}]*)\}/g)) {
    for (const member of (block[1] ?? '').matchAll(/^\s*([a-z_][a-z0-9_]*)\s*:/gm)) names.push(member[1]!);
  }
  return names;
}

/**
 * Who owns each table: `src/modules/<m>/tables.ts` → module `<m>` (its folder name); any other
 * `tables.ts` under src/ (platform, jobs) → that folder's name.
 */
export function tableOwners(root: string): Map<string, string> {
  const owners = new Map<string, string>();
  for (const path of listFiles(root, 'src')) {
    if (!path.endsWith('/tables.ts')) continue;
    const parts = path.split('/');
    const owner = parts[1] === 'modules' ? parts[2]! : parts[1]!;
    for (const table of registeredTables(readFileSync(join(root, path), 'utf8'))) {
      const before = owners.get(table);
      if (before && before !== owner)
        throw new Error(`table ${table} is registered by ${before} and ${owner}`);
      owners.set(table, owner);
    }
  }
  return owners;
}

/** 1-based line of a character offset. */
function lineAt(source: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}

const KYSELY_METHODS = [
  'selectFrom',
  'insertInto',
  'updateTable',
  'deleteFrom',
  'mergeInto',
  'replaceInto',
  'innerJoin',
  'leftJoin',
  'rightJoin',
  'fullJoin',
  'crossJoin',
  'innerJoinLateral',
  'leftJoinLateral',
  'crossJoinLateral',
  'using',
  'table',
  // src/db/purge.ts: purgeInBatches(db, 'table', where)
  'purgeInBatches',
];

/** Kysely calls naming a table as their first string argument: `.selectFrom('t as x')`, `(['a', 'b'])`. */
const KYSELY_CALL = new RegExp(
  `\\b(?:${KYSELY_METHODS.join('|')})\\(\\s*(?:[A-Za-z_$][\\w$]*\\s*,\\s*)?(\\[[^\\]]*\\]|'[^']*'|"[^"]*")`,
  'g',
);

/** Raw SQL naming a table: FROM t, JOIN t, INTO t, UPDATE t (USING t for DELETE … USING). */
const SQL_TABLE = /\b(?:from|join|into|update|using)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi;

/** The text of every `sql` tagged template in `source` (nested `${…}` blanked out), with its offset. */
export function sqlTemplates(source: string): { text: string; at: number }[] {
  const out: { text: string; at: number }[] = [];
  const tag = /\bsql(?:\s*<[^`;]*?>)?\s*`/g;
  for (let m = tag.exec(source); m; m = tag.exec(source)) {
    const start = m.index + m[0].length;
    let i = start;
    let text = '';
    let depth = 0;
    for (; i < source.length; i++) {
      const c = source[i]!;
      if (depth === 0) {
        if (c === '\\') {
          text += source.slice(i, i + 2);
          i++;
        } else if (c === '`') break;
        else if (c === '$' && source[i + 1] === '{') {
          depth = 1;
          i++;
          text += ' ';
        } else text += c;
      } else if (c === '{') depth++;
      else if (c === '}') depth--;
      // Keep line count: newlines inside ${…} still advance the line.
      if (depth > 0 && c === '\n') text += '\n';
    }
    out.push({ text, at: start });
    tag.lastIndex = i + 1;
  }
  return out;
}

/** Every use of a known table in `source` (Kysely calls and raw sql text). */
export function tableUses(file: string, source: string, known: ReadonlySet<string>): TableUse[] {
  const uses: TableUse[] = [];
  const add = (table: string, index: number): void => {
    if (known.has(table)) uses.push({ file, line: lineAt(source, index), table });
  };
  for (const m of source.matchAll(KYSELY_CALL)) {
    for (const name of (m[1] ?? '').matchAll(/['"]([^'"]+)['"]/g)) {
      add((name[1] ?? '').trim().split(/\s+/)[0]!, m.index);
    }
  }
  for (const { text, at } of sqlTemplates(source)) {
    for (const m of text.matchAll(SQL_TABLE)) add(m[1]!.toLowerCase(), at + m.index);
  }
  for (const m of source.matchAll(/\bsql\.table\(\s*'([^']+)'/g)) add(m[1]!, m.index);
  // One use per line and table.
  const seen = new Set<string>();
  return uses.filter((u) => {
    const key = `${u.line}:${u.table}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Every place a module touches a table it does not own. */
export function sideDoors(root: string, owners: ReadonlyMap<string, string>): SideDoor[] {
  const known = new Set(owners.keys());
  const out: SideDoor[] = [];
  for (const file of listFiles(root, 'src/modules')) {
    if (!/\.tsx?$/.test(file) || isTest(file)) continue;
    const module = file.split('/')[2]!;
    if (!file.slice('src/modules/'.length).includes('/')) continue; // module.ts, index.ts of the contract
    for (const use of tableUses(file, readFileSync(join(root, file), 'utf8'), known)) {
      const owner = owners.get(use.table)!;
      if (owner !== module) out.push({ ...use, module, owner });
    }
  }
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/** Non-test source files under src/ longer than MAX_LINES (migrations aside), with their length. */
export function oversize(root: string): { file: string; lines: number }[] {
  const out: { file: string; lines: number }[] = [];
  for (const file of listFiles(root, 'src')) {
    if (!/\.(tsx?|m?js|css)$/.test(file) || isTest(file) || file.startsWith('src/db/migrations/')) continue;
    const text = readFileSync(join(root, file), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES) out.push({ file, lines });
  }
  return out;
}

/** What a test may not do: each worker process runs many test files, one after another (vitest.config.ts). */
const PROCESS_WIDE: [RegExp, string][] = [
  [/process\.env(?:\.\w+|\[[^\]]+\])\s*(?:=(?!=)|\?\?=|\|\|=)/g, 'a write to process.env'],
  [/delete\s+process\.env\b/g, 'a delete from process.env'],
  [/\bvi\.(?:stubEnv|stubGlobal|useFakeTimers|mock|doMock)\(/g, 'a process-wide vi stub'],
];

/** Process-wide changes made by test code (tests, their helpers, emulators), with file and line. */
export function processWide(file: string, source: string): string[] {
  const out: string[] = [];
  for (const [pattern, what] of PROCESS_WIDE) {
    for (const m of source.matchAll(pattern)) {
      out.push(
        `${file}:${lineAt(source, m.index)}: ${what} (${m[0].trim()}) outlives the test file: the files of a worker share its process (vitest.config.ts); pass the setting to the app instead`,
      );
    }
  }
  return out;
}

/** processWide over every test file and every file under test/. */
export function processWideInTests(root: string): string[] {
  const files = [
    ...listFiles(root, 'src').filter(isTest),
    ...listFiles(root, 'test'),
    ...readdirSync(join(root, 'packages')).flatMap((p) =>
      existsSync(join(root, 'packages', p, 'test')) ? listFiles(root, `packages/${p}/test`) : [],
    ),
  ].filter((f) => /\.tsx?$/.test(f) && f !== 'test/house/house.test.ts');
  return files.flatMap((f) => processWide(f, readFileSync(join(root, f), 'utf8')));
}

/** The folders whose every file the map names (docs/architecture.md#files). */
const MAPPED = /^src\/(platform|db|lib|jobs|modules)\//;

/** A module's standard rooms: docs/architecture.md#the-module-shape describes them once for all. */
const STANDARD_ROOMS = new Set([
  'module.ts',
  'api.ts',
  'schemas.ts',
  'service.ts',
  'repo.ts',
  'routes.ts',
  'tables.ts',
  'errors.ts',
  'events.ts',
]);

/**
 * The files of `files` (paths from the root) that the map does not name. A file is named by its path
 * from `src/` (`platform/dispatch.ts`, `db/purge.ts`, `modules/module.ts`), or, in a module folder,
 * from `src/modules/` (`bookings/write.ts`, `calendars/providers/google.ts`), not preceded by a
 * letter, digit, `_` or `-` (so `keys/stats.ts` does not name `api-keys/stats.ts`). Tests,
 * migrations (the folder is mapped as a whole) and a module folder's standard rooms need no line.
 */
export function unmapped(files: readonly string[], map: string): string[] {
  const named = (path: string): boolean => {
    for (let at = map.indexOf(path); at >= 0; at = map.indexOf(path, at + 1)) {
      if (at === 0 || !/[\w-]/.test(map[at - 1]!)) return true;
    }
    return false;
  };
  return files.filter((file) => {
    if (!MAPPED.test(file) || !/\.tsx?$/.test(file) || isTest(file)) return false;
    if (file.startsWith('src/db/migrations/')) return false;
    const fromSrc = file.slice('src/'.length);
    const inModule = /^modules\/([^/]+\/.+)$/.exec(fromSrc)?.[1];
    if (inModule) {
      const [, room] = inModule.split('/');
      if (inModule.split('/').length === 2 && STANDARD_ROOMS.has(room!)) return false;
      return !named(inModule) && !named(fromSrc);
    }
    return !named(fromSrc);
  });
}

export interface Verdict {
  errors: string[];
  debt: string[];
}

/** Compares what was found with the debt list: new violations and stale debt entries are errors. */
export function judge(
  doors: readonly SideDoor[],
  big: readonly { file: string; lines: number }[],
  debt: Debt,
  exists: (file: string) => boolean,
  apis: ReadonlyMap<string, readonly string[]> = new Map(),
): Verdict {
  const errors: string[] = [];
  const owed: string[] = [];
  const allowedApis = new Set(debt.valueApis ?? []);
  for (const [module, values] of apis) {
    for (const v of values) {
      if (allowedApis.has(module)) owed.push(`api value ${v}`);
      else errors.push(`${v} in module ${module}'s api.ts, which holds types only: move it out`);
    }
  }
  for (const module of allowedApis) {
    if (!apis.has(module)) {
      errors.push(`scripts/house-debt.json: valueApis entry ${module} is no longer needed: delete it`);
    }
  }
  const allowed = new Set(debt.sideDoors.map((d) => `${d.module}→${d.table}`));
  const used = new Set<string>();
  for (const d of doors) {
    const key = `${d.module}→${d.table}`;
    const where = `${d.file}:${d.line}: module ${d.module} touches table ${d.table}, owned by ${d.owner}`;
    if (allowed.has(key)) {
      used.add(key);
      owed.push(`side door  ${where}`);
    } else errors.push(`${where} (ask ${d.owner}'s api.ts instead)`);
  }
  for (const d of debt.sideDoors) {
    const key = `${d.module}→${d.table}`;
    if (!used.has(key)) {
      errors.push(
        `scripts/house-debt.json: sideDoors entry ${d.module} → ${d.table} is no longer needed: delete it`,
      );
    }
  }
  const bigFiles = new Map(big.map((b) => [b.file, b.lines]));
  const allowedBig = new Set(debt.oversize);
  for (const [file, lines] of bigFiles) {
    if (allowedBig.has(file)) owed.push(`oversize   ${file}: ${lines} lines (at most ${MAX_LINES})`);
    else errors.push(`${file}: ${lines} lines, more than ${MAX_LINES}: split it into rooms of one job`);
  }
  for (const file of allowedBig) {
    if (!bigFiles.has(file)) {
      errors.push(
        `scripts/house-debt.json: oversize entry ${file} is no longer needed (${exists(file) ? `at most ${MAX_LINES} lines` : 'no such file'}): delete it`,
      );
    }
  }
  return { errors, debt: owed };
}

function main(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const debt = JSON.parse(readFileSync(join(root, 'scripts/house-debt.json'), 'utf8')) as Debt;
  const owners = tableOwners(root);
  const verdict = judge(
    sideDoors(root, owners),
    oversize(root),
    debt,
    (f) => existsSync(join(root, f)),
    valueApis(root),
  );
  verdict.errors.push(...processWideInTests(root));
  for (const file of unmapped(
    listFiles(root, 'src'),
    readFileSync(join(root, 'docs/architecture.md'), 'utf8'),
  )) {
    verdict.errors.push(
      `${file} is not on the map: name it in docs/architecture.md#files with a line on what it does`,
    );
  }
  if (verdict.debt.length > 0) {
    console.log(`house debt (scripts/house-debt.json), ${verdict.debt.length}:`);
    for (const line of verdict.debt) console.log(`  ${line}`);
  }
  if (verdict.errors.length > 0) {
    console.error(`house check failed, ${verdict.errors.length}:`);
    for (const line of verdict.errors) console.error(`  ${line}`);
    process.exitCode = 1;
  } else {
    console.log(
      `house check: ${owners.size} tables owned; no new side doors, no new room over ${MAX_LINES} lines, no new value in an api.ts, no test changing its whole process, every file on the map`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
