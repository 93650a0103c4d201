/**
 * The Customers screen in headless Chromium: an owner opens the directory, pages through it, opens a customer, and
 * exports CSV and XLSX; both files hold exactly what the API's customers list returns for the same rights (every
 * page, field by field), and a member without personal data gets neither names on screen nor e-mail columns in
 * the file.
 */
import ExcelJS from 'exceljs';
import type { Page } from 'playwright-core';
import { makePerson } from '../helpers/application.js';
import { applicationPageTest, type ApplicationPageContext } from '../helpers/applicationPages.js';
import { signInInBrowser } from '../helpers/browser.js';
import { issueKey } from '../helpers/server.js';

const test = applicationPageTest();

/** Every customer of shop sk as the API lists them for a key with these scopes. */
async function apiDirectory(t: { context: ApplicationPageContext }, scopes: string[]): Promise<Array<Record<string, any>>> {
  const key = await issueKey(t.context.database.db, { scopes: scopes as never });
  const all: Array<Record<string, any>> = [];
  let cursor = '';
  do {
    const response = await fetch(`${t.context.server.baseUrl}/api/v1/customers?market=sk&limit=250${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { Authorization: `Bearer ${key}` } });
    const body = await response.json() as { data: Array<Record<string, any>>; meta: { nextCursor: string | null } };
    all.push(...body.data);
    cursor = body.meta.nextCursor ?? '';
  } while (cursor);
  return all;
}

/** A minimal RFC 4180 reader (quoted fields, doubled quotes), for checking our own writer from the outside. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let fieldText = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { fieldText += '"'; i++; } else if (c === '"') quoted = false; else fieldText += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(fieldText); fieldText = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(fieldText); rows.push(row); row = []; fieldText = ''; i++; } else fieldText += c;
  }
  return rows;
}

async function download(page: Page, selector: string): Promise<{ name: string; bytes: Buffer }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const stream = await file.createReadStream();
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return { name: file.suggestedFilename(), bytes: Buffer.concat(chunks) };
}

test.serial('When an owner exports the customers of a shop, then the CSV and the XLSX hold exactly the API directory, every page', async (t) => {
  const { page } = t.context;
  const owner = await makePerson(t.context.database.db, { role: 'owner' });
  await signInInBrowser(page, owner.email, owner.password);
  await page.click('header nav a:has-text("Customers")');
  await page.selectOption('select[name=market]', 'sk');
  await page.click('#customer-filters button[type=submit]');
  const firstRows = await page.locator('#customers tbody tr').count();
  t.true(firstRows > 0, 'the demo shop has customers');

  const api = await apiDirectory(t, ['customers:read', 'personal-data:read', 'reports:read']);
  t.true(api.length > 50, 'more customers than one page, so paging is exercised');
  t.is(firstRows, 50);
  await page.click('a:has-text("Next page")');
  t.is(await page.locator('#customers tbody tr').first().getAttribute('data-customer-key'), api[50].customerKey);

  await page.goto('/app/customers?market=sk');
  const csv = await download(page, '#export-csv');
  t.regex(csv.name, /^customers-sk-\d{4}-\d{2}-\d{2}\.csv$/);
  t.is(csv.bytes.subarray(0, 3).toString('hex'), 'efbbbf', 'UTF-8 BOM');
  const [header, ...rows] = parseCsv(csv.bytes.subarray(3).toString('utf8'));
  t.is(rows.length, api.length);
  t.deepEqual(rows.map((r) => r[header.indexOf('customerKey')]), api.map((c) => c.customerKey));
  t.deepEqual(rows.map((r) => r[header.indexOf('email')]), api.map((c) => c.email ?? ''));
  t.deepEqual(rows.map((r) => r[header.indexOf('phone')]), api.map((c) => c.phone ?? ''), 'phone numbers (+421 …) are not mistaken for formulas');
  t.deepEqual(rows.map((r) => Number(r[header.indexOf('ordersCount')])), api.map((c) => c.ordersCount));
  t.deepEqual(rows.map((r) => r[header.indexOf('lifetimeRevenue')]), api.map((c) => c.lifetimeRevenue.map((m: { amount: string; currency: string }) => `${m.amount} ${m.currency}`).join('; ')));
  t.deepEqual(rows.map((r) => r[header.indexOf('language.code')]), api.map((c) => c.language.code));

  const xlsx = await download(page, '#export-xlsx');
  t.regex(xlsx.name, /\.xlsx$/);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(xlsx.bytes as never);
  const sheet = workbook.getWorksheet('Customers')!;
  const values = (n: number) => header.map((_, i) => sheet.getRow(n).getCell(i + 1).value).map((v) => (v === null || v === undefined ? '' : String(v)));
  t.deepEqual(values(1), header);
  t.is(sheet.rowCount, api.length + 1);
  t.deepEqual(values(2), rows[0]);
  t.deepEqual(values(api.length + 1), rows[rows.length - 1]);

  await page.click(`#customers tbody tr:first-child a`);
  t.regex(new URL(page.url()).pathname, new RegExp(`^/app/customers/sk/${api[0].customerKey}$`));
  t.regex(await page.textContent('#customer-facts') ?? '', new RegExp(api[0].email.replace(/[.+]/g, '\\$&')));
  t.is((await page.textContent('#lifetime-revenue'))!.trim(), api[0].lifetimeRevenue.map((m: { amount: string; currency: string }) => `${m.amount} ${m.currency}`).join('; '));
});

test.serial('When a member without personal data exports customers, then no name or contact column is in the file nor on screen', async (t) => {
  const { page } = t.context;
  const member = await makePerson(t.context.database.db, { role: 'member', permissions: [], shops: ['sk'] });
  await signInInBrowser(page, member.email, member.password);
  await page.goto('/app/customers?market=sk');
  t.regex(await page.textContent('main') ?? '', /need[s]? the personal-data permission/);
  t.false(await page.locator('#customers th:has-text("Lifetime revenue")').isVisible());
  const csv = await download(page, '#export-csv');
  const [header, ...rows] = parseCsv(csv.bytes.subarray(3).toString('utf8'));
  for (const column of ['email', 'phone', 'firstName', 'lastName', 'company', 'lifetimeRevenue', 'revenue']) t.false(header.includes(column), column);
  t.true(header.includes('customerKey'));
  const api = await apiDirectory(t, ['customers:read']);
  t.deepEqual(rows.map((r) => r[header.indexOf('customerKey')]), api.map((c) => c.customerKey));
  // A shop outside the member's shops is refused, not shown empty.
  const refused = await page.goto('/app/customers?market=cz');
  t.is(refused?.status(), 403);
});

test('When a customer field starts like a spreadsheet formula, then the CSV neutralises it and the XLSX keeps it as text', async (t) => {
  const { toCsv, toXlsx } = await import('../../src/customers/export.js');
  const table = { columns: ['lastName', 'phone', 'amount'], rows: [['=HYPERLINK("http://x")', '+421 903 707 972', '-12.50 EUR'], ['@SUM(A1)', '+cmd', null]] };
  const csv = toCsv(table).toString('utf8').slice(1).split('\r\n');
  t.is(csv[1], '"\'=HYPERLINK(""http://x"")",+421 903 707 972,-12.50 EUR');
  t.is(csv[2], '\'@SUM(A1),\'+cmd,');
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(await toXlsx(table) as never);
  t.is(workbook.getWorksheet('Customers')!.getRow(2).getCell(1).value, '=HYPERLINK("http://x")');
});
