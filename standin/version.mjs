// The simulated SGLang version, labelled as the stand-in. STANDIN_SGLANG_FLAVOR=new emulates the July 2026 main
// branch ([J], ~v0.5.15); the default is the February 2026 one ([F], ~v0.5.8).

export const VERSION_F = '0.5.8+standin';
export const VERSION_J = '0.5.15+standin';

/** @returns {'f'|'j'} */
export function flavor() {
  return process.env.STANDIN_SGLANG_FLAVOR === 'new' ? 'j' : 'f';
}

export function version() {
  return flavor() === 'j' ? VERSION_J : VERSION_F;
}
