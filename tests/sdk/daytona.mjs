// tests/sdk/daytona.mjs - Daytona's own TypeScript SDK (npm
// @daytonaio/sdk, pinned in package-lock.json) against
// tests/fakes/daytona.py: every operation the daytona provider uses, each
// check on what the SDK returned.
//
// Environment: DAYTONA_API_URL (the fake's /api), DAYTONA_API_KEY,
// SDK_RUN (a word unique to this run).  Prints TAP.
import { Daytona, DaytonaNotFoundError, DaytonaError } from '@daytonaio/sdk'
import { is, ok, check, rejects, done } from './tap.mjs'

const run = process.env.SDK_RUN || String(process.pid)
// The fake serves no socket.io event channel: state changes are polled,
// as the provider does too.
const daytona = new Daytona({ target: 'us', useDeprecatedPolling: true })

const labels = { suite: run, 'k+y%&= x': 'v+a%l&u=e "q"' }
const sb = await check('create with labels, env and lifecycle intervals', () => daytona.create({
  labels, envVars: { SBX_ENV: 'from create' }, autoStopInterval: 15, autoDeleteInterval: -1,
  networkBlockAll: false, language: 'python',
}, { timeout: 60 }))
// Deleted as soon as it stops (the provider's one-shot sandboxes).
const other = await check('create a second sandbox', () =>
  daytona.create({ labels: { suite: run, other: 'yes' }, autoDeleteInterval: 0 }))
if (!sb || !other) {
  done()
  process.exit()
}
is(sb.state, 'started', 'create waits until started')
is(sb.labels[Object.keys(labels)[1]], labels['k+y%&= x'], 'labels come back')
is(sb.labels['code-toolbox-language'], 'python', 'the SDK adds its language label')

async function list(query) {
  const out = []
  for await (const s of daytona.list(query)) out.push(s)
  return out
}
{
  const found = await check('list by labels', () => list({ labels }))
  is(found && found.map((s) => s.id), [sb.id], 'the label filter finds exactly that sandbox')
  const both = await check('list by the run label, one per page', () => list({ labels: { suite: run }, limit: 1 }))
  is(both && both.map((s) => s.id).sort(), [sb.id, other.id].sort(), 'pages followed through nextCursor')
  const none = await check('list by a value no sandbox has', () => list({ labels: { suite: run, other: 'no' } }))
  is(none, [], 'no sandbox matches')
}

const got = await check('get by id', () => daytona.get(sb.id))
is(got && [got.id, got.state], [sb.id, 'started'], 'get answers the same started sandbox')
const wd = await check('getWorkDir', () => got.getWorkDir())
ok(typeof wd === 'string' && wd.startsWith('/'), 'the work directory is absolute', wd)
const home = await check('getUserHomeDir', () => got.getUserHomeDir())
ok(typeof home === 'string' && home.startsWith('/'), 'the home directory is absolute', home)

{
  const p = got.process
  const r = await check('executeCommand through a shell', () =>
    p.executeCommand('echo "$SBX_ENV|$RUN_ENV|$(pwd)"; echo oops >&2; exit 3', undefined,
                     { RUN_ENV: 'per run' }, 30))
  is(r && r.exitCode, 3, 'the exit code')
  is(r && r.result.split('\n').slice(0, 1)[0].split('|').slice(0, 2), ['from create', 'per run'],
     'create-time env and envs both reach the command')
  ok(r && r.result.split('\n')[0].endsWith('|' + wd), 'runs in the work directory by default',
     r && r.result)
  ok(r && r.result.includes('oops\n'), 'stderr is merged into result', r && r.result)
  // Within the work directory: the fake's sandbox is a directory of the host.
  await check('make a directory', () => p.executeCommand('mkdir -p sub/dir'))
  const c = await check('executeCommand with a cwd', () => p.executeCommand('pwd', `${wd}/sub/dir`))
  is(c && c.exitCode === 0 && c.result, `${wd}/sub/dir\n`, 'cwd is honoured')
  const q = await check('quotes, pipes and expansions as a shell has them', () =>
    p.executeCommand(`printf '%s\\n' "a b" 'c  d' | wc -l; x=1; echo $((x + 1)) "$HOME" >/dev/null`))
  is(q && q.result, '2\n', 'one line per argument, the pipe, the arithmetic')
  const to = await rejects('a command past its timeout fails with a timeout error',
    () => p.executeCommand('sleep 30', undefined, undefined, 1),
    (e) => e instanceof DaytonaError && /time/i.test(e.name + e.message))
  is(to && to.statusCode, 408, 'the daemon answers 408')
  const big = await check('a command longer than one argument may be (stdin, not argv)', () =>
    p.executeCommand(`x='${'y'.repeat(200000)}'; echo \${#x}`))
  is(big && big.result, '200000\n', 'the whole command arrived')
}

