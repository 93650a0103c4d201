/** The affiliate writes' text rules (sanitising, plain text, variable report) and the SMTP configuration checks. */
import test from 'ava';
import { plainText, sanitiseHtml, variableReport } from '../../src/affiliate/writes/text.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';

test('When HTML carries scripts, handlers, styles, frames or javascript: links, then sanitising removes them and says so', (t) => {
  const dirty = '<p onclick="x()" style="color:red">Hi <b>there</b></p><script>steal()</script><style>p{}</style><iframe src="https://evil.example"></iframe>'
    + '<a href="javascript:alert(1)">bad</a><a href="https://ok.example" onmouseover="x()">ok</a><img src=x onerror=alert(1)><a href="{{partner.link}}">mine</a>';
  const { html, changed } = sanitiseHtml(dirty);
  t.true(changed);
  t.is(html, '<p>Hi <b>there</b></p><a>bad</a><a href="https://ok.example">ok</a><a href="{{partner.link}}">mine</a>');
  t.false(/steal|evil|onerror|onclick|style/.test(html));
});

test('When HTML is already clean, then it is kept byte for byte and not reported as changed', (t) => {
  const clean = '<h2>Welcome to {{programme.name}}</h2><p>Share your link {{partner.link}} or your code {{partner.discount_code}}.</p><ul><li>One</li></ul>';
  t.deepEqual(sanitiseHtml(clean), { html: clean, changed: false });
});

test('When a title or subject has tags, then plain text keeps only the words and the variables', (t) => {
  t.deepEqual(plainText('About {{partner.discount_code}} <b>now</b> & then'), { text: 'About {{partner.discount_code}} now & then', changed: true });
  t.deepEqual(plainText('Plain'), { text: 'Plain', changed: false });
});

test('When texts use variables, then the report names known ones by canonical name, unknown ones, and ones the surface does not fill', (t) => {
  const report = variableReport('articles', '<p>{{coupon_code}} {{partner.tiktok}} {{payout.amount}}</p>', null, 'Title {{shop.name}} {{partner.tiktok}}');
  t.deepEqual(report.variables, ['partner.discount_code', 'payout.amount', 'shop.name']);
  t.deepEqual(report.unknownVariables, ['partner.tiktok']);
  t.deepEqual(report.variablesNotOnSurface, ['payout.amount']);
  t.deepEqual(variableReport('emails', '{{payout.amount}}').variablesNotOnSurface, []);
});

test('When SMTP_URL is set without SMTP_FROM, or is not an smtp URL, then start-up is refused; with both it loads', (t) => {
  t.regex(t.throws(() => loadConfig({ SMTP_URL: 'smtp://mail.example:587' }), { instanceOf: ConfigError })!.message, /SMTP_FROM: required with SMTP_URL/);
  t.regex(t.throws(() => loadConfig({ SMTP_URL: 'http://mail.example', SMTP_FROM: 'a@b.example' }), { instanceOf: ConfigError })!.message, /SMTP_URL/);
  const config = loadConfig({ SMTP_URL: 'smtps://user:pass@mail.example:465', SMTP_FROM: 'Partners <partners@example.com>' });
  t.is(config.SMTP_URL, 'smtps://user:pass@mail.example:465');
  t.is(loadConfig({}).SMTP_URL, undefined);
});
