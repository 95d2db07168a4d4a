// tests/web/playground.mjs - the Playground of polysandboxd's page in a real
// browser (Debian's chromium, headless, driven by puppeteer-core): the page
// and its headers, the token asked for, the template and provider lists,
// the code editor (CodeMirror, when the build has its bundle: typed into
// with the keyboard, Tab and Shift+Tab, line numbers, tokens marked by
// language and switched with the template, Ctrl+Z, Esc then Tab to leave
// it), a python run started with Ctrl+Enter whose output
// streams in before the run ends with stdout, stderr and bytes that are
// not UTF-8 told apart (the program sleeps between the streams: two
// pipes keep no order between them), its status, exit code and timings; a timeout shown
// as a timeout; limits and env sent with a run, a bad one shown beside
// its field; a run's artifacts (a PNG shown inline, each saved byte for
// byte, one over the cap listed with its reason); two providers side by side (local and evalnop, the fake
// that claims exit 0 without running) with what differs marked; no
// console error and no CSP violation on the way; the Sandboxes view (one
// made, two commands in it, a file uploaded and downloaded, its files
// listed with hostile names shown as text, a directory entered, a file of
// it downloaded and one uploaded into it, destroyed); the Evaluate view (a
// dataset and samples scored to the right pass@k, a verdict filter, a
// record; the job's report and records downloaded, byte for byte as the
// server has them; the same scored on local and evalnop side by side, the
// table's figures those of POST /v1/compare, its report saved as JSON and
// as the HTML page the route gives); the Status view with the server's
// figures refreshed live; the page opened again, its files revalidated
// from the cache (304s); the fallback, editor-none.js served in place of
// the bundle: the textarea, typed into, Ctrl+Enter running it.
//
// Environment: PS_BASE (http://127.0.0.1:PORT), PS_TOKEN, CHROMIUM (the
// browser), SHOTS (a directory for the screenshots), PS_EDITOR_NONE
// (core/server/web/editor-none.js).
import puppeteer from 'puppeteer-core'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ok, is, check, done } from './tap.mjs'

// The rows of a CSV text (RFC 4180: quoted fields may hold commas,
// quotes doubled and line breaks), read independently of the page's writer.
function csvRows(text) {
  const rows = []
  let row = [], field = '', quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++ } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') { row.push(field); field = '' }
    else if (c === '\r' && text[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++ }
    else field += c
  }
  return rows
}

const base = process.env.PS_BASE
const shots = process.env.SHOTS
mkdirSync(shots, { recursive: true })

// ---- the page over plain HTTP --------------------------------------------------

const r = await fetch(base + '/')
const csp = r.headers.get('content-security-policy') || ''
ok(r.status === 200 && r.headers.get('content-type').startsWith('text/html'),
   'GET / is the page (200, text/html), with no token', `${r.status} ${r.headers.get('content-type')}`)
ok(/script-src 'self'/.test(csp) && /default-src 'none'/.test(csp) && !/unsafe/.test(csp) &&
   r.headers.get('x-content-type-options') === 'nosniff',
   "a strict Content-Security-Policy (no 'unsafe-*') and nosniff", csp)
const missing = await fetch(base + '/web/nosuch.js')
is([missing.status, (await missing.json()).error.code], [404, 'not_found'],
   'a file the page does not have is a 404 in the error shape')

// [server] web = false: no page, the API still served
const off = process.env.PS_NOWEB_BASE
const offPage = await fetch(off + '/')
const offFile = await fetch(off + '/web/app.js')
const offApi = await fetch(off + '/v1/templates')
is([offPage.status, (await offPage.json()).error.code, offFile.status, offApi.status],
   [404, 'not_found', 404, 200],
   'with [server] web = false, / and /web/app.js are 404 and the API still answers')
await offFile.arrayBuffer()
await offApi.arrayBuffer()

// ---- the browser ------------------------------------------------------------------

const args = ['--headless=new', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
              '--disable-extensions', '--disable-background-networking', '--disable-sync',
              '--disable-dev-shm-usage', '--mute-audio', '--window-size=1280,900']
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox')   // root: no setuid sandbox
const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM, args,
                                         userDataDir: process.env.PROFILE, timeout: 30000 })
