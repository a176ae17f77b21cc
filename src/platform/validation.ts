import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; under NodeNext its default export arrives as the module namespace.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);

const common: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

function make(coerce: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ ...common, coerceTypes: coerce });
  addFormats(ajv);
  return ajv;
}

/**
 * Bodies are validated strictly (a number is not a string, unknown fields are errors); query strings,
 * path parameters and headers arrive as text and are coerced to the schema's types.
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = make(false);
  const coercing = make('array');
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object);
  };
}
