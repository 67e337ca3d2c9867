// A person at a browser, for the sign-in tests: opens the authorization URL in headless
// Chromium (playwright-core, the system `chromium`), signs in on the authorization server's
// pages (auth_server.mjs: the login form, then consent) as LOGIN, and follows the redirect
// back to the client's loopback port, whose page must say "Signed in".
//
//   node browser_login.mjs --login NAME [--screenshot PATH] [--chromium PATH] URL
//
// Used as the CLI's browser: BROWSER="node …/browser_login.mjs --login alice" (the URL comes
// last). Exit 0 once the client's page was reached; 1 with the reason otherwise. Each step's
// page is logged on stderr.
import { parseArgs } from 'node:util';

import { dep, fail, log } from './peerlib.mjs';

const { values, positionals } = parseArgs({
  options: {
    login: { type: 'string' },
    screenshot: { type: 'string' },
    chromium: { type: 'string', default: process.env.CHROMIUM || '/usr/bin/chromium' },
  },
  allowPositionals: true,
});
const url = positionals.at(-1);
if (!values.login || !url) fail('usage: browser_login.mjs --login NAME [--screenshot PATH] URL', 2);

const { chromium } = dep('playwright-core');
const browser = await chromium.launch({ executablePath: values.chromium, headless: true });
try {
  const page = await browser.newPage();
  await page.goto(url);
  // The server's pages, until the browser is back at the client (a loopback address).
  for (let step = 0; step < 6; step += 1) {
    const here = new URL(page.url());
    log(`page ${step}: ${here.origin}${here.pathname}`);
    if (here.pathname === '/callback') break;
    if (await page.locator('input[name=login]').count()) {
      await page.fill('input[name=login]', values.login);
      await page.fill('input[name=password]', 'not-checked');
      if (values.screenshot) await page.screenshot({ path: values.screenshot });
    }
    await Promise.all([
      page.waitForNavigation({ timeout: 30000 }),
      page.locator('button[type=submit]').first().click(),
    ]);
  }
  const text = await page.textContent('body');
  if (!/Signed in/.test(text ?? '')) fail(`the client's page says: ${text}`);
  log('signed in');
} catch (e) {
  fail(`sign-in failed: ${e.message}`);
} finally {
  await browser.close();
}
