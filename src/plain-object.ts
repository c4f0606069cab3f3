/**
 * Writing a key read from untrusted data into a fresh object. `out[key] = value` with the key
 * "__proto__" (JSON.parse makes it an own property) sets the object's prototype instead: the key
 * vanishes from what is copied, hashed, signed or audited, and the copy inherits attacker data.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
