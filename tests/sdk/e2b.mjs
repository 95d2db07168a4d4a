// tests/sdk/e2b.mjs - E2B's own JavaScript SDK (npm `e2b`, pinned in
// package-lock.json) against tests/fakes/e2b.py: every operation the e2b
// provider uses, each check on what the SDK returned.
//
// Environment: E2B_API_URL and E2B_SANDBOX_URL (the fake's base URL),
// E2B_API_KEY, SDK_RUN (a word unique to this run).  Prints TAP.
import { Sandbox, CommandExitError, NotFoundError, FileNotFoundError } from 'e2b'
import { is, ok, check, rejects, done } from './tap.mjs'

const run = process.env.SDK_RUN || String(process.pid)
// A label whose key and value hold every character the list filter must
// carry through its encodings: + % & = and a space.
const KEY = 'k+y%&= x'
const VAL = 'v+a%l&u=e%41'
const opts = { timeoutMs: 120_000, requestTimeoutMs: 30_000 }

const a = await check('create with metadata and envs', () => Sandbox.create('base', {
  ...opts, metadata: { suite: run, [KEY]: VAL, plain: 'x' }, envs: { SBX_ENV: 'from-create' },
}))
// Differs from a's label only by a space for a '+': a filter decoded once
// too often (or too few times) picks the wrong one.
const b = await check('create a second sandbox', () => Sandbox.create('base', {
  ...opts, metadata: { suite: run, [KEY]: VAL.replace('+', ' ') },
}))
if (!a || !b) {
  done()
  process.exit()
}
ok(/^[a-z0-9]+$/.test(a.sandboxId) && a.sandboxId !== b.sandboxId, 'two distinct sandbox ids')

async function listIds(metadata) {
  const p = Sandbox.list({ ...opts, query: { metadata } })
  const out = []
  while (p.hasNext) out.push(...await p.nextItems())
  return out
}
{
  const found = await check('list by a label holding + % & = and a space',
                            () => listIds({ suite: run, [KEY]: VAL }))
  is(found && found.map((s) => s.sandboxId), [a.sandboxId], 'the filter finds exactly that sandbox')
  is(found && found[0] && found[0].metadata, { suite: run, [KEY]: VAL, plain: 'x' }, 'its metadata comes back whole')
  const both = await check('list by the run label', () => listIds({ suite: run }))
  is(both && both.map((s) => s.sandboxId).sort(), [a.sandboxId, b.sandboxId].sort(),
     'the run label finds both sandboxes')
  const none = await check('list by a value no sandbox has', () => listIds({ suite: run, [KEY]: 'v' }))
  is(none, [], 'no sandbox matches')
}

const c = await check('connect to the first sandbox', () => Sandbox.connect(a.sandboxId, opts))
is(c && c.sandboxId, a.sandboxId, 'connect answers the same sandbox')
const info = await check('getInfo', () => c.getInfo())
is(info && info.metadata && info.metadata[KEY], VAL, 'getInfo carries the label')
is(info && info.state, 'running', 'getInfo says running')

{
  const r = await check('run a command', () => c.commands.run('printf "%s|" hello "$HOME"'))
  is(r && r.exitCode, 0, 'exit code 0')
  is(r && r.stdout.split('|')[0], 'hello', 'stdout')
  ok(r && r.stdout.split('|')[1].endsWith('/home/user'), 'HOME is the sandbox user home')
  const e = await rejects('a non-zero exit throws CommandExitError',
    () => c.commands.run('echo "$SBX_ENV $RUN_ENV"; echo oops >&2; exit 3', { envs: { RUN_ENV: 'per-run' } }),
    (err) => err instanceof CommandExitError)
  is(e && e.exitCode, 3, 'its exit code')
  is(e && e.stdout, 'from-create per-run\n', 'create-time and per-run envs both reach the command')
  is(e && e.stderr, 'oops\n', 'stderr apart from stdout')
  const cwd = await check('run with a working directory', () => c.commands.run('pwd', { cwd: '/tmp' }))
  ok(cwd && cwd.stdout.trim().endsWith('/tmp'), 'cwd is honoured', cwd && cwd.stdout)
}

{
  const h = await check('start a background command with stdin', () =>
    c.commands.run('cat; echo " done"', { background: true, stdin: true }))
  ok(h && h.pid > 0, 'it has a pid')
  await check('sendStdin', () => h.sendStdin('abc'))
  await check('closeStdin', () => h.closeStdin())
  const r = await check('wait for it', () => h.wait())
  is(r && r.stdout, 'abc done\n', 'the command read what was sent, then EOF')

  const late = await check('start a command that answers later', () =>
    c.commands.run('sleep 1; echo late', { background: true }))
  const again = await check('connect to it by pid', () => c.commands.connect(late.pid))
  const lr = await check('wait through the second connection', () => again.wait())
  is(lr && lr.stdout, 'late\n', 'the output arrives through the reconnection')

  const sl = await check('start a long command', () => c.commands.run('sleep 60', { background: true }))
  const killed = await check('kill it (SendSignal)', () => sl.kill())
  is(killed, true, 'kill says the process was found')
  const kr = await rejects('waiting on a killed command throws', () => sl.wait(),
                           (err) => err instanceof CommandExitError)
  ok(kr && kr.exitCode !== 0, 'a killed command has a non-zero exit code', kr && kr.exitCode)
  is(await c.commands.kill(sl.pid), false, 'killing it again finds no process')
}

{
  const path = `/home/user/dir ${run}/a+b%.txt`
  const w = await check('files.write', () => c.files.write(path, 'first line\nsecond\n'))
  is(w && w.path, path, 'write answers the path')
  is(await check('files.read', () => c.files.read(path)), 'first line\nsecond\n', 'read gives the text back')
  const bytes = new Uint8Array([0, 1, 2, 255, 10, 13])
  await check('files.write binary', () => c.files.write('/tmp/bin', bytes.buffer))
  const rb = await check('files.read as bytes', () => c.files.read('/tmp/bin', { format: 'bytes' }))
  is(rb && Array.from(rb), Array.from(bytes), 'bytes survive the round trip')
  const st = await check('files.getInfo (Stat)', () => c.files.getInfo(path))
  is(st && [st.type, st.size, st.name], ['file', 18, 'a+b%.txt'], 'getInfo: type, size, name')
  is(await c.files.exists('/home/user/nowhere'), false, 'exists is false for a missing path')
  await rejects('reading a missing file throws FileNotFoundError',
                () => c.files.read('/home/user/nowhere'),
                (err) => err instanceof FileNotFoundError || err instanceof NotFoundError)
  // Home-relative: the fake's sandbox root is a directory of the host.
  const seen = await check('the command sees the written file',
                           () => c.commands.run(`cat "$HOME/dir ${run}/a+b%.txt"`))
  is(seen && seen.stdout, 'first line\nsecond\n', 'same bytes through a command')
}

await check('setTimeout', () => c.setTimeout(60_000))
await check('kill through the instance', () => c.kill())
is(await Sandbox.kill(b.sandboxId, opts), true, 'Sandbox.kill of the second answers true')
is(await Sandbox.kill(a.sandboxId, opts), false, 'killing a gone sandbox answers false')
is(await listIds({ suite: run }), [], 'the run label lists nothing afterwards')
await rejects('connecting to a gone sandbox throws', () => Sandbox.connect(a.sandboxId, opts),
              (err) => /not found|doesn't exist/i.test(err.message))
done()
