import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { WidgetsModule } from './fixtures/widgets/widgets.module';
import { FUTURE_DEPRECATION } from './fixtures/widgets/widget-lab.controller';
import { insertOrders } from './support/orders';
import { describeWithBinary } from './support/system-binary';
import { createTestApp, listen, TestApp } from './support/test-app';

/** Debian's chromium: no browser is downloaded (`apt-get install -y chromium`). */
const CHROMIUM = '/usr/bin/chromium';

/**
 * Each browser step's own bound: a step that cannot happen fails with its own message, well
 * within the test's timeout, and a page that loads slowly beside other suites still loads.
 */
const STEP_TIMEOUT_MS = 20_000;

function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

describeWithBinary('chromium', 'chromium')('Swagger UI in a real browser', () => {
  let t: TestApp;
  let baseUrl: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await listen(t);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  /**
   * A fresh page of Swagger UI, authorized with the test key, for `work`; browser errors fail the
   * test, and a failure leaves a screenshot behind.
   */
  async function inAuthorizedPage(
    version: string | undefined,
    work: (page: Page) => Promise<void>,
  ): Promise<void> {
    if (!browser) throw new Error('chromium did not start');
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') failures.push(message.text());
    });
    try {
      await page.goto(`${baseUrl}/docs`);
      await page.getByRole('heading', { name: /Petstore API/ }).waitFor();
      if (version !== undefined) {
        await page.locator('.topbar select').selectOption({ label: version });
        // The label ends with the version the heading then shows: `v2 (2.0.0)`.
        const semver = /\(([\d.]+)\)$/.exec(version)?.[1] ?? version;
        const heading = new RegExp(`Petstore API.*${semver.replaceAll('.', '\\.')}`);
        await page.getByRole('heading', { name: heading }).waitFor();
      }
      await page
        .getByRole('button', { name: /Authorize/ })
        .first()
        .click();
      const dialog = page.locator('.modal-ux');
      await dialog.locator('input').first().fill(t.key);
      await dialog.locator('button.modal-btn.authorize').click();
      await dialog.locator('button.modal-btn.btn-done').click();
      await work(page);
      expect(failures).toEqual([]);
    } catch (error) {
      const screenshot = join(tmpdir(), `swagger-ui-failure-${Date.now()}.png`);
      await page.screenshot({ path: screenshot, fullPage: true });
      throw new Error(
        `${String(error)}
screenshot: ${screenshot}; browser errors: ${failures.join(' | ')}`,
        { cause: error },
      );
    } finally {
      await page.close();
    }
  }

  it('offers the v2 document: selected, authorized, it tries a filtered page and shows nextCursor', async () => {
    await insertOrders(t.db, [
      { petId: '11', complete: false },
      { petId: '12', complete: false },
      { petId: '13', complete: true },
    ]);
    await inAuthorizedPage('v2 (2.0.0)', async (page) => {
      const operation = page.locator('#operations-orders-listOrders');
      await operation.locator('.opblock-summary').click();
      await operation.getByRole('button', { name: 'Try it out' }).click();
      // The value's select, not the one of the documented examples beside it.
      await operation
        .locator('tr[data-param-name="complete"] select:not(.examples-select-element)')
        .selectOption('false');
      await operation.locator('tr[data-param-name="limit"] input').fill('1');
      // "Try it out" starts from the documented examples: clear those this page does not want.
      for (const name of ['petId', 'shipDateFrom', 'shipDateTo']) {
        await operation.locator(`tr[data-param-name="${name}"] input`).fill('');
      }
      const listed = page.waitForResponse((res) =>
        res.url().startsWith(`${baseUrl}/v2/store/orders?`),
      );
      await operation.getByRole('button', { name: 'Execute' }).click();
      const response = await listed;
      expect(response.status()).toBe(200);
      expect(new URL(response.url()).searchParams.get('complete')).toBe('false');
      expect(response.request().headers().authorization).toBe(`Bearer ${t.key}`);

      const live = operation.locator('.live-responses-table .response');
      await live.waitFor();
      expect((await live.locator('.response-col_status').textContent())?.trim()).toBe('200');
      const shown = await live.locator('.response-col_description').textContent();
      expect(shown).toContain('"petId": 11');
      expect(shown).toContain('"hasMore": true');
      expect(shown).toContain('"nextCursor": "');
    });
  });

  it('authorizes with a key, runs listOrders with "Try it out" and shows the orders', async () => {
    await insertOrders(t.db, [{ petId: '4242', status: 'pending' }, { status: 'shipped' }]);
    await inAuthorizedPage(undefined, async (page) => {
      const operation = page.locator('#operations-orders-listOrders');
      await operation.locator('.opblock-summary').click();
      await operation.getByRole('button', { name: 'Try it out' }).click();
      const listed = page.waitForResponse((res) => res.url() === `${baseUrl}/v1/store/orders`);
      await operation.getByRole('button', { name: 'Execute' }).click();
      const response = await listed;
      expect(response.status()).toBe(200);
      expect(response.request().headers().authorization).toBe(`Bearer ${t.key}`);

      // What the person sees: the live response's status and the orders in its body.
      const live = operation.locator('.live-responses-table .response');
      await live.waitFor();
      expect((await live.locator('.response-col_status').textContent())?.trim()).toBe('200');
      const shown = await live.locator('.response-col_description').textContent();
      expect(shown).toContain('"petId": 4242');
      expect(shown).toContain('"status": "shipped"');
    });
  });
});

