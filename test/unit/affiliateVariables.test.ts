/** The variable registry of the affiliate programme's texts: one source for the list, the text check and the rendering. */
import test from 'ava';
import { checkText, VARIABLES } from '../../src/affiliate/variables.js';
import { renderText } from '../../src/affiliate/content.js';

test('When a text is checked, then each variable is named once with its canonical name and unknown ones are listed apart', (t) => {
  const result = checkText('{{partner_name}} {{ partner.name }} {{coupon_code}} {{shop.url}} {{nope}} {{nope}} {not.a.variable}');
  t.deepEqual(result.used, [
    { written: 'partner_name', canonical: 'partner.name' },
    { written: 'partner.name', canonical: 'partner.name' },
    { written: 'coupon_code', canonical: 'partner.discount_code' },
    { written: 'shop.url', canonical: 'shop.url' },
  ]);
  t.deepEqual(result.unknown, ['nope']);
});

test('When the registry is read, then names and aliases are unique and every variable has an example and a surface', (t) => {
  const names = VARIABLES.flatMap((v) => [v.name, ...v.aliases]);
  t.is(new Set(names).size, names.length);
  for (const v of VARIABLES) t.true(v.example.length > 0 && v.surfaces.length > 0, v.name);
});

test('When a text is rendered from a snapshot, then known values are filled in and unknown variables stay as written', (t) => {
  t.is(renderText('Hi {{partner.handle}}, {{ shop.name }} {{missing}}', { 'partner.handle': 'KATKA', 'shop.name': 'Demo' }), 'Hi KATKA, Demo {{missing}}');
});
