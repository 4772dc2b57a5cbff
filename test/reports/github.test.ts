// The upstream search seam against a local GitHub stand-in (node:http on 127.0.0.1): the request GitHub's search API
// expects, validated answers, and failures that leave the draft standing with a note.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/logs/classify/index.ts';
import { githubIssueSearch, searchFromConfig } from '../../src/reports/github.ts';
import { findDuplicates, knownIssues, modelFamily, searchQueries } from '../../src/reports/upstream.ts';

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
}

let server: Server;
let base: string;
const seen: Seen[] = [];
let answer: { status: number; body: string } = { status: 200, body: '{}' };

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const items = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    html_url: `https://github.com/sgl-project/sglang/issues/${900 + i}`,
    title: `issue ${i}`,
    number: 900 + i,
    state: i % 2 ? 'closed' : 'open',
    extra: 'ignored',
  }));

describe('GitHub issue search', () => {
  it('asks the search API of the configured base URL, scoped to the repo and to issues, with the token', async () => {
    seen.length = 0;
    answer = { status: 200, body: JSON.stringify({ total_count: 7, incomplete_results: false, items: items(7) }) };
    const s = githubIssueSearch({ apiUrl: `${base}/`, repo: 'sgl-project/sglang', token: 'ghp_test' });
    const hits = await s.search('"probability tensor contains either"', 5);
    expect(hits).toHaveLength(5);
    expect(hits[1]).toEqual({
      url: 'https://github.com/sgl-project/sglang/issues/901',
      title: 'issue 1',
      number: 901,
      state: 'closed',
    });
    const u = new URL(seen[0]!.url, base);
    expect(u.pathname).toBe('/search/issues');
    expect(u.searchParams.get('q')).toBe('"probability tensor contains either" repo:sgl-project/sglang is:issue');
    expect(u.searchParams.get('per_page')).toBe('5');
    expect(seen[0]!.headers.authorization).toBe('Bearer ghp_test');
    expect(seen[0]!.headers.accept).toBe('application/vnd.github+json');
  });

  it('turns refusals and odd answers into errors that say what happened', async () => {
    const s = githubIssueSearch({ apiUrl: base, repo: 'o/r', token: 't' });
    answer = { status: 403, body: JSON.stringify({ message: 'API rate limit exceeded' }) };
    await expect(s.search('x')).rejects.toThrow('GitHub search answered 403: API rate limit exceeded');
    answer = { status: 200, body: JSON.stringify({ items: 'nope' }) };
    await expect(s.search('x')).rejects.toThrow(/unexpected shape/);
    answer = { status: 200, body: '<html>' };
    await expect(s.search('x')).rejects.toThrow(/not JSON/);
  });

  it('is configured only with a token', () => {
    const cfg = { repo: 'sgl-project/sglang', api_url: base, web_url: 'https://github.com', max_url_length: 8000 };
    expect(searchFromConfig(undefined, {})).toBeUndefined();
    expect(searchFromConfig(cfg, { GITHUB_TOKEN: 'x' })).toBeUndefined();
    expect(searchFromConfig({ ...cfg, token_env: 'GLM_GH' }, {})).toBeUndefined();
    expect(searchFromConfig({ ...cfg, token_env: 'GLM_GH' }, { GLM_GH: 'x' })).toBeDefined();
  });
});

describe('duplicates from the catalog and the tracker', () => {
  const catalog = loadCatalog();

  it('lists the curated upstream reports of the crash class, for this GPU architecture', () => {
    const sm120 = knownIssues(
      catalog,
      [{ category: 'nan_in_sampling', signatureId: 'nan-probability-tensor' }],
      'sm120',
    );
    expect(sm120.map((k) => k.url)).toEqual([
      'https://github.com/sgl-project/sglang/issues/26087',
      'https://github.com/sgl-project/sglang/issues/29562',
      'https://github.com/sgl-project/sglang/issues/37105',
    ]);
    expect(sm120[0]!.why).toBe('nan_in_sampling on sm120');
    expect(knownIssues(catalog, [{ category: 'nan_in_sampling' }], 'sm90')).toEqual([]);
    const arch = knownIssues(
      catalog,
      [{ category: 'unsupported_arch', signatureId: 'tllmgen-unsupported-arch' }],
      'sm120',
    );
    expect(arch[0]!.url).toBe('https://github.com/sgl-project/sglang/issues/40558');
    expect(arch.map((a) => a.url)).toContain('https://github.com/sgl-project/sglang/issues/26087');
  });

  it('searches with the root message and the model family, and leaves out what the catalog already named', async () => {
    expect(modelFamily('GLM-5-NVFP4')).toBe('GLM-5');
    const crash = { category: 'nan_in_sampling', signatureId: 'nan-probability-tensor' };
    expect(searchQueries(catalog, crash, 'GLM-5-NVFP4', 'sm120')).toEqual([
      '"probability tensor contains either"',
      'GLM-5 sm120',
    ]);
    seen.length = 0;
    answer = {
      status: 200,
      body: JSON.stringify({
        total_count: 2,
        items: [
          {
            html_url: 'https://github.com/sgl-project/sglang/issues/26087',
            title: 'dup',
            number: 26087,
            state: 'open',
          },
          {
            html_url: 'https://github.com/sgl-project/sglang/issues/99999',
            title: 'new one',
            number: 99999,
            state: 'open',
          },
        ],
      }),
    };
    const search = githubIssueSearch({ apiUrl: base, repo: 'sgl-project/sglang', token: 't' });
    const d = await findDuplicates({ catalog, crashes: [crash], arch: 'sm120', model: 'GLM-5-NVFP4', search });
    expect(seen).toHaveLength(2);
    expect(d.searched).toBe(true);
    expect(d.known).toHaveLength(3);
    expect(d.found).toEqual([
      {
        url: 'https://github.com/sgl-project/sglang/issues/99999',
        title: 'new one',
        source: 'github',
        why: 'search: "probability tensor contains either"',
        state: 'open',
      },
    ]);
    answer = { status: 500, body: '{"message":"boom"}' };
    const failed = await findDuplicates({ catalog, crashes: [crash], arch: 'sm120', search });
    expect(failed).toMatchObject({ searched: false, searchNote: 'GitHub search answered 500: boom' });
    expect(failed.known).toHaveLength(3);
    const none = await findDuplicates({ catalog, crashes: [crash], arch: 'sm120' });
    expect(none.searchNote).toMatch(/no GitHub token configured/);
  });
});
