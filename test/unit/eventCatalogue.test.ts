/** The event catalogue holds exactly the event types of SPEC.md "Event types", with their data fields. */
import test from 'ava';
import { eventTypes, subscribableEventTypes } from '../../src/events/catalogue.js';
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
