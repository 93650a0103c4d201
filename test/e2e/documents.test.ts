/**
 * The Documents screen in headless Chromium: a person finds an invoice by searching its number, opens its view and
 * downloads its PDF; the downloaded bytes equal the API's `documents.pdf` bytes (and its SHA-256), and the PDF's text
 * carries the totals and buyer the screen shows. A person without personal data sees no buyer and gets no PDF.
 */
import crypto from 'node:crypto';
import { PDFParse } from 'pdf-parse';
import { makePerson } from '../helpers/application.js';
import { applicationPageTest } from '../helpers/applicationPages.js';
import { signInInBrowser } from '../helpers/browser.js';
import { issueKey } from '../helpers/server.js';

const test = applicationPageTest(async (database) => {
  const invoice = await database.db('documents as d').join('shops as s', 's.id', 'd.shop_id')
    .where({ 's.code': 'sk', 'd.type': 'invoice', 'd.pdf_available': true }).orderBy('d.issued_at', 'desc').first('d.code');
  return { invoiceCode: invoice.code as string };
});

test.serial('When a person searches an invoice, opens it and downloads its PDF, then the bytes are the API\'s and the PDF prints what the screen shows', async (t) => {
  const { page, invoiceCode, server } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: ['personal-data'], shops: ['sk'] });
  await signInInBrowser(page, person.email, person.password);
  await page.click('header nav a:has-text("Documents")');
  t.true(await page.locator('#documents tbody tr').count() > 0, 'the list shows invoices');
  await page.fill('input[name=query]', invoiceCode);
  await page.click('#document-filters button[type=submit]');
  await page.click(`#documents tr[data-code="${invoiceCode}"] a`);
  t.regex(new URL(page.url()).pathname, new RegExp(`^/app/documents/sk/invoice/${invoiceCode}$`));
  const totalOnScreen = (await page.textContent('#total-due'))!.trim();
  const buyerOnScreen = (await page.innerText('#buyer')).split('\n').map((l) => l.trim()).filter(Boolean);
  t.true(buyerOnScreen.length > 0);

  const [file] = await Promise.all([page.waitForEvent('download'), page.click('#download-pdf')]);
  const chunks: Buffer[] = [];
  for await (const chunk of await file.createReadStream()) chunks.push(chunk as Buffer);
  const downloaded = Buffer.concat(chunks);
  t.is(downloaded.subarray(0, 5).toString('latin1'), '%PDF-');

  const key = await issueKey(t.context.database.db, { scopes: ['invoices:read'] as never });
  const api = await (await fetch(`${server.baseUrl}/api/v1/documents/invoice/${invoiceCode}/pdf?market=sk`, { headers: { Authorization: `Bearer ${key}` } })).json() as { data: { base64: string; sha256: string } };
  t.true(downloaded.equals(Buffer.from(api.data.base64, 'base64')), 'the same bytes as the API');
  t.is(crypto.createHash('sha256').update(downloaded).digest('hex'), api.data.sha256);

  const parser = new PDFParse({ data: new Uint8Array(downloaded) });
  const pdfText = (await parser.getText()).text.replace(/\s+/g, ' ');
  await parser.destroy();
  t.true(pdfText.includes(totalOnScreen.replace(/\s+/g, ' ')), `the PDF prints "${totalOnScreen}"`);
  for (const line of buyerOnScreen) t.true(pdfText.includes(line), `the PDF prints the buyer line "${line}"`);
});

test.serial('When a person without personal data opens a document, then the buyer is hidden and the PDF is refused', async (t) => {
  const { page, invoiceCode } = t.context;
  const person = await makePerson(t.context.database.db, { role: 'member', permissions: [], shops: ['sk'] });
  await signInInBrowser(page, person.email, person.password);
  await page.goto(`/app/documents/sk/invoice/${invoiceCode}`);
  t.regex(await page.textContent('#buyer') ?? '', /personal-data permission/);
  t.is(await page.locator('#download-pdf').count(), 0);
  const refused = await page.request.get(`/app/documents/sk/invoice/${invoiceCode}/pdf`);
  t.is(refused.status(), 403);
  const otherShop = await page.goto(`/app/documents/cz/invoice/${invoiceCode}`);
  t.is(otherShop?.status(), 403, 'a shop outside the person\'s shops is refused');
});
