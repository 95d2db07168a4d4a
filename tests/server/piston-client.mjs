// tests/server/piston-client.mjs - drive polysandboxd's Piston routes with
// the npm piston-client (a client nobody here wrote), unchanged.
//
// node piston-client.mjs NODE_MODULES BASE_URL OUTDIR: each case's answer,
// as the client returns it, goes to OUTDIR/NAME.json for the shell test
// to check.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [modules, base, outdir] = process.argv.slice(2);
const { piston } = await import(pathToFileURL(join(modules, 'piston-client', 'index.js')).href);
const client = piston({ server: base });
const save = (name, value) => writeFileSync(join(outdir, `${name}.json`), JSON.stringify(value));

save('runtimes', await client.runtimes());
const cases = {
  hello: ['python', 'print("Hello World!")'],
  default_args: ['python', 'import sys\nprint(" ".join(sys.argv[1:]))'],
  args: ['python', 'import sys\nprint(" ".join(sys.argv[1:]))', { args: ['x', 'y z'] }],
  stdin: ['python', 'print(input()[::-1])', { stdin: 'abc' }],
  javascript: ['javascript', 'console.log(6 * 7)'],
  bash_exit: ['bash', 'echo "$1"; exit 4'],
  // Two pipes: the order is the order of arrival, so the writes are apart.
  interleaved: ['python', 'import sys, time\nprint("a", flush=True)\ntime.sleep(0.1)\nprint("b", file=sys.stderr, flush=True)\ntime.sleep(0.1)\nprint("c")'],
  c_ok: ['c', '#include <stdio.h>\nint main(int argc, char **argv) { printf("%d %s\\n", argc, argv[1]); return 0; }'],
  c_compile_error: ['c', 'int main(void) { return }'],
  timeout: ['python', 'while True: pass', { runTimeout: 500 }],
  signal: ['python', 'import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)'],
  unknown_language: ['cobol', 'DISPLAY "HI".'],
  over_limit: ['python', 'print(1)', { runTimeout: 1e9 }],
};
await Promise.all(Object.entries(cases).map(async ([name, a]) => save(name, await client.execute(...a))));
// The whole-object form, with a file beside the program.
save('files', await client.execute({
  language: 'python', version: '*',
  files: [{ name: 'main.py', content: 'import helper\nprint(helper.X)' },
          { name: 'helper.py', content: 'X = 42\n' }],
  args: [],
}));
