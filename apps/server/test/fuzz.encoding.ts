// How the fuzz engine (see fuzz.ts) writes values into request bodies and URLs.

/** A value written into JSON text as is: `9007199254740993`, `1e309`, `-0`, which JSON.stringify cannot write. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of a value that may hold RawJson leaves. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([key, v]) => `${JSON.stringify(key)}:${toJsonText(v)}`).join(',')}}`;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

/** Percent-encodes every byte of the UTF-8 form but the unreserved characters (a lone surrogate becomes U+FFFD). */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
