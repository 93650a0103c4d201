/**
 * Issue 26.1 (ME5): the shorter input schemas of the largest write tools (`maxProperties` for closed objects whose
 * properties are all required, `type`/`required` lifted out of a `oneOf` of objects, short `$defs`) accept exactly what
 * the full schema accepts and what the server's own validation accepts, judged by the JSON Schema validator the
 * official SDK 1.x client uses.
 */
import test from 'ava';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { paramsJsonSchema } from '../../src/capabilities/jsonSchema.js';
import { toolNamed } from '../../api/mcp/tools.js';
import { tightened } from '../../api/mcp/compactSchema.js';

const validator = new AjvJsonSchemaValidator();
const accepts = (schema: unknown) => {
  const check = validator.getValidator(schema as never);
  return (value: unknown) => check(value).valid;
};

const discounts: unknown[] = [
  { type: 'percent', percent: 5 }, { type: 'percent', percent: 5, x: 1 }, { type: 'percent' }, { type: 'percent', percent: 0 }, { type: 'percent', percent: 100.001 },
  { type: 'fixed', amount: '5.00', currency: 'EUR' }, { type: 'fixed', amount: '5.00' }, { type: 'fixed', amount: '5.00', currency: 'EUR', y: 2 }, { type: 'fixed', amount: '5.001', currency: 'EUR' }, { type: 'fixed', amount: '5', currency: 'EURO' },
  { type: 'free_shipping' }, { type: 'free_shipping', percent: 3 }, { type: 'other' }, {}, 'percent', null,
];
const minimums: unknown[] = [null, { amount: '1', currency: 'EUR' }, { amount: '1', currency: 'EUR', z: 1 }, { amount: '1' }, '1', { amount: 1, currency: 'EUR' }];
const others: Array<Record<string, unknown>> = [{}, { usageLimit: 0 }, { usageLimit: 1_000_000 }, { usageLimit: 1_000_001 }, { perCustomerLimit: 1001 }, { categoryGuids: [''] }, { productCodes: ['P1'] }, { validFrom: '2026-12-31T23:00:00.000Z' }, { validUntil: 'tomorrow' }, { name: '' }, { unknown: 1 }];

function samples(tool: string): unknown[] {
  const out: unknown[] = [];
  for (const discount of discounts) for (const minOrderWithVat of minimums) for (const other of others) {
    const fields = { discount, minOrderWithVat, ...other };
    out.push(tool === 'coupons_update' ? { market: 'sk', code: 'X1', changes: fields } : { markets: ['sk'], code: 'X1', ...fields });
  }
  return out;
}

for (const name of ['coupons_ensure', 'coupons_update']) {
  test(`When ${name}'s shorter input schema judges ${samples(name).length} argument sets, then it agrees with the full schema and with the server's validation`, (t) => {
    const tool = toolNamed(name)!;
    const full = accepts(paramsJsonSchema(tool.capability));
    const advertised = accepts(tool.inputJsonSchema);
    let accepted = 0;
    for (const args of samples(name)) {
      const server = tool.capability.params.safeParse(args).success;
      t.is(advertised(args), full(args), JSON.stringify(args));
      t.is(advertised(args), server, `server vs advertised: ${JSON.stringify(args)}`);
      if (server) accepted++;
    }
    t.true(accepted > 20, `both sides of the boundary are exercised (${accepted} accepted)`);
  });
}

test('When a closed object does not require all its properties, then it keeps additionalProperties: false', (t) => {
  const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'], additionalProperties: false };
  t.deepEqual(tightened(schema), schema);
  t.deepEqual(tightened({ ...schema, required: ['a', 'b'] }), { type: 'object', properties: schema.properties, required: ['a', 'b'], maxProperties: 2 });
});
