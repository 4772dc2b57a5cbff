// Part src/findings: owns the team's knowledge bases: parsed, indexed, matched against crashes, excerpted.
// May import: clock.ts, config, errors.ts, hosts, package-root.ts, paths.ts, single-flight.ts.
//
// The findings part: Markdown knowledge bases split into sections, indexed in memory, matched against crashes.
export type { QueryTerm } from './bm25.ts';
export { CATEGORY_TERMS, flagTerms, PHASE_TERMS } from './categories.ts';
export { defaultFindingsSources, EXAMPLE_FINDINGS_PATH, sourcesFromConfig } from './defaults.ts';
export { type Excerpt, lineUrl, MAX_EXCERPT_LINES } from './excerpt.ts';
export {
  createFindingsIndex,
  type FindingsIndex,
  type FindingsOptions,
  type SourceStatus,
} from './findings.ts';
export { formatExcerpts } from './format.ts';
export { type FrontMatter, parseFrontMatter, parseMarkdown, type Section } from './markdown.ts';
export { type DiagnosisLike, diagnosisQuery, textQuery, WEIGHTS } from './query.ts';
export { type FindingsSource, remoteArgv } from './sources.ts';
