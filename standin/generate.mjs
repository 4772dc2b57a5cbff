// Deterministic "generation": a toy tokenizer, right answers to the usual smoke prompts, and plausible filler that
// honours max_new_tokens / max_tokens, stop strings and ignore_eos. Nothing here sleeps; the HTTP layer paces the
// tokens with the configured TTFT and TPOT.

/** Split text into token strings (words keep their leading space, punctuation stands alone). */
export function tokenize(text) {
  if (!text) return [];
  return text.match(/\s*[A-Za-z]+|\s*\d|\s*[^\sA-Za-z\d]|\s+$/g) ?? [];
}

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/** A stable token id for a token string. */
export function tokenId(tok, vocab) {
  return 1000 + (hash(tok) % Math.max(1, vocab - 2000));
}

export function countTokens(text) {
  return tokenize(text).length;
}

const FILLER = [
  'This is a simulated response from the SGLang stand-in.',
  'No GPU was used to produce it, and the words carry no meaning beyond filling the requested length.',
  'The server paces each token with the configured time to first token and time per output token.',
  'It answers a few smoke-test questions correctly, such as the capital of France and simple sums.',
  'Everything else is deterministic filler chosen from the prompt, so repeated requests get the same text.',
  'Tokens are counted with a toy tokenizer that splits words and punctuation.',
];

function filler(seed) {
  const start = hash(seed) % FILLER.length;
  const parts = [];
  for (let i = 0; i < FILLER.length; i++) parts.push(FILLER[(start + i) % FILLER.length]);
  return parts.join(' ');
}

/** A short arithmetic expression "a op b" from the prompt, evaluated. */
function arithmetic(prompt) {
  const m = prompt.match(/(-?\d+(?:\.\d+)?)\s*([+\-*x×/])\s*(-?\d+(?:\.\d+)?)/);
  if (!m) return null;
  const a = Number(m[1]);
  const b = Number(m[3]);
  const op = m[2];
  let r;
  if (op === '+') r = a + b;
  else if (op === '-') r = a - b;
  else if (op === '*' || op === 'x' || op === '×') r = a * b;
  else if (op === '/' && b !== 0) r = a / b;
  else return null;
  return {
    expr: `${m[1]} ${op === 'x' || op === '×' ? '*' : op} ${m[3]}`,
    value: Number.isInteger(r) ? String(r) : String(Math.round(r * 1e6) / 1e6),
  };
}

/**
 * The text the model "wants" to produce before end-of-sequence.
 * @param {string} prompt the raw prompt (native/completions) or the last user message (chat)
 * @param {boolean} chat chat models answer in a sentence, completions continue the text
 */
export function answerFor(prompt, chat) {
  const p = prompt.trim();
  if (/capital (city )?of france/i.test(p)) return chat ? 'The capital of France is Paris.' : ' Paris.';
  const arith = arithmetic(p);
  if (arith && /\b(what|how much|compute|calculate|is|=)\b|\?|=\s*$/i.test(p)) {
    return chat ? `${arith.expr} = ${arith.value}.` : ` ${arith.value}`;
  }
  const echo = p.match(
    /\b(?:reply|respond|answer|say)\b(?: with)?(?: exactly| only)?[:\s]+["“']?([^"”'\n]+?)["”']?\s*\.?$/i,
  );
  if (echo && echo[1].length < 80) return chat ? echo[1] : ` ${echo[1]}`;
  if (/^\s*(hi|hello|hey)\b/i.test(p)) return chat ? 'Hello! How can I help you today?' : ' Hello!';
  if (/count from 1 to (\d+)/i.test(p)) {
    const n = Math.min(50, Number(p.match(/count from 1 to (\d+)/i)[1]));
    const s = Array.from({ length: n }, (_, i) => String(i + 1)).join(', ');
    return chat ? s : ` ${s}`;
  }
  return chat ? filler(p) : ` ${filler(p)}`;
}

/**
 * Plan the output tokens.
 * @param {{prompt: string, chat: boolean, maxTokens: number|null, stop?: string[]|null, ignoreEos?: boolean,
 *   eosId: number, vocab: number}} o
 * @returns {{tokens: string[], ids: number[], finish: {type: 'stop'|'length', matched?: number|string, length?: number}}}
 */
export function plan(o) {
  const natural = tokenize(answerFor(o.prompt, o.chat));
  const limit = o.maxTokens === null || o.maxTokens === undefined ? Number.POSITIVE_INFINITY : Math.max(0, o.maxTokens);
  let tokens = natural;
  if (o.ignoreEos && Number.isFinite(limit)) {
    const extra = tokenize(` ${filler(o.prompt)}`);
    tokens = [...natural];
    while (tokens.length < limit) tokens.push(...extra);
  }
  /** @type {{type: 'stop'|'length', matched?: number|string, length?: number}} */
  let finish = { type: 'stop', matched: o.eosId };
  if (tokens.length > limit) {
    tokens = tokens.slice(0, limit);
    finish = { type: 'length', length: limit };
  } else if (o.ignoreEos && tokens.length >= limit) {
    tokens = tokens.slice(0, limit);
    finish = { type: 'length', length: limit };
  }
  if (o.stop && o.stop.length > 0) {
    let text = '';
    for (let i = 0; i < tokens.length; i++) {
      text += tokens[i];
      const hit = o.stop.find((s) => s && text.includes(s));
      if (hit) {
        const cut = text.slice(0, text.indexOf(hit));
        tokens = tokenize(cut);
        finish = { type: 'stop', matched: hit };
        break;
      }
    }
  }
  return { tokens, ids: tokens.map((t) => tokenId(t, o.vocab)), finish };
}

/** Prompt tokens of a chat request: the messages plus the template's role markers. */
export function chatPromptTokens(messages) {
  let n = 3;
  for (const m of messages) {
    const content =
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((c) => c.text ?? '').join(' ')
          : '';
    n += 4 + countTokens(content);
  }
  return n;
}
