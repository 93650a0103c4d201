/**
 * Documents over the real HTTP server and Postgres: listings by business date, search, one invoice with relations,
 * personal-data and shop rules, PDFs (bytes, hash, text) stable across reads, renderings and syncs, and the search
 * plan on a table big enough that the planner would otherwise scan.
 */
import crypto from 'node:crypto';
import { PDFParse } from 'pdf-parse';
import { DemoPlatform } from '../../src/platforms/demo/adapter.js';
import { documentChangeTimes } from '../../src/platforms/demo/documents.js';
import { documentSearchSql } from '../../src/queries/documents.js';
import { syncArea } from '../../src/sync/runner.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { appTest } from '../helpers/app.js';
import { TEST_NOW } from '../helpers/constants.js';
import { issueKey } from '../helpers/server.js';
import { get, assertError } from '../helpers/rest.js';
import { shopId } from '../helpers/shops.js';
import { rowForInsert } from '../helpers/db.js';

const test = appTest({ scopes: ['invoices:read', 'personal-data:read', 'orders:read'] });
const HOUR = 3_600_000;


/** Minor units of a decimal string, exactly. */
const minor = (amount: string) => Math.round(Number(amount) * 100);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The local calendar date of an instant in a zone (the test's own computation of an issue date). */
const localDate = (iso: string, timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(iso));

test.serial('When another shop holds a credit note and a proforma naming the same invoice code and order, then the invoice lists only its own shop\'s', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(db, 'demo', 'sk');
  const cz = await shopId(db, 'demo', 'cz');
  const invoice = await db('documents').where({ shop_id: sk, type: 'invoice' }).whereNotNull('order_code').orderBy('code').first('code', 'order_code');
  const own = (await get(t, `/invoices/${invoice.code}?market=sk`)).body.data;
  // Codes repeat across shops (each shop numbers its own documents): copies in cz that point at the sk invoice's code and order.
  const copies: number[] = [];
  try {
    for (const [type, change] of [['credit_note', { related_code: invoice.code }], ['proforma', { order_code: invoice.order_code }]] as const) {
      const row = await db('documents').where({ shop_id: cz, type }).orderBy('code').first();
      const [inserted] = await db('documents').insert({ ...rowForInsert(row, ['id', 'business_date', 'number_search', 'customer_search']), ...change, code: `${row.code}-X` }).returning('id');
      copies.push(inserted.id);
    }
    const read = (await get(t, `/invoices/${invoice.code}?market=sk`)).body.data;
    t.deepEqual(read.creditNotes, own.creditNotes);
    t.deepEqual(read.proformas, own.proformas);
  } finally {
    await db('documents').whereIn('id', copies).delete();
  }
});

test.serial('When more invoices match a search than the limit, then exactly limit come back: 1 for limit=1, 2 for limit=2, all 4 for limit=4, and 4 for limit=5', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(db, 'demo', 'sk');
  const rows = await db('documents').where({ shop_id: sk, type: 'invoice' }).orderBy('id').limit(4);
  // Four invoices that match one text: two by their number, two by their customer's company (two arms of the search).
  const added: number[] = [];
  try {
    for (const [i, row] of rows.entries()) {
      const change = i < 2 ? { code: `${row.code}-QZKV${i}` } : { code: `${row.code}-X${i}`, customer_company: `Qzkv Trading ${i}` };
      const [inserted] = await db('documents').insert({ ...rowForInsert(row, ['id', 'business_date', 'number_search', 'customer_search']), ...change }).returning('id');
      added.push(inserted.id);
    }
    for (const [limit, expected] of [[1, 1], [2, 2], [4, 4], [5, 4]]) {
      const res = await get(t, `/invoices?market=sk&query=qzkv&limit=${limit}`);
      t.is(res.status, 200, JSON.stringify(res.body));
      t.is(res.body.data.length, expected, `limit ${limit}`);
      t.false(res.body.meta.hasMore);
    }
  } finally {
    await db('documents').whereIn('id', added).delete();
  }
});

