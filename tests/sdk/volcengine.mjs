// tests/sdk/volcengine.mjs - Volcengine's own Node SDK (npm
// `@volcengine/openapi`, pinned in package-lock.json) against
// tests/fakes/volcengine.py: every veFaaS action the volcengine provider
// uses through the SDK's Service (its signer, its HTTP client), then
// requests its Signer signed sent as they are (accepted) and tampered
// with (refused), as the OpenAPI gateway refuses them.
//
// Environment: VOLC_HOST (127.0.0.1:PORT of the fake), VOLC_AK, VOLC_SK,
// VOLC_TOKEN (the STS token the fake wants), VOLC_FUNCTION, SDK_RUN.
import openapi from '@volcengine/openapi'
import { is, ok, check, done } from './tap.mjs'

const { Service, Signer } = openapi
const host = process.env.VOLC_HOST
const creds = { accessKeyId: process.env.VOLC_AK, secretKey: process.env.VOLC_SK,
                sessionToken: process.env.VOLC_TOKEN }
const fn = process.env.VOLC_FUNCTION
const run = process.env.SDK_RUN || String(process.pid)

const svc = new Service({ host, protocol: 'http:', region: 'cn-beijing', serviceName: 'vefaas',
                          defaultVersion: '2024-06-06', ...creds })
const api = (action) => svc.createJSONAPI(action)
const errorOf = (r) => r && r.ResponseMetadata && r.ResponseMetadata.Error

const made = await check('CreateSandbox with Metadata, Envs, Timeout and NetworkRules',
  () => api('CreateSandbox')({ FunctionId: fn, Timeout: 5, Metadata: { suite: run, 'k.y': 'v=1 +' },
                               Envs: [{ Key: 'SBX_ENV', Value: 'from-create' }],
                               NetworkRules: { AllowEgressAccess: true } }))
is(errorOf(made), undefined, 'the gateway accepted the SDK\'s signature')
const id = made && made.Result && made.Result.SandboxId
ok(typeof id === 'string' && /^[A-Za-z0-9._-]+$/.test(id), 'Result.SandboxId is an id', made)
is(made && made.ResponseMetadata.Action, 'CreateSandbox', 'ResponseMetadata names the action')
const second = await check('CreateSandbox a second one', () => api('CreateSandbox')({
  FunctionId: fn, Timeout: 5, Metadata: { suite: run } }))

{
  const r = await check('ListSandboxes by Metadata', () => api('ListSandboxes')({
    FunctionId: fn, Metadata: { suite: run, 'k.y': 'v=1 +' }, PageNumber: 1, PageSize: 100 }))
  const l = r && r.Result
  is(l && l.Sandboxes.map((s) => s.Id), [id], 'the filter finds exactly that sandbox')
  is(l && l.Sandboxes[0] && l.Sandboxes[0].Metadata, { suite: run, 'k.y': 'v=1 +' },
     'its Metadata comes back whole')
  ok(l && !isNaN(Date.parse(l.Sandboxes[0].CreatedAt)), 'CreatedAt is a date', l)
  const both = await check('ListSandboxes by the run label, a page of one',
    () => api('ListSandboxes')({ FunctionId: fn, Metadata: { suite: run }, PageNumber: 2,
                                 PageSize: 1 }))
  is(both && [both.Result.Total, both.Result.Sandboxes.length], [2, 1],
     'Total counts both, the second page holds one')
}
{
  const r = await check('DescribeSandbox', () => api('DescribeSandbox')({ FunctionId: fn,
                                                                          SandboxId: id }))
  is(r && r.Result.Id, id, 'it describes the same sandbox')
  ok(r && r.Result.MetadataList.some((m) => m.MetaKey === 'suite' && m.MetaValue === run),
     'MetadataList carries the label', r)
  const t = await check('SetSandboxTimeout', () => api('SetSandboxTimeout')({
    FunctionId: fn, SandboxId: id, Timeout: 7 }))
  ok(t && !errorOf(t) && !isNaN(Date.parse(t.Result.ExpireAt)), 'it answers ExpireAt', t)
}
{
  const r = await check('DescribeSandbox of another function', () => api('DescribeSandbox')({
    FunctionId: 'nobody', SandboxId: id }))
  is(errorOf(r) && errorOf(r).Code, 'FunctionNotFound', 'FunctionNotFound')
}
for (const s of [id, second && second.Result && second.Result.SandboxId]) {
  const r = await check('KillSandbox', () => api('KillSandbox')({ FunctionId: fn, SandboxId: s }))
  is(errorOf(r), undefined, 'killed')
}
{
  const r = await check('DescribeSandbox of a killed sandbox', () => api('DescribeSandbox')({
    FunctionId: fn, SandboxId: id }))
  is(errorOf(r) && errorOf(r).Code, 'SandboxNotFound', 'SandboxNotFound')
}

