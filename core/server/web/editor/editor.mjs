// core/server/web/editor/editor.mjs - the Playground's code editor: the
// entry point that esbuild bundles, with the pinned CodeMirror 6 packages
// of package-lock.json, into ONE minified core/server/web/editor.js
// (core/server/web/local.mk).  app.js imports it and, when the build has
// no bundle (editor-none.js is served in its place), keeps the textarea.
//
// Tokens carry the stable classes of @lezer/highlight's classHighlighter
// (tok-keyword, tok-string...) rather than generated ones, so that the
// tests can name them; the theme below colours them.  The editor lives in
// a shadow root (see createEditor), out of app.css's reach: its look is
// all here.

import { EditorState, Compartment } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, highlightActiveLine,
         highlightActiveLineGutter, drawSelection } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { indentOnInput, bracketMatching, syntaxHighlighting, indentUnit,
         StreamLanguage } from "@codemirror/language";
import { classHighlighter } from "@lezer/highlight";
import { python } from "@codemirror/lang-python";
import { javascript } from "@codemirror/lang-javascript";
import { cpp } from "@codemirror/lang-cpp";
import { java } from "@codemirror/lang-java";
import { go } from "@codemirror/lang-go";
import { rust } from "@codemirror/lang-rust";
import { shell } from "@codemirror/legacy-modes/mode/shell";

// A template's name (etc/templates.d) to its language; others are plain text.
const LANGUAGES = {
  python: python,
  "python-data": python,
  javascript: javascript,
  node: javascript,
  typescript: () => javascript({ typescript: true }),
  c: cpp,
  cpp: cpp,
  java: java,
  go: go,
  rust: rust,
  sh: () => StreamLanguage.define(shell),
  bash: () => StreamLanguage.define(shell),
};

const theme = EditorView.theme({
  "&": { minHeight: "22rem", maxHeight: "70vh", border: "1px solid #d9dcdf", borderRadius: "4px",
         backgroundColor: "#fff", color: "#1d1f21", fontSize: "14px" },
  "&.cm-focused": { outline: "2px solid #2a62c9", outlineOffset: "1px" },
  ".cm-scroller": { fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
                    lineHeight: "1.45", minHeight: "22rem" },
  ".cm-gutters": { backgroundColor: "#f4f5f6", color: "#6a6f75", borderRight: "1px solid #d9dcdf" },
  ".cm-activeLine": { backgroundColor: "#f3f6fc" },
  ".cm-activeLineGutter": { backgroundColor: "#e8effb" },
  ".tok-keyword, .tok-operatorKeyword": { color: "#8b2bb9", fontWeight: "600" },
  ".tok-string, .tok-string2": { color: "#0f7b3c" },
  ".tok-number, .tok-bool, .tok-atom": { color: "#b35900" },
  ".tok-comment": { color: "#6a737d", fontStyle: "italic" },
  ".tok-variableName.tok-definition, .tok-function, .tok-className, .tok-typeName": { color: "#1f5fbf" },
  ".tok-propertyName": { color: "#005f87" },
  ".tok-meta": { color: "#7a5d00" },
  ".tok-invalid": { color: "#b3261e" },
});

function languageOf(template) {
  const make = LANGUAGES[template];
  return make ? make() : [];
}

// Replaces @textarea (hidden, kept in the page) with an editor holding its
// text, highlighted as @opts.template; Mod-Enter calls @opts.onRun.
// Returns { get(), set(text), setTemplate(name), focus(), view }.
export function createEditor(textarea, opts = {}) {
  const language = new Compartment();
  // In a shadow root, CodeMirror's styles go in as constructed style
  // sheets (adoptedStyleSheets), which the page's Content-Security-Policy
  // (style-src 'self', nothing inline) allows; in the document itself they
  // would be <style> elements, which it refuses.
  const host = document.createElement("div");
  host.className = "code-editor";
  const shadow = host.attachShadow({ mode: "open" });
  const view = new EditorView({
    root: shadow,
    parent: shadow,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        history(),
        indentOnInput(),
        bracketMatching(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        syntaxHighlighting(classHighlighter),
        theme,
        language.of(languageOf(opts.template)),
        // before the default keymap, whose Mod-Enter inserts a blank line
        keymap.of([{ key: "Mod-Enter", run: () => { if (opts.onRun) opts.onRun(); return true; } },
                   ...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.contentAttributes.of({ "aria-label": textarea.getAttribute("aria-label") || "Code",
                                          spellcheck: "false", autocapitalize: "off" }),
      ],
    }),
  });
  textarea.hidden = true;
  textarea.after(host);
  return {
    view,
    get: () => view.state.doc.toString(),
    set: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    setTemplate: (name) => view.dispatch({ effects: language.reconfigure(languageOf(name)) }),
    focus: () => view.focus(),
  };
}
