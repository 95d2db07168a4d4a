// core/server/web/editor-none.js - served as /web/editor.js by a build
// without the code editor's bundle (configure found no node and npm, or
// --disable-editor): app.js sees no createEditor and keeps the textarea.
export const createEditor = null;
