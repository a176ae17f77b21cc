import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Db } from '../../src/db/store.js';
import type { EventCatalogue } from '../../src/modules/module.js';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);

/**
 * Every event a test made, checked against what its module declares (docs/api.md#events): the stored
 * envelope (the bytes every delivery sends) must be `{id, type, created_at, livemode, data}` with `data` valid
 * against the event type's payload schema. Answers one line per event that is not; the test app runs
 * it when it closes, and fails the file when any line comes back.
 */
export async function eventMismatches(db: Db, catalogue: EventCatalogue): Promise<string[]> {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const validators = new Map<string, ValidateFunction>();
  for (const [type, { payload }] of catalogue) {
    validators.set(
      type,
      ajv.compile({
        type: 'object',
        additionalProperties: false,
        required: ['id', 'type', 'created_at', 'livemode', 'data'],
        properties: {
          id: { type: 'string', pattern: '^evt_[0-9a-z]{26}$' },
          type: { const: type },
          created_at: { type: 'string', format: 'date-time' },
          livemode: { type: 'boolean' },
          data: payload,
        },
      }),
    );
  }
  const rows = await db.selectFrom('events').select(['id', 'type', 'envelope']).execute();
  const out: string[] = [];
  for (const row of rows) {
    const validate = validators.get(row.type);
    if (!validate) {
      out.push(`${row.id}: ${row.type} is not a declared event type`);
      continue;
    }
    if (!validate(JSON.parse(row.envelope))) {
      const why = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      out.push(`${row.id} (${row.type}): ${why}`);
    }
  }
  return out;
}