{
  const code = await check('codeRun (python)', () =>
    got.process.codeRun('import os, sys\nprint("py", sys.argv[1:], os.environ.get("CR"))\nsys.exit(4)',
                        { argv: ['a1'], env: { CR: 'env' } }))
  is(code && code.exitCode, 4, 'codeRun exit code')
  is(code && code.result, "py ['a1'] env\n", 'codeRun output, argv and env')
}

{
  const path = `dir ${run}/a+b%.txt`
  await check('fs.uploadFile (bulk-upload)', () => got.fs.uploadFile(Buffer.from('first\nsecond\n'), path))
  const back = await check('fs.downloadFile (bulk-download)', () => got.fs.downloadFile(path))
  is(back && back.toString(), 'first\nsecond\n', 'the bytes come back')
  const bin = Buffer.from([0, 1, 2, 255, 13, 10])
  await check('upload binary to an absolute path', () => got.fs.uploadFile(bin, `${wd}/bin.dat`))
  const bb = await check('download it', () => got.fs.downloadFile(`${wd}/bin.dat`))
  is(bb && Array.from(bb), Array.from(bin), 'binary bytes survive')
  const seen = await check('the command sees the uploaded file', () =>
    got.process.executeCommand(`cat "dir ${run}/a+b%.txt"`))
  is(seen && seen.result, 'first\nsecond\n', 'same bytes through a command')
  await rejects('downloading a missing file throws', () => got.fs.downloadFile('nowhere.txt'),
                (e) => e instanceof DaytonaError && /not found|no such/i.test(e.message))

  // The single-file routes the provider uses, through the SDK's own
  // generated toolbox client (@daytona/toolbox-api-client): uploadFile
  // posts the multipart field "file" to /files/upload-v2, downloadFile
  // gets /files/download.
  const tb = got.fs.apiClient
  const up = await check('toolbox client uploadFile (multipart, upload-v2)', () =>
    tb.uploadFile(`${wd}/single/one.bin`, new Blob([bin])))
  is(up && up.data && [up.data.name, up.data.type], ['one.bin', 'file'], 'it answers {name, type}')
  const down = await check('toolbox client downloadFile (GET /files/download)', () =>
    tb.downloadFile(`${wd}/single/one.bin`, { responseType: 'arraybuffer' }))
  is(down && Array.from(Buffer.from(down.data)), Array.from(bin), 'the same bytes come back')
  const url = await check('getToolboxProxyUrl', () => daytona.sandboxApi.getToolboxProxyUrl(got.id))
  is(url && url.data.url, got.toolboxProxyUrl, 'the same toolbox address as the sandbox carries')
}

await check('stop', () => got.stop())
is(got.state, 'stopped', 'stopped')
await check('start again', () => got.start())
is(got.state, 'started', 'started again')
const after = await check('the files survived stop and start', () => got.fs.downloadFile(`${wd}/bin.dat`))
is(after && after.length, 6, 'the file is still there')

await check('stop the second (autoDeleteInterval 0)', () => other.stop())
ok(['stopped', 'destroyed'].includes(other.state), 'it stops', other.state)
await rejects('and is deleted then (get: DaytonaNotFoundError)', async () => {
  for (let i = 0; i < 50; i++) {
    await daytona.get(other.id)
    await new Promise((r) => setTimeout(r, 100))
  }
}, (e) => e instanceof DaytonaNotFoundError)
await check('delete', () => daytona.delete(got))
// Deletion is asynchronous: destroying for a while, then gone.
const gone = await check('list by the run label afterwards', async () => {
  let l = []
  for (let i = 0; i < 50; i++) {
    l = (await list({ labels: { suite: run } })).filter((s) => s.state !== 'destroying')
    if (!l.length) break
    await new Promise((r) => setTimeout(r, 100))
  }
  return l.map((s) => s.id)
})
is(gone, [], 'nothing left')
await rejects('get of a deleted sandbox throws DaytonaNotFoundError', async () => {
  for (let i = 0; i < 50; i++) {
    await daytona.get(sb.id)
    await new Promise((r) => setTimeout(r, 100))
  }
}, (e) => e instanceof DaytonaNotFoundError)
done()
