import { readFileSync } from 'node:fs';
import { diagnoseText } from '../src/logs/classify/index.ts';
import { lineShape, readPrefix } from '../src/logs/classify/lineinfo.ts';
const f = process.argv[2]!;
const text = readFileSync(f, 'utf8');
const d = diagnoseText(text);
console.log(d.classification.category, d.classification.phase, d.reason, d.classification.evidence.slice(0,2));
if (process.argv[3]) text.split('\n').forEach((l, i) => console.log(i + 1, lineShape(l).kind, readPrefix(l).record, l.slice(0, 90)));
