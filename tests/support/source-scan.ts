/**
 * The architecture checks' reading of the source (tests/unit/architecture/): the .ts files under a folder with their
 * comments blanked (lines kept, so a hit's line number is its line), and the `file:line  text` of each match.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type SourceFile = { file: string; text: string };

function paths(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return paths(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The code of a file with its comments blanked (a line's `// …` tail, `/* … *\/` blocks; lines kept), so prose never counts. */
export function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, '')).replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Every .ts file under `folder` (relative to the repository), its path relative to the repository. */
export function sourceFiles(folder: string): SourceFile[] {
  return paths(join(ROOT, folder)).map((path) => ({ file: relative(ROOT, path), text: code(readFileSync(path, 'utf8')) }));
}

/** `file:line  text` of every match of `pattern` in `files`. */
export function hits(pattern: RegExp, files: readonly SourceFile[]): string[] {
  return files.flatMap(({ file, text }) =>
    [...text.matchAll(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))].map((match) => `${file}:${text.slice(0, match.index).split('\n').length}  ${match[0]}`),
  );
}
