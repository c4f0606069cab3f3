/** Every form a server or a model was seen to echo a key in (issue 14). */
export function keyVariants(key: string): Record<string, string> {
  const bare = key.replace(/^sk-(ant-)?/, '');
  return {
    exact: key,
    'first 20 characters': key.slice(0, 20),
    'first 8 characters': key.slice(0, 8),
    base64: Buffer.from(key).toString('base64'),
    base64url: Buffer.from(key).toString('base64url'),
    'base64 of the first 20': Buffer.from(key.slice(0, 20)).toString('base64'),
    'upper case': key.toUpperCase(),
    'lower case': key.toLowerCase(),
    'without its prefix': bare,
    'without its prefix, upper case, first 12': bare.toUpperCase().slice(0, 12),
    'without its prefix, base64': Buffer.from(bare).toString('base64'),
    'in a Basic header': `Basic ${Buffer.from(`user:${key}`).toString('base64')}`,
  };
}

/**
 * The names of the variants of `key` that `text` still shows: any 10 characters in a row of one
 * (any case). In a Basic header only the characters that encode the key alone count.
 */
export function leaks(text: string, key: string): string[] {
  const lower = text.toLowerCase();
  const found: string[] = [];
  for (const [name, variant] of Object.entries(keyVariants(key))) {
    const v = (name === 'in a Basic header' ? variant.slice(14) : variant).toLowerCase();
    for (let i = 0; i + 10 <= v.length; i++) {
      if (lower.includes(v.slice(i, i + 10))) {
        found.push(name);
        break;
      }
    }
  }
  return found;
}
