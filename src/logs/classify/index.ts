// The crash classifier: root cause, class and phase of an SGLang log, from a data catalog of signatures.

export { BUILTIN_CATALOG, type Catalog, compileSignatures, type LoadOptions, loadCatalog } from './catalog.ts';
export {
  type Classifier,
  type ClassifierOptions,
  classifyFile,
  classifyText,
  createClassifier,
  diagnoseFile,
  diagnoseStream,
  diagnoseText,
} from './classify.ts';
export { DEFAULT_STALL_MS, STOP_STATUSES } from './engine.ts';
export { renderDiagnosis } from './render.ts';
export { exitedClassification } from './result.ts';
export {
  CATEGORIES,
  type Category,
  type Classification,
  type Diagnosis,
  type Evidence,
  PHASES,
  type Phase,
  type Signature,
  type UpstreamRef,
} from './types.ts';
