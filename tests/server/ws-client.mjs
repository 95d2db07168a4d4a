// tests/server/ws-client.mjs - one WebSocket session with the npm `ws`
// client (written elsewhere), for tests/server/websocket.sh.
//
// node ws-client.mjs NODE_MODULES URL OUT [STEP...]: connect to URL, then
// for each STEP: "@N" waits N ms, "@seen:TEXT" waits (20 s at most) for a
// received message containing TEXT, "@close" closes the socket, anything
// else is sent as a text message.  Everything received, the close code
// and reason, and an error if any, go to OUT as one JSON object:
// {"messages": [{"t": ms, "data": parsed-or-text}], "close": {"code",
// "reason", "t"}, "error": text, "status": HTTP status of a refused
// handshake}.  Ends at the close, or after 60 s.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

const [modules, url, out, ...steps] = process.argv.slice(2);
const require = createRequire(modules + '/');
const WebSocket = require('ws');
const t0 = Date.now();
const log = { messages: [], close: null, error: null, status: null };
const raw = [];
const done = () => { writeFileSync(out, JSON.stringify(log)); process.exit(0); };
const ws = new WebSocket(url);
setTimeout(done, 60000);
ws.on('unexpected-response', (req, res) => { log.status = res.statusCode; done(); });
// What the program wrote so far, for @seen: a line may come in pieces
// (Python's print writes each of its arguments).
let text = '';
ws.on('message', (m) => {
  let data = m.toString();
  raw.push(data);
  try { data = JSON.parse(data); } catch (e) { /* kept as text */ }
  if (data && typeof data === 'object' && typeof data.data === 'string') text += data.data;
  log.messages.push({ t: Date.now() - t0, data });
});
ws.on('close', (code, reason) => { log.close = { code, reason: reason.toString(), t: Date.now() - t0 }; done(); });
ws.on('error', (e) => { log.error = e.message; });
ws.on('open', async () => {
  for (const s of steps) {
    if (s === '@close') ws.close(1000, 'bye');
    else if (s.startsWith('@seen:')) {
      const want = s.slice(6);
      for (let i = 0; i < 1000 && !text.includes(want) && !raw.some((d) => d.includes(want)); i++)
        await new Promise((r) => setTimeout(r, 20));
    }
    else if (s.startsWith('@')) await new Promise((r) => setTimeout(r, Number(s.slice(1))));
    else ws.send(s);
  }
});
