// tests/sdk/tap.mjs - a few lines of TAP for the SDK drivers (no
// dependency: node's own util and fs only)
//
// A test script that runs a driver more than once continues one TAP
// stream: TAP_FIRST numbers the first check (after TAP_FIRST - 1 done),
// and with TAP_COUNT_FILE set the plan is left to the script and the
// number of the last check is written to that file instead.
import { isDeepStrictEqual, inspect } from 'node:util'
import { writeFileSync } from 'node:fs'

let n = Number(process.env.TAP_FIRST || 1) - 1
let failed = 0

function line(ok, what, detail) {
  n++
  if (!ok) failed++
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${what}`)
  if (!ok && detail !== undefined) {
    let d = String(detail)
    if (d.length > 2000) d = d.slice(0, 2000) + ` ... (${d.length - 2000} more characters)`
    for (const l of d.split('\n')) console.log(`#   ${l}`)
  }
}

export function is(got, want, what) {
  line(isDeepStrictEqual(got, want), what,
       `got:  ${inspect(got, { depth: 6, maxStringLength: 500 })}\nwant: ${inspect(want, { depth: 6, maxStringLength: 500 })}`)
}

export function ok(cond, what, detail) {
  line(!!cond, what, detail)
}

// check(what, fn): runs an async step; a throw is a failed check naming
// the error, and the step's value (or undefined) is returned.
export async function check(what, fn) {
  try {
    const v = await fn()
    line(true, what)
    return v
  } catch (e) {
    line(false, what, e && e.stack ? e.stack : String(e))
    return undefined
  }
}

// rejects(what, fn, pred): fn must throw, and pred(error) must hold.
export async function rejects(what, fn, pred) {
  try {
    await fn()
    line(false, what, 'no error was thrown')
  } catch (e) {
    line(pred(e), what, `error: ${e && e.name}: ${e && e.message}`)
    return e
  }
}

export function done() {
  if (process.env.TAP_COUNT_FILE)
    writeFileSync(process.env.TAP_COUNT_FILE, `${n}\n`)
  else
    console.log(`1..${n}`)
  process.exitCode = failed ? 1 : 0
}
