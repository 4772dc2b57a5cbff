// The stand-in's launch_server parser as JSON (prog and actions), for scripts/argparse-reference.py.
// Usage: node scripts/standin-actions.mjs f|j
import { buildParser } from '../standin/flags.mjs';

const flavor = process.argv[2] === 'j' ? 'j' : 'f';
const { parser } = buildParser(flavor, () => {});
const actions = parser.actions.map((a) => ({
  optionStrings: a.optionStrings,
  dest: a.dest,
  kind: a.kind,
  choices: a.choices,
  nargs: a.nargs === 0 ? null : a.nargs,
  metavar: a.metavar,
  required: a.required,
  help: a.help,
}));
process.stdout.write(`${JSON.stringify({ prog: parser.prog, actions })}\n`);
