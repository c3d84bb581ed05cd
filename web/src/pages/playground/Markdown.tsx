import 'highlight.js/styles/github.css';
/**
 * Markdown to sanitised HTML: marked renders, highlight.js colours code, KaTeX sets math, DOMPurify removes
 * anything active. Math (`$…$`, `\(…\)` inline; `$$…$$`, `\[…\]` as a block) is rendered as MathML, which
 * Chromium, Firefox and Safari lay out themselves: no inline styles, so the app's CSP stays as it is.
 * Every code block has a Copy button (one listener on the message, not one per block).
 */
import { useMemo, type MouseEvent } from 'react';
import { Marked, type TokenizerAndRendererExtension } from 'marked';
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/common';
import katex from 'katex';

const math = (tex: string, displayMode: boolean) => katex.renderToString(tex, { output: 'mathml', throwOnError: false, displayMode });

const blockMath: TokenizerAndRendererExtension = {
  name: 'blockMath',
  level: 'block',
  start: (src) => src.match(/^ {0,3}(\$\$|\\\[)/m)?.index,
  tokenizer(src) {
    const match = /^ {0,3}(?:\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\])[ \t]*(?:\n|$)/.exec(src);
    if (match) return { type: 'blockMath', raw: match[0], text: (match[1] ?? match[2]).trim() };
    return undefined;
  },
  renderer: (token) => `<div class="math-block">${math(token.text as string, true)}</div>\n`,
};

const inlineMath: TokenizerAndRendererExtension = {
  name: 'inlineMath',
  level: 'inline',
  start: (src) => src.match(/\$|\\\(/)?.index,
  tokenizer(src) {
    // `$x$` with no space inside its edges (so "costs $5 and $6" stays text), or `\(x\)`.
    const match = /^\$(?!\s)((?:\\.|[^$\\\n])+?)(?<!\s)\$(?!\d)|^\\\(([\s\S]+?)\\\)/.exec(src);
    if (match) return { type: 'inlineMath', raw: match[0], text: match[1] ?? match[2] };
    return undefined;
  },
  renderer: (token) => math(token.text as string, false),
};

const marked = new Marked({
  gfm: true,
  extensions: [blockMath, inlineMath],
  renderer: {
    code({ text, lang }) {
      const language = lang && hljs.getLanguage(lang) ? lang : null;
      const html = language ? hljs.highlight(text, { language }).value : hljs.highlightAuto(text).value;
      return `<div class="code-block"><button type="button" class="copy-code small secondary">Copy</button><pre><code class="hljs${language ? ` language-${language}` : ''}">${html}</code></pre></div>`;
    },
  },
});

/** Copies the code block whose Copy button was clicked, and says so on the button for a moment. */
function copyCode(e: MouseEvent<HTMLDivElement>) {
  const button = (e.target as HTMLElement).closest('button.copy-code');
  const code = button?.parentElement?.querySelector('pre')?.textContent;
  if (!button || code === undefined || code === null) return;
  void navigator.clipboard?.writeText(code).then(() => {
    button.textContent = 'Copied';
    setTimeout(() => { button.textContent = 'Copy'; }, 1500);
  });
}

export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => DOMPurify.sanitize(marked.parse(text, { async: false }) as string), [text]);
  return <div className="markdown" onClick={copyCode} dangerouslySetInnerHTML={{ __html: html }} />;
}
