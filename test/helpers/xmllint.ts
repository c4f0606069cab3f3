/**
 * A real XSD validator for the XSD that `organism describe` writes: libxml2's xmllint (Debian's
 * libxml2-utils, installed by .ci/run). Each instance is its own file of one run of xmllint, which
 * says per file whether it validates.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const XMLLINT = 'xmllint';

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(XMLLINT, args, { encoding: 'utf8' });
  if (r.error !== undefined) {
    throw new Error(
      `xmllint could not run (${r.error.message}): install libxml2-utils (apt-get install libxml2-utils)`,
    );
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface XsdCheck {
  /** xmllint's complaints about the schema itself ('' when it compiled). */
  schemaErrors: string;
  /** Per instance, in order: whether it validates against the schema. */
  valid: boolean[];
  /** xmllint's messages for the instances. */
  messages: string;
}

/** Validates `instances` (XML documents) against `xsd` with xmllint. */
export function xmllintValidate(xsd: string, instances: string[]): XsdCheck {
  const dir = mkdtempSync(join(tmpdir(), 'organism-xsd-'));
  try {
    const schema = join(dir, 'schema.xsd');
    writeFileSync(schema, xsd);
    const files = instances.map((doc, i) => {
      const file = join(dir, `i${i}.xml`);
      writeFileSync(file, doc);
      return file;
    });
    // An instance-less run still compiles the schema: an empty document to validate.
    const empty = join(dir, 'empty.xml');
    writeFileSync(empty, '<empty-document-for-schema-check/>');
    const r = run(['--noout', '--schema', schema, ...(files.length > 0 ? files : [empty])]);
    const schemaErrors = r.status === 5 ? r.stderr : (r.stderr.match(/^.*schema\.xsd.*$/gm) ?? []).join('\n');
    const valid = files.map((file) =>
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} validates$`, 'm').test(r.stderr),
    );
    return { schemaErrors, valid, messages: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
