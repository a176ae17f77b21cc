/**
 * The SDK's examples type-check: every ```ts block of packages/sdk/README.md, and every ```ts block
 * of the main README.md that imports `@kairos/sdk`, compiled against the SDK's source, so a renamed
 * method, a wrong field or a changed document breaks the build, not the reader.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..', '..');
const dir = join(import.meta.dirname, `.docs-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sdkBlocks(file: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((b) => b.includes("'@kairos/sdk'"));
}

function diagnostics(files: string[]): string[] {
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    baseUrl: REPO,
    paths: { '@kairos/sdk': ['packages/sdk/src/index.ts'] },
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('the SDK examples', () => {
  it('in packages/sdk/README.md and README.md type-check against the SDK', { timeout: 120_000 }, () => {
    mkdirSync(dir, { recursive: true });
    const files: string[] = [];
    for (const doc of ['packages/sdk/README.md', 'README.md']) {
      sdkBlocks(doc).forEach((block, i) => {
        const file = join(dir, `${doc.replace(/\W/g, '_')}-${i}.mts`);
        writeFileSync(file, `${block}\nexport {};\n`);
        files.push(file);
      });
    }
    expect(files.length).toBeGreaterThanOrEqual(15);
    expect(diagnostics(files)).toEqual([]);
  });
});
