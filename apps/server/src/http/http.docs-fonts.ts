import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * The faces Scalar's API reference is drawn in, from npm packages (SIL Open Font License) instead of Scalar's
 * font CDN: Inter (variable weight, as Scalar's own) and JetBrains Mono 400. Scalar's theme names the families
 * `Inter` and `JetBrains Mono`.
 */
const FACES = [
  { stylesheet: '@fontsource-variable/inter/index.css', family: 'Inter Variable', as: 'Inter' },
  { stylesheet: '@fontsource/jetbrains-mono/index.css', family: 'JetBrains Mono', as: 'JetBrains Mono' },
];

/** The @font-face rules (each subset's woff2 under `urlPrefix`) and the font files by name, read once. */
export interface DocsFonts {
  css: string;
  files: ReadonlyMap<string, Buffer>;
}

/**
 * Reads the font packages' stylesheets, points their `src` at `urlPrefix` (woff2 only: every browser Scalar runs
 * in reads it) and loads the files they name.
 *
 * @example
 * const fonts = readDocsFonts('/docs/fonts/');
 * fonts.files.get('inter-latin-wght-normal.woff2'); // the bytes
 */
export function readDocsFonts(urlPrefix: string): DocsFonts {
  const files = new Map<string, Buffer>();
  const rules: string[] = [];
  for (const face of FACES) {
    const path = require.resolve(face.stylesheet);
    const css = readFileSync(path, 'utf8');
    for (const rule of css.match(/@font-face\s*{[^}]*}/g) ?? []) {
      const woff2 = /url\(\.\/files\/([\w.-]+\.woff2)\)/.exec(rule)?.[1];
      if (woff2 === undefined) continue;
      files.set(basename(woff2), readFileSync(join(dirname(path), 'files', woff2)));
      rules.push(rule
        .replace(`font-family: '${face.family}'`, `font-family: '${face.as}'`)
        .replace(/src:[^;]*;/, `src: url(${urlPrefix}${woff2}) format('woff2');`));
    }
  }
  return { css: rules.join('\n'), files };
}