describeWithBinary('chromium', 'chromium')('Swagger UI of a module with marked routes', () => {
  let t: TestApp;
  let baseUrl: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    t = await createTestApp({ imports: [WidgetsModule] });
    baseUrl = await listen(t);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
  });

  /** An operation's path in its summary line (Swagger UI gives a deprecated one its own class). */
  const SUMMARY_PATH = '.opblock-summary-path, .opblock-summary-path__deprecated';

  /** The computed `text-decoration-line` of the operation's path, as the browser draws it. */
  const pathDecoration = (page: Page, operationId: string): Promise<string> =>
    page
      .locator(`[id="operations-widget-lab-${operationId}"]`)
      .locator(SUMMARY_PATH)
      // Runs in the page, where the DOM is (the tests compile without its types).
      .evaluate((el) => {
        const { getComputedStyle } = globalThis as unknown as {
          getComputedStyle(element: unknown): { textDecorationLine: string };
        };
        return getComputedStyle(el).textDecorationLine;
      });

  it('strikes the deprecated operation through, shows its sunset, and leaves the others as they are', async () => {
    if (!browser) throw new Error('chromium did not start');
    const page = await browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    try {
      await page.goto(`${baseUrl}/docs`);
      const legacy = page.locator('[id="operations-widget-lab-getLegacyWidget"]');
      await legacy.waitFor();
      expect(await legacy.getAttribute('class')).toContain('opblock-deprecated');
      expect(await legacy.locator(SUMMARY_PATH).textContent()).toContain('/widget-lab/legacy/{id}');
      expect(await pathDecoration(page, 'getLegacyWidget')).toBe('line-through');
      expect(await pathDecoration(page, 'getRetiredWidget')).toBe('line-through');
      expect(await pathDecoration(page, 'previewWidget')).toBe('none');
      expect(
        await page.locator('[id="operations-widget-lab-previewWidget"]').getAttribute('class'),
      ).not.toContain('opblock-deprecated');

      await legacy.locator('.opblock-summary').click();
      await legacy.getByText(`Sunset: ${FUTURE_DEPRECATION.sunset}`).waitFor();
      expect(failures).toEqual([]);
    } catch (error) {
      const screenshot = join(tmpdir(), `swagger-ui-failure-${Date.now()}.png`);
      await page.screenshot({ path: screenshot, fullPage: true });
      throw new Error(`${String(error)}\nscreenshot: ${screenshot}`, { cause: error });
    } finally {
      await page.close();
    }
  });
});
