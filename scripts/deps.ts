/**
 * The import rules (npm run check:deps; docs/architecture.md#house-rules): runs dependency-cruiser with
 * .dependency-cruiser.cjs (layers point down, no circles, modules meet only through api.ts/schemas.ts,
 * the contract imports no module, web clients stand alone). Every violation fails, except the import
 * circles listed in scripts/house-debt.json (`cycles`), which are reported as debt; a listed circle
 * that no longer exists fails too, so the list only shrinks.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Violation {
  type: string;
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: { name: string }[];
}

/** A circle as written in the debt list: its files from the importing one round, `a → b → a`. */
export function circleText(v: Pick<Violation, 'from' | 'cycle'>): string {
  return [v.from, ...(v.cycle ?? []).map((c) => c.name)].join(' → ');
}

/** The same circle whatever file it is read from. */
export function circleKey(text: string): string {
  return [...new Set(text.split(' → ').map((s) => s.trim()))].sort().join(' ');
}

export function judgeDeps(
  violations: readonly Violation[],
  cycles: readonly string[],
): { errors: string[]; debt: string[] } {
  const allowed = new Map(cycles.map((c) => [circleKey(c), c]));
  const used = new Set<string>();
  const errors: string[] = [];
  const debt: string[] = [];
  for (const v of violations) {
    if (v.rule.severity !== 'error') continue;
    if (v.rule.name === 'no-circular' && v.cycle) {
      const text = circleText(v);
      const key = circleKey(text);
      if (allowed.has(key)) {
        used.add(key);
        debt.push(`circle  ${text}`);
      } else errors.push(`${v.rule.name}: ${text}`);
    } else errors.push(`${v.rule.name}: ${v.from} → ${v.to}`);
  }
  for (const [key, text] of allowed) {
    if (!used.has(key)) {
      errors.push(`scripts/house-debt.json: cycles entry "${text}" is no longer needed: delete it`);
    }
  }
  return { errors, debt };
}

function main(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const debt = JSON.parse(readFileSync(join(root, 'scripts/house-debt.json'), 'utf8')) as {
    cycles?: string[];
  };
  const run = spawnSync(
    join(root, 'node_modules/.bin/depcruise'),
    ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  if (run.error) throw run.error;
  let result: { summary: { violations: Violation[]; totalCruised: number } };
  try {
    result = JSON.parse(run.stdout);
  } catch {
    process.stderr.write(run.stderr);
    throw new Error(`depcruise gave no JSON (exit ${run.status})`);
  }
  const verdict = judgeDeps(result.summary.violations, debt.cycles ?? []);
  if (verdict.debt.length > 0) {
    console.log(`import circles owed (scripts/house-debt.json), ${verdict.debt.length}:`);
    for (const line of verdict.debt) console.log(`  ${line}`);
  }
  if (verdict.errors.length > 0) {
    console.error(
      `import rules broken (.dependency-cruiser.cjs explains each rule), ${verdict.errors.length}:`,
    );
    for (const line of verdict.errors) console.error(`  ${line}`);
    process.exitCode = 1;
  } else {
    console.log(`import rules: ${result.summary.totalCruised} files, layers point down, no new circles`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
