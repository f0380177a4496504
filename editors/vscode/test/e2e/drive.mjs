// Opens code-server in the system's Chromium (headless, through
// playwright-core) so VS Code starts its extension host, waits for the probe
// extension's report, and takes a screenshot.
//
//   node drive.mjs URL REPORT.json SCREENSHOT.png TIMEOUT_SECONDS BROWSER_PROFILE_DIR
//
// Exits 0 once the report says it is finished, 1 if it never does (the
// screenshot is taken either way), 2 on bad arguments.

import { existsSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [url, reportPath, screenshotPath, timeoutArgument, profileDir] = process.argv.slice(2);
if (!url || !reportPath || !screenshotPath || !timeoutArgument || !profileDir) {
  console.error('usage: node drive.mjs URL REPORT.json SCREENSHOT.png TIMEOUT_SECONDS BROWSER_PROFILE_DIR');
  process.exit(2);
}
const timeoutMs = Number(timeoutArgument) * 1000;
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

function reportFinished() {
  if (!existsSync(reportPath)) {
    return false;
  }
  try {
    return JSON.parse(readFileSync(reportPath, 'utf8')).finished === true;
  } catch {
    // Being written: the probe renames it into place, but be patient anyway.
    return false;
  }
}

const context = await chromium.launchPersistentContext(profileDir, {
  executablePath,
  headless: true,
  viewport: { width: 1440, height: 900 },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    // Without these Chromium's own background connections are refused here
    // and it stalls.
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

let finished = false;
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => console.log(`[page error] ${error.message}`));
  console.log(`opening ${url}`);
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60000 });
  await page.waitForSelector('.monaco-workbench', { timeout: 120000 });
  console.log('the workbench is up; waiting for the probe report');
  const deadline = Date.now() + timeoutMs;
  while (!(finished = reportFinished()) && Date.now() < deadline) {
    await page.waitForTimeout(500);
  }
  if (!finished) {
    console.log(`no finished report after ${timeoutArgument} s`);
  }
  // Let the editor paint the last document the probe showed.
  await page.waitForTimeout(1500);
  await page.screenshot({ path: screenshotPath });
  console.log(`screenshot: ${screenshotPath}`);
} finally {
  await context.close();
}
process.exit(finished ? 0 : 1);
