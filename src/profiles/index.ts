// Part src/profiles: owns launch profiles: loading, inheritance, validation, saved variants, argv rendering.
// May import: config, errors.ts, hosts, redact.ts, suggest.ts, yaml.ts.
//
// Launch profiles: named SGLang configurations in profiles/*.yaml, resolved through `extends`, checked against the
// flags and values SGLang accepts, rendered to argv for the server lifecycle.

export { isDsaModel } from './checks.ts';
export { CHOICES, type ChoiceSet, isNewerOnly } from './choices.ts';
export { diffProfiles, type FlagDiff, flagView } from './diff.ts';
export { FLAGS, type FlagSpec, type LaunchFields } from './fields.ts';
export { shippedTableNotes } from './issues.ts';
export { buildProfiles, loadProfiles, type ProfileSet, type ProfileSource } from './load.ts';
export {
  commandLine,
  type Dialect,
  dialectForVersion,
  type LaunchCommand,
  type RenderOptions,
  renderLaunch,
} from './render.ts';
export type { ResolvedProfile } from './resolve.ts';
export { profileSchema, type RawProfile } from './schema.ts';
