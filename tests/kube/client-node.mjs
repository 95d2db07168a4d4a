// tests/kube/client-node.mjs - the Kubernetes fake as npm's
// @kubernetes/client-node sees it (pinned in tests/kube/node/package-lock.json):
// create, list with a selector, watch, exec with stdin, stdout, stderr and
// the V1Status of the status channel, errors, delete.  Prints TAP.  Run by
// client-node.sh from a directory where `npm ci` installed the package.
import * as k8s from '@kubernetes/client-node';
import { PassThrough, Writable } from 'node:stream';

let n = 0;
let failed = false;
function check(desc, cond, info) {
  n += 1;
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${desc}`);
  if (!cond) {
    failed = true;
    if (info !== undefined) console.log(`# got: ${JSON.stringify(info)}`);
  }
}

console.log('1..9');
const kc = new k8s.KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG);
const v1 = kc.makeApiClient(k8s.CoreV1Api);
const ns = 'default';
const made = await v1.createNamespacedPod({
  namespace: ns,
  body: {
    metadata: { name: 'nodep', labels: { who: 'node' } },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      containers: [{ name: 'c', image: 'node:20', command: ['sleep', '600'] }],
    },
  },
});
check('createNamespacedPod answers the stored pod', made.metadata?.uid && made.status?.phase === 'Pending',
  made.status);

const seen = [];
await new Promise((resolve, reject) => {
  let req = null;
  let done = false;
  const timer = setTimeout(() => { req?.abort(); reject(new Error('no Running in 30 s')); }, 30000);
  new k8s.Watch(kc).watch(`/api/v1/namespaces/${ns}/pods`,
    { labelSelector: 'who=node', resourceVersion: made.metadata.resourceVersion },
    (type, obj) => {
      seen.push([type, obj.status?.phase]);
      if (obj.status?.phase === 'Running' && !done) {
        done = true;
        clearTimeout(timer);
        req?.abort();
        resolve();
      }
    },
    (err) => { if (err && err.name !== 'AbortError' && !done) reject(err); })
    .then((r) => { req = r; if (done) r.abort(); }, reject);
});
check('a Watch from its resourceVersion sees it Running', seen.at(-1)?.[1] === 'Running', seen);

const list = await v1.listNamespacedPod({ namespace: ns, labelSelector: 'who in (node,x)' });
check('list with a set-based selector', list.items.map((p) => p.metadata.name).join() === 'nodep',
  list.items.map((p) => p.metadata.name));

function sink() {
  const chunks = [];
  const s = new Writable({ write(c, e, cb) { chunks.push(c); cb(); } });
  s.text = () => Buffer.concat(chunks).toString();
  return s;
}
async function run(cmd, input) {
  const out = sink();
  const err = sink();
  const stdin = input === undefined ? null : new PassThrough();
  const status = await new Promise((resolve, reject) => {
    new k8s.Exec(kc).exec(ns, 'nodep', 'c', cmd, out, err, stdin, false, resolve).catch(reject);
    if (stdin) stdin.end(input);
  });
  return { out: out.text(), err: err.text(), status };
}
let r = await run(['sh', '-c', 'echo out; echo err >&2']);
check('Exec: stdout, stderr and a Success status', r.out === 'out\n' && r.err === 'err\n'
  && r.status?.status === 'Success', r);
r = await run(['sh', '-c', 'exit 9']);
const cause = r.status?.details?.causes?.find((c) => c.reason === 'ExitCode');
check('Exec: NonZeroExitCode with the code as an ExitCode cause', r.status?.reason === 'NonZeroExitCode'
  && cause?.message === '9', r.status);
r = await run(['sh', '-c', 'wc -c'], 'x'.repeat(100000));
check('Exec: stdin to EOF (100000 bytes counted)', r.out.trim() === '100000', r);

try {
  await v1.readNamespacedPod({ name: 'no-such-pod', namespace: ns });
  check('a missing pod is an ApiException 404', false);
} catch (e) {
  check('a missing pod is an ApiException 404', e.code === 404, e.code);
}
try {
  await v1.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'Bad_Name' },
    spec: { containers: [{ name: 'c', image: 'x' }] } } });
  check('an invalid name is a 422 Invalid', false);
} catch (e) {
  check('an invalid name is a 422 Invalid', e.code === 422 && /metadata\.name/.test(e.body), e.body);
}

await v1.deleteNamespacedPod({ name: 'nodep', namespace: ns, gracePeriodSeconds: 0 });
let gone = false;
for (let i = 0; i < 100 && !gone; i++) {
  try {
    await v1.readNamespacedPod({ name: 'nodep', namespace: ns });
    await new Promise((res) => setTimeout(res, 100));
  } catch (e) {
    gone = e.code === 404;
    if (!gone) break;
  }
}
check('deleteNamespacedPod: the pod goes', gone);
process.exit(failed ? 1 : 0);
