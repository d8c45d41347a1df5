// Accessibility check for the e2e suite: axe-core (the npm package, read from node_modules and
// evaluated in the page; nothing is downloaded) runs on the page as it is now and the check
// fails with one readable line per violating element. The scenarios call it at every state they
// reach: each screenshot (desktop and 390 px), open menus and dialogs, refused and error states.
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2.0/2.1/2.2 A and AA, and axe's best practices. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

/** Every check made in this run: { label, violations: [{ rule, impact, target, summary }] }. */
export const a11yLog = [];

/** The page's axe violations, one entry per element. */
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) {
    // Evaluated through the DevTools protocol: the page's Content-Security-Policy
    // (script-src 'self') would refuse an inline <script>.
    await page.evaluate(AXE_SOURCE);
  }
  // Let transitions and freshly rendered content settle before colours are read.
  await page.waitForTimeout(100);
  const found = await page.evaluate(async (tags) => {
    const result = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.flatMap((v) => v.nodes.map((n) => ({
      rule: v.id,
      impact: n.impact || v.impact,
      target: n.target.join(' '),
      summary: (n.failureSummary || v.help).replace(/\s+/g, ' ').trim(),
    })));
  }, AXE_TAGS);
  return found;
}

/** Fails (throws) when axe finds anything on the page; `label` names the state in the message. */
export async function checkA11y(page, label) {
  const violations = await axeViolations(page);
  a11yLog.push({ label, violations });
  if (violations.length) {
    if (process.env.E2E_A11Y_REPORT) {
      console.log(`[a11y] ${label}: ${violations.length}\n${violations.map((v) => `  - [${v.rule}] ${v.target}: ${v.summary}`).join('\n')}`);
      return;
    }
    const lines = violations.map((v) => `  - [${v.rule}, ${v.impact}] ${v.target}: ${v.summary}`);
    throw new Error(`${label}: ${violations.length} accessibility violation(s) at ${page.url()}\n${lines.join('\n')}`);
  }
}

/** Fails unless `locator`, once focused, shows an outline at least 2 px wide (WCAG 2.4.7). */
export async function assertFocusVisible(locator, label) {
  await locator.focus();
  const style = await locator.evaluate((el) => {
    const s = getComputedStyle(el);
    return { focused: document.activeElement === el, style: s.outlineStyle, width: parseFloat(s.outlineWidth) || 0 };
  });
  if (!style.focused || style.style === 'none' || style.width < 2) {
    throw new Error(`${label}: no visible focus indicator (outline ${style.style} ${style.width}px, focused ${style.focused})`);
  }
}
