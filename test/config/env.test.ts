// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings show organism.yaml's literal ${VAR} syntax
import { describe, expect, it } from 'vitest';
import { parseDotEnv } from '../../src/config/env.ts';
import { loadConfig } from '../../src/config/index.ts';
import { ConfigError } from '../../src/errors.ts';
import { fixture, issuesOf } from './helpers.ts';

describe('${VAR} interpolation', () => {
  it('uses defaults when variables are unset, re-typing unquoted numbers', async () => {
    const { config } = await loadConfig(fixture('env.yaml'), { env: {} });
    expect(config.organism.name).toBe('env-default');
    expect(config.server.port).toBe(7001);
    expect(config.server.host).toBe('127.0.0.1');
    expect(config.listeners[0]!.description).toBe('Echo for nobody, literal ${NOT_A_VAR}');
  });

  it('takes values from the environment over defaults', async () => {
    const { config } = await loadConfig(fixture('env.yaml'), {
      env: { ORGANISM_TEST_NAME: 'from-env', ORGANISM_TEST_PORT: '7002', ORGANISM_TEST_WHO: 'Ada: Lovelace' },
    });
    expect(config.organism.name).toBe('from-env');
    expect(config.server.port).toBe(7002);
    // A value from the environment stays text: its colon cannot turn into YAML structure.
    expect(config.listeners[0]!.description).toBe('Echo for Ada: Lovelace, literal ${NOT_A_VAR}');
  });

  it('a quoted reference stays a string; an unquoted one is re-typed as YAML would', async () => {
    const { config } = await loadConfig(fixture('env.yaml'), { env: { ORGANISM_TEST_HOST: '8080' } });
    expect(config.server.host).toBe('8080');
    const issues = await issuesOf(fixture('env.yaml'), { env: { ORGANISM_TEST_NAME: '123' } });
    expect(issues).toEqual([
      expect.objectContaining({
        line: 2,
        path: 'organism.name',
        message: 'must be a string; got a value that is not shown (it may be a secret)',
      }),
    ]);
  });

  it('an undefined variable without default is an error naming the variable and where', async () => {
    const issues = await issuesOf(fixture('env-missing.yaml'));
    expect(issues.map((i) => [i.line, i.column, i.path, i.message])).toEqual([
      [
        4,
        9,
        'server.host',
        'environment variable ORGANISM_TEST_UNSET_HOST is not set and has no default (write ${ORGANISM_TEST_UNSET_HOST:-default})',
      ],
      [
        8,
        27,
        'listeners[0].description',
        'environment variable ORGANISM_TEST_UNSET_WHO is not set and has no default (write ${ORGANISM_TEST_UNSET_WHO:-default})',
      ],
      [
        8,
        58,
        'listeners[0].description',
        'environment variable ORGANISM_TEST_UNSET_TOO is not set and has no default (write ${ORGANISM_TEST_UNSET_TOO:-default})',
      ],
    ]);
  });

  it('a bad value from the environment is reported without showing the value', async () => {
    const error = await loadConfig(fixture('env.yaml'), {
      env: { ORGANISM_TEST_PORT: 'hunter2-secret' },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const [issue] = (error as ConfigError).issues;
    expect(issue).toMatchObject({ line: 4, path: 'server.port' });
    expect(issue!.message).toBe('must be an integer; got a value that is not shown (it may be a secret)');
    expect((error as ConfigError).message).not.toContain('hunter2');
  });
});

describe('.env beside organism.yaml', () => {
  it('fills variables the environment lacks', async () => {
    const { config } = await loadConfig(fixture('dotenv/organism.yaml'), { env: {} });
    expect(config.organism.name).toBe('from-dotenv');
    expect(config.server.port).toBe(7123);
    expect(config.listeners[0]!.description).toBe('Echo, described in .env # not a comment');
  });

  it('loses to the real environment', async () => {
    const { config } = await loadConfig(fixture('dotenv/organism.yaml'), {
      env: { ORGANISM_DOTENV_NAME: 'from-real-env' },
    });
    expect(config.organism.name).toBe('from-real-env');
    expect(config.server.port).toBe(7123);
  });

  it('parses comments, export, quotes and reports bad lines with their line number', () => {
    const { vars, issues } = parseDotEnv(
      [
        '# comment',
        'A=1',
        'export B = two words # trailing comment',
        "C='single # kept'",
        'D="line\\nbreak"',
        'not a pair',
        '',
      ].join('\n'),
      '.env',
    );
    expect(vars).toEqual({ A: '1', B: 'two words', C: 'single # kept', D: 'line\nbreak' });
    expect(issues).toEqual([{ file: '.env', line: 6, column: 1, path: '', message: 'expected KEY=value' }]);
  });
});