const problems = []
try {
  const page = await browser.newPage()
  await page.setViewport({ width: 1280, height: 900 })
  page.on('console', (m) => {
    // the 401s asked before a token, the 400 of the refused limit and the
    // 404 of the missing download are the test's own doing: expected
    const expected = /status of (401|400|404) /.test(m.text())
    if (m.type() === 'error' && !expected) problems.push('console: ' + m.text())
  })
  page.on('pageerror', (e) => problems.push('page error: ' + e.message))
  page.on('requestfailed', (q) => {
    const why = (q.failure() || {}).errorText
    // Chrome reports a streamed body that the page read to its end before
    // the loader's completion arrived as canceled (ERR_ABORTED): the result
    // checks below prove each run's stream whole, so only that is let pass
    // (on the streamed routes: /v1/run, a sandbox's exec and a job's
    // events).
    const path = new URL(q.url()).pathname
    if (why === 'net::ERR_ABORTED' && (path === '/v1/run' || path.endsWith('/exec') ||
                                       /^\/v1\/jobs\/[^/]+\/events$/.test(path))) return
    // the blob a download is saved from, once saved
    if (q.url().startsWith('blob:')) return
    problems.push(`request failed: ${q.url()}: ${why}`)
  })
  // a blob: URL of the page's own origin is a Blob the page made (an
  // image artifact shown inline), not a request off the server
  page.on('request', (q) => {
    if (!q.url().startsWith(base) && !q.url().startsWith('blob:' + base + '/'))
      problems.push('a request off the server: ' + q.url())
  })
  const runBodies = []      // the bodies of the page's POST /v1/run, in order
  page.on('request', (q) => {
    if (q.method() === 'POST' && new URL(q.url()).pathname === '/v1/run') runBodies.push(JSON.parse(q.postData()))
  })
  const text = (sel) => page.$eval(sel, (e) => e.textContent)
  const runsEnded = () => page.waitForFunction(() => !document.querySelector('.run .status.running') &&
                                               !document.getElementById('run').disabled, { timeout: 20000 })

  await page.goto(base + '/', { waitUntil: 'load' })

  // no token yet: the server's 401 asks for one
  await check('without a token the page asks for one and shows the server\'s words', async () => {
    await page.waitForFunction(() => getComputedStyle(document.getElementById('token-box')).display !== 'none' &&
                               /401/.test(document.getElementById('notice').textContent), { timeout: 5000 })
  })
  await page.type('#token', 'a-wrong-token-0123456789')
  await page.keyboard.press('Enter')
  await check('a bad token is refused: asked again', async () => {
    await page.waitForFunction(() => getComputedStyle(document.getElementById('token-box')).display !== 'none' &&
                               /401/.test(document.getElementById('notice').textContent), { timeout: 5000 })
  })
  await page.type('#token', process.env.PS_TOKEN)
  await page.keyboard.press('Enter')
  await check('the right token: the template and provider lists fill', async () => {
    await page.waitForFunction(() => document.querySelectorAll('#template option').length > 0 &&
                               document.querySelectorAll('#providers input').length > 0, { timeout: 5000 })
  })
  const lists = await page.evaluate(() => ({
    templates: [...document.querySelectorAll('#template option')].map((o) => o.value),
    providers: [...document.querySelectorAll('#providers input')].map((o) => o.value),
    checked: [...document.querySelectorAll('#providers input:checked')].map((o) => o.value),
    notice: getComputedStyle(document.getElementById('notice')).display === 'none',
    tokenBox: getComputedStyle(document.getElementById('token-box')).display === 'none',
    token: sessionStorage.getItem('polysandbox.token') !== null,
    url: location.href,
  }))
  ok(lists.templates.includes('python') && lists.templates.includes('sh'),
     'the templates of GET /v1/templates are offered', lists.templates)
  ok(lists.providers.includes('local') && lists.providers.includes('evalnop') &&
     JSON.stringify(lists.checked) === '["local"]',
     'the providers of GET /v1/providers are offered, the default one checked', JSON.stringify(lists))
  ok(lists.notice && lists.tokenBox && lists.token && !lists.url.includes(process.env.PS_TOKEN),
     'the notice and the token box are gone; the token is in session storage, not in the URL', JSON.stringify(lists))

  // the code editor: CodeMirror when this build has its bundle (a build
  // without one serves editor-none.js as editor.js), else the textarea
  await page.waitForFunction(() => document.body.dataset.editor, { timeout: 10000 })
  const cm = (await page.$eval('body', (b) => b.dataset.editor)) === 'codemirror'
  const bundled = !(await (await fetch(base + '/web/editor.js')).text()).includes('createEditor = null')
  ok(cm === bundled && (await page.$$('.code-editor')).length === (cm ? 1 : 0),
     `the page uses the code editor exactly when the build has its bundle (${cm ? 'CodeMirror' : 'textarea'})`,
     JSON.stringify({ cm, bundled }))
  const skipNoCm = cm ? '' : ' # SKIP this build has no code editor bundle (textarea)'
  const Ctrl = async (key) => {
    await page.keyboard.down('Control')
    await page.keyboard.press(key)
    await page.keyboard.up('Control')
  }
  const Shift = async (key) => {
    await page.keyboard.down('Shift')
    await page.keyboard.press(key)
    await page.keyboard.up('Shift')
  }
  // CodeMirror lives in the shadow root of div.code-editor (its styles
  // are constructed sheets there, which the CSP allows): ">>>" reaches in.
  const CM = '.code-editor >>> '
  // The editor's text, as shown (CodeMirror keeps a line per element).
  const shownCode = () => page.evaluate(() => {
    const root = document.querySelector('.code-editor')?.shadowRoot
    return root ? [...root.querySelectorAll('.cm-line')].map((l) => l.textContent).join('\n')
      : document.getElementById('code').value
  })
  // Replace the program with the keyboard: select all, delete, then the
  // text as one input (as a paste would: no auto-indent on the way).
  const setCode = async (text) => {
    await page.click(cm ? CM + '.cm-content' : '#code')
    await Ctrl('KeyA')
    await page.keyboard.press('Backspace')
    if (text) await page.keyboard.sendCharacter(text)
  }

  // the program, typed key by key: Tab indents the loop's body (in
  // CodeMirror, Enter after the colon already has: Shift+Tab dedents)
  await page.select('#template', 'python')
  await setCode('')
  await page.keyboard.type('import sys, time\nprint("out-1", flush=True)\ntime.sleep(1)\n' +
                           'print("err-1", file=sys.stderr, flush=True)\ntime.sleep(0.5)\nfor i in range(2):\n')
  if (cm) await Shift('Tab')
  await page.keyboard.press('Tab')
  await page.keyboard.type('print("loop", i)\n')
  if (cm) await Shift('Tab')
  await page.keyboard.type('sys.stdout.flush()\nsys.stdout.buffer.write(b"\\xff\\n")\nsys.exit(3)\n')
  const code = await shownCode()
  ok(code.includes('for i in range(2):\n    print("loop", i)\nsys.stdout.flush()\n'),
     'Tab in the editor indents (four spaces) and keeps the focus there', code)
  if (cm) {
    const marks = await page.evaluate(() => {
      const root = document.querySelector('.code-editor').shadowRoot
      return {
        numbers: [...root.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].map((g) => g.textContent),
        keywords: [...root.querySelectorAll('.cm-content .tok-keyword')].map((t) => t.textContent),
        strings: root.querySelectorAll('.cm-content .tok-string').length,
        styled: getComputedStyle(root.querySelector('.tok-keyword')).color !== getComputedStyle(root.querySelector('.cm-content')).color,
      }
    })
    ok(marks.numbers.includes('1') && marks.numbers.includes('11') &&
       ['import', 'for', 'in'].every((k) => marks.keywords.includes(k)) && marks.strings >= 3 && marks.styled,
       'CodeMirror: line numbers, and python\'s keywords and strings marked as tokens, in colour', JSON.stringify(marks))
    await page.screenshot({ path: `${shots}/playground-editor.png`, fullPage: true })
  } else {
    ok(true, 'CodeMirror: line numbers and highlighting' + skipNoCm)
  }

  // Ctrl+Enter runs; the first line shows while the program still sleeps
  await page.keyboard.down('Control')
  await page.keyboard.press('Enter')
  await page.keyboard.up('Control')
  await check('Ctrl+Enter runs: "out-1" shows while the status is still "running"', async () => {
    await page.waitForFunction(() => (document.querySelector('.run .output') || {}).textContent?.includes('out-1'),
                               { timeout: 15000 })
    const s = await text('.run .status')
    if (s !== 'running') throw new Error('status ' + s + ' when the first output arrived')
    return s
  })
  await runsEnded()
  ok(runBodies.length === 1 && runBodies[0].code === code + (code.endsWith('\n') ? '' : '\n') &&
     (await shownCode()) === code,
     'Ctrl+Enter in the editor ran the program once, as shown, and added no line to it',
     JSON.stringify({ runs: runBodies.length, sent: runBodies[0]?.code, code }))
  const shown = await page.evaluate(() => ({
    cards: document.querySelectorAll('.run').length,
    status: document.querySelector('.run .status').textContent,
    exit: document.querySelector('.run .exit').textContent,
    provider: document.querySelector('.run').dataset.provider,
    spans: [...document.querySelectorAll('.run .output > span')].map((s) => [s.className, s.textContent]),
    binary: [...document.querySelectorAll('.run .output .binary')].map((s) => s.textContent),
    figures: Object.fromEntries([...document.querySelectorAll('.run .figures dd')]
      .map((d) => [d.dataset.figure, d.textContent])),
    runEnabled: !document.getElementById('run').disabled,
  }))
  is([shown.cards, shown.status, shown.exit, shown.provider], [1, 'nonzero_exit', 'exit code 3', 'local'],
     'one card: the status, the exit code and the provider of the result are shown')
  const of = (cls) => shown.spans.filter(([c]) => c === cls).map(([, t]) => t).join('')
  is([of('stdout'), of('stderr')], ['out-1\nloop 0\nloop 1\n\\xff\n', 'err-1\n'],
     'stdout and stderr are told apart, each whole and in order')
  ok(shown.spans.length > 0 && shown.spans[0][0] === 'stdout' &&
     shown.spans.findIndex(([c]) => c === 'stderr') < shown.spans.findIndex(([, t]) => t.includes('loop')),
     'the chunks are in the order the program wrote them', JSON.stringify(shown.spans))
  is(shown.binary, ['\\xff'], 'a byte that is not UTF-8 is shown escaped and marked, not as markup')
  ok(['create', 'start', 'exec', 'total'].every((k) => /^[0-9.]+ ms$/.test(shown.figures[k] || '')) &&
     parseFloat(shown.figures.exec) >= 1000 && shown.runEnabled,
     'the timings are shown (exec >= the 1 s the program slept) and Run is enabled again',
     JSON.stringify(shown.figures))
  await page.screenshot({ path: `${shots}/playground-run.png`, fullPage: true })

  if (cm) {
    // undo: what was typed last goes, with Ctrl+Z
    await page.click(CM + '.cm-content')
    await Ctrl('End')
    await page.keyboard.type('undone = 1')
    const typed = await shownCode()
    await Ctrl('KeyZ')
    const undone = await shownCode()
    ok(typed.endsWith('undone = 1') && undone === code, 'CodeMirror: Ctrl+Z undoes what was typed',
       JSON.stringify({ typed, undone }))
    // Esc, then Tab, leaves the editor: the keyboard alone gets out
    await page.keyboard.press('Escape')
    await page.keyboard.press('Tab')
    const left = await page.evaluate(() => document.activeElement !== document.querySelector('.code-editor'))
    ok(left, 'CodeMirror: Esc, then Tab, moves the focus out of the editor')
    // the template's language: "let ... // c" is javascript, not python
    await setCode('let x = "s" // c\n')
    const asPython = await page.evaluate(() =>
      document.querySelector('.code-editor').shadowRoot.querySelectorAll('.tok-comment').length)
    const js = lists.templates.includes('node') ? 'node' : 'javascript'
    await page.select('#template', js)
    await check(`CodeMirror: the template ${js} highlights as javascript (a comment, a keyword), python did not`,
      async () => {
        await page.waitForFunction(() => {
          const root = document.querySelector('.code-editor').shadowRoot
          return root.querySelector('.tok-comment')?.textContent === '// c' &&
            root.querySelector('.tok-keyword')?.textContent === 'let'
        }, { timeout: 5000 })
        if (asPython !== 0) throw new Error(`python marked ${asPython} comments in it`)
      })
    await page.screenshot({ path: `${shots}/playground-editor-${js}.png`, fullPage: true })
    // every other template with a grammar: one of its keywords marked
    const KEYWORDS = [['c', 'int main(void) { return 0; }\n', 'return'],
                      ['cpp', 'int main() { return 0; }\n', 'return'],
                      ['go', 'package main\nfunc main() {}\n', 'func'],
                      ['java', 'class A { void f() { return; } }\n', 'class'],
                      ['rust', 'fn main() { let x = 1; }\n', 'fn'],
                      ['sh', 'if true; then echo hi; fi\n', 'if']].filter(([t]) => lists.templates.includes(t))
    const marked = []
    for (const [tpl, src, kw] of KEYWORDS) {
      await setCode(src)
      await page.select('#template', tpl)
      const got = await page.waitForFunction((k) => [...document.querySelector('.code-editor').shadowRoot
        .querySelectorAll('.tok-keyword')].some((t) => t.textContent === k), { timeout: 5000 }, kw)
        .then(() => true, () => false)
      marked.push([tpl, kw, got])
    }
    ok(marked.length >= 3 && marked.every(([, , got]) => got),
       `CodeMirror: each template's language marks its keywords (${marked.map(([t]) => t).join(', ')})`,
       JSON.stringify(marked))
    await page.select('#template', 'python')
  } else {
    for (const what of ['Ctrl+Z undoes', 'Esc, then Tab, leaves the editor', 'the template\'s language highlights',
                        'each template\'s language marks its keywords'])
      ok(true, 'CodeMirror: ' + what + skipNoCm)
  }

  // a timeout, by the page's own Timeout field and the Run button
  await setCode('import time\ntime.sleep(30)\n')
  await page.type('#timeout', '1s')
  await page.click('#run')
  await runsEnded()
  is(await text('.run .status'), 'timeout', 'a run past its timeout is shown as a timeout')
  await page.screenshot({ path: `${shots}/playground-timeout.png`, fullPage: true })

  // limits and env: a limit the server refuses is shown beside its field
  // in the server's words; an env line that is not KEY=VALUE is caught
  // before anything is sent; good ones go with the run
  await page.$eval('#timeout', (e) => { e.value = '' })
  await page.click('#settings summary')
  await page.type('#lim-memory', 'lots')
  await setCode('import os\nprint(os.environ["GREETING"])\n')
  await page.click('#run')
  await runsEnded()
  const refused = await page.evaluate(() => ({
    err: document.getElementById('lim-memory-error').textContent,
    invalid: document.getElementById('lim-memory').classList.contains('invalid'),
    card: document.querySelector('.run .output').textContent,
    status: document.querySelector('.run .status').textContent,
  }))
  ok(refused.invalid && refused.err.length > 0 && refused.status === 'error' &&
     refused.card.includes(`field 'limits.memory': ${refused.err}`) && refused.card.includes('HTTP 400'),
     'a memory limit the server refuses: its words beside the memory field, the field marked', JSON.stringify(refused))
  await page.screenshot({ path: `${shots}/playground-limit-refused.png`, fullPage: true })
  const sent = runBodies.length
  await page.$eval('#lim-memory', (e) => { e.value = '' })
  await page.type('#lim-memory', '256M')
  await page.type('#lim-pids', '64')
  await page.type('#env', 'GREETING=hello from env\nNOEQUALS')
  await page.click('#run')
  const envErr = await page.$eval('#env-error', (e) => e.textContent)
  is([envErr, runBodies.length, await page.$eval('#lim-memory-error', (e) => e.textContent)],
     ['line 2: "NOEQUALS" is not KEY=VALUE', sent, ''],
     'an env line that is not KEY=VALUE is shown beside env, nothing is sent, the old error is gone')
  await page.$eval('#env', (e) => { e.value = 'GREETING=hello from env\nX=a=b' })
  await page.click('#run')
  await runsEnded()
  const body = runBodies[runBodies.length - 1] || {}
  is([await text('.run .status'), await text('.run .output'), body.limits, body.env,
      await page.$eval('#env-error', (e) => e.textContent)],
     ['ok', 'hello from env\n', { memory: '256M', pids: '64' }, { GREETING: 'hello from env', X: 'a=b' }, ''],
     'good limits and env go with the run (POST /v1/run) and the program sees the env')
  await page.screenshot({ path: `${shots}/playground-limits-env.png`, fullPage: true })
  for (const id of ['lim-memory', 'lim-pids', 'env']) await page.$eval('#' + id, (e) => { e.value = '' })

  // downloads (Save buttons) land in $DOWNLOADS/saved
  const saved = join(process.env.DOWNLOADS, 'saved')
  mkdirSync(saved, { recursive: true })
  const cdp = await page.createCDPSession()
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: saved })
  const waitFile = async (name) => {
    const file = join(saved, name)
    for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    if (!existsSync(file)) throw new Error(`${name} was not saved`)
    await new Promise((resolve) => setTimeout(resolve, 100))   // a file that just appeared may still fill
    return readFileSync(file)
  }

  // a run's artifacts (the test template "art": artifacts = outputs,
  // artifacts_max_file = 1K): a real 1x1 PNG shown inline, a text file,
  // each saved by its button; the file over the cap listed with why
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
  await page.select('#template', 'art')
  await setCode(`mkdir outputs && echo ${PNG} | base64 -d >outputs/dot.png && echo hi >outputs/note.txt && ` +
                'head -c 2000 /dev/zero >outputs/big.bin\n')
  await page.click('#run')
  await runsEnded()
  const arts = await page.evaluate(() => [...document.querySelectorAll('.run .artifacts li')]
    .map((li) => [li.dataset.path, li.className, li.querySelector('.meta, .reason').textContent]))
  is(arts, [['dot.png', '', '70 B, image/png'], ['note.txt', '', '3 B, text/plain'],
            ['big.bin', 'left-out', 'left out (2.0 KiB): larger than artifacts_max_file (1024 bytes)']],
     'the artifacts are listed with their sizes and MIME types, the one over the cap with its reason')
  await check('the PNG artifact is shown inline from a blob: URL, and loads', async () => {
    await page.waitForFunction(() => {
      const img = document.querySelector('.run .artifacts li[data-path="dot.png"] img')
      return img && img.src.startsWith('blob:') && img.complete && img.naturalWidth > 0
    }, { timeout: 5000 })
    if (await page.$('.run .artifacts li[data-path="note.txt"] img')) throw new Error('the text file has an <img>')
  })
  await page.click('.run .artifacts li[data-path="dot.png"] button.save')
  await check('Save writes the PNG artifact\'s bytes', async () => {
    const got = await waitFile('dot.png')
    if (!got.equals(Buffer.from(PNG, 'base64'))) throw new Error('saved ' + got.toString('hex'))
  })
  await page.click('.run .artifacts li[data-path="note.txt"] button.save')
  await check('Save writes the text artifact\'s bytes', async () => {
    const got = await waitFile('note.txt')
    if (got.toString() !== 'hi\n') throw new Error('saved ' + JSON.stringify(got.toString()))
  })
  await page.screenshot({ path: `${shots}/playground-artifacts.png`, fullPage: true })
  await page.select('#template', 'python')

  // two providers side by side: evalnop claims exit 0 and prints nothing
  await setCode('print("same?")\nraise SystemExit(2)\n')
  await page.click('#providers input[value=evalnop]')
  await page.click('#run')
  await runsEnded()
  const side = await page.evaluate(() => ({
    cards: [...document.querySelectorAll('.run')].map((c) => [c.dataset.provider,
      c.querySelector('.status').textContent, c.querySelector('.output').textContent,
      c.classList.contains('differs'), c.querySelector('.diff').textContent]),
    compare: document.getElementById('compare').textContent,
    columns: getComputedStyle(document.getElementById('results')).gridTemplateColumns.split(' ').length,
  }))
  is(side.cards, [['local', 'nonzero_exit', 'same?\n', false, ''],
                  ['evalnop', 'ok', '', true, 'differs from local: status, exit, stdout']],
     'two providers: a card each, the second marked where it differs from the first')
  ok(side.compare === 'The providers differ in status, exit, stdout.' && side.columns === 2,
     'the difference is summed up and the cards stand side by side', JSON.stringify(side))
  await page.screenshot({ path: `${shots}/playground-side-by-side.png`, fullPage: true })

  // the Sandboxes view: one made, used twice in order, destroyed
  await page.evaluate(() => { location.hash = '#sandboxes' })
  await page.select('#sb-provider', 'local')
  await page.select('#sb-template', 'sh')
  await page.type('#sb-labels', 'who=web-test')
  await page.click('#sb-create')
  const box = await check('Create makes a sandbox: it is listed with its label and opened', async () => {
    await page.waitForFunction(() => [...document.querySelectorAll('#sandbox-table tr')]
      .some((tr) => tr.textContent.includes('who=web-test')) &&
      getComputedStyle(document.getElementById('sb-open')).display !== 'none', { timeout: 15000 })
    return page.$eval('#sandbox-table tr[data-id]', (tr) => tr.dataset.id)
  })
  await page.type('#sb-command', 'echo one > f; echo two >&2')
  await page.keyboard.press('Enter')
  await page.type('#sb-command', 'cat f; exit 4')
  await page.keyboard.press('Enter')
  await page.waitForFunction(() => document.querySelectorAll('#sb-log .run').length === 2 &&
                             !document.querySelector('#sb-log .status.running'), { timeout: 15000 })
  const log = await page.evaluate(() => [...document.querySelectorAll('#sb-log .run')].map((c) =>
    [c.querySelector('h2').textContent, c.querySelector('.status').textContent,
     c.querySelector('.output').textContent]))
  is(log, [['$ echo one > f; echo two >&2', 'ok', 'two\n'], ['$ cat f; exit 4', 'nonzero_exit', 'one\n']],
     'commands run in the sandbox in order, the second seeing the file the first wrote')

  // files: one uploaded (bytes that are not UTF-8 too), seen by a
  // command, downloaded back whole; a missing one is the server's 404
  const upload = join(process.env.DOWNLOADS, 'to-upload.bin')
  const payload = Buffer.from([0x68, 0x69, 0x00, 0xff, 0x0a, 0x80])
  writeFileSync(upload, payload)
  await (await page.$('#sb-file')).uploadFile(upload)
  await page.type('#sb-upload-path', 'data.bin')
  await page.click('#sb-upload')
  await check('Upload puts the file in the sandbox: the page says so, a command sees its 6 bytes', async () => {
    await page.waitForFunction(() => document.getElementById('sb-files-said').textContent === 'uploaded data.bin (6 B)',
                               { timeout: 10000 })
    await page.type('#sb-command', 'wc -c < data.bin')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.querySelectorAll('#sb-log .run').length === 3 &&
                               !document.querySelector('#sb-log .status.running'), { timeout: 15000 })
    const out = await page.$eval('#sb-log .run:last-child .output', (e) => e.textContent)
    if (out.trim() !== '6') throw new Error('wc -c said ' + JSON.stringify(out))
  })
  await page.type('#sb-download-path', 'data.bin')
  await page.click('#sb-download')
  await check('Download saves the sandbox\'s file, byte for byte', async () => {
    const file = join(saved, 'data.bin')
    for (let i = 0; i < 100 && !(existsSync(file) && readFileSync(file).length === payload.length); i++)
      await new Promise((resolve) => setTimeout(resolve, 100))
    const got = existsSync(file) ? readFileSync(file) : Buffer.alloc(0)
    if (!got.equals(payload)) throw new Error('saved ' + got.toString('hex'))
  })
  await page.$eval('#sb-download-path', (e) => { e.value = '' })
  await page.type('#sb-download-path', 'no/such/file')
  await page.click('#sb-download')
  await check('Download of a missing file shows the server\'s 404', async () => {
    await page.waitForFunction(() => /Download no\/such\/file: .*HTTP 404/.test(document.getElementById('notice').textContent),
                               { timeout: 5000 })
  })
  // the files of the sandbox: listed (hostile names as text), a
  // directory entered, a file there downloaded, one uploaded into it
  await page.type('#sb-command', 'mkdir -p "dir x/in" && printf q >"dir x/in/deep.txt" && ' +
                  'printf h >"<img id=pwn src=x onerror=alert(1)>" && printf n >"$(printf \'a\\nb\')"')
  await page.keyboard.press('Enter')
  const row = (name) => `#sb-files tr[data-name=${JSON.stringify(name)}]`
  const listed = await check('the listing shows the files: types, sizes, hostile names as text', async () => {
    await page.waitForFunction(() => document.querySelector('#sb-files tr[data-name="dir x"]'), { timeout: 15000 })
    return page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#sb-files tr[data-name]')].map((tr) =>
      [tr.dataset.name, [...tr.children].slice(0, 3).map((td) => td.textContent)])))
  })
  is(listed && [listed['data.bin'], listed['dir x'], listed["<img id=pwn src=x onerror=alert(1)>"], listed['a\nb']],
     [['data.bin', 'file', '6 B'], ['dir x/', 'directory', ''], ["<img id=pwn src=x onerror=alert(1)>", "file", "1 B"], ['a\\nb', 'file', '1 B']],
     'a file with its size, a directory, markup and a newline in names shown as text')
  ok(await page.evaluate(() => !document.getElementById('pwn')), 'a name\'s markup made no element')
  await page.$eval(`${row('dir x')} button.dir`, (b) => b.click())
  await page.waitForFunction(() => document.querySelector('#sb-files tr[data-name="in"]'), { timeout: 15000 })
  await page.$eval(`${row('in')} button.dir`, (b) => b.click())
  await check('a directory is entered by its name, two deep: the crumbs say where', async () => {
    await page.waitForFunction(() => document.querySelector('#sb-files tr[data-name="deep.txt"]') &&
      [...document.querySelectorAll('#sb-crumbs button')].map((b) => b.textContent).join('|') === 'work directory|dir x|in',
    { timeout: 15000 })
  })
  await page.$eval(`${row('deep.txt')} button.download`, (b) => b.click())
  await check('a file of the listing is downloaded by its button', async () => {
    const file = join(saved, 'deep.txt')
    for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    if (!existsSync(file) || readFileSync(file, 'utf8') !== 'q') throw new Error('not saved whole')
  })
  await page.$eval('#sb-upload-path', (e) => { e.value = '' })
  await page.type('#sb-upload-path', 'up.bin')
  await page.click('#sb-upload')
  await check('an upload lands in the directory shown, and is listed there', async () => {
    await page.waitForFunction(() => document.getElementById('sb-files-said').textContent === 'uploaded dir x/in/up.bin (6 B)' &&
      document.querySelector('#sb-files tr[data-name="up.bin"]'), { timeout: 15000 })
    const r = await fetch(`${base}/v1/sandboxes/${box}/files/dir%20x/in/up.bin?provider=local`,
      { headers: { 'Authorization': 'Bearer ' + process.env.PS_TOKEN } })
    if (!Buffer.from(await r.arrayBuffer()).equals(payload)) throw new Error('the server holds other bytes')
  })
  await page.screenshot({ path: `${shots}/sandboxes-files.png`, fullPage: true })
  await page.$eval('#sb-crumbs button[data-depth="0"]', (b) => b.click())
  await check('the first crumb goes back to the work directory', async () => {
    await page.waitForFunction(() => document.querySelector('#sb-files tr[data-name="data.bin"]') &&
      !document.querySelector('#sb-files tr[data-up]'), { timeout: 15000 })
  })
  await page.screenshot({ path: `${shots}/sandboxes.png`, fullPage: true })
  // Clicked from inside the page: the live list redraws its rows every
  // few seconds, and a handle taken before a redraw is detached by the
  // time puppeteer scrolls to it.
  await page.$eval(`#sandbox-table tr[data-id="${box}"] button.destroy`, (b) => b.click())
  await check('Destroy removes it: gone from the list and from the server', async () => {
    await page.waitForFunction((id) => !document.querySelector(`#sandbox-table tr[data-id="${id}"]`) &&
      getComputedStyle(document.getElementById('sb-open')).display === 'none', { timeout: 15000 }, box)
    const left = await (await fetch(base + '/v1/sandboxes?provider=local',
      { headers: { 'Authorization': 'Bearer ' + process.env.PS_TOKEN } })).json()
    if (!box || left.sandboxes.some((b) => b.id === box)) throw new Error('still listed: ' + JSON.stringify(left))
  })

  // the Evaluate view: a dataset and samples read from files, scored as a
  // job on local, followed to its end: pass@k right, items filtered by
  // verdict, a record one click away
  const dsFile = join(process.env.DOWNLOADS, 'ds.jsonl'), smpFile = join(process.env.DOWNLOADS, 'samples.jsonl')
  writeFileSync(dsFile, ['a', 'b'].map((t) => JSON.stringify({ task_id: t, language: 'sh', canonical_solution: 'exit 0' })).join('\n') + '\n')
  writeFileSync(smpFile, [['a', 'exit 0'], ['a', 'echo no; exit 1'], ['b', 'exit 0'], ['b', 'true']]
    .map(([t, c]) => JSON.stringify({ task_id: t, completion: c })).join('\n') + '\n')
  await page.evaluate(() => { location.hash = '#evaluate' })
  await (await page.$('#ev-dataset')).uploadFile(dsFile)
  await (await page.$('#ev-samples')).uploadFile(smpFile)
  await page.$$eval('#ev-providers input', (bs) => bs.forEach((b) => { b.checked = b.value === 'local' }))
  await page.$eval('#ev-k', (e) => { e.value = '' })
  await page.type('#ev-k', '1,2')
  await page.click('#ev-start')
  const evDone = await check('Start runs the job to its end: 4 samples, 3 passed', async () => {
    await page.waitForFunction(() => /^succeeded: 4 \/ 4 samples, 3 passed/.test(document.getElementById('ev-said').textContent),
                               { timeout: 30000 })
    return page.evaluate(() => ({
      passk: [...document.querySelectorAll('#ev-passk dd')].map((d) => [d.dataset.figure, d.textContent]),
      bar: [document.getElementById('ev-progress').value, document.getElementById('ev-progress').max],
      rows: document.querySelectorAll('#ev-items tr.item').length,
    }))
  })
  is(evDone, { passk: [['pass@1', '0.7500'], ['pass@2', '1.0000']], bar: [4, 4], rows: 4 },
     'pass@1 0.75 and pass@2 1 (a: 1 of 2, b: 2 of 2), the bar full, a row per sample')
  await page.select('#ev-filter', 'failed')
  await page.$eval('#ev-items tr.item:not([hidden])', (tr) => tr.click())
  const picked = await page.evaluate(() => ({
    shown: [...document.querySelectorAll('#ev-items tr.item')].filter((tr) => !tr.hidden).map((tr) => tr.firstChild.textContent),
    record: JSON.parse(document.getElementById('ev-record').textContent),
  }))
  is([picked.shown, picked.record.completion, picked.record.verdict], [['a'], 'echo no; exit 1', 'failed'],
     'the verdict filter leaves the failed sample; a click shows its record')
  await page.screenshot({ path: `${shots}/evaluate.png`, fullPage: true })

  // the job's files: its report as GET /v1/jobs/ID?limit=0 has it, its
  // records (every page of GET /v1/jobs/ID) as JSON Lines and CSV
  const auth = { headers: { 'Authorization': 'Bearer ' + process.env.PS_TOKEN } }
  const jobIds = () => page.$eval('#ev-job', (e) => e.dataset.jobs.split(' '))
  const [evId] = await jobIds()
  const records = (await (await fetch(`${base}/v1/jobs/${evId}?limit=1000`, auth)).json()).items.map((it) => it.record)
  await page.click(`#ev-downloads button[data-download=report][data-job="${evId}"]`)
  await check('the report downloaded is GET /v1/jobs/ID?limit=0, byte for byte', async () => {
    const got = await waitFile(`${evId}.json`)
    const want = Buffer.from(await (await fetch(`${base}/v1/jobs/${evId}?limit=0`, auth)).arrayBuffer())
    if (!got.equals(want) || JSON.parse(got).summary.pass_at_k['1'] !== 0.75)
      throw new Error(`saved ${got.length} bytes: ${got.toString().slice(0, 200)}`)
  })
  await page.click(`#ev-downloads button[data-download=jsonl][data-job="${evId}"]`)
  await check('the records downloaded as JSON Lines: one a line, in sample order, as the server has them', async () => {
    const lines = (await waitFile(`${evId}.jsonl`)).toString().split('\n')
    if (lines.pop() !== '' || JSON.stringify(lines.map((l) => JSON.parse(l))) !== JSON.stringify(records) ||
        records.map((r) => r.sample).join() !== '0,1,2,3')
      throw new Error(lines.join('\n'))
  })
  await page.click(`#ev-downloads button[data-download=csv][data-job="${evId}"]`)
  await check('the records downloaded as CSV: a header, a row a sample, quoted fields read back whole', async () => {
    const rows = csvRows((await waitFile(`${evId}.csv`)).toString())
    const head = rows.shift()
    const col = (name) => rows.map((r) => r[head.indexOf(name)])
    const want = (name) => records.map((r) => (r[name] == null ? '' : String(r[name])))
    if (head[0] !== 'task_id' || rows.length !== 4 ||
        ['task_id', 'sample', 'verdict', 'completion', 'output', 'reason'].some((n) => JSON.stringify(col(n)) !== JSON.stringify(want(n))))
      throw new Error(JSON.stringify([head, rows]))
  })

  // local and evalnop (which claims exit 0 without running): a job each,
  // then the report of POST /v1/compare as a table
  await page.$$eval('#ev-providers input', (bs) => bs.forEach((b) => { b.checked = ['local', 'evalnop'].includes(b.value) }))
  await page.click('#ev-start')
  await check('two providers: a job each to its end, then the providers side by side', async () => {
    await page.waitForFunction(() => !document.getElementById('ev-compare').hidden ||
                               !document.getElementById('notice').hidden, { timeout: 30000 })
    const said = await page.evaluate(() => [document.getElementById('ev-said').textContent,
                                            document.getElementById('notice').textContent])
    if (!/^succeeded: 8 \/ 8 samples, 7 passed/.test(said[0])) throw new Error(JSON.stringify(said))
  })
  const cmpIds = await jobIds()
  const cmp = await (await fetch(`${base}/v1/compare`, { method: 'POST', body: JSON.stringify({ jobs: cmpIds, k: [1, 2] }),
    headers: { ...auth.headers, 'Content-Type': 'application/json' } })).json()
  const shownCmp = await page.evaluate(() => ({
    table: [...document.querySelectorAll('#ev-compare-table tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
    said: document.getElementById('ev-compare-said').textContent,
    diffs: [...document.querySelectorAll('#ev-diffs tr[data-sample]')].map((tr) =>
      [tr.dataset.sample, ...[...tr.children].slice(1).map((td) => td.firstChild.textContent)]),
  }))
  const figures = (c) => [c.label, String(c.summary.samples), String(c.summary.counts.passed || 0),
    String(c.summary.graded - (c.summary.counts.passed || 0)), String(c.summary.counts.sandbox_error || 0),
    c.summary.pass_at_k['1'].toFixed(4), c.summary.pass_at_k['2'].toFixed(4)]
  is(shownCmp.table.map((r) => r.slice(0, 7)),
     [['provider', 'samples', 'passed', 'failed', 'errors', 'pass@1', 'pass@2'], ...(cmp.columns || []).map(figures)],
     'the table shows, per provider, the figures POST /v1/compare gives')
  is(shownCmp.table.slice(1).map((r) => r.slice(0, 7)),
     [['local', '4', '3', '1', '0', '0.7500', '1.0000'], ['evalnop', '4', '4', '0', '0', '1.0000', '1.0000']],
     'local: 3 of 4 passed, pass@1 0.75; evalnop (exit 0 claimed): 4 of 4')
  is(shownCmp.table[0].slice(8), ['latency p50', 'latency p90', 'CPU', 'peak memory', 'cost'],
     'the table also has latency p90, CPU, peak memory and cost')
  ok(/^[0-9.]+ ms$/.test(shownCmp.table[1][10]) && /^[0-9.]+ MiB$/.test(shownCmp.table[1][11]) &&
     shownCmp.table[1][10] === (cmp.columns[0].summary.usage.cpu_ns.total / 1e6).toFixed(1) + ' ms' &&
     shownCmp.table.slice(1).every((r) => r[12] === 'n/a'),
     'local\'s CPU and peak memory as its usage gives them; no price, so cost n/a (never 0)',
     JSON.stringify([shownCmp.table, cmp.columns?.map((c) => c.summary.usage)]))
  ok(shownCmp.table.slice(1).every((r) => /^[0-9.]+ s$/.test(r[7])) &&
     cmp.columns.every((c, i) => c.job.id === cmpIds[i] && c.results === '/v1/jobs/' + cmpIds[i]),
     'each provider\'s time is shown; each column is its job', JSON.stringify([shownCmp.table, cmp.columns?.map((c) => c.job)]))
  is([shownCmp.said, shownCmp.diffs],
     ['1 of 4 samples got different verdicts:',
      (cmp.differences || []).map((d) => [String(d.sample), d.task_id, d.verdicts.local, d.verdicts.evalnop])],
     'the sample whose verdicts differ is listed with each provider\'s verdict, as the report has it')
  is(shownCmp.diffs, [['1', 'a', 'failed', 'passed']], 'it is sample 1 (a, exit 1): failed on local, passed on evalnop')
  await page.click('#ev-downloads button[data-download=compare]')
  await check('the compare report downloaded is the one shown (the date aside)', async () => {
    const got = JSON.parse(await waitFile(`compare-${cmpIds[0]}.json`))
    got.meta.date = cmp.meta.date
    if (JSON.stringify(got) !== JSON.stringify(cmp)) throw new Error(JSON.stringify(got).slice(0, 300))
  })
  await page.click('#ev-downloads button[data-download=compare-html]')
  await check('the compare report downloaded as HTML is POST /v1/compare\'s page, byte for byte (the date aside)', async () => {
    const got = await waitFile(`compare-${cmpIds[0]}.html`)
    const want = Buffer.from(await (await fetch(`${base}/v1/compare`, { method: 'POST', body: JSON.stringify({ jobs: cmpIds, k: [1, 2] }),
      headers: { ...auth.headers, 'Content-Type': 'application/json', 'Accept': 'text/html' } })).arrayBuffer())
    const undated = (b) => b.toString('latin1').replace(/(<dd id="meta-date">)[^<]*/, '$1')
    if (!/^<!DOCTYPE html>/.test(got.toString()) || !got.toString().includes('<h1>PolySandbox comparison</h1>') ||
        undated(got) !== undated(want))
      throw new Error(`saved ${got.length} bytes, the route ${want.length}: ${got.toString().slice(0, 200)}`)
  })
  await page.screenshot({ path: `${shots}/evaluate-compare.png`, fullPage: true })

  // the Status view: the server's figures, refreshed while it is shown
  await page.evaluate(() => { location.hash = '#status' })
  await check('#status shows the Status view: the local provider ready, evalnop too', async () => {
    await page.waitForFunction(() =>
      document.querySelector('#provider-table tr[data-name=local] td[data-key=state]')?.textContent === 'ready' &&
      document.querySelector('#provider-table tr[data-name=evalnop] td[data-key=state]')?.textContent === 'ready',
    { timeout: 5000 })
  })
  const completed = () => page.$eval('#server-figures dd[data-figure=completed]', (d) => Number(d.textContent))
  const before = await completed()
  const views = await page.evaluate(() => ({
    playground: getComputedStyle(document.getElementById('playground')).display,
    current: document.querySelector('header nav a[aria-current]')?.textContent,
  }))
  ok(before >= 6 && views.playground === 'none' && views.current === 'Status',
     'the server\'s figures count the runs made (>= 6); the Playground is hidden, the nav says Status',
     JSON.stringify({ before, views }))
  const made = await fetch(base + '/v1/run', { method: 'POST', body: '{"argv":["true"]}',
    headers: { 'Authorization': 'Bearer ' + process.env.PS_TOKEN, 'Content-Type': 'application/json' } })
  await made.arrayBuffer()
  await check('a run made elsewhere shows in the figures within a refresh or two', async () => {
    await page.waitForFunction((n) =>
      Number(document.querySelector('#server-figures dd[data-figure=completed]').textContent) > n,
    { timeout: 6000 }, before)
  })
  await page.screenshot({ path: `${shots}/status.png`, fullPage: true })
  await page.evaluate(() => { location.hash = '#playground' })

  // a narrow window: still usable (the panes stack)
  await page.setViewport({ width: 420, height: 900 })
  const narrow = await page.evaluate(() => {
    const c = (document.querySelector('.code-editor') || document.getElementById('code')).getBoundingClientRect()
    const o = document.querySelector('.run .output').getBoundingClientRect()
    return { stacked: o.top >= c.bottom, fits: document.documentElement.scrollWidth <= 420 + 1 }
  })
  await page.screenshot({ path: `${shots}/playground-narrow.png`, fullPage: true })
  ok(narrow.stacked && narrow.fits, 'on a narrow window the panes stack and nothing overflows sideways',
     JSON.stringify(narrow))

  // the page again in a new tab: its files come from the browser's cache,
  // revalidated by their ETag (304s, no body moved)
  const again = await browser.newPage()
  await again.goto(base + '/', { waitUntil: 'load' })
  await again.waitForFunction(() => document.body.dataset.editor, { timeout: 10000 })
  const moved = await again.evaluate(() => performance.getEntriesByType('resource')
    .filter((r) => new URL(r.name).pathname.startsWith('/web/'))
    .map((r) => [new URL(r.name).pathname, r.transferSize, r.encodedBodySize]))
  const editorEntry = moved.find(([p]) => p === '/web/editor.js')
  ok(editorEntry && moved.length >= 4 && moved.every(([, t, b]) => t < 1500 && b > 0),
     'loaded again, every file of the page is revalidated from the cache (a 304: headers only moved)',
     JSON.stringify(moved))
  await again.close()

  // the fallback: a build without the editor's bundle serves
  // editor-none.js as editor.js; the page keeps the textarea and works
  const fb = await browser.newPage()
  await fb.setViewport({ width: 1280, height: 900 })
  fb.on('console', (m) => {
    if (m.type() === 'error' && !/status of 401 /.test(m.text())) problems.push('fallback console: ' + m.text())
  })
  fb.on('pageerror', (e) => problems.push('fallback page error: ' + e.message))
  const stub = readFileSync(process.env.PS_EDITOR_NONE, 'utf8')
  await fb.setRequestInterception(true)
  fb.on('request', (q) => {
    if (new URL(q.url()).pathname === '/web/editor.js')
      q.respond({ status: 200, contentType: 'text/javascript; charset=utf-8', body: stub })
    else q.continue()
  })
  await fb.goto(base + '/', { waitUntil: 'load' })
  await fb.waitForFunction(() => getComputedStyle(document.getElementById('token-box')).display !== 'none',
                           { timeout: 5000 })
  await fb.type('#token', process.env.PS_TOKEN)
  await fb.keyboard.press('Enter')
  await fb.waitForFunction(() => document.querySelectorAll('#template option').length > 0 &&
                           document.body.dataset.editor, { timeout: 10000 })
  await fb.select('#template', 'python')
  const plain = await fb.evaluate(() => ({ editor: document.body.dataset.editor,
    cm: document.querySelectorAll('.code-editor').length,
    visible: document.getElementById('code').getBoundingClientRect().height > 100 }))
  is(plain, { editor: 'textarea', cm: 0, visible: true },
     'without the bundle (editor-none.js served): the textarea, shown, and no CodeMirror')
  await fb.click('#code')
  await fb.keyboard.down('Control')
  await fb.keyboard.press('KeyA')
  await fb.keyboard.up('Control')
  await fb.keyboard.press('Backspace')
  await fb.keyboard.type('for i in range(2):\n')
  await fb.keyboard.press('Tab')
  await fb.keyboard.type('print("fallback", i)\n')
  await fb.keyboard.down('Control')
  await fb.keyboard.press('Enter')
  await fb.keyboard.up('Control')
  await check('without the bundle: typed in the textarea (Tab indents), Ctrl+Enter runs it', async () => {
    await fb.waitForFunction(() => document.querySelector('.run .status')?.textContent === 'ok' &&
                             document.querySelector('.run .output').textContent === 'fallback 0\nfallback 1\n',
                             { timeout: 20000 })
  })
  await fb.screenshot({ path: `${shots}/playground-fallback.png`, fullPage: true })
  await fb.close()
} catch (e) {
  ok(false, 'the browser session', e.stack || String(e))
} finally {
  await browser.close()
}
ok(problems.length === 0, 'no console error, CSP violation or request off the server', problems.join('\n'))
done()