test('When invoices are listed, then they come newest first by businessDate (tax date, else issue date) across pages with nothing repeated', async (t) => {
  const seen = new Set<string>();
  let cursor: string | null = null;
  let previous: [string, string] | null = null;
  for (let page = 0; page < 4; page++) {
    const res = await get(t, `/invoices?market=sk&limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    for (const d of res.body.data) {
      t.false(seen.has(d.code));
      seen.add(d.code);
      t.is(d.businessDate, d.taxDate ?? localDate(d.issuedAt, 'Europe/Bratislava'));
      if (previous) t.true(previous[0] >= d.businessDate, 'newest first');
      previous = [d.businessDate, d.code];
    }
    cursor = res.body.meta.nextCursor;
    t.true(res.body.meta.hasMore);
  }
  t.is(seen.size, 160);
  const proformas = await get(t, '/documents?market=sk&documentType=proforma&limit=20');
  t.is(proformas.status, 200);
  for (const d of proformas.body.data) {
    t.is(d.taxDate, null, 'proformas have no tax date (D21)');
    t.is(d.businessDate, localDate(d.issuedAt, 'Europe/Bratislava'));
  }
});

test.serial('When an invoice\'s tax date and issue date fall on either side of a period bound, then the tax date decides, both bounds included', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(db, 'demo', 'sk');
  const row = await db('documents').where({ shop_id: sk, type: 'invoice' }).whereNotNull('tax_date').orderBy('code').first();
  // The period 2026-03-30..2026-03-31: each copy's issue date says the opposite of its tax date.
  const cases = [
    { code: `${row.code}-TAX-TO`, issue_date: '2026-03-27', tax_date: '2026-03-31', listed: true },
    { code: `${row.code}-TAX-FROM`, issue_date: '2026-04-02', tax_date: '2026-03-30', listed: true },
    { code: `${row.code}-TAX-AFTER`, issue_date: '2026-03-31', tax_date: '2026-04-01', listed: false },
    { code: `${row.code}-TAX-BEFORE`, issue_date: '2026-03-30', tax_date: '2026-03-29', listed: false },
  ];
  const copies: number[] = [];
  try {
    for (const c of cases) {
      const [inserted] = await db('documents').insert({ ...rowForInsert(row, ['id', 'business_date', 'number_search', 'customer_search']), code: c.code, issue_date: c.issue_date, tax_date: c.tax_date }).returning('id');
      copies.push(inserted.id);
    }
    const res = await get(t, '/documents?market=sk&documentType=invoice&from=2026-03-30&to=2026-03-31&limit=250');
    t.is(res.status, 200);
    t.false(res.body.meta.hasMore);
    const codes = res.body.data.map((d: any) => d.code);
    for (const c of cases) t.is(codes.includes(c.code), c.listed, `${c.code}: tax ${c.tax_date}, issued ${c.issue_date}`);
    t.deepEqual(res.body.data.find((d: any) => d.code === cases[0].code).businessDate, '2026-03-31');
    t.true(res.body.data.every((d: any) => d.businessDate === '2026-03-30' || d.businessDate === '2026-03-31'));
  } finally {
    await db('documents').whereIn('id', copies).delete();
  }
});

test('When a period is given, then only documents whose businessDate lies in it are listed; with query it is a 400', async (t) => {
  const res = await get(t, '/credit-notes?market=cz&from=2026-06-01&to=2026-08-31&limit=250');
  t.is(res.status, 200);
  t.true(res.body.data.length > 0);
  t.true(res.body.data.every((d: any) => d.businessDate >= '2026-06-01' && d.businessDate <= '2026-08-31' && d.documentType === 'credit_note'));
  const raw = await t.context.database.db('documents').where({ shop_id: await shopId(t.context.database.db, 'demo', 'cz'), type: 'credit_note' })
    .whereRaw(`coalesce(tax_date, (issued_at at time zone 'Europe/Prague')::date) between '2026-06-01' and '2026-08-31'`).count<{ count: string }[]>('* as count');
  t.is(res.body.data.length, Number(raw[0].count));
  assertError(t, await get(t, '/invoices?market=sk&query=FA&from=2026-01-01'), 400, 'INVALID_PARAMETER_COMBINATION');
  assertError(t, await get(t, '/invoices?market=sk&query=FA&cursor=abc'), 400, 'INVALID_PARAMETER_COMBINATION');
  assertError(t, await get(t, '/invoices?market=sk&query=FA&limit=101'), 400, 'LIMIT_OUT_OF_RANGE');
  assertError(t, await get(t, '/invoices?market=sk&limit=251'), 400, 'LIMIT_OUT_OF_RANGE');
  assertError(t, await get(t, '/documents?market=sk'), 400, 'MISSING_PARAMETER');
  assertError(t, await get(t, '/documents?market=sk&documentType=receipt'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/documents?market=sk&documentType=invoice&validity=maybe'), 400, 'INVALID_PARAMETER');
  assertError(t, await get(t, '/invoices?market=sk&from=2026-13-01'), 400, 'INVALID_PARAMETER');
});

test('When documents are filtered by validity and lifecycle, then only those are listed, and a cancelled proforma is not valid', async (t) => {
  const cancelled = await get(t, '/documents?market=sk&documentType=proforma&validity=cancelled&limit=250');
  t.is(cancelled.status, 200);
  t.true(cancelled.body.data.length > 0, 'some transfers were never paid and their proformas voided');
  t.true(cancelled.body.data.every((d: any) => d.valid === false && d.lifecycle === 'cancelled' && d.sourceState === 'stornovana'));
  const settled = await get(t, '/documents?market=sk&documentType=proforma&lifecycle=settled&limit=5');
  t.true(settled.body.data.length > 0);
  t.true(settled.body.data.every((d: any) => d.valid && d.lifecycle === 'settled'));
  const credited = await get(t, '/documents?market=sk&documentType=invoice&lifecycle=credited&limit=5');
  t.true(credited.body.data.length > 0);
  const valid = await get(t, '/documents?market=sk&documentType=proforma&validity=valid&limit=250');
  t.true(valid.body.data.every((d: any) => d.valid === true));
});

test('When an invoice is read, then its lines and VAT per rate add up to its totals, which equal the order\'s including discount lines', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(t.context.database.db, 'demo', 'sk');
  const withCoupon = await db('orders as o').join('documents as d', (j) => j.on('d.shop_id', 'o.shop_id').andOn('d.order_code', 'o.code'))
    .where({ 'o.shop_id': sk, 'd.type': 'invoice' }).whereNotNull('o.coupon_code').first('d.code', 'o.code as order_code');
  t.truthy(withCoupon, 'the demo data has an invoiced order with a coupon');
  const res = await get(t, `/invoices/${withCoupon.code}?market=sk`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const invoice = res.body.data;
  const order = (await get(t, `/orders/${withCoupon.order_code}?market=sk`)).body.data;
  t.is(invoice.orderCode, order.code);
  t.deepEqual([invoice.totalWithVat, invoice.totalWithoutVat, invoice.totalVat], [order.totalWithVat, order.totalWithoutVat, order.totalVat]);
  t.true(invoice.items.some((i: any) => i.kind === 'discount' && minor(i.totalWithVat.amount) < 0));
  t.is(sum(invoice.items.map((i: any) => minor(i.totalWithVat.amount))), minor(invoice.totalWithVat.amount));
  t.is(sum(invoice.items.map((i: any) => minor(i.totalWithoutVat.amount))), minor(invoice.totalWithoutVat.amount));
  t.is(sum(invoice.vatBreakdown.map((v: any) => minor(v.total.amount))), minor(invoice.totalWithVat.amount));
  t.is(sum(invoice.vatBreakdown.map((v: any) => minor(v.vat.amount))), minor(invoice.totalVat.amount));
  t.true(invoice.vatBreakdown.every((v: any) => v.total.currency === 'EUR'));

  // An invoice with a credit note and a proforma lists both.
  const corrected = await db('documents as c').join('documents as p', (j) => j.on('p.shop_id', 'c.shop_id').andOn('p.order_code', 'c.order_code'))
    .where({ 'c.shop_id': sk, 'c.type': 'credit_note', 'p.type': 'proforma' }).first('c.related_code', 'c.code as credit_code', 'p.code as proforma_code');
  if (corrected) {
    const full = (await get(t, `/invoices/${corrected.related_code}?market=sk`)).body.data;
    t.deepEqual(full.creditNotes.map((c: any) => c.code), [corrected.credit_code]);
    t.deepEqual(full.proformas.map((p: any) => p.code), [corrected.proforma_code]);
    t.true(['credited', 'partially_credited'].includes(full.lifecycle));
  }
  const anyCredit = await db('documents').where({ shop_id: sk, type: 'credit_note' }).first('code', 'related_code');
  const credit = (await get(t, `/credit-notes?market=sk&query=${anyCredit.code}&limit=1`)).body.data[0];
  t.is(credit.relatedInvoiceCode, anyCredit.related_code);
  t.true(minor(credit.totalWithVat.amount) < 0);
  t.is(sum(credit.items.map((i: any) => minor(i.totalWithVat.amount))), minor(credit.totalWithVat.amount));

  // HUF and CZK documents carry their own currency.
  const hu = (await get(t, '/invoices?market=hu&limit=1')).body.data[0];
  t.is(hu.currency, 'HUF');
  t.is(hu.totalWithVat.currency, 'HUF');
});

test('When documents are searched, then exact numbers come first, partial numbers next, and customers only with personal-data:read', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(t.context.database.db, 'demo', 'sk');
  const target = await db('documents').where({ shop_id: sk, type: 'invoice' }).whereNotNull('customer_last_name').orderBy('id', 'desc').first('code', 'order_code', 'variable_symbol', 'customer_last_name');
  for (const q of [target.code, target.code.toLowerCase(), target.order_code, target.variable_symbol]) {
    const res = await get(t, `/invoices?market=sk&query=${encodeURIComponent(q)}`);
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.body.data[0].code, target.code, `query ${q}`);
    t.false(res.body.meta.hasMore);
    t.is(res.body.meta.nextCursor, null);
  }
  // A part of a number: every hit contains it, at most `limit`.
  const part = target.order_code.slice(-5);
  const partial = await get(t, `/invoices?market=sk&query=${part}&limit=7`);
  t.true(partial.body.data.length > 0 && partial.body.data.length <= 7);
  t.true(partial.body.data.every((d: any) => `${d.code} ${d.orderCode} ${d.variableSymbol}`.includes(part)));

  const byName = await get(t, `/invoices?market=sk&query=${encodeURIComponent(target.customer_last_name)}&limit=100`);
  t.true(byName.body.data.length > 0);
  t.true(byName.body.data.every((d: any) => `${d.customer.firstName} ${d.customer.lastName} ${d.customer.company}`.toLowerCase().includes(target.customer_last_name.toLowerCase())));
  const limited = await issueKey(db, { scopes: ['invoices:read'] });
  const hidden = await get(t, `/invoices?market=sk&query=${encodeURIComponent(target.customer_last_name)}`, limited);
  t.is(hidden.status, 200);
  t.is(hidden.body.data.length, 0, 'without personal-data:read a name finds nothing');
  const own = await get(t, `/invoices?market=sk&query=${target.code}`, limited);
  const c = own.body.data[0].customer;
  t.deepEqual(Object.keys(c).sort(), ['city', 'country'], 'personal data is absent, not null');
  t.is((await get(t, `/invoices?market=sk&query=zzzzqqq`)).body.data.length, 0);
});

test('When a shop or a record is out of reach, then 403 for the shop, 404 for another shop\'s or tenant\'s record, 403 without the scope', async (t) => {
  const db = t.context.database.db;
  const czOnly = await issueKey(db, { scopes: ['invoices:read'], shops: ['cz'] });
  assertError(t, await get(t, '/invoices?market=sk', czOnly), 403, 'SHOP_FORBIDDEN');
  assertError(t, await get(t, '/documents?market=sk&documentType=invoice', czOnly), 403, 'SHOP_FORBIDDEN');
  const skInvoice = await db('documents').where({ shop_id: await shopId(t.context.database.db, 'demo', 'sk'), type: 'invoice' }).first('code');
  assertError(t, await get(t, `/invoices/${skInvoice.code}?market=cz`), 404, 'NOT_FOUND');
  assertError(t, await get(t, `/documents/invoice/${skInvoice.code}/pdf?market=cz`), 404, 'NOT_FOUND');
  const acme = await issueKey(db, { account: 'acme', scopes: ['invoices:read'] });
  const acmeRes = await get(t, `/invoices/${skInvoice.code}?market=sk`, acme);
  t.is(acmeRes.status, 404, 'another tenant\'s invoice is not found');
  const noScope = await issueKey(db, { scopes: ['orders:read'] });
  assertError(t, await get(t, '/invoices?market=sk', noScope), 403, 'INSUFFICIENT_SCOPE');
  assertError(t, await get(t, `/documents/invoice/${skInvoice.code}/pdf?market=sk`, noScope), 403, 'INSUFFICIENT_SCOPE');
});

async function pdfText(base64: string): Promise<string> {
  const parser = new PDFParse({ data: Buffer.from(base64, 'base64') });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

test('When a PDF is read twice and rendered again, then the bytes are identical, the hash is theirs, and the text shows number and total', async (t) => {
  const db = t.context.database.db;
  for (const market of ['sk', 'cz', 'hu', 'pl']) {
    const invoice = (await get(t, `/documents?market=${market}&documentType=invoice&limit=10`)).body.data.find((d: any) => d.pdfAvailable);
    const first = await get(t, `/documents/invoice/${invoice.code}/pdf?market=${market}`);
    t.is(first.status, 200, JSON.stringify(first.body));
    const bytes = Buffer.from(first.body.data.base64, 'base64');
    t.is(first.body.data.contentType, 'application/pdf');
    t.is(first.body.data.sizeBytes, bytes.length);
    t.is(first.body.data.sha256, crypto.createHash('sha256').update(bytes).digest('hex'));
    t.is(bytes.subarray(0, 5).toString(), '%PDF-');
    const second = await get(t, `/documents/invoice/${invoice.code}/pdf?market=${market}`);
    t.is(second.body.data.base64, first.body.data.base64);
    const text = await pdfText(first.body.data.base64);
    t.true(text.includes(invoice.code), `${market}: number in the PDF`);
    t.true(text.includes(`${invoice.totalWithVat.amount} ${invoice.currency}`), `${market}: total in the PDF`);
    // The totals line prints the stored base without VAT and the VAT, each in the document's currency (labels of pdf.ts's languages).
    const raw = await db('documents').where({ shop_id: await shopId(db, 'demo', market), type: 'invoice', code: invoice.code }).first('total_without_vat', 'total_vat', 'total_with_vat', 'currency');
    t.not(raw.total_without_vat, raw.total_with_vat);
    const [base, vat] = ({ sk: ['Základ', 'DPH'], cz: ['Základ', 'DPH'], hu: ['Nettó', 'ÁFA'], pl: ['Netto', 'VAT'] } as Record<string, string[]>)[market];
    const flat = text.replace(/\s+/g, ' ');
    const currency = String(raw.currency).trim();
    t.true(flat.includes(`${base}: ${raw.total_without_vat} ${currency} ${vat}: ${raw.total_vat} ${currency}`), `${market}: base ${raw.total_without_vat} and VAT ${raw.total_vat} in the PDF`);
    const shopName = (await db('shops').where({ id: await shopId(t.context.database.db, 'demo', market) }).first('name')).name;
    t.true(text.includes(shopName), `${market}: shop name with its own characters (${shopName})`);
    // Rendering again from the stored document gives the very same bytes (nothing depends on the time of rendering).
    const stored = await db('documents').where({ shop_id: await shopId(t.context.database.db, 'demo', market), type: 'invoice', code: invoice.code }).first('id');
    await db('document_pdfs').where({ document_id: stored.id }).delete();
    const again = await get(t, `/documents/invoice/${invoice.code}/pdf?market=${market}`);
    t.is(again.body.data.sha256, first.body.data.sha256);
  }
});

test('When a document has no printable form, then /documents says pdfAvailable false and the PDF path is a 404 PDF_NOT_AVAILABLE', async (t) => {
  const db = t.context.database.db;
  const missing = await db('documents').where({ shop_id: await shopId(t.context.database.db, 'demo', 'sk'), pdf_available: false }).first('type', 'code');
  t.truthy(missing);
  assertError(t, await get(t, `/documents/${missing.type}/${missing.code}/pdf?market=sk`), 404, 'PDF_NOT_AVAILABLE');
  assertError(t, await get(t, '/documents/invoice/FA000/pdf?market=sk'), 404, 'NOT_FOUND');
  assertError(t, await get(t, '/documents/receipt/FA000/pdf?market=sk'), 400, 'INVALID_PARAMETER');
});

test.serial('When the shop issues documents and moves their state after the load, then the next sync stores them with their PDF and a re-sync changes nothing', async (t) => {
  const db = t.context.database.db;
  const platform = new DemoPlatform({ db });
  const shop = (await findSyncShop(db, 'demo', 'sk'))!;
  const until = new Date(TEST_NOW.getTime() + 48 * HOUR);
  // What changes in the window, computed from the platform's plans.
  const { timeline } = platform.model(shop);
  const issued: string[] = [];
  const moved: string[] = [];
  for (const plan of timeline.plans(TEST_NOW.getTime() - 90 * 24 * HOUR, until.getTime())) {
    for (const d of plan.documents) {
      const inWindow = documentChangeTimes(plan, d).some((x) => x > TEST_NOW.getTime() && x <= until.getTime());
      if (d.issuedAt.getTime() > TEST_NOW.getTime() && d.issuedAt.getTime() <= until.getTime()) issued.push(`${d.type}|${d.code}`);
      else if (inWindow && d.issuedAt.getTime() <= TEST_NOW.getTime()) moved.push(`${d.type}|${d.code}`);
    }
  }
  t.true(issued.length > 0 && moved.length > 0, `documents issued (${issued.length}) and moved (${moved.length}) in the window`);
  const before = new Map((await db('documents').where({ shop_id: shop.id }).select('type', 'code', 'lifecycle')).map((r) => [`${r.type}|${r.code}`, r.lifecycle]));

  const first = await syncArea(db, platform, shop, 'documents', until, { batchSize: 50 });
  t.true(first.written >= issued.length, 'every issued document stored');
  const freshRows = await db('documents as d').leftJoin('document_pdfs as p', 'p.document_id', 'd.id')
    .where('d.shop_id', shop.id).whereIn(db.raw(`d.type || '|' || d.code`) as any, issued).select('d.type', 'd.code', 'd.pdf_available', 'p.sha256');
  t.is(freshRows.length, issued.length);
  for (const r of freshRows) t.is(r.sha256 !== null, r.pdf_available, `${r.code}: a PDF stored at sync exactly when the shop has one`);
  const after = new Map((await db('documents').where({ shop_id: shop.id }).select('type', 'code', 'lifecycle')).map((r) => [`${r.type}|${r.code}`, r.lifecycle]));
  t.true(moved.some((k) => before.get(k) !== after.get(k)), 'a state moved with the sync');

  const withPdf = freshRows.find((r) => r.pdf_available)!;
  const read = await get(t, `/documents/${withPdf.type}/${withPdf.code}/pdf?market=sk`);
  t.is(read.body.data.sha256, withPdf.sha256.trim(), 'the read returns the bytes stored at sync');
  const events = await db('outbox_events').where({ shop_id: shop.id, event_type: 'invoice.created' }).count<{ count: string }[]>('* as count');
  t.is(Number(events[0].count), issued.filter((k) => k.startsWith('invoice|')).length);

  // The same window again (checkpoint moved back): nothing written, the same bytes.
  await db('sync_checkpoints').where({ shop_id: shop.id, area: 'documents' }).update({ through: TEST_NOW });
  const again = await syncArea(db, platform, shop, 'documents', until, { batchSize: 50 });
  t.is(again.written, 0);
  t.is(again.events, 0);
  const reread = await get(t, `/documents/${withPdf.type}/${withPdf.code}/pdf?market=sk`);
  t.is(reread.body.data.base64, read.body.data.base64);
});

test.serial('When documents are searched on a table far bigger than a shop\'s, then the plan uses indexes, never a sequential scan of documents', async (t) => {
  const db = t.context.database.db;
  const sk = await shopId(t.context.database.db, 'demo', 'sk');
  const cz = await shopId(t.context.database.db, 'demo', 'cz');
  // 100,000 synthetic invoices in another shop make the table large enough that a scan would be planned if no index fitted.
  await db.raw(`insert into documents (shop_id, type, code, order_code, issued_at, tax_date, issue_date, currency, total_with_vat, total_without_vat, total_vat,
      variable_symbol, customer_first_name, customer_last_name, customer_company)
    select ?, 'invoice', 'FX' || g, 'X' || g, now(), current_date, current_date, 'CZK', 100, 82.64, 17.36, 'V' || g, 'Jana', 'Nováková' || (g % 5000), null
      from generate_series(1, 100000) g`, [cz]);
  await db.raw('analyze documents');
  for (const [text, withCustomer] of [['FA2026001234', true], ['Novák', true], ['00123', false]] as const) {
    const { sql, bindings } = documentSearchSql(sk, 'invoice', text, 20, withCustomer);
    const plan = (await db.raw(`explain ${sql}`, bindings)).rows.map((r: any) => r['QUERY PLAN']).join('\n');
    t.false(/Seq Scan on documents/.test(plan), `${text}:\n${plan}`);
    t.regex(plan, /Index|Bitmap/);
  }
  const res = await get(t, '/invoices?market=cz&query=FX19999&limit=5');
  t.is(res.body.data[0].code, 'FX19999', 'exact number first');
});
