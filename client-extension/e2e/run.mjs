// End-to-end test of the extension in a real VS Code workbench (code-server + Chromium via
// playwright-core) against the real Stet server. See docs/vscode-extension.md ("Tests").
//
// Env: STET_PYTHON (a Python with stet installed; required), STET_VSIX (default: newest .vsix here),
// STET_E2E_CODE_SERVER / STET_E2E_NODE / STET_E2E_CHROMIUM (default: from .cache/vscode-e2e/env, written
// by .ci/install-vscode-e2e.sh), STET_E2E_ARTIFACTS (default: <repo>/test-artifacts/vscode-e2e),
// STET_E2E_CACHE (the install folder, default .cache/vscode-e2e), STET_E2E_KEEP=1 keeps the temp folder.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { APP_BEFORE, UTIL_BEFORE, makeWorkspace } from './workspace.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '..');
const repo = path.resolve(extDir, '..');
const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1);
const log = (...a) => console.log(`[e2e ${secs()}s]`, ...a);

function loadEnvFile() {
  const f = path.join(process.env.STET_E2E_CACHE || path.join(repo, '.cache/vscode-e2e'), 'env');
  if (!fs.existsSync(f)) return {};
  return Object.fromEntries(fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => l.split(/=(.*)/s).slice(0, 2)));
}
const fileEnv = loadEnvFile();
const setting = (k) => process.env[k] || fileEnv[k];
const CODE_SERVER = setting('STET_E2E_CODE_SERVER');
const NODE24 = setting('STET_E2E_NODE');
const CHROMIUM = setting('STET_E2E_CHROMIUM') || '/usr/bin/chromium';
const PYTHON = process.env.STET_PYTHON;
const ARTIFACTS = process.env.STET_E2E_ARTIFACTS || path.join(repo, 'test-artifacts/vscode-e2e');
const VSIX = process.env.STET_VSIX || fs.readdirSync(extDir).filter((f) => f.endsWith('.vsix'))
  .map((f) => path.join(extDir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
for (const [name, v] of Object.entries({ STET_E2E_CODE_SERVER: CODE_SERVER, STET_E2E_NODE: NODE24, STET_PYTHON: PYTHON, STET_VSIX: VSIX })) {
  if (!v || !fs.existsSync(v)) {
    console.error(`e2e: ${name} missing (${v}); run .ci/install-vscode-e2e.sh and make test-extension first`);
    process.exit(2);
  }
}

fs.rmSync(ARTIFACTS, { recursive: true, force: true });
fs.mkdirSync(ARTIFACTS, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stet-e2e-'));
const ws = path.join(tmp, 'project');
const userData = path.join(tmp, 'user-data');
const extensions = path.join(tmp, 'extensions');
const csEnv = { ...process.env, PATH: `${path.dirname(NODE24)}:${process.env.PATH}` };

let passed = 0;
let page;
let codeServer;
let browser;
let shot = 0;

async function screenshot(name) {
  if (!page) return;
  const file = path.join(ARTIFACTS, `${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file }).catch(() => undefined);
  return file;
}

/** One named expectation; the first failure stops the run with a screenshot and the logs. */
async function check(name, fn) {
  const start = Date.now();
  try {
    await fn();
  } catch (e) {
    console.error(`FAIL: ${name}\n  ${e?.stack ?? e}`);
    await screenshot('failure');
    console.error('notifications:', JSON.stringify(await notificationTexts().catch(() => [])));
    dumpLogs();
    console.log(`e2e: ${passed} passed, 1 failed`);
    await cleanup();
    process.exit(1);
  }
  passed++;
  log(`ok ${passed} - ${name} (${((Date.now() - start) / 1000).toFixed(1)}s)`);
}

function dumpLogs() {
  const logs = path.join(userData, 'logs');
  if (!fs.existsSync(logs)) return;
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  for (const f of walk(logs)) {
    if (/Stet|exthost|remoteagent/.test(f)) {
      const dest = path.join(ARTIFACTS, 'logs', path.relative(logs, f));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.copyFileSync(f, dest);
      if (/Stet/.test(f)) console.error(`--- ${path.relative(logs, f)} ---\n${fs.readFileSync(f, 'utf8').slice(-4000)}`);
    }
  }
}

async function cleanup() {
  await browser?.close().catch(() => undefined);
  if (codeServer?.pid) {
    try { process.kill(-codeServer.pid, 'SIGTERM'); } catch { /* gone */ }
    await new Promise((r) => setTimeout(r, 500));
    try { process.kill(-codeServer.pid, 'SIGKILL'); } catch { /* gone */ }
  }
  for (const pid of stetServers()) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  if (!process.env.STET_E2E_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
}

async function until(what, fn, timeoutMs = 60_000, everyMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) { last = e; }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

function processes() {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).split('\n').filter(Boolean)
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/)).filter(Boolean).map((m) => ({ pid: +m[1], ppid: +m[2], args: m[3] }));
}

/** Stet servers started by this run's code-server: `-m stet serve` processes descending from it. */
function stetServers() {
  if (!codeServer?.pid) return [];
  const rows = processes();
  const parent = new Map(rows.map((r) => [r.pid, r.ppid]));
  const descends = (pid) => { for (let p = pid; p && p !== 1; p = parent.get(p)) if (p === codeServer.pid) return true; return false; };
  return rows.filter((r) => /-m stet serve\b/.test(r.args) && descends(r.pid)).map((r) => r.pid);
}

// ---- page helpers ---------------------------------------------------------------------------------

const editorSel = '.part.editor .editor-group-container.active .monaco-editor';

/** Text of the active editor's rendered lines, with decoration ghost text (::before/::after) inlined. */
async function editorView() {
  return page.evaluate((sel) => {
    const ed = document.querySelector(sel);
    if (!ed) return { text: '', ghosts: [] };
    const lines = [...ed.querySelectorAll('.view-lines .view-line')]
      .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
    const ghosts = [];
    for (const el of ed.querySelectorAll('.view-lines .view-line span')) {
      for (const pseudo of ['::before', '::after']) {
        const c = getComputedStyle(el, pseudo).content;
        if (c && c !== 'none' && c !== 'normal') ghosts.push(c.replace(/^"|"$/g, '').replace(/\\"/g, '"'));
      }
    }
    return { text: lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n'), ghosts };
  }, editorSel);
}

// The server's per-hunk lenses: titles start with "Accept" / "Reject" (file-level ones say "… all (N)").
const ACCEPT = /^Accept(?! all)/;
const REJECT = /^Reject(?! all)/;

/** The lens link whose title matches `title` (a RegExp) above the line containing `lineText`. */
async function lensAbove(lineText, title) {
  const idx = await page.evaluate(({ sel, lineText, source }) => {
    const title = new RegExp(source);
    const ed = document.querySelector(sel);
    const line = [...ed.querySelectorAll('.view-lines .view-line')].find((l) => l.textContent.replace(/\u00a0/g, ' ').includes(lineText));
    if (!line) return -1;
    const y = line.getBoundingClientRect().top;
    const links = [...document.querySelectorAll(`${sel} .codelens-decoration a`)];
    let best = -1;
    let bestY = -Infinity;
    links.forEach((a, i) => {
      const ay = a.getBoundingClientRect().top;
      if (title.test(a.textContent.trim()) && ay < y && ay > bestY) { best = i; bestY = ay; }
    });
    return best;
  }, { sel: editorSel, lineText, source: title.source });
  if (idx < 0) throw new Error(`no "${title}" lens above "${lineText}"`);
  return page.locator(`${editorSel} .codelens-decoration a`).nth(idx);
}

async function lensTitles() {
  return page.locator(`${editorSel} .codelens-decoration a`).allTextContents();
}

async function activeTab() {
  return page.evaluate(() => document.querySelector('.part.editor .editor-group-container.active .tab.active')?.textContent ?? '');
}

async function openFromExplorer(name) {
  const tabIs = async () => (await activeTab()).includes(name);
  await until(`${name} open in the editor`, async () => {
    if (await tabIs()) return true;
    const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first();
    if (await row.isVisible()) await row.click();
    else if (!(await page.locator('.explorer-folders-view').isVisible())) await page.keyboard.press('Control+Shift+E');
    return tabIs();
  }, 60_000, 1000);
}

async function showStetView() {
  const icon = page.locator('.activitybar [aria-label^="Stet"]').first();
  await icon.waitFor({ timeout: 60_000 });
  const open = await page.locator('.part.sidebar .title-label', { hasText: /stet/i }).isVisible();
  if (!open) await icon.click();
  await page.locator('.part.sidebar .monaco-list-row').first().waitFor({ timeout: 30_000 });
}

async function treeRows() {
  return (await page.locator('.part.sidebar .monaco-list-row').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
}

async function statusText() {
  const items = await page.locator('.part.statusbar .statusbar-item').allTextContents();
  return items.find((t) => /\d+ pending/.test(t)) ?? '';
}

async function notificationTexts() {
  return page.locator('.notifications-toasts .notification-list-item-message').allTextContents();
}

async function openWorkbench(port) {
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
}

/** Scrolls the active editor to the top: lines outside the viewport (and their ghost text) are not rendered. */
async function toTop() {
  await page.locator(`${editorSel} .view-lines`).click();
  await page.keyboard.press('Control+Home');
}

/** Lenses and ghost text of the hunks still pending after the decisions below (h3 in app.py). */
async function expectReviewState(label) {
  await toTop();
  await until(`${label}: lens on the remaining app.py hunk`, async () => {
    const titles = await lensTitles();
    return titles.some((t) => ACCEPT.test(t)) && titles.some((t) => REJECT.test(t)) && titles.includes('Diff');
  });
  await until(`${label}: ghost text of the remaining hunk`, async () => (await editorView()).ghosts.some((g) => g.includes('raise SystemExit(main())')));
  const v = await editorView();
  if (v.ghosts.some((g) => g.includes('greet("Stet")'))) throw new Error('the rejected hunk is shown again');
  if (!v.text.includes('return f"Hello, {name}!"')) throw new Error('the accepted edit is missing from the editor');
  await showStetView();
  await until(`${label}: tree shows decisions`, async () => {
    const rows = (await treeRows()).join('\n');
    return rows.includes('applied') && rows.includes('rejected — “keep the world greeting”') && rows.includes('pending');
  });
  await until(`${label}: status bar`, async () => (await statusText()).includes('2 pending'));
}

// ---- the run --------------------------------------------------------------------------------------

process.on('SIGINT', async () => { await cleanup(); process.exit(130); });
// A hung workbench must not hang CI: give up, with a screenshot and the logs.
const WATCHDOG_MS = Number(process.env.STET_E2E_TIMEOUT_MS || 8 * 60_000);
setTimeout(async () => {
  console.error(`e2e: gave up after ${WATCHDOG_MS / 1000}s`);
  await screenshot('watchdog');
  dumpLogs();
  console.log(`e2e: ${passed} passed, 1 failed`);
  await cleanup();
  process.exit(1);
}, WATCHDOG_MS).unref();

const params = makeWorkspace(ws);
fs.writeFileSync(path.join(tmp, 'proposal.json'), JSON.stringify(params));
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify({
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'telemetry.telemetryLevel': 'off',
  'workbench.tips.enabled': false,
  'editor.minimap.enabled': false,
  'files.autoSave': 'off',
  'window.restoreWindows': 'all',
  'stet.server.python': PYTHON,
}, null, 2));

await check('the .vsix installs into code-server', async () => {
  execFileSync(CODE_SERVER, ['--extensions-dir', extensions, '--user-data-dir', userData, '--install-extension', VSIX],
    { env: csEnv, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  if (!fs.readdirSync(extensions).some((d) => d.startsWith('stet.stet-'))) throw new Error('extension folder missing');
});

const port = await freePort();
fs.writeFileSync(path.join(tmp, 'config.yaml'), [
  'auth: none', `bind-addr: 127.0.0.1:${port}`, 'cert: false', 'disable-telemetry: true',
  'disable-update-check: true', 'disable-workspace-trust: true', '',
].join('\n'));
codeServer = spawn('setsid', [CODE_SERVER, '--config', path.join(tmp, 'config.yaml'), '--user-data-dir', userData,
  '--extensions-dir', extensions, '--reconnection-grace-time', '5', ws], {
  env: csEnv, stdio: ['ignore', fs.openSync(path.join(ARTIFACTS, 'code-server.log'), 'w'), fs.openSync(path.join(ARTIFACTS, 'code-server.err.log'), 'w')],
});

await check('code-server answers /healthz', () => until('healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000));

browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
});
page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
await openWorkbench(port);

await check('in a folder without .stet the extension starts no server (and creates no .stet)', async () => {
  await page.locator('.activitybar [aria-label^="Stet"]').first().waitFor({ timeout: 60_000 });
  await new Promise((r) => setTimeout(r, 3000));
  if (stetServers().length) throw new Error('a server was started');
  if (fs.existsSync(path.join(ws, '.stet'))) throw new Error('.stet was created');
});

await check('an agent proposes through a short-lived stet server (stet/propose) while the editor is open', async () => {
  const out = execFileSync(PYTHON, [path.join(here, 'propose.py'), ws, path.join(tmp, 'proposal.json'), PYTHON, '-m', 'stet', 'serve'], { encoding: 'utf8', timeout: 60_000 });
  const res = JSON.parse(out.trim().split('\n').pop());
  const pending = res.hunks.filter((h) => h.status === 'pending');
  if (pending.length !== 4) throw new Error(`expected 4 pending hunks, got ${JSON.stringify(res.hunks.map((h) => [h.uri, h.status]))}`);
});

let firstPid;
await check('the extension starts its server when .stet appears, as a child of the extension host', async () => {
  const pids = await until('a stet server process', async () => { const p = stetServers(); return p.length ? p : undefined; });
  firstPid = pids[0];
  const rows = processes();
  const ppid = rows.find((r) => r.pid === firstPid)?.ppid;
  const parentArgs = rows.find((r) => r.pid === ppid)?.args ?? '';
  log(`server ${firstPid}, parent: ${parentArgs.slice(0, 160)}`);
  if (!/extensionHost/.test(parentArgs)) throw new Error(`the server's parent is not the extension host: ${parentArgs}`);
});

await check('app.py opens with Accept/Reject lenses from the server and a Diff lens per hunk', async () => {
  await openFromExplorer('app.py');
  log('app.py open');
  await until('3 hunks of lenses', async () => {
    const t = await lensTitles();
    return t.filter((x) => ACCEPT.test(x)).length === 3 && t.filter((x) => REJECT.test(x)).length === 3 &&
      t.filter((x) => x === 'Diff').length === 3 && t.includes('Accept all (3)') && t.includes('Reject all (3)');
  });
});

await check('each hunk shows its proposed text inline (ghost text after the old lines)', async () => {
  await until('ghost texts', async () => {
    const g = (await editorView()).ghosts.join('\n');
    return g.includes('return f"Hello, {name}!"') && g.includes('print(greet("Stet"))') && g.includes('raise SystemExit(main())');
  });
});

await check('the Stet view lists task → proposal → files → hunks; the status bar counts 4 pending', async () => {
  await showStetView();
  await until('tree rows', async () => {
    const rows = (await treeRows()).join('\n');
    return rows.includes('Task t-e2e') && rows.includes('p-e2e') && rows.includes('app.py') && rows.includes('util.py') &&
      (rows.match(/pending/g) ?? []).length >= 4;
  });
  await until('status bar', async () => (await statusText()).includes('4 pending'));
  await screenshot('review');
});

await check('clicking Accept applies the hunk to the file', async () => {
  await (await lensAbove('return "Hello, " + name', ACCEPT)).click();
  await until('new text in the editor', async () => (await editorView()).text.includes('return f"Hello, {name}!"'));
  await page.locator(`${editorSel} .view-lines`).click();
  await page.keyboard.press('Control+S');
  await until('app.py saved with the accepted hunk', () => fs.readFileSync(path.join(ws, 'app.py'), 'utf8').includes('return f"Hello, {name}!"'));
  const disk = fs.readFileSync(path.join(ws, 'app.py'), 'utf8');
  if (disk.includes('greet("Stet")') || disk.includes('SystemExit')) throw new Error('other hunks were applied too');
});

await check('Reject asks for feedback and rejects the hunk with it', async () => {
  await (await lensAbove('print(greet("world"))', REJECT)).click();
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 30_000 });
  await screenshot('reject-feedback');
  await input.fill('keep the world greeting');
  await input.press('Enter');
  await until('the rejected hunk leaves the editor', async () => !(await editorView()).ghosts.some((g) => g.includes('greet("Stet")')));
  await until('feedback in the tree', async () => (await treeRows()).join('\n').includes('rejected — “keep the world greeting”'));
  if (!fs.readFileSync(path.join(ws, 'app.py'), 'utf8').includes('print(greet("world"))')) throw new Error('rejected hunk changed the file');
});

await check('Next Hunk (Ctrl+Alt+]) goes from the last hunk of app.py to util.py', async () => {
  await page.locator(`${editorSel} .view-lines`).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Control+Alt+BracketRight');
  await until('util.py active', async () => (await activeTab()).includes('util.py'));
});

await check('Diff opens a side-by-side diff against the proposal', async () => {
  await until('Diff lens in util.py', async () => (await lensTitles()).includes('Diff'));
  await page.locator(`${editorSel} .codelens-decoration a`, { hasText: /^Diff$/ }).first().click();
  await until('diff editor with the proposal', async () => {
    const txt = await page.locator('.part.editor .monaco-diff-editor .modified .view-lines').first().textContent();
    return txt?.replace(/\u00a0/g, ' ').includes('"""Sum of a and b."""');
  });
  await screenshot('diff');
  await page.keyboard.press('Control+W');
});

await check('the server is SIGKILLed: the extension restarts it and the same state comes back', async () => {
  await openFromExplorer('app.py');
  await page.locator(`${editorSel} .view-lines`).click();
  await page.keyboard.press('Control+S');
  const before = stetServers();
  if (before.length !== 1) throw new Error(`expected one server, found ${before}`);
  const killedAt = Date.now();
  process.kill(before[0], 'SIGKILL');
  const after = await until('a new server process', async () => { const p = stetServers().filter((x) => x !== before[0]); return p.length ? p : undefined; }, 30_000, 100);
  log(`server ${before[0]} killed; new server ${after[0]} after ${Date.now() - killedAt} ms`);
  await until('restored notification', async () => (await notificationTexts()).some((t) => t.includes('Restored review: 2 pending, 0 accepted')));
  // Its button jumps to the first pending hunk in review order: app.py line 14.
  await openFromExplorer('util.py');
  await page.locator('.notifications-toasts .notification-list-item', { hasText: 'Restored review: 2 pending' }).first()
    .locator('.monaco-button', { hasText: 'Go to First Pending' }).click();
  await until('app.py at line 14', async () => (await activeTab()).includes('app.py') &&
    (await page.locator('.part.statusbar').textContent())?.includes('Ln 14,'));
  await expectReviewState('after SIGKILL');
  await screenshot('after-kill');
});

await check('reloading the page shows the same state again', async () => {
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await openFromExplorer('app.py');
  await expectReviewState('after reload');
  await screenshot('after-reload');
});

await check('Edit… opens the proposal; saving it accepts the hunk with the developer\'s text', async () => {
  await openFromExplorer('util.py');
  await until('Edit… lens in util.py', async () => (await lensTitles()).includes('Edit…'));
  await page.locator(`${editorSel} .codelens-decoration a`, { hasText: /^Edit…$/ }).first().click();
  await until('the proposal editor', async () => (await activeTab()).includes('util.py') && (await editorView()).text.includes('"""Sum of a and b."""'));
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('Shift+End');
  await page.keyboard.insertText('    """Return the sum of a and b."""');
  await screenshot('edit-proposal');
  await page.keyboard.press('Control+S');
  await until('the proposal editor closes', async () => (await page.locator('.part.editor .tab').count()) <= 2, 30_000);
  await openFromExplorer('util.py');
  await until('util.py holds the edited text', async () => (await editorView()).text.includes('Return the sum of a and b.'));
  await page.locator(`${editorSel} .view-lines`).click();
  await page.keyboard.press('Control+S');
  await until('saved', () => fs.readFileSync(path.join(ws, 'util.py'), 'utf8').includes('    """Return the sum of a and b."""\n'));
  await until('status bar: 1 pending', async () => (await statusText()).includes('1 pending'));
});

await check('Undo Last Decision puts the hunk back to pending and reverts its edit', async () => {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 30_000 });
  await page.keyboard.type('Stet: Undo Last Decision');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Undo Last Decision' }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  await until('the edit is reverted in the buffer', async () => !(await editorView()).text.includes('Return the sum'));
  await until('status bar: 2 pending', async () => (await statusText()).includes('2 pending'));
  await toTop();
  await until('the hunk shows inline again', async () => (await editorView()).ghosts.some((g) => g.includes('Sum of a and b') || g.includes('Return the sum')));
  await page.locator(`${editorSel} .view-lines`).click();
  await page.keyboard.press('Control+S');
  await until('util.py back to its old text on disk', () => fs.readFileSync(path.join(ws, 'util.py'), 'utf8') === UTIL_BEFORE);
});

