// Types of bin/build.js (plain JavaScript, so that the `kairos` command runs without a build step).
import type { BuildOptions } from 'esbuild';

export function sourceFiles(src: string): string[];
export function transpile(src: string, outdir: string, opts?: BuildOptions): Promise<void>;
export function cachedBuild(root: string): Promise<string | null>;
