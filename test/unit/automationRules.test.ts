/** Pure parts of automations: condition evaluation, the next time of day across DST, durations, and the catalogue version. */
import test from 'ava';
import { CATALOG_VERSION, triggers } from '../../src/automations/catalog.js';
import { durationMs } from '../../src/automations/durations.js';
import { evaluate, nextTimeOfDay } from '../../src/automations/runs.js';
import type { Condition } from '../../src/automations/rule.js';

const values = { 'order.totalWithVatEur': 250, 'order.paid': true, 'order.couponCode': '', 'event.market': 'sk', 'order.statusId': 2, 'order.country': null };

test('When conditions are evaluated, then all/any nest, operators compare by type, and a missing value satisfies only ne, not_in and is_empty', (t) => {
  const table: Array<[Condition, boolean]> = [
    [{ id: 'a', field: 'order.totalWithVatEur', op: 'gt', value: 200 }, true],
    [{ id: 'a', field: 'order.totalWithVatEur', op: 'lte', value: 200 }, false],
    [{ id: 'a', field: 'order.statusId', op: 'in', value: [1, 2] }, true],
    [{ id: 'a', field: 'order.statusId', op: 'not_in', value: [1, 2] }, false],
    [{ id: 'a', field: 'order.couponCode', op: 'is_empty' }, true],
    [{ id: 'a', field: 'order.country', op: 'is_empty' }, true],
    [{ id: 'a', field: 'order.country', op: 'eq', value: 'SK' }, false],
    [{ id: 'a', field: 'order.country', op: 'ne', value: 'SK' }, true],
    [{ id: 'a', field: 'order.country', op: 'gt', value: 1 }, false],
    [{ id: 'g', all: [{ id: 'a', field: 'order.paid', op: 'eq', value: true }, { id: 'h', any: [{ id: 'b', field: 'event.market', op: 'eq', value: 'cz' }, { id: 'c', field: 'event.market', op: 'contains', value: 's' }] }] }, true],
    [{ id: 'g', any: [{ id: 'a', field: 'order.paid', op: 'eq', value: false }, { id: 'b', field: 'event.market', op: 'eq', value: 'cz' }] }, false],
  ];
  for (const [condition, expected] of table) t.is(evaluate(condition, values), expected, JSON.stringify(condition));
});

test('When each comparison operator meets a value just below, at and just above its bound, then both sides of the boundary answer as the operator says', (t) => {
  // order.totalWithVatEur is 250 in `values`: each numeric operator is tried at 249.99, 250 and 250.01.
  const at = (op: string, value: unknown) =>
    evaluate({ id: 'a', field: 'order.totalWithVatEur', op, value } as Condition, values);
  const cases: Array<[string, boolean, boolean, boolean]> = [
    // operator, bound 250.01 (value below it), bound 250 (equal), bound 249.99 (value above it)
    ['gt', false, false, true],
    ['gte', false, true, true],
    ['lt', true, false, false],
    ['lte', true, true, false],
    ['eq', false, true, false],
    ['ne', true, false, true],
  ];
  for (const [op, below, equal, above] of cases) {
    t.deepEqual([at(op, 250.01), at(op, 250), at(op, 249.99)], [below, equal, above], op);
  }
  const text = (op: 'is_empty' | 'is_not_empty', actual: unknown) => evaluate({ id: 'a', field: 'f', op } as Condition, { f: actual });
  t.deepEqual(['', 'x', null, undefined, '0'].map((v) => text('is_not_empty', v)), [false, true, false, false, true], 'is_not_empty');
  t.deepEqual(['', 'x', null, undefined, '0'].map((v) => text('is_empty', v)), [true, false, true, true, false], 'is_empty');
  // A missing value never satisfies an ordering operator (SPEC: only ne, not_in and is_empty).
  for (const op of ['gt', 'gte', 'lt', 'lte']) for (const bound of [-1, 0, 1]) t.false(evaluate({ id: 'a', field: 'order.country', op, value: bound } as Condition, values), `${op} ${bound}`);
});

test('When the next 08:00 is computed in a zone, then it is the next local 08:00, also across the change to summer time', (t) => {
  const at = (iso: string, zone = 'Europe/Bratislava', time = '08:00') => nextTimeOfDay(time, zone, new Date(iso)).toISOString();
  t.is(at('2026-11-23T05:00:00.000Z'), '2026-11-23T07:00:00.000Z', 'winter: 08:00 CET is 07:00 UTC, later today');
  t.is(at('2026-11-23T07:00:00.000Z'), '2026-11-24T07:00:00.000Z', 'exactly 08:00: the next day');
  t.is(at('2026-03-28T12:00:00.000Z'), '2026-03-29T06:00:00.000Z', 'the night clocks go forward: 08:00 CEST is 06:00 UTC');
  t.is(at('2026-10-24T12:00:00.000Z'), '2026-10-25T07:00:00.000Z', 'the night clocks go back');
  t.is(at('2026-11-23T20:00:00.000Z', 'America/New_York', '23:30'), '2026-11-24T04:30:00.000Z');
});

test('When durations and the catalogue version are read, then they are exact and stable', (t) => {
  t.is(durationMs('30m'), 1_800_000);
  t.is(durationMs('2d'), 172_800_000);
  t.throws(() => durationMs('2w'));
  t.regex(CATALOG_VERSION, /^cat-[0-9a-f]{16}$/);
  t.true(triggers.every((tr) => tr.fields.some((f) => f.field === 'event.market')));
});
