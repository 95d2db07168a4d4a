// tests/bench/web.mjs - the figures of tests/bench/web.sh: the page's
// load and first run in chromium, cold and warm, with the code editor and
// without it (editor-none.js served in place of the bundle).
//
// Environment: PS_BASE, CHROMIUM, PROFILE, PS_EDITOR_NONE, REPS.
import puppeteer from 'puppeteer-core'
import { readFileSync } from 'node:fs'

const base = process.env.PS_BASE
const reps = Number(process.env.REPS || 7)
const stub = readFileSync(process.env.PS_EDITOR_NONE, 'utf8')
const args = ['--headless=new', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
              '--disable-extensions', '--disable-background-networking', '--disable-sync',
              '--disable-dev-shm-usage', '--mute-audio', '--window-size=1280,900']
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox')
const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM, args,
                                         userDataDir: process.env.PROFILE, timeout: 30000 })
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
let failed = false

// One page load (navigate or reload) and its first run; figures in ms
// from the navigation's start, and the bytes moved (transferSize: a 304
// counts its headers only).
async function measure(page, reload) {
  if (reload) await page.reload({ waitUntil: 'domcontentloaded' })
  else await page.goto(base + '/', { waitUntil: 'domcontentloaded' })
  await page.waitForFunction(() => document.body.dataset.editor, { polling: 'mutation', timeout: 30000 })
  const ready = await page.evaluate(() => performance.now())
  await page.waitForFunction(() => document.querySelectorAll('#template option').length > 0,
                             { polling: 'mutation', timeout: 30000 })
  const kind = await page.$eval('body', (b) => b.dataset.editor)
  await page.select('#template', 'python')
  await page.focus(kind === 'codemirror' ? '.code-editor' : '#code')
  if (kind === 'codemirror') await page.click('.code-editor >>> .cm-content')
  await page.keyboard.down('Control')
  await page.keyboard.press('Enter')
  await page.keyboard.up('Control')
  await page.waitForFunction(() => document.querySelector('.run .output')?.textContent.includes('hello'),
                             { polling: 'mutation', timeout: 30000 })
  const firstOutput = await page.evaluate(() => performance.now())
  const nav = await page.evaluate(() => performance.getEntriesByType('navigation')[0].toJSON())
  await page.waitForFunction(() => !document.querySelector('.run .status.running'), { timeout: 30000 })
  const bytes = nav.transferSize + await page.evaluate(() => performance.getEntriesByType('resource')
    .filter((r) => r.name.includes('/web/')).reduce((n, r) => n + r.transferSize, 0))
  return { kind, dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, ready, firstOutput, bytes }
}

async function newPage(ctx, withEditor) {
  const page = await ctx.newPage()
  await page.setViewport({ width: 1280, height: 900 })
  page.on('pageerror', (e) => { failed = true; console.log('page error: ' + e.message) })
  if (!withEditor) {
    await page.setRequestInterception(true)
    page.on('request', (q) => {
      if (new URL(q.url()).pathname === '/web/editor.js')
        q.respond({ status: 200, contentType: 'text/javascript; charset=utf-8', body: stub })
      else q.continue()
    })
  }
  return page
}

const figures = {}   // "editor cold" -> [{...}]
const note = (k, f) => { (figures[k] ||= []).push(f) }
try {
  // one load unmeasured: chromium's own start-up is not the page's
  { const ctx = await browser.createBrowserContext(); const p = await newPage(ctx, true); await measure(p, false); await ctx.close() }
  for (let i = 0; i < reps; i++) {
    for (const withEditor of [true, false]) {   // alternating, so load drifts hit both
      const name = withEditor ? 'editor' : 'textarea'
      const ctx = await browser.createBrowserContext()
      const page = await newPage(ctx, withEditor)
      note(name + ' cold', await measure(page, false))
      note(name + ' warm', await measure(page, true))
      await ctx.close()
    }
  }
} catch (e) {
  failed = true
  console.log('bench-web: ' + (e.stack || e))
} finally {
  await browser.close()
}

const fmt = (x) => x.toFixed(1).padStart(7)
console.log(`\nmedians of ${reps} rounds, ms from the navigation's start (target: load under 200 ms)`)
console.log('                   DOMContentLoaded   load   editor ready   first run output   bytes of the page')
for (const [k, fs] of Object.entries(figures)) {
  const m = (key) => median(fs.map((f) => f[key]))
  console.log(`  ${k.padEnd(16)} ${fmt(m('dcl'))}        ${fmt(m('load'))}  ${fmt(m('ready'))}       ${fmt(m('firstOutput'))}        ${String(m('bytes')).padStart(8)}  (${fs[0].kind})`)
}
for (const t of ['cold', 'warm']) {
  const e = figures['editor ' + t], p = figures['textarea ' + t]
  if (e && p) {
    const r = (key) => (median(e.map((f) => f[key])) / median(p.map((f) => f[key]))).toFixed(2)
    console.log(`  ${t}: editor / textarea: DOMContentLoaded x${r('dcl')}, editor ready x${r('ready')}, first run x${r('firstOutput')}`)
  }
}
process.exit(failed ? 1 : 0)
