// tests/sdk/modal.mjs - Modal's own JavaScript SDK (npm `modal`, pinned in
// package-lock.json) against tests/fakes/modal.py: every operation the
// modal provider uses, each check on what the SDK returned.  The SDK
// speaks gRPC (grpc-js) with its own copy of Modal's .proto files, so this
// proves the fake's wire format, auth metadata, command router and status
// codes, not only its logic.
//
// Environment: MODAL_SERVER_URL (the fake), MODAL_TOKEN_ID,
// MODAL_TOKEN_SECRET, SDK_RUN (a word unique to this run).  Prints TAP.
import { ModalClient } from 'modal'
import { is, ok, check, rejects, done } from './tap.mjs'

const run = process.env.SDK_RUN || String(process.pid)
const KEY = 'k+y%&= x'
const VAL = 'v+a%l&u=e%41'
const modal = new ModalClient({ logLevel: 'error' })

const app = await check('apps.fromName, made when missing (AppGetOrCreate)',
                        () => modal.apps.fromName('polysandbox-sdk', { createIfMissing: true }))
const image = modal.images.fromRegistry('python:3.12-slim')
const sb = app && await check('sandboxes.create: image, resources, timeout, blocked network, env, tags, workdir',
  () => modal.sandboxes.create(app, image, {
    timeoutMs: 120_000, blockNetwork: true, memoryMiB: 256, cpu: 0.5, workdir: '/workspace',
    env: { SBX_ENV: 'from-create' }, tags: { suite: run, [KEY]: VAL },
  }))
if (!sb) {
  done()
  process.exit()
}
ok(/^sb-[A-Za-z0-9]{22}$/.test(sb.sandboxId), 'a sandbox id of the V1 shape (sb- and 22 characters)')
ok(image.imageId && image.imageId.startsWith('im-'), 'the image was built (ImageGetOrCreate, ImageJoinStreaming)')

{
  // No exec env here: this SDK sends it as secret_sources, a field newer
  // than the .proto snapshot the provider and the fake speak (which carry
  // it in TaskExecStartRequest.env); see plugins/modal/README.md.
  const p = await check('exec through the command router (TaskExecStart)',
    () => sb.exec(['sh', '-c', 'echo "out $SBX_ENV"; pwd; echo err >&2; cat; exit 3']))
  await check('stdin written and closed (TaskExecStdinWrite)', async () => {
    await p.stdin.writeText('in\n')
    await p.stdin.close()
  })
  const [out, err] = await Promise.all([p.stdout.readText(), p.stderr.readText()])
  const lines = (out || '').split('\n')
  is([lines[0], lines[2]], ['out from-create', 'in'],
     'stdout (TaskExecStdioRead): the create-time env (an ephemeral secret), stdin echoed')
  ok(lines[1] && lines[1].endsWith('/workspace'), `run in the sandbox's workdir (${lines[1]})`)
  is(err, 'err\n', 'stderr on its own stream')
  is(await p.wait(), 3, 'wait (TaskExecWait): the exit code')
}
{
  const p = await sb.exec(['sh', '-c', 'printf "a\\000\\377b"'], { mode: 'binary' })
  const bytes = await p.stdout.readBytes()
  is(Array.from(bytes), [97, 0, 255, 98], 'binary output unchanged')
  is(await p.wait(), 0, 'exit 0')
}
{
  const p = await sb.exec(['sh', '-c', 'exec 3>&-; kill -TERM $$'])
  await p.stdout.readText()
  const code = await p.wait()
  ok(code === 143 || code === -15 || code === 15, `a signal's end is reported (${code})`)
}
{
  const p = await sb.exec(['sleep', '30'], { timeoutMs: 1000 })
  const t0 = Date.now()
  const code = await check('an exec past its timeoutMs ends', () => p.wait())
  ok(Date.now() - t0 < 10_000, `killed at its limit (${Date.now() - t0} ms)`)
  ok(code !== 0, `not a success (${code})`)
}

await check('setTags (SandboxTagsSet)', () => sb.setTags({ suite: run, [KEY]: VAL, extra: 'e' }))
is(await check('getTags (SandboxTagsGet)', () => sb.getTags()), { suite: run, [KEY]: VAL, extra: 'e' },
   'the tags come back whole')

async function listIds(tags) {
  const out = []
  for await (const s of modal.sandboxes.list({ tags })) out.push(s.sandboxId)
  return out
}
is(await check('list by tags (SandboxList)', () => listIds({ suite: run, [KEY]: VAL })), [sb.sandboxId],
   'the tag filter finds exactly the sandbox')
is(await check('list by a value no sandbox has', () => listIds({ suite: run, [KEY]: 'v' })), [],
   'no sandbox matches')

const again = await check('sandboxes.fromId', () => modal.sandboxes.fromId(sb.sandboxId))
{
  const p = again && await check('exec on the sandbox found by id', () => again.exec(['cat', '/etc/hostname']))
  ok(p && (await p.wait()) === 0, 'it runs (SandboxGetTaskId, TaskGetCommandRouterAccess)')
}
{
  const p = await sb.exec(['no-such-command-here'])
  await p.stderr.readText()
  is(await p.wait(), 127, 'a missing command: 127')
}

await check('terminate (SandboxTerminate)', () => sb.terminate())
const code = await check('wait on the terminated sandbox (SandboxWait)', () => sb.wait())
ok(typeof code === 'number', `it reports an end (${code})`)
is(await listIds({ suite: run }), [], 'a terminated sandbox is no longer listed')
await rejects('exec on a terminated sandbox fails',
              async () => { const p = await again.exec(['true']); await p.wait() }, () => true)

await rejects('a wrong token is refused (UNAUTHENTICATED)', async () => {
  const bad = new ModalClient({ tokenId: process.env.MODAL_TOKEN_ID, tokenSecret: 'as-wrong', logLevel: 'error' })
  await bad.apps.fromName('polysandbox-sdk', { createIfMissing: true })
}, (e) => /token/i.test(String(e && e.message)))
done()
