/**
 * The People page in headless Chromium: the owner takes the personal-data permission away from a member, and the key
 * the member issued stops returning personal data at the very next request; the owner resets the member's second
 * factor and disables them, and the key stops working. A member gets no People page; the owner cannot change
 * themselves there.
 */
import { loadPerson } from '../../src/people/people.js';
import { issueKeyAsPerson } from '../../src/people/keys.js';
import { makePerson } from '../helpers/application.js';
import { applicationPageTest } from '../helpers/applicationPages.js';
import { signInInBrowser } from '../helpers/browser.js';

const test = applicationPageTest();

test.serial('When the owner narrows, resets and disables a member on the People page, then the member\'s key follows at once', async (t) => {
  const { page, database, server } = t.context;
  const { db } = database;
  const member = await makePerson(db, { role: 'member', permissions: ['personal-data', 'keys:manage'], shops: ['sk'] });
  await db('people').where({ id: member.id }).update({ totp_enabled_at: new Date(), totp_secret: 'x' });
  const { key } = await issueKeyAsPerson(db, (await loadPerson(db, member.id))!, {
    name: 'member key', interfaces: ['rest'], scopes: ['customers:read', 'personal-data:read'], shops: ['sk'], expiresInDays: null, writeMode: 'read_only',
  }, new Date());
  const firstCustomer = async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/customers?market=sk&limit=1`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: response.status, body: await response.json() as { data: Array<Record<string, unknown>> } };
  };
  t.true('email' in (await firstCustomer()).body.data[0], 'personal data while the member has the permission');

  const owner = await makePerson(db, { role: 'owner' });
  await signInInBrowser(page, owner.email, owner.password);
  await page.click('header nav a:has-text("People")');
  const card = page.locator(`article[data-person-id="${member.id}"]`);
  await card.locator('summary').click();
  await card.locator('input[name=permissions][value="personal-data"]').uncheck();
  await card.locator('form.person-rights button[type=submit]').click();
  await page.waitForURL(/\/app\/people\?done=update$/);
  t.regex(await page.textContent('#people-outcome') ?? '', /Saved/);
  const narrowed = await firstCustomer();
  t.is(narrowed.status, 200);
  t.false('email' in narrowed.body.data[0], 'the key lost personal data at the next request');

  await page.locator(`article[data-person-id="${member.id}"] button:has-text("Reset second factor")`).click();
  await page.waitForURL(/done=reset$/);
  t.is((await db('people').where({ id: member.id }).first('totp_enabled_at')).totp_enabled_at, null);

  await page.locator(`article[data-person-id="${member.id}"] button:has-text("Disable")`).click();
  await page.waitForURL(/done=disable$/);
  t.regex(await page.locator(`article[data-person-id="${member.id}"]`).textContent() ?? '', /disabled/);
  t.is((await firstCustomer()).status, 401, 'a disabled person\'s key stops working');

  // The owner's own card offers no change.
  t.is(await page.locator(`article[data-person-id="${owner.id}"] form`).count(), 0);
});

test.serial('When a member opens People, then it is refused and not in the menu', async (t) => {
  const { page } = t.context;
  const member = await makePerson(t.context.database.db, { role: 'admin', permissions: ['keys:manage'] });
  await signInInBrowser(page, member.email, member.password);
  t.is(await page.locator('header nav a:has-text("People")').count(), 0);
  const response = await page.goto('/app/people');
  t.is(response?.status(), 403);
});
