// Python's repr() for the values that appear in SGLang's log lines and argparse errors.

/** repr() of a Python str: single quotes unless the text has a ' and no ". */
export function pyStr(s) {
  const useDouble = s.includes("'") && !s.includes('"');
  const q = useDouble ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0);
    if (ch === '\\') out += '\\\\';
    else if (ch === q) out += `\\${q}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${q}${out}${q}`;
}

/** repr() of a Python float. */
export function pyFloat(n) {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return `${n}.0`;
  return String(n);
}

/**
 * repr() of a JS value as Python would print it. Numbers are ints unless `floatKeys` says otherwise; pass a
 * {__float: n} wrapper to force a float.
 */
export function pyRepr(v) {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return pyStr(v);
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : pyFloat(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (typeof v === 'object' && '__float' in v) return pyFloat(v.__float);
  if (typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyStr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  }
  return String(v);
}
