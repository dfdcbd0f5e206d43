import { useEffect, useState } from 'react';

/**
 * A TEXT widget's Markdown as sanitised HTML, its renderer (marked, DOMPurify: markdown.ts) loaded with the first
 * one; undefined until then, '' when the renderer could not load. The embed's widget and the console's board both
 * draw text through it.
 */
export function useMarkdown(markdown: string): string | undefined {
  const [html, setHtml] = useState<string | undefined>(undefined);
  useEffect(() => {
    let live = true;
    import('./markdown.js').then(({ renderMarkdown }) => {
      if (live) setHtml(renderMarkdown(markdown));
    }, () => live && setHtml(''));
    return () => {
      live = false;
    };
  }, [markdown]);
  return html;
}
