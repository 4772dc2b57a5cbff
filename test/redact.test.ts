// The one text redaction (src/redact.ts) on the credential forms a crash's root line can carry: each secret goes,
// the text around it (its name, the URL's user, the header's scheme, a closing bracket) stays readable.
import { describe, expect, it } from 'vitest';
import { REDACTED, redactText } from '../src/redact.ts';

describe('redactText', () => {
  it('takes the password out of a URL, keeping its user and host', () => {
    expect(redactText('HTTPError: 401 for url https://user:hunter2pass@hub.example/api')).toBe(
      `HTTPError: 401 for url https://user:${REDACTED}@hub.example/api`,
    );
  });
  it('takes the token out of an Authorization header and a bare Bearer credential', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    expect(redactText(`Authorization: Bearer ${jwt}`)).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactText(`curl -H "Authorization: ${jwt}" x`)).toBe(`curl -H "Authorization: ${REDACTED}" x`);
    expect(redactText(`sent Bearer ${jwt} to the router`)).toBe(`sent Bearer ${REDACTED} to the router`);
    expect(redactText('Bearer tokens are refused')).toBe('Bearer tokens are refused');
  });
  it('takes out an NVIDIA API key with or without a NAME= before it', () => {
    const key = 'nvapi-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123';
    expect(redactText(`login with ${key} failed`)).toBe(`login with ${REDACTED} failed`);
    expect(redactText(`NGC_API_KEY=${key} rejected`)).toBe(`NGC_API_KEY=${REDACTED} rejected`);
  });
  it('keeps the bracket or comma that closes an unquoted value', () => {
    expect(redactText("ServerArgs(model_path='/m', api_key='s3cr3tValue123', admin_api_key=None)")).toBe(
      `ServerArgs(model_path='/m', api_key=${REDACTED}, admin_api_key=${REDACTED})`,
    );
    expect(redactText('{hf_token=abc123}, next')).toBe(`{hf_token=${REDACTED}}, next`);
  });
  it('is idempotent: a redacted text is left as it is', () => {
    for (const s of [`https://user:${REDACTED}@h/x`, `Authorization: Bearer ${REDACTED}`, `api_key=${REDACTED})`])
      expect(redactText(s)).toBe(s);
  });
});
