// The upstream tracker's issue search, behind a seam: the GitHub REST search API at a configurable base URL (tests
// point it at a local HTTP server; GitHub Enterprise at its own). Answers are validated like every outside input.
import { z } from 'zod';
import type { GithubConfig } from '../config/schema.ts';

export interface IssueHit {
  url: string;
  title: string;
  number: number;
  state: string;
}

export interface IssueSearch {
  /** Issues of `repo` matching a GitHub search query (the repo and type qualifiers are added here). */
  search(query: string, limit?: number): Promise<IssueHit[]>;
}

const searchAnswer = z.object({
  total_count: z.number(),
  items: z.array(
    z.object({
      html_url: z.string().url(),
      title: z.string(),
      number: z.number().int(),
      state: z.string(),
    }),
  ),
});

export interface GithubSearchOptions {
  apiUrl: string;
  repo: string;
  token: string;
  timeoutMs?: number;
}

export function githubIssueSearch(opts: GithubSearchOptions): IssueSearch {
  const base = opts.apiUrl.replace(/\/+$/, '');
  return {
    async search(query, limit = 5) {
      const q = `${query} repo:${opts.repo} is:issue`;
      const url = `${base}/search/issues?q=${encodeURIComponent(q)}&per_page=${limit}`;
      let res: Response;
      try {
        res = await fetch(url, {
          headers: {
            accept: 'application/vnd.github+json',
            authorization: `Bearer ${opts.token}`,
            'x-github-api-version': '2022-11-28',
            'user-agent': 'glm-ops',
          },
          signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
        });
      } catch (e) {
        throw new Error(`GitHub search failed: ${(e as Error).message}`);
      }
      const text = await res.text();
      if (!res.ok) {
        let message = text.slice(0, 200);
        try {
          message = (JSON.parse(text) as { message?: string }).message ?? message;
        } catch {
          // not JSON: keep the text
        }
        throw new Error(`GitHub search answered ${res.status}: ${message}`);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new Error('GitHub search answered something that is not JSON');
      }
      const parsed = searchAnswer.safeParse(json);
      if (!parsed.success) throw new Error(`GitHub search answered an unexpected shape: ${parsed.error.message}`);
      return parsed.data.items.slice(0, limit).map((i) => ({
        url: i.html_url,
        title: i.title,
        number: i.number,
        state: i.state,
      }));
    },
  };
}

/** The configured search, or undefined when no token is configured (searching is then skipped, and said so). */
export function searchFromConfig(
  github: GithubConfig | undefined,
  env: NodeJS.ProcessEnv = process.env,
): IssueSearch | undefined {
  if (!github?.token_env) return undefined;
  const token = env[github.token_env];
  if (!token) return undefined;
  return githubIssueSearch({ apiUrl: github.api_url, repo: github.repo, token });
}

export const GITHUB_DEFAULTS: GithubConfig = {
  repo: 'sgl-project/sglang',
  api_url: 'https://api.github.com',
  web_url: 'https://github.com',
  max_url_length: 8000,
};