/** Opens the Settings editor on stet.server.python, as a user would; returns its input box. */
async function pythonSettingInput() {
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible', timeout: 30_000 });
  await page.keyboard.type('Preferences: Open User Settings');
  await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Preferences: Open User Settings', hasNotText: 'JSON' }).first().click();
  // The search box is a small editor: click it and type.
  await page.locator('.settings-header .monaco-editor').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.type('stet.server.python');
  const input = page.locator('input[aria-label="stet.server.python"]').first();
  await input.waitFor({ state: 'visible', timeout: 30_000 });
  return input;
}

await check('a server that cannot start gets an error naming the setting to fix; fixing it brings the review back', async () => {
  const input = await pythonSettingInput();
  await input.fill(path.join(tmp, 'no-such-python'));
  await input.press('Tab');
  await until('the start failure notification', async () => (await notificationTexts()).some((t) =>
    t.includes('could not start the review server') && t.includes('no-such-python') && t.includes('"stet.server.python"')));
  await until('no server runs', async () => stetServers().length === 0, 30_000);
  await screenshot('start-failure');
  await input.fill(PYTHON);
  await input.press('Tab');
  await until('the server is back', async () => stetServers().length === 1, 30_000);
  await until('status bar: 2 pending', async () => (await statusText()).includes('2 pending'));
  await page.keyboard.press('Escape');
});