// The Signer alone: a request it signs, sent as signed or tampered with.
function signed(action, body, opts = {}) {
  const req = { region: opts.region || 'cn-beijing', method: 'POST', pathname: '/',
                params: { Action: action, Version: '2024-06-06' },
                headers: { 'Content-Type': 'application/json', ...(opts.headers || {}) },
                body: JSON.stringify(body) }
  new Signer(req, opts.service || 'vefaas').addAuthorization(opts.creds || creds, opts.date)
  return req
}
async function send(req, change = {}) {
  const params = change.params || req.params
  const q = Object.keys(params).map((k) => `${k}=${encodeURIComponent(params[k])}`).join('&')
  const r = await fetch(`http://${host}/?${q}`, { method: 'POST', headers: change.headers ||
                                                  req.headers, body: change.body ?? req.body })
  return { status: r.status, body: await r.json() }
}
const codeOf = (r) => [r.status, errorOf(r.body) ? errorOf(r.body).Code : undefined]
const list = { FunctionId: fn, Metadata: { suite: run } }
{
  const req = signed('ListSandboxes', list)
  ok(/^HMAC-SHA256 Credential=\S+\/\d{8}\/cn-beijing\/vefaas\/request, SignedHeaders=\S*x-date\S*, Signature=[0-9a-f]{64}$/
       .test(req.headers.Authorization), 'the Signer writes the scheme\'s Authorization',
     req.headers.Authorization)
  is(codeOf(await send(req)), [200, undefined], 'a request the Signer signed is accepted as sent')
  is(codeOf(await send(req, { body: JSON.stringify({ FunctionId: fn }) })),
     [403, 'SignatureDoesNotMatch'], 'its body changed (X-Content-Sha256 left): refused')
  is(codeOf(await send(req, { params: { Action: 'KillSandbox', Version: '2024-06-06' } })),
     [403, 'SignatureDoesNotMatch'], 'its Action changed: refused')
  const d = req.headers['X-Date']
  const later = d.slice(0, 13) + String((Number(d.slice(13, 15)) + 1) % 60).padStart(2, '0') + 'Z'
  is(codeOf(await send(req, { headers: { ...req.headers, 'X-Date': later } })),
     [403, 'SignatureDoesNotMatch'], 'its X-Date changed by a second: refused')
  const sig = req.headers.Authorization
  const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0')
  is(codeOf(await send(req, { headers: { ...req.headers, Authorization: flipped } })),
     [403, 'SignatureDoesNotMatch'], 'one digit of its signature changed: refused')
  const noToken = { ...req.headers }
  delete noToken['X-Security-Token']
  is(codeOf(await send(req, { headers: noToken })), [401, 'InvalidSecretToken'],
     'its security token left out: refused')
}
{
  const spaced = signed('ListSandboxes', list, { headers: { 'X-Note': '  a   b  ' } })
  is(codeOf(await send(spaced)), [200, undefined],
     'a signed header with runs of white space: accepted (values are collapsed the same way)')
  is(codeOf(await send(signed('ListSandboxes', list, { creds: { ...creds, secretKey: 'wrong' } }))),
     [403, 'SignatureDoesNotMatch'], 'signed with a wrong secret key: refused')
  is(codeOf(await send(signed('ListSandboxes', list, { creds: { ...creds, accessKeyId: 'AKLTnobody' } }))),
     [401, 'InvalidAccessKey'], 'signed with an unknown access key: refused')
  is(codeOf(await send(signed('ListSandboxes', list, { region: 'cn-shanghai' }))),
     [403, 'SignatureDoesNotMatch'], 'signed for another region: refused')
  is(codeOf(await send(signed('ListSandboxes', list, { service: 'iam' }))),
     [403, 'SignatureDoesNotMatch'], 'signed for another service: refused')
  is(codeOf(await send(signed('ListSandboxes', list, { date: new Date(Date.now() - 3600e3) }))),
     [401, 'InvalidTimestamp'], 'signed an hour ago: refused')
  is(codeOf(await send(signed('ListSandboxes', list, { date: new Date(Date.now() - 60e3) }))),
     [200, undefined], 'signed a minute ago: accepted')
}
done()
