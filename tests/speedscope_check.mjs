// speedscope_check.mjs - opens a profile in speedscope (its own page, in
// Debian's headless Chromium through playwright-core), switches to the
// Sandwich view (key 3) and prints what the page shows: its title, its
// errors and dialogs, and the view's text. Run by tests/speedscope_test.sh.
//
//   node speedscope_check.mjs SPEEDSCOPE_INDEX_HTML PROFILE_JS
import { chromium } from 'playwright-core';

const [index, profile] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
// The Sandwich view renders only the rows that fit its height: a page tall
// enough for every row, so that a frame sorted below the fold is still there.
const page = await browser.newPage({ viewport: { width: 1280, height: 20000 } });
const errors = [];
page.on('pageerror', e => errors.push(String(e)));
page.on('dialog', d => { errors.push('dialog: ' + d.message()); d.dismiss(); });
await page.goto(`file://${index}#localProfilePath=${profile}`);
await page.waitForFunction(() => document.title.includes(' - speedscope'), null, { timeout: 30000 });
await page.keyboard.press('3');
// The table's rows come a frame after its header.
await page.waitForFunction(() => /Symbol Name\s*\S/.test(document.body.innerText), null, { timeout: 30000 });
const text = await page.evaluate(() => document.body.innerText);
console.log(JSON.stringify({ title: await page.title(), errors, text }));
await browser.close();
