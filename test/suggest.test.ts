// One "did you mean" for every caller: the config's cross-checks and the profiles' names answer a typo alike.
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../src/config/load.ts';
import { ConfigError, UserError } from '../src/errors.ts';
import { loadProfiles } from '../src/profiles/index.ts';
import { closest } from '../src/suggest.ts';
import { profileDir } from './profiles/helpers.ts';

function configFix(typo: string): string | undefined {
  try {
    parseConfigText(`default_host: ${typo}\nhosts:\n  logs: { local: true }\n  launch: { local: true }\n`, 'c.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    const issue = (e as ConfigError).issues.find((i) => i.path === 'default_host');
    return issue?.fix?.match(/did you mean '([^']+)'/)?.[1];
  }
  throw new Error('expected a ConfigError');
}

function profileHint(typo: string): string | undefined {
  const set = loadProfiles(profileDir({ 'logs.yaml': 'model_path: m\n', 'launch.yaml': 'model_path: l\n' }));
  try {
    set.get(typo);
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return (e as UserError).hint?.match(/did you mean '([^']+)'/)?.[1];
  }
  throw new Error('expected a UserError');
}

describe('did you mean', () => {
  it('the config and the profiles suggest the same name for the same typo', () => {
    for (const typo of ['bogus', 'lgo', 'lgos', 'LOGS', 'lanch', 'xyz']) {
      expect({ typo, profile: profileHint(typo) }).toEqual({ typo, profile: configFix(typo) });
      expect({ typo, profile: profileHint(typo) }).toEqual({ typo, profile: closest(typo, ['logs', 'launch']) });
    }
    // Two edits on a short word are another word, not a typo; a swap counts once.
    expect(profileHint('bogus')).toBeUndefined();
    expect(profileHint('lgo')).toBeUndefined();
    expect(profileHint('lgos')).toBe('logs');
    expect(configFix('lanch')).toBe('launch');
  });

  it('one name in another spelling is the same name', () => {
    expect(closest('modelPath', ['model_path', 'mode'])).toBe('model_path');
    expect(closest('default-host', ['default_host'])).toBe('default_host');
  });
});
