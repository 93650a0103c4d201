/** The event catalogue holds exactly the event types of SPEC.md "Event types", with their data fields. */
import test from 'ava';
import { eventTypes, subscribableEventTypes } from '../../src/events/catalogue.js';
import { toEnvelope } from '../../src/events/outbox.js';
import { readSpec } from '../helpers/spec.js';

function specEventTable(): Map<string, { resourceType: string; fields: string[] }> {
  const spec = readSpec();
  const section = spec.slice(spec.indexOf('### Event types'), spec.indexOf('### Content-change events'));
  const rows = new Map<string, { resourceType: string; fields: string[] }>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 6 || !/^[a-z_.]+$/.test(cells[1]) || cells[1] === 'Event') continue;
    // Prose after "plus" ("plus identifiers of the order, shipment or claim") names no fields.
    const fields = cells[4] === 'same as product_content.changed' ? ['store_id'] : cells[4].split(/,? plus /)[0].split(',').map((f) => f.trim().replace(/`/g, '').split(' ')[0]).filter((f) => /^[a-z_.]+$/.test(f));
    rows.set(cells[1], { resourceType: cells[3].replace(/`/g, ''), fields });
  }
  return rows;
}

test('When the catalogue is compared with SPEC.md, then it has every event type with its resource type and data fields, and no other', (t) => {
  const spec = specEventTable();
  t.true(spec.size >= 18, `parsed ${spec.size} event types`);
  t.deepEqual(eventTypes.map((e) => e.type).sort(), [...spec.keys()].sort());
  for (const e of eventTypes) {
    const row = spec.get(e.type)!;
    if (e.type !== 'automation.action') t.is(e.resourceType, row.resourceType, e.type);
    const fields = Object.keys(e.data.shape);
    for (const field of row.fields) {
      const top = field.split('.')[0];
      if (field === 'as') continue; // "as above"
      t.true(fields.includes(top), `${e.type} has ${field}`);
    }
  }
});

test('When endpoints subscribe, then every type but automation.action can be chosen', (t) => {
  t.false(subscribableEventTypes.includes('automation.action'));
  t.is(subscribableEventTypes.length, eventTypes.length - 1);
});

test('When an outbox row becomes an envelope, then it is version 1 with the fields of SPEC "Envelope" and a millisecond UTC time', (t) => {
  const row = {
    id: '7', event_id: '5f0c6c1e-3b7a-4a53-9d7e-2f4f7c1b9a10', account_id: '1', shop_id: '2', store: 'sk', event_type: 'order.paid',
    resource_type: 'order', resource_id: '2026000123', data: { order_code: '2026000123' }, occurred_at: new Date(Date.UTC(2026, 10, 20, 9, 30, 0, 5)),
  };
  t.deepEqual(toEnvelope(row, 'demo'), {
    event_id: '5f0c6c1e-3b7a-4a53-9d7e-2f4f7c1b9a10', event_type: 'order.paid', version: 1, occurred_at: '2026-11-20T09:30:00.005Z',
    tenant: 'demo', store: 'sk', resource: { type: 'order', id: '2026000123' }, data: { order_code: '2026000123' },
  });
});
