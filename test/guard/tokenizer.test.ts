import { describe, expect, it } from 'vitest';
import { ShellParseError } from '../../src/errors.ts';
import { analyze } from '../../src/guard/shell/analyze.ts';
import { parse } from '../../src/guard/shell/parse.ts';
import { SUB, type Token, tokenize, type Word } from '../../src/guard/shell/tokenizer.ts';

const words = (src: string) =>
  tokenize(src)
    .filter((t): t is Word => t.kind === 'word')
    .map((w) => w.text);
const shape = (src: string) =>
  tokenize(src).map((t: Token) =>
    t.kind === 'word' ? `w:${t.text}` : t.kind === 'op' ? `op:${t.op}` : `r:${t.fd ?? ''}${t.op}`,
  );

describe('tokenizer', () => {
  it('removes quotes and escapes the way the shell does', () => {
    expect(words(`echo 'a b' "c d" e\\ f r''m \\rm "x"'y'z`)).toEqual([
      'echo',
      'a b',
      'c d',
      'e f',
      'rm',
      'rm',
      'xyz',
    ]);
  });

  it('keeps single-quoted text literal and unescapes only \\$ \\` \\" \\\\ in double quotes', () => {
    expect(words(`echo '$(rm) \\n' "\\$HOME \\n \\""`)).toEqual(['echo', '$(rm) \\n', '$HOME \\n "']);
  });

  it("decodes ANSI-C $'...' quoting", () => {
    expect(words(`$'\\x72\\x6d' $'a\\tb' $'\\162\\155' $'\\u0041'`)).toEqual(['rm', 'a\tb', 'rm', 'A']);
  });

  it('splits on every operator, with or without spaces', () => {
    expect(shape('a&&b||c;d&e|f|&g\nh')).toEqual([
      'w:a',
      'op:&&',
      'w:b',
      'op:||',
      'w:c',
      'op:;',
      'w:d',
      'op:&',
      'w:e',
      'op:|',
      'w:f',
      'op:|',
      'w:g',
      'op:\n',
      'w:h',
    ]);
  });

  it('reads redirections with and without file descriptors', () => {
    expect(shape('cmd >out 2>>err <in &>all 2>&1 >|f <<<here')).toEqual([
      'w:cmd',
      'r:>',
      'w:out',
      'r:2>>',
      'w:err',
      'r:<',
      'w:in',
      'r:&>',
      'w:all',
      'r:2>&',
      'w:1',
      'r:>|',
      'w:f',
      'r:<<<',
      'w:here',
    ]);
  });

  it('records command substitutions, backticks and process substitutions with their source', () => {
    const [, w] = tokenize('echo a$(ls -l "x)")b`pwd`') as Word[];
    expect(w!.text).toBe(`a${SUB}b${SUB}`);
    expect(w!.subs).toEqual([
      { kind: 'cmd', source: 'ls -l "x)"' },
      { kind: 'cmd', source: 'pwd' },
    ]);
    const t = tokenize('diff <(ls a) >(cat)') as Word[];
    expect(t[1]!.subs).toEqual([{ kind: 'proc_in', source: 'ls a' }]);
    expect(t[2]!.subs).toEqual([{ kind: 'proc_out', source: 'cat' }]);
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not templates
  it('treats $((arithmetic)), ${param} and $VAR as dynamic data, not commands', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
    const t = tokenize('echo $((1+2)) ${HOME:-/x} $USER') as Word[];
    expect(t.slice(1).map((w) => [w.text, w.dynamic, w.subs.length])).toEqual([
      ['$((1+2))', true, 0],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
      ['${HOME:-/x}', true, 0],
      ['$USER', true, 0],
    ]);
  });

  it('reads here-documents: body attached, quoted delimiter means no expansion', () => {
    const t = tokenize("cat <<EOF\nhello $(whoami)\nEOF\ncat <<'X'\n$(id)\nX\n");
    const redirs = t.filter((x) => x.kind === 'redir');
    expect(redirs.map((r) => r.heredoc)).toEqual([
      { body: 'hello $(whoami)', quoted: false, subs: [{ kind: 'cmd', source: 'whoami' }] },
      { body: '$(id)', quoted: true, subs: [] },
    ]);
    expect(words('cat <<-EOF\n\tx\n\tEOF\nls')).toEqual(['cat', 'EOF', 'ls']);
  });

  it('skips comments and line continuations', () => {
    expect(words('ls \\\n -la # rm -rf /')).toEqual(['ls', '-la']);
  });

  it.each([`echo "abc`, `echo 'abc`, 'echo $(ls', 'echo `ls', "echo $'abc", 'echo ${x'])(
    'refuses unbalanced %s',
    (src) => {
      expect(() => tokenize(src)).toThrow(ShellParseError);
    },
  );
});

describe('parser', () => {
  it('keeps pipelines and flattens control structure', () => {
    const s = parse('if a; then b | c; fi && (d) ; for x in 1 2; do e; done', 0);
    expect(s.pipelines.map((p) => p.commands.map((c) => c.words.map((w) => w.text).join(' ')))).toEqual([
      ['a'],
      ['b', 'c'],
      ['d'],
      ['e'],
    ]);
  });

  it('separates assignments from the command', () => {
    const [cmd] = parse('A=1 B=$(x) env', 0).pipelines[0]!.commands;
    expect(cmd!.assignments.map((w) => w.text)).toEqual(['A=1', `B=${SUB}`]);
    expect(cmd!.words.map((w) => w.text)).toEqual(['env']);
  });
});

describe('analysis', () => {
  const names = (src: string) => analyze(src).cmds.map((c) => [c.name, ...c.args].join(' '));

  it('peels wrappers wherever they are', () => {
    expect(
      names('sudo -u root timeout -s KILL 5 nice -n 10 nohup stdbuf -oL env A=1 command exec rm -rf x'),
    ).toEqual(['rm -rf x']);
    expect(analyze('sudo timeout 5 rm x').cmds[0]!.wrappers).toEqual(['sudo', 'timeout']);
    expect(names('xargs -0 -n 1 rm -f')).toEqual(['rm -f']);
    expect(analyze('xargs rm').cmds[0]!.viaXargs).toBe(true);
  });

  it('leaves wrappers that wrap nothing as commands', () => {
    expect(names('command -v git')).toEqual(['command -v git']);
    expect(names('sudo -l')).toEqual(['sudo -l']);
  });

  it('follows sh -c, eval, ssh, env -S, find -exec and literal text piped to a shell', () => {
    expect(names("bash -lc 'ls; pwd'")).toEqual(['bash -lc ls; pwd', 'ls', 'pwd']);
    expect(names('eval "a b"')).toEqual(['eval a b', 'a b']);
    expect(names('ssh -p 22 host "uptime"')).toEqual(['ssh -p 22 host uptime', 'uptime']);
    expect(names('env -S "x y"')).toEqual(['env -S x y', 'x y']);
    expect(names('find . -exec grep -l x {} \\;')).toEqual(['find . -exec grep -l x {} ;', 'grep -l x {}']);
    expect(names('echo "id -u" | sh')).toEqual(['echo id -u', 'sh', 'id -u']);
  });

  it('folds literal echo substitutions into the word', () => {
    expect(names('$(echo rm) -rf x')).toEqual(['echo rm', 'rm -rf x']);
    expect(analyze('$(whoami) x').cmds[1]!.dynamicName).toBe(true);
  });

  it('tracks literal cd for later relative paths', () => {
    const cmds = analyze('cd /srv && ls a; cd data && ls; cd $X; ls').cmds;
    expect(cmds.map((c) => c.cwd)).toEqual([null, '/srv', '/srv', '/srv/data', '/srv/data', null]);
  });

  it('refuses nesting deeper than 5', () => {
    expect(() => analyze('echo $(echo $(echo $(echo $(echo $(echo $(echo x))))))')).toThrow(
      /nested deeper than 5/,
    );
    expect(() => analyze('echo $(echo $(echo $(echo $(echo $(echo x)))))')).not.toThrow();
    // sh -c strings count as levels too: bash -c (1) sh -c (2) and four $( ) make six.
    expect(() => analyze(`bash -c 'sh -c "eval \\$(echo \\$(echo \\$(echo \\$(echo ls))))"'`)).toThrow(
      /nested deeper/,
    );
    expect(() => analyze(`bash -c 'sh -c "eval \\$(echo \\$(echo \\$(echo ls)))"'`)).not.toThrow();
  });
});