await check('Ctrl+Alt+Y accepts the hunk at the cursor', async () => {
  await openFromExplorer('app.py');
  await toTop();
  const box = await page.evaluate((sel) => {
    const line = [...document.querySelectorAll(`${sel} .view-lines .view-line`)].find((l) => l.textContent.replace(/\u00a0/g, ' ').trim().startsWith('main()'));
    const r = line?.querySelector('span span')?.getBoundingClientRect();
    return r ? { x: r.left + 2, y: r.top + r.height / 2 } : null;
  }, editorSel);
  if (!box) throw new Error('line "main()" not found');
  await page.mouse.click(box.x, box.y);
  await page.keyboard.press('Control+Alt+Y');
  await until('the hunk applied in the editor', async () => (await editorView()).text.includes('    raise SystemExit(main())'));
  await page.keyboard.press('Control+S');
  await until('saved', () => fs.readFileSync(path.join(ws, 'app.py'), 'utf8').includes('    raise SystemExit(main())\n'));
  await until('status bar: 1 pending', async () => (await statusText()).includes('1 pending'));
});

await check('the files on disk hold exactly the accepted decisions', async () => {
  const app = fs.readFileSync(path.join(ws, 'app.py'), 'utf8');
  const expected = APP_BEFORE.replace('return "Hello, " + name', 'return f"Hello, {name}!"').replace('    main()\n', '    raise SystemExit(main())\n');
  if (app !== expected) throw new Error(`app.py is\n${app}`);
  if (fs.readFileSync(path.join(ws, 'util.py'), 'utf8') !== UTIL_BEFORE) throw new Error('util.py changed');
});

await cleanup();
log(`done in ${secs()}s; screenshots in ${path.relative(repo, ARTIFACTS)}`);
console.log(`e2e: ${passed} passed, 0 failed`);
