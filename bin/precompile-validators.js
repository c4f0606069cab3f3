#!/usr/bin/env node
// Run by bin/build.js on the freshly compiled tree (its one argument): writes ajv's standalone
// validation code for the schemas every start would otherwise compile, beside the modules that use
// them, so a start loads JavaScript instead of running ajv's compiler (~150 ms for
// organism.schema.json, ~30 ms per granted tool's tool_config schema, measured with --cpu-prof):
// - src/config/organism-schema.validator.cjs: organism.schema.json, with the digest of the schema
//   it was made from (a schema edited since the build is compiled at run time instead);
// - src/tools/tool-schemas.validators.cjs: Organism's own tools' tool_config schemas (as the
//   dispatcher checks them: own keys plus the common ones), their own config schemas and their
//   argument schemas, each exported under the hash of its JSON (src/tools/schema.ts looks them up
//   by it; any other schema compiles as before);
// - src/xml/payload-meta.validator.cjs: the draft 2020-12 meta-schema, as the payload ajv checks a
//   listener's payload schema before compiling it (ajv compiles it at the first payload schema).
// Each is made by an ajv set up by the same function the runtime uses, so its errors are the same.
// CommonJS, so the runtime loads them synchronously with require.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { _ } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const tree = process.argv[2];
if (!tree) {
  console.error('usage: precompile-validators.js <compiled tree>');
  process.exit(2);
}
const load = (path) => import(pathToFileURL(join(tree, path)).href);

// ajv-formats' formats, required by the generated code instead of being defined in it.
const code = { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` };

const config = await load('src/config/validate.js');
const { organismSchema } = await load('src/config/schema.js');
const configAjv = config.configAjv({ code });
const configModule = standaloneCode(configAjv, configAjv.compile(organismSchema));
writeFileSync(
  join(tree, 'src/config', config.PRECOMPILED_CONFIG_VALIDATOR),
  `${configModule}\nmodule.exports.digest = ${JSON.stringify(config.configSchemaDigest())};\n`,
);

const tools = await load('src/tools/schema.js');
const { configSchema } = await load('src/tools/tool-config.js');
const { loadNativeTools } = await load('src/tools/catalog.js');
const toolAjv = tools.newToolAjv({ code });
const refs = {};
for (const definition of await loadNativeTools(tree)) {
  const schemas = [definition.args, configSchema(definition.config)];
  if (definition.config !== undefined) schemas.push(definition.config);
  for (const schema of schemas) {
    const key = tools.schemaKey(schema);
    if (refs[key] !== undefined) continue;
    toolAjv.addSchema(schema, key);
    refs[key] = key;
  }
}
writeFileSync(join(tree, 'src/tools', tools.PRECOMPILED_TOOL_VALIDATORS), standaloneCode(toolAjv, refs));

const payload = await load('src/xml/validate.js');
const payloadAjv = payload.newPayloadAjv({ code });
const ajvVersion = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('ajv/package.json'), 'utf8'),
).version;
writeFileSync(
  join(tree, 'src/xml', payload.PRECOMPILED_META_VALIDATOR),
  `${standaloneCode(payloadAjv, payloadAjv.getSchema(payload.DEFAULT_META))}\nmodule.exports.ajvVersion = ${JSON.stringify(ajvVersion)};\n`,
);
console.log(
  `organism build: precompiled organism.schema.json, ${Object.keys(refs).length} tool schemas and the payload meta-schema`,
);
