/**
 * Marketing gender from the first name (src/customers/gender.ts over the gender.c name dictionary): a gender is
 * assigned only from a confidence of 0.8; below it the customer is `unknown` with the confidence reached.
 */
import test from 'ava';
import { inferGender } from '../../src/customers/gender.js';

test('When the name speaks for one gender with confidence 0.8, then it is assigned; at 0.79 and 0.75 it stays unknown', (t) => {
  t.deepEqual(inferGender('Adell', null, null), { marketingGender: 'male', genderSource: 'name_inference', genderConfidence: 0.8 });
  t.deepEqual(inferGender('Alex', null, null), { marketingGender: 'unknown', genderSource: 'name_inference', genderConfidence: 0.79 });
  t.deepEqual(inferGender('Aaf', null, null), { marketingGender: 'unknown', genderSource: 'name_inference', genderConfidence: 0.75 });
});

test('When the customer is a company or the name is not in the dictionary, then no gender is inferred', (t) => {
  t.deepEqual(inferGender('Adell', 'Adell s.r.o.', 'SK'), {});
  t.deepEqual(inferGender('Qxzzyv', null, 'SK'), { marketingGender: 'unknown', genderSource: 'unknown', genderConfidence: 0 });
  t.deepEqual(inferGender(null, null, 'SK'), { marketingGender: 'unknown', genderSource: 'unknown', genderConfidence: 0 });
});
