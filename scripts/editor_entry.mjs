// The exercises' editor: CodeMirror 6 with Python highlighting, bundled by esbuild into the site's
// assets/js/editor.js (scripts/editor_bundle.py). Only what an exercise needs: line numbers (errors
// name lines), history, bracket matching, auto-indent, Python, and Tab to indent, which CodeMirror
// lets go of after Escape (its documented way out of the editor: Escape, then Tab).
export { EditorView, Decoration, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection } from "@codemirror/view";
export { EditorState, StateField, StateEffect } from "@codemirror/state";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { bracketMatching, indentOnInput, syntaxHighlighting, defaultHighlightStyle, indentUnit } from "@codemirror/language";
export { python } from "@codemirror/lang-python";
export { classHighlighter } from "@lezer/highlight";
